/* fe_strerror: the text of every fe_err. */
#include "feroce/err.h"

const char *fe_strerror(int err)
{
    switch (err) {
    case FE_OK: return "success";
    case FE_EINVAL: return "invalid argument";
    case FE_ETRUNC: return "truncated input";
    case FE_ENOSPC: return "no space (buffer, queue or ring full)";
    case FE_EAGAIN: return "nothing to do now";
    case FE_ESTATE: return "not allowed in this state";
    case FE_ENOMEM: return "out of memory";
    case FE_ERANGE: return "value out of range";
    case FE_ENOTSUP: return "not supported";
    case FE_EPARSE: return "malformed input";
    case FE_ENOENT: return "no such object";
    case FE_EIO: return "I/O error";
    case FE_EACCESS: return "access outside a registered region or bad key";
    default: return "unknown error";
    }
}
