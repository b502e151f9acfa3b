/* Whole frames: Ethernet [802.1Q] / IPv4|IPv6 / UDP 4791 / BTH ... / ICRC, in three framings. */
#include "feroce/err.h"
#include "feroce/icrc.h"
#include "feroce/wire.h"
#include "wire/bytes.h"
#include "wire/clear.h"
#include "wire/crc_impl.h"

#include <string.h>

#define FE_FCS_LEN 4

size_t fe_path_overhead_bytes(const struct fe_path *path)
{
    size_t n = FE_ETH_HDR_LEN + FE_UDP_HDR_LEN + FE_FCS_LEN;
    if (!path) return n + FE_IPV4_HDR_LEN;
    if (path->vlan) n += FE_VLAN_TAG_LEN;
    n += path->ipver == 6 ? FE_IPV6_HDR_LEN : FE_IPV4_HDR_LEN;
    return n;
}

int fe_frame_encode(uint8_t *buf, size_t cap, enum fe_framing framing, const struct fe_path *path,
                    uint16_t ip_id, const struct fe_pkt *pkt)
{
    size_t off = 0;
    if (framing != FE_FRAME_BTH) {
        if (framing != FE_FRAME_ETH && framing != FE_FRAME_IP) return FE_EINVAL;
        if (!path || (path->ipver != 4 && path->ipver != 6)) return FE_EINVAL;
    }
    size_t body = fe_pkt_wire_len(pkt);
    if (framing == FE_FRAME_ETH) {
        struct fe_eth eth = {.has_vlan = path->vlan,
                             .pcp = pkt->pcp & 7,
                             .vid = path->vid & 0xfff,
                             .ethertype = path->ipver == 6 ? FE_ETHERTYPE_IPV6 : FE_ETHERTYPE_IPV4};
        memcpy(eth.dst, path->dst_mac, 6);
        memcpy(eth.src, path->src_mac, 6);
        off = fe_eth_write(buf, cap, &eth);
        if (!off) return FE_ENOSPC;
    }
    size_t l3 = off;
    if (framing != FE_FRAME_BTH) {
        size_t iphdr = path->ipver == 6 ? FE_IPV6_HDR_LEN : FE_IPV4_HDR_LEN;
        size_t udp_len = FE_UDP_HDR_LEN + body;
        if (udp_len > 0xffff || iphdr + udp_len > 0xffff) return FE_EINVAL;
        if (cap - off < iphdr + udp_len) return FE_ENOSPC;
        uint8_t ttl = path->ttl ? path->ttl : 64;
        if (path->ipver == 4) {
            struct fe_ipv4 ip = {.ihl = 5,
                                 .dscp = pkt->dscp & 0x3f,
                                 .ecn = pkt->ecn & 3,
                                 .ttl = ttl,
                                 .protocol = FE_IPPROTO_UDP,
                                 .total_len = (uint16_t)(iphdr + udp_len),
                                 .id = ip_id,
                                 .frag = 0x4000 /* DF */,
                                 .src = path->src_ip4,
                                 .dst = path->dst_ip4};
            off += fe_ipv4_write(buf + off, cap - off, &ip);
        } else {
            struct fe_ipv6 ip = {.dscp = pkt->dscp & 0x3f,
                                 .ecn = pkt->ecn & 3,
                                 .flow_label = path->flow_label & 0xfffff,
                                 .payload_len = (uint16_t)udp_len,
                                 .next_header = FE_IPPROTO_UDP,
                                 .hop_limit = ttl};
            memcpy(ip.src, path->src_ip6, 16);
            memcpy(ip.dst, path->dst_ip6, 16);
            off += fe_ipv6_write(buf + off, cap - off, &ip);
        }
        struct fe_udp udp = {.sport = path->udp_sport,
                             .dport = path->udp_dport ? path->udp_dport : FE_ROCEV2_UDP_PORT,
                             .len = (uint16_t)udp_len,
                             .checksum = 0};
        off += fe_udp_write(buf + off, cap - off, &udp);
    }
    int n = fe_pkt_write(buf + off, cap - off, pkt);
    if (n < 0) return n;
    size_t end = off + (size_t)n;
    int rc =
        framing == FE_FRAME_BTH ? fe_icrc_fill_bth(buf, end) : fe_icrc_fill_ip(buf + l3, end - l3);
    if (rc) return rc;
    if (framing != FE_FRAME_BTH && path->ipver == 6) {
        /* after the ICRC: the UDP checksum covers it (and the ICRC masks the checksum) */
        size_t l4 = l3 + FE_IPV6_HDR_LEN;
        uint16_t c = fe_udp_checksum(buf + l3, buf + l4, end - l4);
        buf[l4 + 6] = (uint8_t)(c >> 8);
        buf[l4 + 7] = (uint8_t)c;
    }
    return (int)end;
}

/* Every member of a decoded frame zeroed but the framing, member by member: one 200-byte
 * memset compiles to `rep stos`, whose start-up cost is larger than the whole parse on some
 * CPUs (AMD Zen). */
static void clear_frame(struct fe_frame *out)
{
    out->eth = (struct fe_eth){0};
    out->ipver = 0;
    out->ip4 = (struct fe_ipv4){0};
    out->ip6 = (struct fe_ipv6){0};
    out->udp = (struct fe_udp){0};
    out->l3_off = out->l4_off = out->bth_off = 0;
    out->icrc_wire = out->icrc_calc = 0;
    fe_pkt_clear(&out->pkt);
}

/* A rejected frame is left zeroed (but its framing): the accepted path writes each member once,
 * and clears only those its framing has none of, so the rejects clear for it. */
__attribute__((cold)) static int reject(struct fe_frame *out, enum fe_parse_reason r,
                                        enum fe_parse_reason *why, struct fe_parse_stats *stats)
{
    clear_frame(out);
    if (why) *why = r;
    if (stats && (unsigned)r < FE_PR_MAX) stats->rejected[r]++;
    return FE_EPARSE;
}

/* Parses IPv4 or IPv6 (as the Ethernet type, when there is one, says) and UDP from buf + off;
 * sets the IP members, the UDP header, ipver, l3_off, l4_off, *end (where the IP length ends the
 * packet), *ecn and *dscp. Returns the BTH's offset, or 0 with *r set. */
static size_t parse_ip_udp(const uint8_t *buf, size_t len, size_t off, uint16_t ethertype,
                           struct fe_frame *out, size_t *end, uint8_t *ecn, uint8_t *dscp,
                           enum fe_parse_reason *r)
{
    out->l3_off = (uint16_t)off;
    if (off >= len) return *r = FE_PR_IP_SHORT, 0;
    uint8_t ver = buf[off] >> 4;
    if ((ethertype == FE_ETHERTYPE_IPV4 && ver != 4) ||
        (ethertype == FE_ETHERTYPE_IPV6 && ver != 6))
        return *r = FE_PR_IP_VERSION, 0;
    size_t n;
    if (ver == 4) {
        n = fe_ipv4_parse(buf + off, len - off, &out->ip4, r);
        if (!n) return 0;
        if (out->ip4.protocol != FE_IPPROTO_UDP) return *r = FE_PR_IP_PROTO, 0;
        out->ip6 = (struct fe_ipv6){0};
        *ecn = out->ip4.ecn, *dscp = out->ip4.dscp;
        *end = off + out->ip4.total_len; /* drops Ethernet padding */
    } else if (ver == 6) {
        n = fe_ipv6_parse(buf + off, len - off, &out->ip6, r);
        if (!n) return 0;
        if (out->ip6.next_header != FE_IPPROTO_UDP) return *r = FE_PR_IP_PROTO, 0;
        out->ip4 = (struct fe_ipv4){0};
        *ecn = out->ip6.ecn, *dscp = out->ip6.dscp;
        *end = off + FE_IPV6_HDR_LEN + out->ip6.payload_len;
    } else {
        return *r = FE_PR_IP_VERSION, 0;
    }
    out->ipver = ver;
    off += n;
    out->l4_off = (uint16_t)off;
    n = fe_udp_parse(buf + off, *end - off, &out->udp, r);
    if (!n) return 0;
    if (out->udp.len != *end - off) return *r = FE_PR_UDP_LEN, 0;
    if (out->udp.dport != FE_ROCEV2_UDP_PORT) return *r = FE_PR_UDP_PORT, 0;
    return off + n;
}

/* Starts the ICRC before the parse (crc_impl.h: the parse then runs while the CRC does) where the
 * first bytes say where the IP packet starts and ends; sets *l3 and *end, which the parse must
 * confirm before the result is used. False: the ICRC waits for the parse. */
static bool icrc_begin_early(const uint8_t *buf, size_t len, enum fe_framing framing,
                             struct fe_icrc_split *s, size_t *l3, size_t *end)
{
    if (framing == FE_FRAME_BTH) {
        *l3 = 0, *end = len;
        return fe_icrc_bth_begin(s, buf, len);
    }
    size_t off = 0, iplen = 0;
    if (framing == FE_FRAME_ETH) {
        if (len < FE_ETH_HDR_LEN + FE_VLAN_TAG_LEN) return false;
        off = fe_be16(buf + 12) == FE_ETHERTYPE_VLAN ? FE_ETH_HDR_LEN + FE_VLAN_TAG_LEN
                                                     : FE_ETH_HDR_LEN;
    }
    if (len < off + FE_IPV6_HDR_LEN) return false;
    const uint8_t *ip = buf + off;
    if (ip[0] >> 4 == 4)
        iplen = fe_be16(ip + 2);
    else if (ip[0] >> 4 == 6)
        iplen = FE_IPV6_HDR_LEN + (size_t)fe_be16(ip + 4);
    if (iplen > len - off) return false;
    *l3 = off, *end = off + iplen;
    return fe_icrc_ip_begin(s, ip, iplen);
}

int fe_frame_decode(const uint8_t *buf, size_t len, enum fe_framing framing, bool verify_icrc,
                    struct fe_frame *out, enum fe_parse_reason *why, struct fe_parse_stats *stats)
{
    enum fe_parse_reason r = FE_PR_OK;
    out->framing = framing;
    size_t off = 0, end = len;
    /* Kept in registers until fe_pkt_parse has cleared pkt: read back from pkt as one 16-bit
     * load, two fresh byte stores defeat store-to-load forwarding (a stall as long as the rest
     * of the parse). */
    uint8_t ecn = 0, dscp = 0;
    struct fe_icrc_split icrc;
    size_t icrc_l3 = 0, icrc_end = 0;
    bool early = verify_icrc && icrc_begin_early(buf, len, framing, &icrc, &icrc_l3, &icrc_end);

    if (framing == FE_FRAME_BTH) {
        out->eth = (struct fe_eth){0};
        out->ipver = 0;
        out->ip4 = (struct fe_ipv4){0};
        out->ip6 = (struct fe_ipv6){0};
        out->udp = (struct fe_udp){0};
        out->l3_off = out->l4_off = 0;
    } else {
        uint16_t type = 0; /* none: FE_FRAME_IP */
        if (framing == FE_FRAME_ETH) {
            off = fe_eth_parse(buf, len, &out->eth, &r);
            if (!off) return reject(out, r, why, stats);
            type = out->eth.ethertype;
            if (type != FE_ETHERTYPE_IPV4 && type != FE_ETHERTYPE_IPV6)
                return reject(out, FE_PR_ETH_TYPE, why, stats);
        } else if (framing == FE_FRAME_IP) {
            out->eth = (struct fe_eth){0};
        } else {
            return reject(out, FE_PR_ETH_TYPE, why, stats);
        }
        off = parse_ip_udp(buf, len, off, type, out, &end, &ecn, &dscp, &r);
        if (!off) return reject(out, r, why, stats);
    }

    out->bth_off = (uint16_t)off;
    if (fe_pkt_parse(buf + off, end - off, &out->pkt, &r)) return reject(out, r, why, stats);
    out->pkt.ecn = ecn;
    out->pkt.dscp = dscp;
    out->pkt.pcp = out->eth.pcp;
    out->icrc_wire = fe_icrc_load(buf + end - FE_ICRC_LEN);
    out->icrc_calc = 0;
    if (verify_icrc) {
        int rc = 0;
        if (early && out->l3_off == icrc_l3 && end == icrc_end)
            out->icrc_calc = fe_icrc_split_end(&icrc);
        else if (framing == FE_FRAME_BTH)
            rc = fe_icrc_bth(buf + off, end - off, &out->icrc_calc);
        else
            rc = fe_icrc_ip(buf + out->l3_off, end - out->l3_off, &out->icrc_calc);
        if (rc) return reject(out, FE_PR_ICRC_SHORT, why, stats); /* not reached: sizes checked */
        if (out->icrc_calc != out->icrc_wire) {
            out->pkt.icrc = FE_ICRC_BAD;
            if (why) *why = FE_PR_ICRC;
            if (stats) stats->rejected[FE_PR_ICRC]++;
            return 0;
        }
        out->pkt.icrc = FE_ICRC_OK;
    }
    if (why) *why = FE_PR_OK;
    if (stats) stats->ok++;
    return 0;
}
