/* Error codes: every fallible function returns 0 or a negative fe_err. */
#ifndef FEROCE_ERR_H
#define FEROCE_ERR_H

#ifdef __cplusplus
extern "C" {
#endif

enum fe_err {
    FE_OK = 0,
    FE_EINVAL = -1,   /* invalid argument or configuration */
    FE_ETRUNC = -2,   /* input shorter than its headers say */
    FE_ENOSPC = -3,   /* output buffer, queue or ring full */
    FE_EAGAIN = -4,   /* nothing to do now; try later */
    FE_ESTATE = -5,   /* not allowed in the current state (e.g. QP in error) */
    FE_ENOMEM = -6,   /* allocation failed (creation time only) */
    FE_ERANGE = -7,   /* value out of range */
    FE_ENOTSUP = -8,  /* valid but not supported */
    FE_EPARSE = -9,   /* malformed input (packet, message, file) */
    FE_ENOENT = -10,  /* no such object (QP, parameter, algorithm) */
    FE_EIO = -11,     /* I/O error in a driver (io/, tools) */
    FE_EACCESS = -12, /* memory access outside a registered region or bad key */
};

/* A short English description; never NULL. */
const char *fe_strerror(int err);

#ifdef __cplusplus
}
#endif
#endif
