/* Socket buffer sizing shared by the UDP and raw backends. */
#include "io/sockbuf.h"

#include <limits.h>
#include <sys/socket.h>

static void size_one(int fd, int force_opt, int opt, uint64_t bytes)
{
    if (!bytes) return;
    int v = bytes > (uint64_t)(INT_MAX / 2) ? INT_MAX / 2 : (int)bytes;
    if (setsockopt(fd, SOL_SOCKET, force_opt, &v, sizeof v) != 0)
        (void)setsockopt(fd, SOL_SOCKET, opt, &v, sizeof v);
}

void fe_io_size_buffers(int fd, uint64_t rcvbuf_bytes, uint64_t sndbuf_bytes)
{
    size_one(fd, SO_RCVBUFFORCE, SO_RCVBUF, rcvbuf_bytes);
    size_one(fd, SO_SNDBUFFORCE, SO_SNDBUF, sndbuf_bytes);
}
