/* The RDMA probe's internal API (probes/rdma). Pure parts (rates, GID choice, NCCL_IB_HCA
 * filter, counters, sysfs inventory, report JSON) build and are unit-tested without
 * libibverbs; the data path (verbs_path.c) calls it through ibv.h, opened at run time.
 *
 * Sources of the facts used here:
 * - IB rates: IBTA Architecture Specification vol. 2 (lane signalling and 8b/10b for
 *   SDR/DDR/QDR, 64b/66b from FDR10 on), libibverbs enum ibv_port_attr active_speed/width
 *   codes, the kernel's sysfs "rate" attribute ("100 Gb/sec (4X EDR)", drivers/infiniband/core/
 *   sysfs.c rate_show), NCCL src/transport/net_ib.cc ibvSpeeds/ibvWidths.
 * - GID choice: NCCL src/transport/net_ib.cc ncclIbGetGidIndex / ncclUpdateGidIndex /
 *   ncclIbRoceGetVersionNum (NCCL_IB_GID_INDEX default -1, NCCL_IB_ROCE_VERSION_NUM 2,
 *   NCCL_IB_ADDR_FAMILY AF_INET, NCCL_IB_ADDR_RANGE unset, NCCL_IB_ROUTABLE_FLID_GID_INDEX 1).
 * - NCCL_IB_HCA: NCCL src/misc/utils.cc parseStringList / matchIfList and the "^" / "="
 *   handling in net_ib.cc ncclIbInit.
 * - Port counter widths: IBTA PortCounters attribute (PerfMgt class), as rdma-core's
 *   infiniband-diags perfquery prints them. */
#ifndef NT_PROBE_RDMA_H
#define NT_PROBE_RDMA_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "nettune/status.h"
#include "nettune/pcie.h"
#include "nettune/topo.h"

/* ---------------------------------------------------------------- rates.c */

typedef struct nt_ib_speed {
    const char *name;        /* "SDR".."XDR" as ibv_devinfo and sysfs print it */
    int ibv_code;            /* ibv_port_attr.active_speed bit (1, 2, 4 ... 128); XDR: 0x100 */
    double lane_Gbps;        /* the per-lane figure ibverbs/sysfs print (QDR 10, HDR 50) */
    double lane_signal_Gbps; /* per-lane signalling rate on the wire */
    double lane_data_Gbps;   /* per-lane data rate after line coding */
    const char *encoding;    /* "8b/10b" or "64b/66b" */
} nt_ib_speed_t;

/* nt_ib_speed_from_code - the speed for an ibv active_speed code (IBV_SPEED_* bit values:
 * SDR 1, DDR 2, QDR 4, FDR10 8, FDR 16, EDR 32, HDR 64, NDR 128; 256 = XDR, which libibverbs
 * 44's 8-bit field cannot carry). NULL for 0 or an unknown code: read sysfs "rate" then. */
const nt_ib_speed_t *nt_ib_speed_from_code(int code);
/* nt_ib_speed_from_name - "QDR" (case-insensitive) -> its entry; NULL if unknown. */
const nt_ib_speed_t *nt_ib_speed_from_name(const char *name);
/* nt_ib_width_lanes - lanes for an ibv active_width code (1->1X, 2->4X, 4->8X, 8->12X,
 * 16->2X); 0 for an unknown code. */
int nt_ib_width_lanes(int code);

typedef struct nt_port_rate {
    int lanes;                  /* 0 = unknown */
    const nt_ib_speed_t *speed; /* NULL = unknown (rate taken from the sysfs figure alone) */
    double nominal_Gbps;        /* lanes x lane figure: what ibv_devinfo/ibstat call "rate" */
    double signal_Gbps;         /* on the wire, coding included */
    double data_Gbps;           /* what the port can carry: the line rate used for verdicts */
    const char *encoding;       /* "8b/10b", "64b/66b", "ethernet" or "unknown" */
} nt_port_rate_t;

/* nt_port_rate_compute - the rates of a port from its width and speed.
 * InfiniBand: SDR, DDR, QDR signal at the nominal rate and carry 8/10 of it (4x QDR: 40 Gb/s
 * signalling, 32 Gb/s data); FDR10 and later use 64b/66b, and the nominal figure is the data
 * rate except for FDR, whose nominal 14 is its 14.0625 Gb/s signalling (13.64 data): signal =
 * data x 66/64. Ethernet (RoCE): the nominal figure is the Ethernet data rate (25 GbE shows as
 * 1x EDR, 100 GbE as 4x EDR, rxe as 1x SDR = 2.5), so data = signal = nominal.
 * NT_ERR_INVALID when lanes <= 0 or speed is NULL. */
nt_status_t nt_port_rate_compute(int lanes, const nt_ib_speed_t *speed, int is_ethernet,
                                 nt_port_rate_t *out);

/* nt_port_rate_parse_sysfs - parse the kernel's sysfs rate ("100 Gb/sec (4X EDR)",
 * "2.5 Gb/sec (1X SDR)", "800 Gb/sec (4X XDR)", "10 Gb/sec (4X)"). A speed name unknown here
 * still gives the nominal figure (taken as the data rate, coding "unknown").
 * NT_ERR_PARSE when there is no leading number. */
nt_status_t nt_port_rate_parse_sysfs(const char *text, int is_ethernet, nt_port_rate_t *out);

/* nt_pcie_link_GBps: include/nettune/pcie.h */

/* ---------------------------------------------------------------- portcap.c */
/* The widest and fastest a port supports, decoded from what the machine tells: the ethtool
 * link modes of a RoCE port's network device, the PortInfo attribute of an InfiniBand port
 * (read by a directed-route SMP). Pure decoding here; the ioctl and the MADs are in
 * portcap_sys.c. Sources: linux/ethtool.h (enum ethtool_link_mode_bit_indices), IBTA vol. 1
 * 14.2.5.6 PortInfo and 14.2.1.2 directed-route SMP format, as rdma-core's libibmad fields.c
 * lays them out (LinkWidthSupported byte 30, LinkSpeedSupported byte 32 bits 7-4,
 * CapabilityMask bytes 20-23 with IsExtendedSpeedsSupported = bit 14, LinkSpeedExtSupported
 * byte 62 bits 3-0). */

typedef struct nt_port_caps {
    int known;                  /* 0: nothing below is set */
    int lanes;                  /* widest (IB) / lanes of the fastest Ethernet mode; 0 unknown */
    const nt_ib_speed_t *speed; /* IB: the fastest speed; NULL on Ethernet */
    double rate_Gbps;           /* data rate: lanes x speed (8b/10b, 64b/66b), or the mode's */
    char mode[40];              /* Ethernet: the fastest link mode ("400000baseCR4_Full") */
} nt_port_caps_t;

/* One ethtool link mode that carries a speed. */
typedef struct nt_eth_link_mode {
    int bit;          /* ETHTOOL_LINK_MODE_*_BIT */
    int Mbps;         /* SPEED_* */
    int lanes;        /* from the name: CR4 = 4, KR = 1 */
    const char *name; /* without ETHTOOL_LINK_MODE_ and _BIT */
} nt_eth_link_mode_t;

/* nt_eth_link_modes - the table of speed-carrying link modes this build knows (bits 0..107:
 * up to 800000baseVR8 and the 1-lane 200G modes); *n gets its length. */
const nt_eth_link_mode_t *nt_eth_link_modes(int *n);

/* nt_eth_caps_from_modes - the fastest link mode set in the bitmap (nwords 32-bit words, bit
 * i in word i / 32, as ETHTOOL_GLINKSETTINGS returns it; ETHTOOL_GSET's "supported" is the
 * same bitmap's first word). Ties prefer fewer lanes. Returns 1 and fills out when a known
 * speed mode is set; 0 (out->known = 0) when the bitmap is empty or holds no speed mode, and
 * also when a bit beyond the table is set (a newer, maybe faster mode: the maximum cannot be
 * told). */
int nt_eth_caps_from_modes(const uint32_t *bits, int nwords, nt_port_caps_t *out);

/* The PortInfo fields that say what a port supports, enables and runs (bit masks as in the
 * attribute: width 1 = 1X, 2 = 4X, 4 = 8X, 8 = 12X, 16 = 2X; speed 1 SDR, 2 DDR, 4 QDR;
 * extended speed 1 FDR, 2 EDR, 4 HDR, 8 NDR). */
typedef struct nt_ib_portinfo {
    uint32_t cap_mask;
    uint16_t cap_mask2;
    int local_port;
    int width_enabled, width_supported, width_active;
    int speed_supported, speed_enabled, speed_active;
    int ext_supported, ext_enabled, ext_active;
    int state, phys_state;
} nt_ib_portinfo_t;

#define NT_IB_CAP_HAS_EXT_SPEEDS 0x00004000u /* CapabilityMask.IsExtendedSpeedsSupported */
#define NT_IB_ATTR_NODE_INFO 0x0011
#define NT_IB_ATTR_PORT_INFO 0x0015
#define NT_SMP_SIZE 256

/* nt_ib_portinfo_decode - the 64 data bytes of a PortInfo attribute (SMP bytes 64..127)
 * into out. Extended speeds are kept only when CapabilityMask says the port has them. */
void nt_ib_portinfo_decode(const uint8_t data[64], nt_ib_portinfo_t *out);

/* nt_ib_portinfo_and - what two PortInfos have in common (supported and enabled masks
 * intersected): the best two linked ports can train to. Enabled values that mean "all
 * supported" (width 0/255, speed 0/15, extended 0/31) count as the supported mask, extended
 * 30 ("extended speeds disabled") as none. */
void nt_ib_portinfo_and(const nt_ib_portinfo_t *a, const nt_ib_portinfo_t *b,
                        nt_ib_portinfo_t *out);

/* nt_ib_caps_from_portinfo - the widest and fastest of pi's supported masks (enabled = 1:
 * of supported & enabled), with the rate by nt_port_rate_compute (4x QDR: 32 Gb/s data,
 * 4X NDR 400). Returns 1 when both a width and a speed are known, else 0 (out->known = 0). */
int nt_ib_caps_from_portinfo(const nt_ib_portinfo_t *pi, int enabled, nt_port_caps_t *out);

/* nt_smp_build_dr_get - a directed-route SMP Get (class 0x81, version 1) of attribute attr
 * with modifier mod, transaction id tid, into mad[NT_SMP_SIZE]. hops 0 reaches the local
 * port; hops 1 with out_port the local port number reaches the node at the other end of the
 * cable. DrSLID and DrDLID are the permissive LID 0xffff. */
void nt_smp_build_dr_get(uint8_t mad[NT_SMP_SIZE], uint16_t attr, uint32_t mod, uint64_t tid,
                         int hops, int out_port);

/* nt_smp_response_data - the 64 data bytes of the GetResp to the SMP (attr, tid) in mad
 * (len bytes), or NULL when mad is not that response (wrong class, method, TID, attribute)
 * or its status is not 0. */
const uint8_t *nt_smp_response_data(const uint8_t *mad, int len, uint16_t attr, uint64_t tid);

/* nt_port_caps_text - "4X NDR 400 Gb/s" (IB) or "400 Gb/s (400000baseCR4_Full)" (Ethernet). */
void nt_port_caps_text(const nt_port_caps_t *c, char *buf, size_t len);

/* nt_port_rate_judge - the port_rate verdict of an ACTIVE port running at active (its text
 * active_text, e.g. "4X HDR 200 Gb/s"), given what the port supports (local), what it and
 * its peer both support (common, known = 0 when the peer could not be read) and what both
 * support and enable (enabled). Rules (docs/rdma.md "Verdicts"):
 * - local unknown, or active >= local: pass;
 * - common known: active >= common: pass ("limited by the peer"); active >= enabled: warn
 *   (slower by the enabled speeds, i.e. configuration); else fail (both ends could do more:
 *   the cable or a port is degraded);
 * - common unknown: fail when an InfiniBand port runs 1X but supports 2X or more (a lost
 *   lane: no switch port runs 1X by design), else warn (a slower switch port or cable by
 *   design gives the same picture).
 * The sentence goes to msg. Returns NT_PASS, NT_WARN or NT_FAIL. */
int nt_port_rate_judge(const char *target, double active_Gbps, const char *active_text,
                       int active_lanes, int is_ethernet, const nt_port_caps_t *local,
                       const nt_port_caps_t *common, const nt_port_caps_t *enabled, char *msg,
                       size_t len);

/* ---------------------------------------------------------------- gid.c */

typedef enum nt_gid_type {
    NT_GID_TYPE_UNKNOWN = 0, /* no gid_attrs/types entry (EINVAL on an unused entry) */
    NT_GID_TYPE_IB,          /* "IB/RoCE v1" on an InfiniBand port */
    NT_GID_TYPE_ROCE_V1,     /* "IB/RoCE v1" or "RoCE v1" on an Ethernet port */
    NT_GID_TYPE_ROCE_V2      /* "RoCE v2" */
} nt_gid_type_t;

typedef struct nt_gid_entry {
    int index;
    uint8_t raw[16];
    nt_gid_type_t type;
    char netdev[32]; /* gid_attrs/ndevs/<index>, "" when none */
} nt_gid_entry_t;

/* What NCCL reads from its environment to pick a RoCE GID. */
typedef struct nt_gid_pref {
    int roce_version;        /* NCCL_IB_ROCE_VERSION_NUM, default 2 */
    int family;              /* NCCL_IB_ADDR_FAMILY: AF_INET (default) or AF_INET6 */
    int range_len;           /* NCCL_IB_ADDR_RANGE prefix length; 0 = no range */
    uint8_t range[16];       /* the range's address (IPv4 in the first 4 bytes) */
    int env_gid_index;       /* NCCL_IB_GID_INDEX, -1 = unset (NCCL's default) */
    int routable_flid_index; /* NCCL_IB_ROUTABLE_FLID_GID_INDEX, default 1 */
    char text[192];          /* the settings in words, for the report */
} nt_gid_pref_t;

/* nt_gid_pref_from_env - read NCCL_IB_GID_INDEX, NCCL_IB_ROCE_VERSION_NUM,
 * NCCL_IB_ADDR_FAMILY, NCCL_IB_ADDR_RANGE, NCCL_IB_ROUTABLE_FLID_GID_INDEX with NCCL's
 * defaults, and NCCL's leniency (an unknown family keeps AF_INET; a range without "/" or with a
 * bad address is ignored). Never fails. */
void nt_gid_pref_from_env(nt_gid_pref_t *out);

/* nt_gid_parse - the sysfs text of a GID ("fe80:0000:0000:0000:5054:00ff:fe12:3456", eight
 * groups of four hex digits) into 16 bytes. NT_ERR_PARSE otherwise. */
nt_status_t nt_gid_parse(const char *text, uint8_t raw[16]);
/* nt_gid_format - the GID as inet_ntop(AF_INET6) prints it ("::ffff:10.0.2.15"). */
void nt_gid_format(const uint8_t raw[16], char *buf, size_t len);
/* nt_gid_type_parse - sysfs gid_attrs/types text -> type ("IB/RoCE v1" is IB on an InfiniBand
 * port, RoCE v1 on Ethernet). */
nt_gid_type_t nt_gid_type_parse(const char *text, int is_ethernet);
const char *nt_gid_type_string(nt_gid_type_t t);
/* nt_gid_is_ipv4 - IPv4-mapped (::ffff:a.b.c.d, or NCCL's ff0e::ffff: multicast form). */
int nt_gid_is_ipv4(const uint8_t raw[16]);
/* nt_gid_valid - configured and not link-local (NCCL validGid). */
int nt_gid_valid(const uint8_t raw[16]);

/* nt_gid_choose - the GID index this probe uses on a port, and why (into why):
 * 1. override >= 0 (--gid-index): taken as given;
 * 2. InfiniBand: NCCL_IB_ROUTABLE_FLID_GID_INDEX when that entry carries a non-zero FLID,
 *    else 0 (NCCL ignores NCCL_IB_GID_INDEX on IB, and so do we);
 * 3. RoCE: NCCL_IB_GID_INDEX when set; else NCCL's scan from index 0 over 1..tbl_len-1
 *    preferring the address family, the address range, a valid (not link-local) GID and the
 *    RoCE version, exactly as ncclUpdateGidIndex does.
 * tbl holds the non-empty entries (any order); indices absent from it read as the zero GID
 * with unknown type. tbl_len is the port's gid_tbl_len (0 = 1 + the largest index in tbl).
 * Returns the index (which may not exist in tbl when an override or NCCL_IB_GID_INDEX names
 * an empty entry: the connection then fails with an explained error). */
int nt_gid_choose(const nt_gid_entry_t *tbl, int n, int tbl_len, int is_ethernet,
                  const nt_gid_pref_t *pref, int override, char *why, size_t whylen);

/* nt_gid_find - the entry with this index, NULL if absent. */
const nt_gid_entry_t *nt_gid_find(const nt_gid_entry_t *tbl, int n, int index);

/* ---------------------------------------------------------------- hca_filter.c */

#define NT_HCA_MAX 32
typedef struct nt_hca_filter {
    int set;     /* NCCL_IB_HCA was given (even empty) */
    int exclude; /* leading '^' */
    int exact;   /* '=' after the optional '^' */
    int n;
    struct {
        char prefix[64];
        int port; /* -1 = any */
    } e[NT_HCA_MAX];
    char text[256];
} nt_hca_filter_t;

/* nt_hca_filter_parse - NCCL_IB_HCA syntax: "[^][=]name[:port][,name[:port]...]". Names are
 * prefixes ("mlx5" matches mlx5_0..), or exact with "="; "^" excludes the list. Parsed as
 * NCCL's parseStringList does (at most 32 entries, empty items skipped, a port after ':' read
 * with atoi). s NULL = unset = every device. Never fails. */
void nt_hca_filter_parse(const char *s, nt_hca_filter_t *f);
/* nt_hca_filter_match - whether NCCL would use device dev, port port: matchIfList xor
 * exclude. An empty list matches everything (so a lone "^" excludes everything, as in NCCL). */
int nt_hca_filter_match(const nt_hca_filter_t *f, const char *dev, int port);

/* ---------------------------------------------------------------- counters.c */

typedef enum nt_counter_change {
    NT_COUNTER_SAME = 0,
    NT_COUNTER_GREW,
    NT_COUNTER_SATURATED, /* at its maximum before or after: growth cannot be seen */
    NT_COUNTER_RESET,     /* smaller after than before: cleared during the run */
    NT_COUNTER_UNKNOWN    /* not read at both ends */
} nt_counter_change_t;

typedef struct nt_counter {
    char name[48];
    int hw;              /* from hw_counters/ (driver-specific, 64-bit) */
    unsigned width_bits; /* IBTA width; 64 for extended and hw counters */
    int is_error;        /* 0, NT_COUNTER_FAULT or NT_COUNTER_RETRANS (nt_counter_is_error) */
    unsigned long long before, after;
    int have_before, have_after;
} nt_counter_t;

/* nt_counter_width - the IBTA PortCounters width of a sysfs counters/ file: symbol_error 16,
 * link_error_recovery 8, link_downed 8, port_rcv_errors 16, port_rcv_remote_physical_errors
 * 16, port_rcv_switch_relay_errors 16, port_xmit_discards 16, port_xmit_constraint_errors 8,
 * port_rcv_constraint_errors 8, local_link_integrity_errors 4,
 * excessive_buffer_overrun_errors 4, VL15_dropped 16, port_xmit_wait 32; data and packet
 * counters 64 (PortCountersExtended); unknown names 64. */
unsigned nt_counter_width(const char *name, int hw);
#define NT_COUNTER_FAULT 1   /* growth fails the error_counters check */
#define NT_COUNTER_RETRANS 2 /* growth (recovered loss) is a warning */
/* nt_counter_is_error - what growth of this counter means: NT_COUNTER_FAULT for the IB error
 * counters above and the RoCE hw_counters of failed operations (req_cqe_error,
 * resp_cqe_error, remote access errors, rxe's retry_exceeded_err, send_err, link_downed);
 * NT_COUNTER_RETRANS for retransmissions that recovered (out_of_sequence, packet_seq_err,
 * local_ack_timeout_err, rnr_nak_retry_err, implied_nak_seq_err, rxe's completer_retry_err,
 * out_of_seq_request, rcvd_seq_err, duplicate_request); 0 for traffic and congestion
 * counters (np_cnp_sent, rp_cnp_handled, np_ecn_marked_roce_packets, packets, data). */
int nt_counter_is_error(const char *name, int hw);
/* nt_counter_delta - compare two readings of a counter of width bits: SATURATED when either
 * reading is at 2^width - 1 (the counter stopped counting, so "no growth" is unknown),
 * RESET when after < before, GREW / SAME otherwise. *delta = after - before when known, else 0. */
nt_counter_change_t nt_counter_delta(unsigned long long before, unsigned long long after,
                                     unsigned width_bits, unsigned long long *delta);
const char *nt_counter_change_string(nt_counter_change_t c);

/* ---------------------------------------------------------------- inventory.c */

typedef struct nt_rdma_port {
    char dev[64];
    int port;
    char node_type[32]; /* "1: CA" */
    char fw_ver[64];
    char hca_type[32];  /* /sys/class/infiniband/<dev>/hca_type ("MT4123"); "" unknown */
    char node_guid[32];
    char pci_bus_id[16]; /* "" for a virtual device (rxe) */
    int numa_node;       /* -1 unknown */
    char netdev[32];     /* RoCE: the network interface (rxe "parent", else the GID's ndev) */
    char state[16];      /* "ACTIVE", "DOWN", "INIT", "ARMED", "ACTIVE_DEFER" */
    int state_num;       /* 4 = ACTIVE */
    char phys_state[24]; /* "LinkUp", "Disabled", "Polling" ... */
    int phys_state_num;  /* 5 = LinkUp */
    char link_layer[16]; /* "InfiniBand" or "Ethernet" */
    int is_ethernet;
    char rate_text[64]; /* sysfs rate as read */
    nt_port_rate_t rate;
    int have_rate;
    double max_rate_Gbps;      /* fastest the port supports; NaN when not known (= max.rate_Gbps) */
    nt_port_caps_t max;        /* widest and fastest the port supports (portcap.c) */
    nt_port_caps_t common_max; /* what the port and its peer both support; known = 0 if unread */
    nt_port_caps_t enabled_max; /* ... and both enable (IB Enabled masks, Ethernet advertising) */
    char max_source[24];        /* "PortInfo" or "ethtool"; "" when unknown */
    char max_why[200];          /* why max is unknown ("" when known) */
    int lid, sm_lid;            /* -1 unknown */
    int active_mtu;             /* bytes, 0 unknown (verbs) */
    int max_mtu;                /* bytes, 0 unknown (verbs) */
    int netdev_mtu;             /* bytes of the RoCE netdev, 0 unknown */
    int gid_tbl_len;            /* 0 unknown */
    nt_gid_entry_t *gids;       /* non-empty entries, ascending index */
    int ngids;
    nt_counter_t *counters;
    int ncounters;
    /* Selection and GID choice (filled by nt_rdma_port_select). */
    int selected;
    char select_why[320];
    int gid_index;
    char gid_why[256];
} nt_rdma_port_t;

typedef struct nt_rdma_inv {
    nt_rdma_port_t *ports;
    int nports;
} nt_rdma_inv_t;

/* nt_rdma_inventory_read - every port of every device under <root>/sys/class/infiniband
 * (NETTUNE_SYSFS_ROOT): state, rate, link layer, LID, GID table with types and netdevs, PCI
 * address, NUMA node, firmware, netdev MTU, and a first counter reading (have_before).
 * NT_ERR_UNSUPPORTED with the reason in why when there is no device; NT_ERR_NOMEM. */
nt_status_t nt_rdma_inventory_read(nt_rdma_inv_t *inv, char *why, size_t whylen);
void nt_rdma_inventory_free(nt_rdma_inv_t *inv);

/* nt_rdma_counters_read - read every counter of the port again into before (after == 0) or
 * after (after == 1). Counters that cannot be read keep have_* = 0. */
void nt_rdma_counters_read(nt_rdma_port_t *p, int after);

/* nt_rdma_port_caps_read - fill max/common_max/enabled_max/max_rate_Gbps/max_source of a
 * port from the live system (portcap_sys.c): RoCE through the ethtool ioctl on its netdev
 * (ETHTOOL_GLINKSETTINGS, else ETHTOOL_GSET), InfiniBand through directed-route SMPs sent
 * with libibumad loaded by dlopen (PortInfo of the port, NodeInfo and PortInfo of the node
 * one hop away). Every failure is silent: max stays unknown and max_why says why. Skipped
 * under NETTUNE_SYSFS_ROOT (a captured tree has no live device). Costs well under a
 * millisecond per port when the device answers; at most a few 10 ms timeouts when not. */
void nt_rdma_port_caps_read(nt_rdma_port_t *p);

/* nt_rdma_port_select - apply NCCL_IB_HCA (filter) and choose the GID (pref, override) of
 * every port, filling selected/select_why and gid_index/gid_why. NCCL also skips ports that
 * are not ACTIVE; we keep them selected (so that they fail the port_state check) and say so. */
void nt_rdma_port_select(nt_rdma_inv_t *inv, const nt_hca_filter_t *filter,
                         const nt_gid_pref_t *pref, int override);

/* nt_rdma_port_to_json - the report's nics[] entry of a port (keys in nic.schema.json).
 * NT_ERR_NOMEM when cJSON fails. */
nt_status_t nt_rdma_port_to_json(const nt_rdma_port_t *p, cJSON *nic);
/* nt_rdma_counters_to_json - "counters": {name: {before, after, delta, width_bits,
 * saturated, change, error}} into nic. */
nt_status_t nt_rdma_counters_to_json(const nt_rdma_port_t *p, cJSON *nic);

/* nt_rdma_dev_check - whether this node can open RDMA devices: NT_ERR_UNSUPPORTED with a
 * sentence when /dev/infiniband is missing while sysfs lists devices (a container started
 * without them). Checked only on the live system (no NETTUNE_SYSFS_ROOT). */
nt_status_t nt_rdma_dev_check(const nt_rdma_inv_t *inv, char *why, size_t whylen);

/* ---------------------------------------------------------------- gpu_link.c */

/* The GPU-memory variant of a rail (rdma.write:<A>/<nic>:<port>/gpu<i>-><B>/<nic>:<port>/gpu<j>):
 * bandwidth only, source and destination buffers in the memory of the GPU nearest each NIC. */

/* What the GPU-memory links say about latency (there is none: see docs/rdma.md). */
#define NT_RDMA_GPU_LAT_NOTE "not measured: GPU memory cannot be polled by the CPU"

/* nt_rdma_gpu_ep - the endpoint of a rail in a link id: "<dev>:<port>/gpu<gpu>", or
 * "<dev>:<port>" when gpu < 0 (that end has no GPU: its buffer would be host memory). */
void nt_rdma_gpu_ep(const char *dev, int port, int gpu, char *buf, size_t len);

/* nt_rdma_gpu_for_nic - the GPU whose memory a rail on NIC dev uses: index into t->gpus of the
 * GPU nearest the NIC (nt_topo_nearest_gpu), or of the first GPU when the NIC is not in the
 * topology or no path is known; -1 when t is NULL or has no GPU. why (may be NULL) says which
 * and why ("GPU 3 is nearest to mlx5_3 (PIX)"). */
int nt_rdma_gpu_for_nic(const nt_topo_t *t, const char *dev, char *why, size_t whylen);

/* nt_rdma_gpu_reg_path - the registration path named by a connection's memory string
 * (nt_rdma_conn_memory): "gpu (dma-buf)" -> "dma-buf", "gpu (peer memory)" -> "peer memory";
 * NULL for host memory or an unknown string. */
const char *nt_rdma_gpu_reg_path(const char *memory);

typedef enum nt_gpu_reg {
    NT_GPU_REG_UNTRIED = 0, /* not known yet (before the exchange) */
    NT_GPU_REG_FAILED,      /* GPU memory could not be allocated or registered */
    NT_GPU_REG_OK           /* registered (dma-buf or peer memory) */
} nt_gpu_reg_t;

/* One end of a GPU-memory link as both ends know it after the exchange. */
typedef struct nt_gpu_end {
    const char *host; /* node name, for the reasons */
    const char *ep;   /* "<nic>:<port>" */
    int gpu;          /* GPU index (nt_topo_gpu_t.index) nearest the NIC; -1: no GPU */
    int active;       /* the port is ACTIVE */
    nt_gpu_reg_t reg;
    const char *why; /* the failure's sentence when reg is NT_GPU_REG_FAILED */
} nt_gpu_end_t;

typedef enum nt_gpu_link {
    NT_GPU_LINK_NONE = 0, /* neither end has a GPU: no GPU link at all (nothing changes) */
    NT_GPU_LINK_SKIP,     /* the link exists, skipped with the reason */
    NT_GPU_LINK_TRY,      /* both have a GPU and ACTIVE ports: allocate, register, exchange */
    NT_GPU_LINK_MEASURE   /* both registered: connect and measure bandwidth */
} nt_gpu_link_t;

/* nt_gpu_link_decide - what to do with the GPU-memory link between ends a and b. Both ends
 * call it with the same facts and reach the same outcome (the table is symmetric):
 *   no GPU at either end                    -> NONE
 *   no GPU at one end                       -> SKIP "no GPU on <host>"
 *   a port not ACTIVE                       -> SKIP naming port and host (the host link fails)
 *   a registration not tried yet            -> TRY
 *   a registration failed (one or both)     -> SKIP "GPUDirect RDMA unavailable on <host>: why"
 *   both registered                         -> MEASURE
 * A skip is never a failure: the gpudirect check of the node carries the finding. The reason
 * goes to why (may be NULL) for SKIP, else why is "". */
nt_gpu_link_t nt_gpu_link_decide(const nt_gpu_end_t *a, const nt_gpu_end_t *b, char *why,
                                 size_t whylen);
/* nt_gpu_link_string - "none", "skip", "try", "measure". */
const char *nt_gpu_link_string(nt_gpu_link_t d);

/* ---------------------------------------------------------------- nodecheck_rdma.c */

/* The RDMA node checks (docs/node-checks.md), pure rules on the inventory's ports. */
struct nt_nodecheck;

/* nt_rdma_port_mtu - the MTU a port's QPs run at, in bytes: its active MTU (verbs) when known,
 * else for RoCE the largest IB MTU (256..4096) that fits its netdev MTU (the kernel's
 * ib_mtu_int_to_enum of the netdev's, drivers/infiniband/core: iboe_get_mtu); 0 unknown. */
int nt_rdma_port_mtu(const nt_rdma_port_t *p);

/* nt_rdma_mtu_judge - "rdma_mtu" for every ACTIVE port of ports (n of them) into out[i] (out
 * has n entries; a port not ACTIVE is not judged): the reference is the MTU most of the node's
 * ACTIVE ports of the same link layer run at (ties: the largest); a port below it warns
 * (NT-RDMA-014): a QP's path MTU is the smaller end's, so that rail runs with smaller packets
 * (NCCL takes the smaller of both ends' active MTU for the QP's path_mtu, NVIDIA/nccl v2.28.9-1
 * src/transport/net_ib.cc:1463,1590,1278). Unknown MTU: not judged. The node's own ports are
 * compared here; the same rail across nodes is for rank 0's drift check. Returns the number of ports
 * judged. */
int nt_rdma_mtu_judge(const nt_rdma_port_t *ports, int n, struct nt_nodecheck *out);

/* nt_rdma_roce_v2_judge - "roce_v2_gid" of one port: pass for InfiniBand or a RoCE port with a
 * valid RoCE v2 GID (nt_gid_valid); warn (NT-RDMA-015) for a RoCE port whose GIDs are all
 * RoCE v1 or link-local: NCCL looks for RoCE v2 by default (NCCL_IB_ROCE_VERSION_NUM = 2,
 * NVIDIA/nccl v2.28.9-1 src/transport/net_ib.cc:123) and falls back to another GID, whose
 * traffic does not cross an IP router; not judged when the port has no GID table. */
void nt_rdma_roce_v2_judge(const nt_rdma_port_t *p, struct nt_nodecheck *out);

/* nt_rdma_firmware_judge - "rdma_firmware" for every port of ports (n) into out[i]: its
 * device's firmware (/sys/class/infiniband/<dev>/fw_ver) against the firmware most of the
 * node's ports of the same hca_type run; a port whose firmware differs warns (NT-RDMA-016), and
 * when no version is held by most, every port warns; no fw_ver: not judged. The ports of one
 * rail across nodes are compared by rank 0 (software "nic_firmware", software_consistency and
 * config_drift). Returns the number of ports judged. */
int nt_rdma_firmware_judge(const nt_rdma_port_t *ports, int n, struct nt_nodecheck *out);

#endif
