/* The live side of portcap.c: the ethtool ioctl on a RoCE port's netdev and directed-route
 * SMPs on an InfiniBand port through libibumad (dlopen, no link dependency). Thin on
 * purpose: every decision is in portcap.c; every failure leaves the maximum unknown. */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <net/if.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/ethtool.h>
#include <linux/sockios.h>

#include "nettune/sysfs.h"
#include "rdma.h"

#define NT_SMP_TIMEOUT_MS 10

/* ------------------------------------------------------------------ ethtool */

/* The link modes (supported, advertising, link partner) of netdev: 1 on success. */
static int nt_ethtool_modes(const char *netdev, uint32_t *sup, uint32_t *adv, uint32_t *lp,
                            int *nwords, char *why, size_t whylen)
{
    struct {
        struct ethtool_link_settings s;
        uint32_t maps[3 * 127];
    } req;
    struct ifreq ifr;
    int fd, n, ok = 0;

    if (strlen(netdev) >= IFNAMSIZ) {
        snprintf(why, whylen, "network device name %s is too long for ethtool", netdev);
        return 0;
    }
    fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(why, whylen, "no socket for the ethtool ioctl: %s", strerror(errno));
        return 0;
    }
    memset(&ifr, 0, sizeof(ifr));
    memcpy(ifr.ifr_name, netdev, strlen(netdev) + 1);
    /* ETHTOOL_GLINKSETTINGS handshake: nwords 0 asks the kernel for its size (returned
     * negated), then the real request. */
    memset(&req, 0, sizeof(req));
    req.s.cmd = ETHTOOL_GLINKSETTINGS;
    ifr.ifr_data = (void *)&req;
    if (ioctl(fd, SIOCETHTOOL, &ifr) == 0 && req.s.link_mode_masks_nwords < 0 &&
        -req.s.link_mode_masks_nwords <= 127) {
        n = -req.s.link_mode_masks_nwords;
        memset(&req, 0, sizeof(req));
        req.s.cmd = ETHTOOL_GLINKSETTINGS;
        req.s.link_mode_masks_nwords = (int8_t)n;
        if (ioctl(fd, SIOCETHTOOL, &ifr) == 0 && req.s.link_mode_masks_nwords == n) {
            memcpy(sup, req.maps, n * 4);
            memcpy(adv, req.maps + n, n * 4);
            memcpy(lp, req.maps + 2 * n, n * 4);
            *nwords = n;
            ok = 1;
        }
    }
    if (!ok) {
        struct ethtool_cmd cmd;
        memset(&cmd, 0, sizeof(cmd));
        cmd.cmd = ETHTOOL_GSET;
        ifr.ifr_data = (void *)&cmd;
        if (ioctl(fd, SIOCETHTOOL, &ifr) == 0) {
            sup[0] = cmd.supported;
            adv[0] = cmd.advertising;
            lp[0] = cmd.lp_advertising;
            *nwords = 1;
            ok = 1;
        } else {
            snprintf(why, whylen, "ethtool on %s failed: %s", netdev, strerror(errno));
        }
    }
    close(fd);
    return ok;
}

static void nt_caps_roce(nt_rdma_port_t *p)
{
    uint32_t sup[127] = {0}, adv[127] = {0}, lp[127] = {0}, both[127], both_en[127];
    int n = 0;

    if (!p->netdev[0]) {
        snprintf(p->max_why, sizeof(p->max_why), "no network device known for this RoCE port");
        return;
    }
    if (!nt_ethtool_modes(p->netdev, sup, adv, lp, &n, p->max_why, sizeof(p->max_why)))
        return;
    if (!nt_eth_caps_from_modes(sup, n, &p->max)) {
        snprintf(p->max_why, sizeof(p->max_why),
                 "%s reports no supported link mode this build knows (virtual NICs report "
                 "none)",
                 p->netdev);
        return;
    }
    snprintf(p->max_source, sizeof(p->max_source), "ethtool");
    /* The link partner's advertised modes (autonegotiation) tell what the peer can do. */
    for (int i = 0; i < n; i++) {
        both[i] = sup[i] & lp[i];
        both_en[i] = adv[i] & lp[i];
    }
    if (nt_eth_caps_from_modes(both, n, &p->common_max))
        nt_eth_caps_from_modes(both_en, n, &p->enabled_max);
}

/* ------------------------------------------------------------------ umad */

typedef struct nt_umad_api {
    int (*init)(void);
    int (*open_port)(const char *, int);
    int (*close_port)(int);
    int (*reg)(int, int, int, uint8_t, long *);
    int (*unreg)(int, int);
    int (*send)(int, int, void *, int, int, int);
    int (*recv)(int, void *, int *, int);
    void *(*get_mad)(void *);
    size_t (*size)(void);
    int (*set_addr)(void *, int, int, int, int);
    int (*status)(void *);
    int ok;
    char why[160];
} nt_umad_api_t;

static nt_umad_api_t nt_umad;
static pthread_once_t nt_umad_once = PTHREAD_ONCE_INIT;

static void nt_umad_load(void)
{
    void *h = dlopen("libibumad.so.3", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(nt_umad.why, sizeof(nt_umad.why),
                 "libibumad.so.3 not found (apt-get install libibumad3)");
        return;
    }
#define NT_SYM(f, name)                                                                            \
    do {                                                                                           \
        *(void **)&nt_umad.f = dlsym(h, name);                                                     \
        if (!nt_umad.f) {                                                                          \
            snprintf(nt_umad.why, sizeof(nt_umad.why), "libibumad.so.3 lacks %s", name);           \
            return;                                                                                \
        }                                                                                          \
    } while (0)
    NT_SYM(init, "umad_init");
    NT_SYM(open_port, "umad_open_port");
    NT_SYM(close_port, "umad_close_port");
    NT_SYM(reg, "umad_register");
    NT_SYM(unreg, "umad_unregister");
    NT_SYM(send, "umad_send");
    NT_SYM(recv, "umad_recv");
    NT_SYM(get_mad, "umad_get_mad");
    NT_SYM(size, "umad_size");
    NT_SYM(set_addr, "umad_set_addr");
    NT_SYM(status, "umad_status");
#undef NT_SYM
    if (nt_umad.init() < 0) {
        snprintf(nt_umad.why, sizeof(nt_umad.why), "umad_init failed");
        return;
    }
    nt_umad.ok = 1;
}

/* One SMP Get and its response's 64 data bytes into data: 1 on success. */
static int nt_smp_get(int fd, int agent, void *umad, uint16_t attr, uint32_t mod, int hops,
                      int out_port, uint8_t data[64])
{
    static uint64_t tid_seq;
    uint64_t tid = ((uint64_t)getpid() << 32) | (uint32_t)++tid_seq;
    size_t sz = nt_umad.size();

    memset(umad, 0, sz + NT_SMP_SIZE);
    nt_smp_build_dr_get(nt_umad.get_mad(umad), attr, mod, tid, hops, out_port);
    nt_umad.set_addr(umad, 0xffff, 0, 0, 0);
    if (nt_umad.send(fd, agent, umad, NT_SMP_SIZE, NT_SMP_TIMEOUT_MS, 0) < 0)
        return 0;
    for (int tries = 0; tries < 3; tries++) {
        int len = NT_SMP_SIZE;
        const uint8_t *d;
        if (nt_umad.recv(fd, umad, &len, 2 * NT_SMP_TIMEOUT_MS) < 0 || nt_umad.status(umad))
            return 0;
        d = nt_smp_response_data(nt_umad.get_mad(umad), len, attr, tid);
        if (d) {
            memcpy(data, d, 64);
            return 1;
        }
    }
    return 0;
}

static void nt_caps_ib(nt_rdma_port_t *p)
{
    uint8_t data[64];
    nt_ib_portinfo_t mine, peer, both;
    void *umad;
    int fd, agent;

    pthread_once(&nt_umad_once, nt_umad_load);
    if (!nt_umad.ok) {
        snprintf(p->max_why, sizeof(p->max_why), "%s", nt_umad.why);
        return;
    }
    errno = 0;
    fd = nt_umad.open_port(p->dev, p->port);
    if (fd < 0) {
        snprintf(p->max_why, sizeof(p->max_why),
                 "cannot open the umad device of %s:%d%s%s: PortInfo needs read-write access "
                 "to /dev/infiniband/umad* (root, or a udev rule)",
                 p->dev, p->port, errno ? ": " : "", errno ? strerror(errno) : "");
        return;
    }
    agent = nt_umad.reg(fd, 0x81, 1, 0, NULL);
    umad = agent >= 0 ? calloc(1, nt_umad.size() + NT_SMP_SIZE) : NULL;
    if (!umad) {
        snprintf(p->max_why, sizeof(p->max_why),
                 "cannot register a directed-route SMP agent on %s:%d", p->dev, p->port);
        goto out;
    }
    if (!nt_smp_get(fd, agent, umad, NT_IB_ATTR_PORT_INFO, (uint32_t)p->port, 0, 0, data)) {
        snprintf(p->max_why, sizeof(p->max_why), "no PortInfo answer from %s:%d", p->dev,
                 p->port);
        goto out;
    }
    nt_ib_portinfo_decode(data, &mine);
    if (!nt_ib_caps_from_portinfo(&mine, 0, &p->max)) {
        snprintf(p->max_why, sizeof(p->max_why),
                 "PortInfo of %s:%d has no supported width/speed this build knows", p->dev,
                 p->port);
        goto out;
    }
    snprintf(p->max_source, sizeof(p->max_source), "PortInfo");
    /* The peer: NodeInfo one hop away says through which of its ports we arrive
     * (LocalPortNum, data byte 36); that port's PortInfo says what it supports. */
    if (p->state_num == 4 && nt_smp_get(fd, agent, umad, NT_IB_ATTR_NODE_INFO, 0, 1, p->port, data)) {
        int rport = data[36];
        if (nt_smp_get(fd, agent, umad, NT_IB_ATTR_PORT_INFO, (uint32_t)rport, 1, p->port,
                       data)) {
            nt_ib_portinfo_decode(data, &peer);
            nt_ib_portinfo_and(&mine, &peer, &both);
            if (nt_ib_caps_from_portinfo(&both, 0, &p->common_max))
                nt_ib_caps_from_portinfo(&both, 1, &p->enabled_max);
        }
    }
out:
    free(umad);
    if (agent >= 0)
        nt_umad.unreg(fd, agent);
    nt_umad.close_port(fd);
}

void nt_rdma_port_caps_read(nt_rdma_port_t *p)
{
    memset(&p->max, 0, sizeof(p->max));
    memset(&p->common_max, 0, sizeof(p->common_max));
    memset(&p->enabled_max, 0, sizeof(p->enabled_max));
    p->max_source[0] = p->max_why[0] = '\0';
    p->max_rate_Gbps = NAN;
    if (nt_sysfs_root()[0]) {
        snprintf(p->max_why, sizeof(p->max_why),
                 "not read from a captured sysfs tree (NETTUNE_SYSFS_ROOT)");
        return;
    }
    if (p->is_ethernet)
        nt_caps_roce(p);
    else
        nt_caps_ib(p);
    if (p->max.known && p->have_rate && p->rate.data_Gbps > p->max.rate_Gbps * 1.01) {
        /* Running faster than the decoded maximum: the source cannot name the port's fastest
         * speed (XDR is outside LinkSpeedExtSupported). Do not judge on it. */
        snprintf(p->max_why, sizeof(p->max_why),
                 "%s says at most %g Gb/s but the port runs %g: a speed this build cannot decode "
                 "(e.g. XDR)",
                 p->max_source, p->max.rate_Gbps, p->rate.data_Gbps);
        memset(&p->max, 0, sizeof(p->max));
        memset(&p->common_max, 0, sizeof(p->common_max));
        memset(&p->enabled_max, 0, sizeof(p->enabled_max));
        p->max_source[0] = '\0';
    }
    if (p->max.known)
        p->max_rate_Gbps = p->max.rate_Gbps;
}
