/* Names and sentences for parse rejection reasons (counters, decode output, JSON). */
#include "feroce/wire.h"

static const char *const names[FE_PR_MAX] = {
    [FE_PR_OK] = "ok",
    [FE_PR_ETH_SHORT] = "eth_short",
    [FE_PR_ETH_TYPE] = "eth_type",
    [FE_PR_VLAN_SHORT] = "vlan_short",
    [FE_PR_IP_SHORT] = "ip_short",
    [FE_PR_IP_VERSION] = "ip_version",
    [FE_PR_IP_IHL] = "ip_ihl",
    [FE_PR_IP_LEN] = "ip_len",
    [FE_PR_IP_FRAGMENT] = "ip_fragment",
    [FE_PR_IP_CHECKSUM] = "ip_checksum",
    [FE_PR_IP_PROTO] = "ip_proto",
    [FE_PR_UDP_SHORT] = "udp_short",
    [FE_PR_UDP_LEN] = "udp_len",
    [FE_PR_UDP_PORT] = "udp_port",
    [FE_PR_BTH_SHORT] = "bth_short",
    [FE_PR_BTH_TVER] = "bth_tver",
    [FE_PR_OPCODE] = "opcode",
    [FE_PR_EXT_SHORT] = "ext_short",
    [FE_PR_PAD] = "pad",
    [FE_PR_ICRC_SHORT] = "icrc_short",
    [FE_PR_ICRC] = "icrc",
    [FE_PR_CNP_LEN] = "cnp_len",
    [FE_PR_PAYLOAD] = "payload",
};

static const char *const texts[FE_PR_MAX] = {
    [FE_PR_OK] = "ok",
    [FE_PR_ETH_SHORT] = "shorter than an Ethernet header",
    [FE_PR_ETH_TYPE] = "EtherType is not IPv4 or IPv6",
    [FE_PR_VLAN_SHORT] = "802.1Q tag cut short",
    [FE_PR_IP_SHORT] = "shorter than its IP header",
    [FE_PR_IP_VERSION] = "wrong IP version",
    [FE_PR_IP_IHL] = "IPv4 header length below 20 bytes",
    [FE_PR_IP_LEN] = "IP length inconsistent with the captured bytes",
    [FE_PR_IP_FRAGMENT] = "IP fragment",
    [FE_PR_IP_CHECKSUM] = "bad IPv4 header checksum",
    [FE_PR_IP_PROTO] = "not UDP",
    [FE_PR_UDP_SHORT] = "shorter than a UDP header",
    [FE_PR_UDP_LEN] = "UDP length inconsistent with the IP length",
    [FE_PR_UDP_PORT] = "UDP destination port is not 4791",
    [FE_PR_BTH_SHORT] = "shorter than a BTH",
    [FE_PR_BTH_TVER] = "BTH transport version is not 0",
    [FE_PR_OPCODE] = "unknown or unsupported BTH opcode",
    [FE_PR_EXT_SHORT] = "extension header (RETH/AETH/ImmDt/AtomicETH) cut short",
    [FE_PR_PAD] = "bad pad count",
    [FE_PR_ICRC_SHORT] = "no room for the ICRC",
    [FE_PR_ICRC] = "ICRC mismatch",
    [FE_PR_CNP_LEN] = "CNP is not 16 bytes after the BTH",
    [FE_PR_PAYLOAD] = "payload on an opcode that carries none",
};

const char *fe_parse_reason_name(enum fe_parse_reason r)
{
    return (unsigned)r < FE_PR_MAX ? names[r] : "invalid";
}

const char *fe_parse_reason_text(enum fe_parse_reason r)
{
    return (unsigned)r < FE_PR_MAX ? texts[r] : "invalid reason";
}
