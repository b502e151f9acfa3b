/* The RC opcode table (opcode.c), for the core's per-packet paths: the requester sizes every
 * data packet it sends from it, inline, without the checks fe_opcode_flags and fe_pkt_hdr_len
 * make for an arbitrary opcode. */
#ifndef FE_WIRE_OPCODE_IMPL_H
#define FE_WIRE_OPCODE_IMPL_H

#include "feroce/wire.h"

#include <stdint.h>

struct fe_op_info {
    unsigned flags;  /* FE_OPF_* */
    uint8_t hdr_len; /* BTH and the extension headers the flags name */
    const char *name;
};

#define FE_RC_OPS 0x18 /* opcodes 0x00..0x17; the CNP is not in the table */
extern const struct fe_op_info fe_rc_ops[FE_RC_OPS];

/* fe_pkt_hdr_len of an opcode below FE_RC_OPS. */
static inline uint32_t fe_rc_op_hdr_len(uint8_t opcode)
{
    return fe_rc_ops[opcode].hdr_len;
}

#endif
