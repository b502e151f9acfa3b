/* The body of `POST /api/params` (--web-write): "flow=N|all&set=NAME=VALUE[,NAME=VALUE...]",
 * x-www-form-urlencoded, from any HTTP client. Kept apart from web.c (no libmicrohttpd) so
 * that its fuzzer (tests/web/fuzz_web_params.c) builds without the server. Internal to the web
 * view: not part of the public API. */
#ifndef FE_WEB_FORM_H
#define FE_WEB_FORM_H

#include <stdbool.h>
#include <stddef.h>

/* Field `name` of the NUL-terminated form `body` ('&'-separated "NAME=VALUE" pairs; the first
 * pair named `name` counts), its value decoded ('+' is a space, %XX a byte) into out, NUL
 * included. false when absent, when its value has a malformed %-escape or a control byte
 * (< 0x20) once decoded, or when it needs more than cap bytes; out is then unspecified.
 * cap >= 1. */
bool fe_web_form_field(const char *body, const char *name, char *out, size_t cap);

/* A flow as the form names it: "all" is -1; the decimal N in 1..n_flows (and at most
 * FE_WEB_MAX_FLOWS), digits only and no leading zero, is the index N-1; anything else -2. */
int fe_web_parse_flow(const char *s, unsigned n_flows);

#endif
