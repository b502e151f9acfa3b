/* RC opcode table: which headers each opcode carries and how feroce treats it. */
#include "wire/opcode_impl.h"

#define K   FE_OPF_KNOWN
#define PL  FE_OPF_PAYLOAD
#define REQ FE_OPF_REQUEST
#define RSP FE_OPF_RESPONSE
#define F   FE_OPF_FIRST
#define L   FE_OPF_LAST
#define SND (FE_OPF_SEND | FE_OPF_SUPPORTED)
#define WR  (FE_OPF_WRITE | FE_OPF_SUPPORTED)

/* The one rule for a packet's header bytes: BTH, then each extension header its flags name. */
// clang-format off
#define HDR_LEN(f)                                                                                 \
    (FE_BTH_LEN + ((f) & FE_OPF_RETH ? FE_RETH_LEN : 0) +                                          \
     ((f) & FE_OPF_ATOMIC ? FE_ATOMICETH_LEN : 0) + ((f) & FE_OPF_AETH ? FE_AETH_LEN : 0) +        \
     ((f) & FE_OPF_ATOMIC_ACK ? FE_ATOMICACKETH_LEN : 0) +                                         \
     ((f) & (FE_OPF_IMM | FE_OPF_IETH) ? FE_IMMDT_LEN : 0))
#define OP(f, name) {(f), HDR_LEN(f), (name)}
// clang-format on

/* Indexed by opcode 0x00..0x17; CNP handled separately. Gaps (0x15) are unknown. */
const struct fe_op_info fe_rc_ops[FE_RC_OPS] = {
    [FE_OP_SEND_FIRST] = OP(K | PL | REQ | SND | F, "SEND_FIRST"),
    [FE_OP_SEND_MIDDLE] = OP(K | PL | REQ | SND, "SEND_MIDDLE"),
    [FE_OP_SEND_LAST] = OP(K | PL | REQ | SND | L, "SEND_LAST"),
    [FE_OP_SEND_LAST_IMM] = OP(K | PL | REQ | SND | L | FE_OPF_IMM, "SEND_LAST_IMM"),
    [FE_OP_SEND_ONLY] = OP(K | PL | REQ | SND | F | L, "SEND_ONLY"),
    [FE_OP_SEND_ONLY_IMM] = OP(K | PL | REQ | SND | F | L | FE_OPF_IMM, "SEND_ONLY_IMM"),
    [FE_OP_WRITE_FIRST] = OP(K | PL | REQ | WR | F | FE_OPF_RETH, "WRITE_FIRST"),
    [FE_OP_WRITE_MIDDLE] = OP(K | PL | REQ | WR, "WRITE_MIDDLE"),
    [FE_OP_WRITE_LAST] = OP(K | PL | REQ | WR | L, "WRITE_LAST"),
    [FE_OP_WRITE_LAST_IMM] = OP(K | PL | REQ | WR | L | FE_OPF_IMM, "WRITE_LAST_IMM"),
    [FE_OP_WRITE_ONLY] = OP(K | PL | REQ | WR | F | L | FE_OPF_RETH, "WRITE_ONLY"),
    [FE_OP_WRITE_ONLY_IMM] =
        OP(K | PL | REQ | WR | F | L | FE_OPF_RETH | FE_OPF_IMM, "WRITE_ONLY_IMM"),
    [FE_OP_READ_REQUEST] = OP(K | REQ | F | L | FE_OPF_RETH, "READ_REQUEST"),
    [FE_OP_READ_RESP_FIRST] = OP(K | PL | RSP | F | FE_OPF_AETH, "READ_RESP_FIRST"),
    [FE_OP_READ_RESP_MIDDLE] = OP(K | PL | RSP, "READ_RESP_MIDDLE"),
    [FE_OP_READ_RESP_LAST] = OP(K | PL | RSP | L | FE_OPF_AETH, "READ_RESP_LAST"),
    [FE_OP_READ_RESP_ONLY] = OP(K | PL | RSP | F | L | FE_OPF_AETH, "READ_RESP_ONLY"),
    [FE_OP_ACK] = OP(K | RSP | FE_OPF_AETH, "ACK"),
    [FE_OP_ATOMIC_ACK] = OP(K | RSP | FE_OPF_AETH | FE_OPF_ATOMIC_ACK, "ATOMIC_ACK"),
    [FE_OP_CMP_SWAP] = OP(K | REQ | F | L | FE_OPF_ATOMIC, "CMP_SWAP"),
    [FE_OP_FETCH_ADD] = OP(K | REQ | F | L | FE_OPF_ATOMIC, "FETCH_ADD"),
    /* SEND with invalidate: parsed (IETH), not executed: feroce has no memory windows. */
    [FE_OP_SEND_LAST_INV] = OP(K | PL | REQ | FE_OPF_SEND | L | FE_OPF_IETH, "SEND_LAST_INV"),
    [FE_OP_SEND_ONLY_INV] = OP(K | PL | REQ | FE_OPF_SEND | F | L | FE_OPF_IETH, "SEND_ONLY_INV"),
};

unsigned fe_opcode_flags(uint8_t opcode)
{
    if (opcode == FE_OP_CNP) return FE_OPF_KNOWN | FE_OPF_CNP;
    if (opcode < FE_RC_OPS) return fe_rc_ops[opcode].flags;
    return 0;
}

const char *fe_opcode_name(uint8_t opcode)
{
    if (opcode == FE_OP_CNP) return "CNP";
    if (opcode < FE_RC_OPS && fe_rc_ops[opcode].name) return fe_rc_ops[opcode].name;
    return "UNKNOWN";
}

size_t fe_pkt_hdr_len(uint8_t opcode)
{
    if (opcode == FE_OP_CNP) return HDR_LEN(FE_OPF_KNOWN | FE_OPF_CNP);
    if (opcode < FE_RC_OPS) return fe_rc_ops[opcode].hdr_len;
    return 0;
}
