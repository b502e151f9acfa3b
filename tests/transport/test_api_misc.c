/* Public functions of the side channel that no tool calls: the names of its requests and of the
 * front-end's events, for logs. Every known value has its own name, unknown values one name,
 * and a message decoded from the wire names its request. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "feroce/sidechannel.h"

static void all_distinct(const char *const *names, size_t n, const char *unknown)
{
    for (size_t i = 0; i < n; i++) {
        assert_non_null(names[i]);
        assert_true(strcmp(names[i], unknown) != 0);
        for (size_t j = 0; j < i; j++) assert_true(strcmp(names[i], names[j]) != 0);
    }
}

static void test_request_names(void **state)
{
    (void)state;
    static const int req[] = {FE_SC_REQ_NULL,          FE_SC_REQ_OPEN_QP,  FE_SC_REQ_SEND_QP_INFO,
                              FE_SC_REQ_MODIFY_QP_RTS, FE_SC_REQ_CLOSE_QP, FE_SC_REQ_ERROR};
    const char *names[sizeof req / sizeof req[0]];
    for (size_t i = 0; i < sizeof req / sizeof req[0]; i++) names[i] = fe_sc_request_name(req[i]);
    const char *unknown = fe_sc_request_name(5);
    assert_string_equal(unknown, fe_sc_request_name(-1));
    assert_string_equal(unknown, fe_sc_request_name(100));
    all_distinct(names, sizeof req / sizeof req[0], unknown);
    assert_string_equal(fe_sc_request_name(FE_SC_REQ_OPEN_QP), "OPEN_QP");
    assert_string_equal(fe_sc_request_name(FE_SC_REQ_MODIFY_QP_RTS), "MODIFY_QP_RTS");

    /* a datagram as it comes off the wire */
    struct fe_sc_msg m, back;
    memset(&m, 0, sizeof m);
    m.info_valid = true;
    m.request = FE_SC_REQ_CLOSE_QP;
    m.loc.qpn = 0x12;
    uint8_t buf[FE_SC_MSG_LEN];
    assert_int_equal(fe_sc_encode(buf, &m), 0);
    enum fe_sc_reason why = FE_SC_R_OK;
    assert_int_equal(fe_sc_decode(buf, sizeof buf, &back, &why), 0);
    assert_string_equal(fe_sc_request_name(back.request), "CLOSE_QP");
}

static void test_event_names(void **state)
{
    (void)state;
    static const int ev[] = {FE_SC_EV_OPENED, FE_SC_EV_UPDATED, FE_SC_EV_RTS,
                             FE_SC_EV_START,  FE_SC_EV_STOP,    FE_SC_EV_CLOSED};
    const char *names[sizeof ev / sizeof ev[0]];
    for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++) names[i] = fe_sc_event_name(ev[i]);
    const char *unknown = fe_sc_event_name(0);
    assert_string_equal(unknown, fe_sc_event_name(FE_SC_EV_CLOSED + 1));
    all_distinct(names, sizeof ev / sizeof ev[0], unknown);
    assert_string_equal(fe_sc_event_name(FE_SC_EV_RTS), "RTS");
    assert_string_equal(fe_sc_event_name(FE_SC_EV_CLOSED), "CLOSED");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_names),
        cmocka_unit_test(test_event_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
