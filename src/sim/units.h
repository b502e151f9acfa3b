/* Errors and units: messages into a caller's buffer, value parsers, files (units.c). */
#ifndef FE_SIM_UNITS_H
#define FE_SIM_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* printf into err (when not NULL) */
void sim_errf(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Value parsers (0 or a negative fe_err). */
int sim_parse_size(const char *s, uint64_t *out);
int sim_parse_rate(const char *s, uint64_t *out);
int sim_parse_time(const char *s, uint64_t *out);
int sim_parse_bool(const char *s, bool *out);
int sim_parse_double(const char *s, double *out);
int sim_parse_uint(const char *s, uint64_t max, uint64_t *out);
/* dir/file (file alone when it is absolute or dir is empty); false when it does not fit. */
bool sim_path_join(char *out, size_t cap, const char *dir, const char *file);
/* Whole file, NUL-terminated (at most 256 MiB); NULL with a message. */
char *sim_read_file(const char *path, size_t *len, char *err, size_t err_cap);

#endif
