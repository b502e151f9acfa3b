/* libFuzzer: report expressions (filters and sort lists) and the result text that Slurm tasks
 * leave on a shared filesystem. The first byte picks the reader. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const cols[] = {"jain", "peak_queue", "link_delay", "status", "seed"};
    if (!size) return 0;
    char err[256];
    if (data[0] & 2) {
        struct sw_result r;
        if (!sw_result_parse((const char *)data + 1, size - 1, &r, err, sizeof(err)))
            sw_result_free(&r);
        return 0;
    }
    char *text = malloc(size);
    if (!text) return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = 0;
    struct sw_sql q;
    if (!sw_expr_to_sql(text, data[0] & 1, cols, 5, &q, err, sizeof(err))) sw_sql_free(&q);
    free(text);
    return 0;
}
