/* RC opcode table: which headers each opcode carries and how feroce treats it. */
#include "feroce/wire.h"

#define K   FE_OPF_KNOWN
#define PL  FE_OPF_PAYLOAD
#define REQ FE_OPF_REQUEST
#define RSP FE_OPF_RESPONSE
#define F   FE_OPF_FIRST
#define L   FE_OPF_LAST
#define SND (FE_OPF_SEND | FE_OPF_SUPPORTED)
#define WR  (FE_OPF_WRITE | FE_OPF_SUPPORTED)

struct op_info {
    unsigned flags;
    const char *name;
};

/* Indexed by opcode 0x00..0x17; CNP handled separately. Gaps (0x15) are unknown. */
static const struct op_info rc_ops[0x18] = {
    [FE_OP_SEND_FIRST] = {K | PL | REQ | SND | F, "SEND_FIRST"},
    [FE_OP_SEND_MIDDLE] = {K | PL | REQ | SND, "SEND_MIDDLE"},
    [FE_OP_SEND_LAST] = {K | PL | REQ | SND | L, "SEND_LAST"},
    [FE_OP_SEND_LAST_IMM] = {K | PL | REQ | SND | L | FE_OPF_IMM, "SEND_LAST_IMM"},
    [FE_OP_SEND_ONLY] = {K | PL | REQ | SND | F | L, "SEND_ONLY"},
    [FE_OP_SEND_ONLY_IMM] = {K | PL | REQ | SND | F | L | FE_OPF_IMM, "SEND_ONLY_IMM"},
    [FE_OP_WRITE_FIRST] = {K | PL | REQ | WR | F | FE_OPF_RETH, "WRITE_FIRST"},
    [FE_OP_WRITE_MIDDLE] = {K | PL | REQ | WR, "WRITE_MIDDLE"},
    [FE_OP_WRITE_LAST] = {K | PL | REQ | WR | L, "WRITE_LAST"},
    [FE_OP_WRITE_LAST_IMM] = {K | PL | REQ | WR | L | FE_OPF_IMM, "WRITE_LAST_IMM"},
    [FE_OP_WRITE_ONLY] = {K | PL | REQ | WR | F | L | FE_OPF_RETH, "WRITE_ONLY"},
    [FE_OP_WRITE_ONLY_IMM] = {K | PL | REQ | WR | F | L | FE_OPF_RETH | FE_OPF_IMM,
                              "WRITE_ONLY_IMM"},
    [FE_OP_READ_REQUEST] = {K | REQ | F | L | FE_OPF_RETH, "READ_REQUEST"},
    [FE_OP_READ_RESP_FIRST] = {K | PL | RSP | F | FE_OPF_AETH, "READ_RESP_FIRST"},
    [FE_OP_READ_RESP_MIDDLE] = {K | PL | RSP, "READ_RESP_MIDDLE"},
    [FE_OP_READ_RESP_LAST] = {K | PL | RSP | L | FE_OPF_AETH, "READ_RESP_LAST"},
    [FE_OP_READ_RESP_ONLY] = {K | PL | RSP | F | L | FE_OPF_AETH, "READ_RESP_ONLY"},
    [FE_OP_ACK] = {K | RSP | FE_OPF_AETH, "ACK"},
    [FE_OP_ATOMIC_ACK] = {K | RSP | FE_OPF_AETH | FE_OPF_ATOMIC_ACK, "ATOMIC_ACK"},
    [FE_OP_CMP_SWAP] = {K | REQ | F | L | FE_OPF_ATOMIC, "CMP_SWAP"},
    [FE_OP_FETCH_ADD] = {K | REQ | F | L | FE_OPF_ATOMIC, "FETCH_ADD"},
    /* SEND with invalidate: parsed (IETH), not executed: feroce has no memory windows. */
    [FE_OP_SEND_LAST_INV] = {K | PL | REQ | FE_OPF_SEND | L | FE_OPF_IETH, "SEND_LAST_INV"},
    [FE_OP_SEND_ONLY_INV] = {K | PL | REQ | FE_OPF_SEND | F | L | FE_OPF_IETH, "SEND_ONLY_INV"},
};

unsigned fe_opcode_flags(uint8_t opcode)
{
    if (opcode == FE_OP_CNP) return FE_OPF_KNOWN | FE_OPF_CNP;
    if (opcode < sizeof rc_ops / sizeof rc_ops[0]) return rc_ops[opcode].flags;
    return 0;
}

const char *fe_opcode_name(uint8_t opcode)
{
    if (opcode == FE_OP_CNP) return "CNP";
    if (opcode < sizeof rc_ops / sizeof rc_ops[0] && rc_ops[opcode].name)
        return rc_ops[opcode].name;
    return "UNKNOWN";
}

size_t fe_pkt_hdr_len(uint8_t opcode)
{
    unsigned f = fe_opcode_flags(opcode);
    if (!(f & FE_OPF_KNOWN)) return 0;
    size_t n = FE_BTH_LEN;
    if (f & FE_OPF_RETH) n += FE_RETH_LEN;
    if (f & FE_OPF_ATOMIC) n += FE_ATOMICETH_LEN;
    if (f & FE_OPF_AETH) n += FE_AETH_LEN;
    if (f & FE_OPF_ATOMIC_ACK) n += FE_ATOMICACKETH_LEN;
    if (f & (FE_OPF_IMM | FE_OPF_IETH)) n += FE_IMMDT_LEN;
    return n;
}
