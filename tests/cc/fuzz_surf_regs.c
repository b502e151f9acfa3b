/* libFuzzer target for the SURF register-file lines (outside input: `feroce dcqcn --regs`,
 * `--reg`). Checks: a refused line explains why and writes nothing; an accepted one names a
 * writable register and, applied to the cycle model, leaves every readback within its field
 * width; the model then survives CNP drives decoded from the input (under ASan/UBSan), with
 * Rc and Rt never above the line rate unless Rmin is, and alpha in 10 bits. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/surf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void apply_lines(struct fe_surf *m, const char *s)
{
    char line[512];
    while (*s) {
        size_t n = strcspn(s, "\n");
        size_t k = n < sizeof line - 1 ? n : sizeof line - 1;
        memcpy(line, s, k);
        line[k] = 0;
        struct fe_surf_reg_write w = {0xdead, 0xbeef};
        char err[160];
        memset(err, 0x55, sizeof err);
        int r = fe_surf_parse_reg_line(line, &w, err, sizeof err);
        if (r < 0 && (!memchr(err, 0, sizeof err) || !err[0])) abort();
        if (r <= 0 && (w.addr != 0xdead || w.value != 0xbeef)) abort();
        if (r == 1) {
            if (w.addr > 0x24 || w.addr % 4 || w.addr == 0x18 || w.addr == 0x1c) abort();
            if (fe_surf_axil_write(m, w.addr, w.value) != FE_SURF_OKAY) abort();
        }
        s += n + (s[n] != 0);
    }
}

static void exercise(struct fe_surf *m, const uint8_t *data, size_t size)
{
    uint64_t d = 0;
    for (size_t i = 0; i < size && i < 16; i++) {
        d += 2 + (uint64_t)data[i] % 128; /* 2 to 129 cycles apart: on every window edge */
        fe_surf_run_until(m, d);
        if (fe_surf_cnp_drive(m, d)) abort();
    }
    fe_surf_run_until(m, d + 5000);
    uint32_t v, top = m->line_Bps > m->reg.rmin_Bps ? m->line_Bps : m->reg.rmin_Bps;
    if (m->s.alpha > 1023 || m->s.stage > 255) abort();
    if (m->reg.rmin_Bps <= m->line_Bps && (m->s.rc_Bps > top || m->s.rt_Bps > top)) abort();
    if (fe_surf_axil_read(m, 0x000, &v) != FE_SURF_OKAY || v >> 23) abort();
    if (fe_surf_axil_read(m, 0x020, &v) != FE_SURF_OKAY || v >> 27) abort();
    if (fe_surf_axil_read(m, 0x024, &v) != FE_SURF_OKAY || v > 1) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) return 0;
    char *s = malloc(size + 1);
    if (!s) return 0;
    memcpy(s, data, size);
    s[size] = 0;
    struct fe_surf m;
    fe_surf_init(&m, NULL, FE_SURF_LINE_RATE_BPS);
    apply_lines(&m, s);
    /* intervals of 0 give periods of 2 and 3 cycles: the run is kept short */
    exercise(&m, data, size);
    free(s);
    return 0;
}
