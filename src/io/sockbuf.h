/* Socket buffer sizing shared by the UDP and raw backends. */
#ifndef FE_IO_SOCKBUF_H
#define FE_IO_SOCKBUF_H

#include <stdint.h>

/* Sets SO_RCVBUF / SO_SNDBUF (0 = leave as is). The *FORCE variants pass rmem_max/wmem_max when
 * we have CAP_NET_ADMIN; otherwise the plain option gives what the system allows. */
void fe_io_size_buffers(int fd, uint64_t rcvbuf_bytes, uint64_t sndbuf_bytes);

#endif
