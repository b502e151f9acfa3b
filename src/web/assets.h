/* The dashboard's files, embedded at build time (generated web_assets.c). */
#ifndef FE_WEB_ASSETS_H
#define FE_WEB_ASSETS_H

#include <stddef.h>

struct fe_web_asset {
    const char *path; /* URL path */
    const char *type; /* Content-Type */
    const unsigned char *data;
    size_t len;
};
/* Ends with an entry whose path is NULL. */
extern const struct fe_web_asset fe_web_assets[];

#endif
