/* RoCEv2 wire formats (IBA vol. 1 + annex A17): Ethernet, IPv4/IPv6, UDP, BTH, RETH, AETH,
 * ImmDt, CNP; parsing with reason codes, building, and whole-frame encode/decode with ICRC.
 *
 * Structs hold fields in host order and decoded form; the wire is big-endian. Parsers never
 * read past `len` and never write outside their output struct. */
#ifndef FEROCE_WIRE_H
#define FEROCE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "feroce/psn.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FE_ROCEV2_UDP_PORT 4791
#define FE_PKEY_DEFAULT    0xFFFF

#define FE_ETH_HDR_LEN   14
#define FE_VLAN_TAG_LEN  4
#define FE_IPV4_HDR_LEN  20
#define FE_IPV6_HDR_LEN  40
#define FE_UDP_HDR_LEN   8
#define FE_BTH_LEN       12
#define FE_RETH_LEN      16
#define FE_AETH_LEN      4
#define FE_IMMDT_LEN     4
#define FE_ATOMICETH_LEN 28
#define FE_ATOMICACKETH_LEN 8
#define FE_ICRC_LEN      4
#define FE_CNP_PAD_LEN   16 /* zero bytes after the CNP's BTH */
#define FE_CNP_DSCP      48 /* the CNP's usual marking (NVIDIA's default): DSCP 48, */
#define FE_CNP_PCP       6  /* 802.1p priority 6 */

#define FE_ETHERTYPE_IPV4 0x0800
#define FE_ETHERTYPE_IPV6 0x86DD
#define FE_ETHERTYPE_VLAN 0x8100
#define FE_ETHERTYPE_ARP  0x0806
#define FE_IPPROTO_UDP    17

/* Largest frame feroce builds: VLAN Ethernet + IPv6 + UDP + BTH + RETH + ImmDt + 4096 + pad +
 * ICRC, rounded up. */
#define FE_MAX_FRAME_LEN 4224

/* IP ECN codepoints. */
enum fe_ecn { FE_ECN_NOT_ECT = 0, FE_ECN_ECT1 = 1, FE_ECN_ECT0 = 2, FE_ECN_CE = 3 };

/* RC opcodes (transport bits 000) and the RoCEv2 CNP. */
enum fe_opcode {
    FE_OP_SEND_FIRST = 0x00,
    FE_OP_SEND_MIDDLE = 0x01,
    FE_OP_SEND_LAST = 0x02,
    FE_OP_SEND_LAST_IMM = 0x03,
    FE_OP_SEND_ONLY = 0x04,
    FE_OP_SEND_ONLY_IMM = 0x05,
    FE_OP_WRITE_FIRST = 0x06,
    FE_OP_WRITE_MIDDLE = 0x07,
    FE_OP_WRITE_LAST = 0x08,
    FE_OP_WRITE_LAST_IMM = 0x09,
    FE_OP_WRITE_ONLY = 0x0A,
    FE_OP_WRITE_ONLY_IMM = 0x0B,
    FE_OP_READ_REQUEST = 0x0C,
    FE_OP_READ_RESP_FIRST = 0x0D,
    FE_OP_READ_RESP_MIDDLE = 0x0E,
    FE_OP_READ_RESP_LAST = 0x0F,
    FE_OP_READ_RESP_ONLY = 0x10,
    FE_OP_ACK = 0x11,
    FE_OP_ATOMIC_ACK = 0x12,
    FE_OP_CMP_SWAP = 0x13,
    FE_OP_FETCH_ADD = 0x14,
    FE_OP_SEND_LAST_INV = 0x16,
    FE_OP_SEND_ONLY_INV = 0x17,
    FE_OP_CNP = 0x81,
};

/* Opcode properties (fe_opcode_flags). */
#define FE_OPF_KNOWN    0x0001u /* an opcode feroce can parse */
#define FE_OPF_RETH     0x0002u /* carries a RETH */
#define FE_OPF_IMM      0x0004u /* carries an ImmDt */
#define FE_OPF_AETH     0x0008u /* carries an AETH */
#define FE_OPF_ATOMIC   0x0010u /* carries an AtomicETH (parsed only to be refused) */
#define FE_OPF_PAYLOAD  0x0020u /* may carry payload */
#define FE_OPF_FIRST    0x0040u /* starts a message (FIRST or ONLY) */
#define FE_OPF_LAST     0x0080u /* ends a message (LAST or ONLY) */
#define FE_OPF_SEND     0x0100u
#define FE_OPF_WRITE    0x0200u
#define FE_OPF_REQUEST  0x0400u /* requester -> responder */
#define FE_OPF_RESPONSE 0x0800u /* responder -> requester (ACK, read response, atomic ACK) */
#define FE_OPF_CNP      0x1000u
#define FE_OPF_SUPPORTED 0x2000u /* executed by feroce's responder (SEND and WRITE families) */
#define FE_OPF_IETH      0x4000u /* carries an IETH (SEND with invalidate; parsed, not executed) */
#define FE_OPF_ATOMIC_ACK 0x8000u /* carries an AtomicAckETH (skipped, not decoded) */

unsigned fe_opcode_flags(uint8_t opcode);
/* Printable name, e.g. "WRITE_FIRST", "SEND_ONLY_IMM", "ACK", "CNP"; "UNKNOWN" for opcodes
 * without FE_OPF_KNOWN (no static buffer is used). */
const char *fe_opcode_name(uint8_t opcode);

/* ---- headers ---- */
struct fe_eth {
    uint8_t dst[6], src[6];
    uint16_t ethertype; /* of the payload, after any VLAN tag */
    bool has_vlan;
    uint8_t pcp; /* 802.1p priority, 0..7 */
    bool dei;
    uint16_t vid; /* 0..4095 */
};

struct fe_ipv4 {
    uint8_t ihl; /* header length in 32-bit words, >= 5 */
    uint8_t dscp, ecn, ttl, protocol;
    uint16_t total_len, id, frag; /* frag = flags(3) | fragment offset(13) */
    uint16_t checksum;
    uint32_t src, dst;
};

struct fe_ipv6 {
    uint8_t dscp, ecn; /* traffic class = dscp << 2 | ecn */
    uint32_t flow_label;
    uint16_t payload_len;
    uint8_t next_header, hop_limit;
    uint8_t src[16], dst[16];
};

struct fe_udp {
    uint16_t sport, dport, len, checksum;
};

struct fe_bth {
    uint8_t opcode;
    bool se, migreq;
    uint8_t padcnt; /* 0..3 */
    uint8_t tver;   /* 0 */
    uint16_t pkey;
    bool fecn, becn; /* byte 4 bits 7, 6 */
    uint8_t resv6;   /* byte 4 bits 5..0 (reserved, kept for round trips) */
    uint32_t dqpn;   /* 24 bits */
    bool ackreq;
    uint8_t resv7; /* byte 8 bits 6..0 */
    uint32_t psn;  /* 24 bits */
};

struct fe_reth {
    uint64_t va;
    uint32_t rkey;
    uint32_t dma_len;
};

struct fe_aeth {
    uint8_t syndrome;
    uint32_t msn; /* 24 bits */
};

/* AETH syndrome: bits 6..5 select the kind, bits 4..0 its value. */
enum fe_aeth_kind { FE_AETH_ACK = 0, FE_AETH_RNR = 1, FE_AETH_RESERVED = 2, FE_AETH_NAK = 3 };
enum fe_nak_code {
    FE_NAK_PSN_SEQ = 0,
    FE_NAK_INVALID_REQ = 1,
    FE_NAK_REMOTE_ACCESS = 2,
    FE_NAK_REMOTE_OP = 3,
    FE_NAK_INVALID_RD_REQ = 4,
};
#define FE_AETH_CREDITS_INVALID 0x1f /* "no credit information": what rxe sends */

static inline enum fe_aeth_kind fe_aeth_kind(uint8_t syn)
{
    return (enum fe_aeth_kind)((syn >> 5) & 3);
}
static inline uint8_t fe_aeth_value(uint8_t syn) { return syn & 0x1f; }
static inline uint8_t fe_aeth_syn_ack(uint8_t credits) { return (uint8_t)(credits & 0x1f); }
static inline uint8_t fe_aeth_syn_rnr(uint8_t timer) { return (uint8_t)(0x20 | (timer & 0x1f)); }
static inline uint8_t fe_aeth_syn_nak(uint8_t code) { return (uint8_t)(0x60 | (code & 0x1f)); }
/* The IB RNR timer (IBA table 45) of a 5-bit code, in nanoseconds (code 0 = 655.36 ms). */
uint64_t fe_rnr_timer_ns(uint8_t code);
/* "ACK credits=31", "RNR NAK timer=14 (1.28 ms)", "NAK PSN sequence error"; returns `buf`. */
const char *fe_aeth_describe(uint8_t syndrome, char *buf, size_t cap);
const char *fe_nak_code_name(uint8_t code);

/* ---- parse reasons: every rejection has one, and callers keep a counter per reason ---- */
enum fe_parse_reason {
    FE_PR_OK = 0,
    FE_PR_ETH_SHORT,
    FE_PR_ETH_TYPE, /* not IPv4/IPv6 (after an optional VLAN tag) */
    FE_PR_VLAN_SHORT,
    FE_PR_IP_SHORT,
    FE_PR_IP_VERSION,
    FE_PR_IP_IHL,
    FE_PR_IP_LEN, /* total/payload length inconsistent with the buffer */
    FE_PR_IP_FRAGMENT,
    FE_PR_IP_CHECKSUM,
    FE_PR_IP_PROTO, /* not UDP (IPv6: next header not UDP) */
    FE_PR_UDP_SHORT,
    FE_PR_UDP_LEN,
    FE_PR_UDP_PORT, /* destination port not 4791 */
    FE_PR_BTH_SHORT,
    FE_PR_BTH_TVER,
    FE_PR_OPCODE, /* unknown opcode */
    FE_PR_EXT_SHORT, /* RETH/AETH/ImmDt/AtomicETH past the end */
    FE_PR_PAD,       /* pad count larger than the payload, or pad on an opcode without payload */
    FE_PR_ICRC_SHORT,
    FE_PR_ICRC, /* ICRC mismatch (only from fe_frame_decode with verification) */
    FE_PR_CNP_LEN,
    FE_PR_PAYLOAD, /* payload on an opcode that carries none (ACK, CNP) */
    FE_PR_MAX
};
/* A short identifier for counters and JSON ("udp_port"); fe_parse_reason_text: a sentence. */
const char *fe_parse_reason_name(enum fe_parse_reason r);
const char *fe_parse_reason_text(enum fe_parse_reason r);

struct fe_parse_stats {
    uint64_t ok;
    uint64_t rejected[FE_PR_MAX];
};

/* Single-header codecs. parse: returns bytes consumed (> 0) or 0 with *why set.
 * write: returns bytes written or 0 when cap is too small. */
size_t fe_eth_parse(const uint8_t *p, size_t len, struct fe_eth *h, enum fe_parse_reason *why);
size_t fe_eth_write(uint8_t *p, size_t cap, const struct fe_eth *h);
size_t fe_ipv4_parse(const uint8_t *p, size_t len, struct fe_ipv4 *h, enum fe_parse_reason *why);
size_t fe_ipv4_write(uint8_t *p, size_t cap, const struct fe_ipv4 *h); /* fills the checksum */
uint16_t fe_ipv4_checksum(const uint8_t *hdr, size_t hdr_len);
size_t fe_ipv6_parse(const uint8_t *p, size_t len, struct fe_ipv6 *h, enum fe_parse_reason *why);
size_t fe_ipv6_write(uint8_t *p, size_t cap, const struct fe_ipv6 *h);
size_t fe_udp_parse(const uint8_t *p, size_t len, struct fe_udp *h, enum fe_parse_reason *why);
size_t fe_udp_write(uint8_t *p, size_t cap, const struct fe_udp *h);
/* UDP checksum (RFC 768 / RFC 8200 pseudo-header) of the datagram at `udp` (udp_len bytes, its
 * checksum field ignored) behind the IPv4 or IPv6 header at `ip`; never returns 0. */
uint16_t fe_udp_checksum(const uint8_t *ip, const uint8_t *udp, size_t udp_len);
size_t fe_bth_parse(const uint8_t *p, size_t len, struct fe_bth *h, enum fe_parse_reason *why);
size_t fe_bth_write(uint8_t *p, size_t cap, const struct fe_bth *h);
size_t fe_reth_parse(const uint8_t *p, size_t len, struct fe_reth *h, enum fe_parse_reason *why);
size_t fe_reth_write(uint8_t *p, size_t cap, const struct fe_reth *h);
size_t fe_aeth_parse(const uint8_t *p, size_t len, struct fe_aeth *h, enum fe_parse_reason *why);
size_t fe_aeth_write(uint8_t *p, size_t cap, const struct fe_aeth *h);

/* ---- INT (in-band telemetry) records, carried by simulated packets for HPCC ---- */
#define FE_INT_MAX_HOPS 5
struct fe_int_hop {
    uint64_t ts_ns;      /* switch egress time of this packet */
    uint64_t tx_bytes;   /* bytes transmitted by that egress port so far */
    uint32_t qlen_bytes; /* egress queue length */
    uint32_t rate_mbps;  /* egress port rate */
};
struct fe_int {
    uint8_t nhops;
    struct fe_int_hop hop[FE_INT_MAX_HOPS];
};

/* ---- the transport's view of a packet: BTH onward, decoded ---- */
enum fe_icrc_status { FE_ICRC_UNCHECKED = 0, FE_ICRC_OK = 1, FE_ICRC_BAD = 2 };

struct fe_pkt {
    struct fe_bth bth;
    struct fe_reth reth; /* valid when fe_opcode_flags(bth.opcode) & FE_OPF_RETH; for atomics
                          * (FE_OPF_ATOMIC) the AtomicETH's VA and R_Key, dma_len 8 (the
                          * swap/compare operands are not kept: feroce only refuses atomics) */
    struct fe_aeth aeth; /* valid when ... & FE_OPF_AETH */
    uint32_t imm;        /* ImmDt as a host-order number, valid when ... & FE_OPF_IMM (for
                          * ... & FE_OPF_IETH: the IETH's R_Key) */
    const uint8_t *payload; /* NULL with payload_len > 0 = virtual payload (simulator) */
    uint32_t payload_len;   /* without pad */
    /* From or for the layers below: */
    uint8_t ecn;  /* arrival ECN (rx) or ECN to send with (tx) */
    uint8_t dscp; /* DSCP to send with (tx) */
    uint8_t pcp;  /* 802.1p priority to send with (tx) */
    uint8_t icrc; /* enum fe_icrc_status, set by the decoder (rx) */
    const struct fe_int *int_md; /* INT records, NULL when none */
    uint64_t credit_bytes; /* on ACKs: cumulative receiver grant (Homa-style CC); feroce-to-feroce
                            * metadata that is not encoded on the wire; 0 = none */
};
/* CNP: fe_pkt with bth.opcode FE_OP_CNP, bth.becn set, bth.psn 0, payload_len 16 (payload NULL
 * or 16 zero bytes); fe_pkt_write writes zeros for a NULL payload. */
/* Fills *out with the CNP to destination QP `dqpn`: BECN, default P_Key, PSN 0, a virtual
 * 16-byte zero pad, Not-ECT (a CNP is never marked), sent with `dscp` / `pcp`. Every other
 * field is zero. */
void fe_cnp_build(struct fe_pkt *out, uint32_t dqpn, uint8_t dscp, uint8_t pcp);

/* Bytes of BTH-onward headers (BTH + extension headers) for an opcode; 0 for unknown opcodes. */
size_t fe_pkt_hdr_len(uint8_t opcode);
/* Bytes on the wire from the BTH onward: headers + payload + pad + ICRC. */
size_t fe_pkt_wire_len(const struct fe_pkt *pkt);

/* Parses BTH onward. `len` includes the 4-byte ICRC at the end (not verified here: see
 * fe_frame_decode). pkt->payload points into `p`. Returns 0 or FE_EPARSE with *why set. */
int fe_pkt_parse(const uint8_t *p, size_t len, struct fe_pkt *pkt, enum fe_parse_reason *why);
/* Writes BTH onward: headers, payload (zeros when virtual), pad, and a zero ICRC slot; sets
 * bth.padcnt from payload_len. Returns bytes written or FE_ENOSPC. */
int fe_pkt_write(uint8_t *p, size_t cap, const struct fe_pkt *pkt);

/* ---- whole frames ---- */
enum fe_framing {
    FE_FRAME_ETH = 0, /* Ethernet II [802.1Q] / IPv4|IPv6 / UDP / BTH ... / ICRC (raw sockets) */
    FE_FRAME_IP = 1,  /* IPv4|IPv6 / UDP / BTH ... / ICRC */
    FE_FRAME_BTH = 2, /* BTH ... / ICRC as UDP payload (UDP sockets): the kernel owns IP and UDP,
                       * so this ICRC covers the masked BTH onward only, after the eight 0xFF
                       * bytes; both ends must be feroce */
};

/* Addressing of one direction of a connection, for building whole frames. */
struct fe_path {
    uint8_t src_mac[6], dst_mac[6];
    bool vlan;
    uint16_t vid;
    uint8_t ipver; /* 4 or 6 */
    uint32_t src_ip4, dst_ip4; /* host order */
    uint8_t src_ip6[16], dst_ip6[16];
    uint8_t ttl;         /* hop limit for IPv6; 0 means 64 */
    uint32_t flow_label; /* IPv6 */
    uint16_t udp_sport;
    uint16_t udp_dport; /* 0 means 4791 */
};

/* Bytes a frame adds around the BTH-onward part: Ethernet (+ VLAN tag) + IP + UDP + FCS
 * (no preamble or inter-frame gap). Pacers and simulated links count frame bytes this way. */
size_t fe_path_overhead_bytes(const struct fe_path *path);

/* A decoded whole frame. */
struct fe_frame {
    enum fe_framing framing;
    struct fe_eth eth; /* FE_FRAME_ETH only */
    uint8_t ipver;     /* 4 or 6; 0 for FE_FRAME_BTH */
    struct fe_ipv4 ip4;
    struct fe_ipv6 ip6;
    struct fe_udp udp;
    uint16_t l3_off, l4_off, bth_off; /* offsets in the buffer */
    uint32_t icrc_wire; /* as read from the frame (stored least-significant byte first, so this
                         * equals the CRC value, cf. feroce/icrc.h) */
    uint32_t icrc_calc; /* computed, when verified */
    struct fe_pkt pkt;                /* ecn and icrc filled in */
};

/* Builds a whole frame of `framing` from `pkt` (dscp, ecn, pcp taken from it), `path` and an IP
 * identification; computes lengths, the IPv4 checksum and the ICRC. IPv4 goes out with DF set
 * and UDP checksum 0 (the ICRC protects the packet, as RoCE NICs do); IPv6 gets a real UDP
 * checksum, since RFC 8200 forbids 0 there (and Wireshark flags it). Ethernet frames are not
 * padded to 60 bytes (the NIC does that); `path` may be NULL for FE_FRAME_BTH. Returns the frame
 * length or FE_ENOSPC / FE_EINVAL. */
int fe_frame_encode(uint8_t *buf, size_t cap, enum fe_framing framing, const struct fe_path *path,
                    uint16_t ip_id, const struct fe_pkt *pkt);

/* Decodes a whole frame; with `verify_icrc` computes the ICRC and sets pkt.icrc to OK/BAD (a bad
 * ICRC is reported in pkt.icrc and *why = FE_PR_ICRC, and still returns 0 so that the responder
 * can count it). Returns 0, or FE_EPARSE with *why set and *out zeroed but for out->framing (no
 * member of a rejected frame is left half-parsed). `stats`, when not NULL, is updated.
 * FE_FRAME_ETH/IP: the IP length decides where the packet ends, so Ethernet padding after it is
 * ignored; IPv4 options are accepted, IPv4 fragments and IPv6 extension headers are not. */
int fe_frame_decode(const uint8_t *buf, size_t len, enum fe_framing framing, bool verify_icrc,
                    struct fe_frame *out, enum fe_parse_reason *why, struct fe_parse_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
