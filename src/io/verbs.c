/* libibverbs helpers (see verbs.h). */
#include "io/verbs.h"

#include <errno.h>
#include <stdbool.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/err.h"

static bool gid_ipv4(const union ibv_gid *g, uint32_t *ip4)
{
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (memcmp(g->raw, prefix, 12)) return false;
    *ip4 = (uint32_t)g->raw[12] << 24 | (uint32_t)g->raw[13] << 16 | (uint32_t)g->raw[14] << 8 |
           g->raw[15];
    return true;
}

static int read_int_file(const char *path, int dflt)
{
    FILE *f = fopen(path, "r");
    if (!f) return dflt;
    int v;
    if (fscanf(f, "%d", &v) != 1) v = dflt;
    fclose(f);
    return v;
}

/* Opens the device called name (the first one when name is NULL). */
static int open_device(struct fe_verbs_dev *d, const char *name, char *err, size_t errcap)
{
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    if (!list || n == 0) {
        snprintf(err, errcap, "no RDMA device (is a driver loaded? rxe: rdma link add)");
        if (list) ibv_free_device_list(list);
        return FE_ENOENT;
    }
    struct ibv_device *dev = NULL;
    for (int i = 0; i < n; i++)
        if (!name || !strcmp(ibv_get_device_name(list[i]), name)) {
            dev = list[i];
            break;
        }
    if (!dev) {
        snprintf(err, errcap, "no RDMA device named '%s'", name);
        ibv_free_device_list(list);
        return FE_ENOENT;
    }
    snprintf(d->name, sizeof d->name, "%s", ibv_get_device_name(dev));
    d->ctx = ibv_open_device(dev);
    ibv_free_device_list(list);
    if (!d->ctx) {
        snprintf(err, errcap, "ibv_open_device(%s): %s", d->name, strerror(errno));
        return FE_EIO;
    }
    return 0;
}

/* The port must exist and be Ethernet (RoCE); one that is not active yet only gets a warning. */
static int check_port(struct fe_verbs_dev *d, uint8_t port, char *err, size_t errcap)
{
    struct ibv_port_attr pa;
    if (ibv_query_port(d->ctx, port, &pa)) {
        snprintf(err, errcap, "%s: no port %u", d->name, port);
        return FE_ENOENT;
    }
    if (pa.state != IBV_PORT_ACTIVE)
        fprintf(stderr, "warning: %s port %u is %s\n", d->name, port, ibv_port_state_str(pa.state));
    if (pa.link_layer != IBV_LINK_LAYER_ETHERNET) {
        snprintf(err, errcap, "%s port %u is not Ethernet (RoCE)", d->name, port);
        return FE_ENOTSUP;
    }
    d->port = port;
    d->active_mtu_bytes = fe_verbs_mtu_bytes(pa.active_mtu);
    return 0;
}

/* The RoCEv2 GID of an IPv4 address (want_ip4 when not 0): what the front-ends' IPv4 packets
 * carry. */
static int find_ipv4_gid(struct fe_verbs_dev *d, uint8_t port, uint32_t want_ip4, char *err,
                         size_t errcap)
{
    struct ibv_gid_entry ent[256];
    ssize_t m = ibv_query_gid_table(d->ctx, ent, 256, 0);
    for (ssize_t i = 0; i < m; i++) {
        uint32_t ip;
        if (ent[i].port_num != port || ent[i].gid_type != IBV_GID_TYPE_ROCE_V2 ||
            !gid_ipv4(&ent[i].gid, &ip) || (want_ip4 && ip != want_ip4))
            continue;
        d->gid_index = (int)ent[i].gid_index;
        d->gid = ent[i].gid;
        d->ip4 = ip;
        return 0;
    }
    snprintf(err, errcap, "%s port %u has no RoCEv2 GID of an IPv4 address%s", d->name, port,
             want_ip4 ? " matching --ip" : "");
    return FE_ENOENT;
}

/* The GID at gid_index, or (gid_index < 0) the one found by find_ipv4_gid. */
static int select_gid(struct fe_verbs_dev *d, uint8_t port, int gid_index, uint32_t want_ip4,
                      char *err, size_t errcap)
{
    if (gid_index < 0) return find_ipv4_gid(d, port, want_ip4, err, errcap);
    if (ibv_query_gid(d->ctx, port, gid_index, &d->gid)) {
        snprintf(err, errcap, "%s: no GID %d", d->name, gid_index);
        return FE_ENOENT;
    }
    d->gid_index = gid_index;
    if (!gid_ipv4(&d->gid, &d->ip4)) d->ip4 = 0;
    return 0;
}

static int alloc_pd(struct fe_verbs_dev *d, char *err, size_t errcap)
{
    char path[256];
    snprintf(path, sizeof path, "/sys/class/infiniband/%s/device/numa_node", d->name);
    d->numa_node = read_int_file(path, -1);
    d->pd = ibv_alloc_pd(d->ctx);
    if (!d->pd) {
        snprintf(err, errcap, "ibv_alloc_pd: %s", strerror(errno));
        return FE_EIO;
    }
    return 0;
}

int fe_verbs_open(struct fe_verbs_dev *d, const char *name, uint8_t port, int gid_index,
                  uint32_t want_ip4, char *err, size_t errcap)
{
    memset(d, 0, sizeof *d);
    d->gid_index = -1;
    int e = open_device(d, name, err, errcap);
    if (!e) e = check_port(d, port, err, errcap);
    if (!e) e = select_gid(d, port, gid_index, want_ip4, err, errcap);
    if (!e) e = alloc_pd(d, err, errcap);
    if (e) fe_verbs_close(d);
    return e;
}

void fe_verbs_close(struct fe_verbs_dev *d)
{
    if (d->pd) ibv_dealloc_pd(d->pd);
    if (d->ctx) ibv_close_device(d->ctx);
    d->pd = NULL;
    d->ctx = NULL;
}

enum ibv_mtu fe_verbs_mtu_enum(uint32_t bytes)
{
    switch (bytes) {
    case 256:
        return IBV_MTU_256;
    case 512:
        return IBV_MTU_512;
    case 1024:
        return IBV_MTU_1024;
    case 2048:
        return IBV_MTU_2048;
    case 4096:
        return IBV_MTU_4096;
    default:
        return (enum ibv_mtu)0;
    }
}

uint32_t fe_verbs_mtu_bytes(enum ibv_mtu mtu)
{
    return (mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096) ? 128u << mtu : 0;
}

const char *fe_verbs_qp_state_name(enum ibv_qp_state s)
{
    switch (s) {
    case IBV_QPS_RESET:
        return "RESET";
    case IBV_QPS_INIT:
        return "INIT";
    case IBV_QPS_RTR:
        return "RTR";
    case IBV_QPS_RTS:
        return "RTS";
    case IBV_QPS_SQD:
        return "SQD";
    case IBV_QPS_SQE:
        return "SQE";
    case IBV_QPS_ERR:
        return "ERROR";
    default:
        return "UNKNOWN";
    }
}

int fe_verbs_qp_init(struct ibv_qp *qp, const struct fe_verbs_dev *d, unsigned access)
{
    struct ibv_qp_attr a;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_INIT;
    a.pkey_index = 0;
    a.port_num = d->port;
    a.qp_access_flags = access;
    int rc =
        ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    if (!rc) return 0;
    errno = rc; /* ibv_modify_qp returns its errno rather than setting it: callers print errno */
    return FE_EIO;
}

int fe_verbs_qp_connect(struct ibv_qp *qp, const struct fe_verbs_dev *d,
                        const struct fe_verbs_peer *peer, char *err, size_t errcap)
{
    enum ibv_mtu mtu = fe_verbs_mtu_enum(peer->mtu_bytes);
    if (!mtu) {
        snprintf(err, errcap, "MTU %u is not 256..4096", peer->mtu_bytes);
        return FE_EINVAL;
    }
    struct ibv_qp_attr a;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = mtu;
    a.dest_qp_num = peer->qpn;
    a.rq_psn = peer->rq_psn & 0xFFFFFF;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = peer->min_rnr_timer;
    a.ah_attr.is_global = 1;
    a.ah_attr.port_num = d->port;
    a.ah_attr.grh.sgid_index = (uint8_t)d->gid_index;
    a.ah_attr.grh.hop_limit = 64;
    a.ah_attr.grh.traffic_class = peer->traffic_class;
    memset(a.ah_attr.grh.dgid.raw, 0, 10);
    a.ah_attr.grh.dgid.raw[10] = 0xff;
    a.ah_attr.grh.dgid.raw[11] = 0xff;
    a.ah_attr.grh.dgid.raw[12] = (uint8_t)(peer->ip4 >> 24);
    a.ah_attr.grh.dgid.raw[13] = (uint8_t)(peer->ip4 >> 16);
    a.ah_attr.grh.dgid.raw[14] = (uint8_t)(peer->ip4 >> 8);
    a.ah_attr.grh.dgid.raw[15] = (uint8_t)peer->ip4;
    int rc = ibv_modify_qp(qp, &a,
                           IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                               IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    if (rc) {
        /* rxe resolves the peer's MAC here (ARP): a missing neighbour fails now. */
        snprintf(err, errcap, "QP %u to RTR: %s", qp->qp_num, strerror(rc));
        return FE_EIO;
    }
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTS;
    a.timeout = peer->timeout;
    a.retry_cnt = peer->retry_cnt;
    a.rnr_retry = peer->rnr_retry;
    a.sq_psn = peer->sq_psn & 0xFFFFFF;
    a.max_rd_atomic = 1;
    rc = ibv_modify_qp(qp, &a,
                       IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                           IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
    if (rc) {
        snprintf(err, errcap, "QP %u to RTS: %s", qp->qp_num, strerror(rc));
        return FE_EIO;
    }
    return 0;
}

enum ibv_qp_state fe_verbs_qp_state(struct ibv_qp *qp)
{
    struct ibv_qp_attr a;
    struct ibv_qp_init_attr ia;
    if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia)) return (enum ibv_qp_state) - 1;
    return a.qp_state;
}

/* Parses a sysfs CPU list such as "0-3,8,10-11" into `set`. */
static int parse_cpulist(const char *s, cpu_set_t *set)
{
    CPU_ZERO(set);
    while (*s && *s != '\n') {
        char *end;
        long a = strtol(s, &end, 10), b;
        if (end == s || a < 0) return FE_EPARSE;
        b = a;
        if (*end == '-') {
            s = end + 1;
            b = strtol(s, &end, 10);
            if (end == s || b < a) return FE_EPARSE;
        }
        for (long c = a; c <= b && c < CPU_SETSIZE; c++) CPU_SET((int)c, set);
        s = end;
        if (*s == ',') s++;
    }
    return CPU_COUNT(set) ? 0 : FE_EPARSE;
}

int fe_verbs_pin(int cpu, int node, char *desc, size_t desccap)
{
    cpu_set_t set;
    if (cpu >= 0) {
        if (cpu >= CPU_SETSIZE) return FE_ERANGE;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        snprintf(desc, desccap, "CPU %d", cpu);
    } else if (node >= 0) {
        char path[128], buf[1024];
        snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpulist", node);
        FILE *f = fopen(path, "r");
        if (!f) return FE_ENOENT;
        char *ok = fgets(buf, sizeof buf, f);
        fclose(f);
        if (!ok || parse_cpulist(buf, &set)) return FE_EPARSE;
        buf[strcspn(buf, "\n")] = 0;
        snprintf(desc, desccap, "NUMA node %d (CPUs %s)", node, buf);
    } else {
        snprintf(desc, desccap, "not pinned");
        return 0;
    }
    return sched_setaffinity(0, sizeof set, &set) ? FE_EIO : 0;
}
