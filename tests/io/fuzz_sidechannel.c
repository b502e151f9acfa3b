/* libFuzzer target: the side-channel codec and both state machines.
 * Properties: no crash or UB; an accepted datagram re-encodes to the same bytes; a refused one
 * changes no state; everything the machines send decodes; QPNs stay in range. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/sidechannel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) abort();                                                                         \
    } while (0)

static void check_sent(const uint8_t *b)
{
    struct fe_sc_msg m;
    CHECK(fe_sc_decode(b, FE_SC_MSG_LEN, &m, NULL) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* 1. the codec on the whole input */
    struct fe_sc_msg m;
    enum fe_sc_reason why;
    if (fe_sc_decode(data, size, &m, &why) == 0) {
        uint8_t out[FE_SC_MSG_LEN];
        CHECK(fe_sc_encode(out, &m) == 0);
        CHECK(memcmp(out, data, FE_SC_MSG_LEN) == 0);
    } else {
        CHECK(why > FE_SC_R_OK && why < FE_SC_R_MAX);
    }

    /* 2. the input as a sequence of records: [len(1) src(1) bytes(len)], fed to a front-end and
     * to a host waiting for its OPEN_QP reply. Short datagrams are padded from a valid template
     * so that deep states are reached. */
    struct fe_sc_fe fe;
    struct fe_sc_fe_config fc;
    fe_sc_fe_config_default(&fc);
    fc.local_ip = 2;
    fc.max_qps = 4;
    fc.mode = size ? (uint8_t)(data[size - 1] % 3) : 0; /* liberal, strict, firmware */
    fc.reply_rate_per_s = size > 1 && (data[size - 2] & 1) ? 1000 : 0;
    CHECK(fe_sc_fe_init(&fe, &fc) == 0);
    struct fe_sc_host h;
    struct fe_sc_host_config hc;
    fe_sc_host_config_default(&hc);
    hc.fe_ip = 2;
    hc.local.qpn = 0x42;
    hc.local.ip = 1;
    hc.max_tries = 2;
    hc.retry_timeout_ns = 10;
    hc.start.valid = hc.start.start = true;
    CHECK(fe_sc_host_init(&h, &hc) == 0);
    CHECK(fe_sc_host_open(&h, 0) == 0);

    uint64_t now = 0;
    size_t i = 0;
    while (i + 2 <= size) {
        size_t len = data[i];
        uint8_t src = data[i + 1];
        i += 2;
        if (len > size - i) len = size - i;
        uint8_t buf[256];
        memset(buf, 0, sizeof buf);
        memcpy(buf, data + i, len);
        i += len;
        size_t dlen = (src & 0x80) ? len : FE_SC_MSG_LEN; /* mostly exact-length datagrams */
        uint32_t ip = 1 + (src & 3);
        uint16_t port = (src & 4) ? 1234 : FE_SC_PORT;
        now += src & 0x30;

        struct fe_sc_fe before;
        memcpy(&before, &fe, sizeof fe);
        struct fe_sc_fe_result res;
        int rc = fe_sc_fe_input(&fe, now, buf, dlen, ip, port, &res);
        if (rc < 0) {
            CHECK(memcmp(before.qp, fe.qp, sizeof fe.qp) == 0);
            CHECK(!res.reply && res.n_events == 0);
        } else {
            if (res.reply) check_sent(res.reply_msg);
            CHECK(res.n_events >= 0 && res.n_events <= 2);
            for (int e = 0; e < res.n_events; e++)
                CHECK(res.ev[e].qpn >= fc.first_qpn && res.ev[e].qpn < fc.first_qpn + 4);
        }
        CHECK(fe_sc_fe_open_count(&fe) <= 4);

        struct fe_sc_host hb;
        memcpy(&hb, &h, sizeof h);
        rc = fe_sc_host_input(&h, now, buf, dlen, ip + 1, port, &why);
        if (rc < 0) CHECK(memcmp(&hb, &h, offsetof(struct fe_sc_host, stats)) == 0);
        uint8_t out[FE_SC_MSG_LEN];
        while (fe_sc_host_poll_tx(&h, now, out)) check_sent(out);
        if (src & 0x40) (void)fe_sc_host_close(&h, now);
        CHECK(h.state <= FE_SC_H_FAILED);
    }
    return 0;
}
