/* What a port supports: ethtool link modes (RoCE) and PortInfo (InfiniBand) decoded into the
 * widest and fastest, SMP build/parse, and the port_rate verdict. Pure: see rdma.h. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nettune/report.h"
#include "rdma.h"

/* enum ethtool_link_mode_bit_indices (linux/ethtool.h): every mode that carries a speed.
 * Bits 93-98 (800G) arrived in Linux 6.4, 103-107 (1-lane 200G) in 6.11; the unit test checks
 * the others against the installed header. */
static const nt_eth_link_mode_t nt_eth_modes[] = {
    {0, 10, 1, "10baseT_Half"},
    {1, 10, 1, "10baseT_Full"},
    {2, 100, 1, "100baseT_Half"},
    {3, 100, 1, "100baseT_Full"},
    {4, 1000, 1, "1000baseT_Half"},
    {5, 1000, 1, "1000baseT_Full"},
    {12, 10000, 1, "10000baseT_Full"},
    {15, 2500, 1, "2500baseX_Full"},
    {17, 1000, 1, "1000baseKX_Full"},
    {18, 10000, 4, "10000baseKX4_Full"},
    {19, 10000, 1, "10000baseKR_Full"},
    {21, 20000, 2, "20000baseMLD2_Full"},
    {22, 20000, 2, "20000baseKR2_Full"},
    {23, 40000, 4, "40000baseKR4_Full"},
    {24, 40000, 4, "40000baseCR4_Full"},
    {25, 40000, 4, "40000baseSR4_Full"},
    {26, 40000, 4, "40000baseLR4_Full"},
    {27, 56000, 4, "56000baseKR4_Full"},
    {28, 56000, 4, "56000baseCR4_Full"},
    {29, 56000, 4, "56000baseSR4_Full"},
    {30, 56000, 4, "56000baseLR4_Full"},
    {31, 25000, 1, "25000baseCR_Full"},
    {32, 25000, 1, "25000baseKR_Full"},
    {33, 25000, 1, "25000baseSR_Full"},
    {34, 50000, 2, "50000baseCR2_Full"},
    {35, 50000, 2, "50000baseKR2_Full"},
    {36, 100000, 4, "100000baseKR4_Full"},
    {37, 100000, 4, "100000baseSR4_Full"},
    {38, 100000, 4, "100000baseCR4_Full"},
    {39, 100000, 4, "100000baseLR4_ER4_Full"},
    {40, 50000, 2, "50000baseSR2_Full"},
    {41, 1000, 1, "1000baseX_Full"},
    {42, 10000, 1, "10000baseCR_Full"},
    {43, 10000, 1, "10000baseSR_Full"},
    {44, 10000, 1, "10000baseLR_Full"},
    {45, 10000, 1, "10000baseLRM_Full"},
    {46, 10000, 1, "10000baseER_Full"},
    {47, 2500, 1, "2500baseT_Full"},
    {48, 5000, 1, "5000baseT_Full"},
    {52, 50000, 1, "50000baseKR_Full"},
    {53, 50000, 1, "50000baseSR_Full"},
    {54, 50000, 1, "50000baseCR_Full"},
    {55, 50000, 1, "50000baseLR_ER_FR_Full"},
    {56, 50000, 1, "50000baseDR_Full"},
    {57, 100000, 2, "100000baseKR2_Full"},
    {58, 100000, 2, "100000baseSR2_Full"},
    {59, 100000, 2, "100000baseCR2_Full"},
    {60, 100000, 2, "100000baseLR2_ER2_FR2_Full"},
    {61, 100000, 2, "100000baseDR2_Full"},
    {62, 200000, 4, "200000baseKR4_Full"},
    {63, 200000, 4, "200000baseSR4_Full"},
    {64, 200000, 4, "200000baseLR4_ER4_FR4_Full"},
    {65, 200000, 4, "200000baseDR4_Full"},
    {66, 200000, 4, "200000baseCR4_Full"},
    {67, 100, 1, "100baseT1_Full"},
    {68, 1000, 1, "1000baseT1_Full"},
    {69, 400000, 8, "400000baseKR8_Full"},
    {70, 400000, 8, "400000baseSR8_Full"},
    {71, 400000, 8, "400000baseLR8_ER8_FR8_Full"},
    {72, 400000, 8, "400000baseDR8_Full"},
    {73, 400000, 8, "400000baseCR8_Full"},
    {75, 100000, 1, "100000baseKR_Full"},
    {76, 100000, 1, "100000baseSR_Full"},
    {77, 100000, 1, "100000baseLR_ER_FR_Full"},
    {78, 100000, 1, "100000baseCR_Full"},
    {79, 100000, 1, "100000baseDR_Full"},
    {80, 200000, 2, "200000baseKR2_Full"},
    {81, 200000, 2, "200000baseSR2_Full"},
    {82, 200000, 2, "200000baseLR2_ER2_FR2_Full"},
    {83, 200000, 2, "200000baseDR2_Full"},
    {84, 200000, 2, "200000baseCR2_Full"},
    {85, 400000, 4, "400000baseKR4_Full"},
    {86, 400000, 4, "400000baseSR4_Full"},
    {87, 400000, 4, "400000baseLR4_ER4_FR4_Full"},
    {88, 400000, 4, "400000baseDR4_Full"},
    {89, 400000, 4, "400000baseCR4_Full"},
    {90, 100, 1, "100baseFX_Half"},
    {91, 100, 1, "100baseFX_Full"},
    {92, 10, 1, "10baseT1L_Full"},
    {93, 800000, 8, "800000baseCR8_Full"},
    {94, 800000, 8, "800000baseKR8_Full"},
    {95, 800000, 8, "800000baseDR8_Full"},
    {96, 800000, 8, "800000baseDR8_2_Full"},
    {97, 800000, 8, "800000baseSR8_Full"},
    {98, 800000, 8, "800000baseVR8_Full"},
    {99, 10, 1, "10baseT1S_Full"},
    {100, 10, 1, "10baseT1S_Half"},
    {101, 10, 1, "10baseT1S_P2MP_Half"},
    {102, 10, 1, "10baseT1BRR_Full"},
    {103, 200000, 1, "200000baseCR_Full"},
    {104, 200000, 1, "200000baseKR_Full"},
    {105, 200000, 1, "200000baseDR_Full"},
    {106, 200000, 1, "200000baseDR_2_Full"},
    {107, 200000, 1, "200000baseSR_Full"},
};
#define NT_NMODES (int)(sizeof(nt_eth_modes) / sizeof(nt_eth_modes[0]))
#define NT_LAST_KNOWN_BIT 107

const nt_eth_link_mode_t *nt_eth_link_modes(int *n)
{
    *n = NT_NMODES;
    return nt_eth_modes;
}

static int nt_bit(const uint32_t *bits, int nwords, int b)
{
    return b / 32 < nwords && (bits[b / 32] >> (b % 32)) & 1u;
}

int nt_eth_caps_from_modes(const uint32_t *bits, int nwords, nt_port_caps_t *out)
{
    const nt_eth_link_mode_t *best = NULL;
    memset(out, 0, sizeof(*out));
    if (!bits || nwords <= 0)
        return 0;
    /* A bit past the table is a mode this build cannot name (newer kernels add faster ones
     * at the end): the maximum is unknown rather than maybe too low. */
    for (int b = NT_LAST_KNOWN_BIT + 1; b < nwords * 32; b++)
        if (nt_bit(bits, nwords, b))
            return 0;
    for (int i = 0; i < NT_NMODES; i++) {
        const nt_eth_link_mode_t *m = &nt_eth_modes[i];
        if (!nt_bit(bits, nwords, m->bit))
            continue;
        if (!best || m->Mbps > best->Mbps || (m->Mbps == best->Mbps && m->lanes < best->lanes))
            best = m;
    }
    if (!best)
        return 0;
    out->known = 1;
    out->lanes = best->lanes;
    out->rate_Gbps = best->Mbps / 1000.0;
    snprintf(out->mode, sizeof(out->mode), "%s", best->name);
    return 1;
}

void nt_ib_portinfo_decode(const uint8_t d[64], nt_ib_portinfo_t *o)
{
    memset(o, 0, sizeof(*o));
    o->cap_mask = (uint32_t)d[20] << 24 | (uint32_t)d[21] << 16 | (uint32_t)d[22] << 8 | d[23];
    o->local_port = d[28];
    o->width_enabled = d[29];
    o->width_supported = d[30];
    o->width_active = d[31];
    o->speed_supported = d[32] >> 4;
    o->state = d[32] & 0xf;
    o->phys_state = d[33] >> 4;
    o->speed_active = d[35] >> 4;
    o->speed_enabled = d[35] & 0xf;
    o->cap_mask2 = (uint16_t)(d[60] << 8 | d[61]);
    if (o->cap_mask & NT_IB_CAP_HAS_EXT_SPEEDS) {
        o->ext_active = d[62] >> 4;
        o->ext_supported = d[62] & 0xf;
        o->ext_enabled = d[63] & 0x1f;
    }
}

/* Enabled masks as a plain subset of supported. */
static int nt_en_width(int en, int sup) { return en == 0 || en == 0xff ? sup : en & sup; }
static int nt_en_speed(int en, int sup) { return en == 0 || en == 0xf ? sup : en & sup; }
static int nt_en_ext(int en, int sup)
{
    if (en == 30)
        return 0;
    return en == 0 || en == 31 ? sup : en & sup;
}

void nt_ib_portinfo_and(const nt_ib_portinfo_t *a, const nt_ib_portinfo_t *b,
                        nt_ib_portinfo_t *o)
{
    memset(o, 0, sizeof(*o));
    o->cap_mask = a->cap_mask & b->cap_mask;
    o->width_supported = a->width_supported & b->width_supported;
    o->speed_supported = a->speed_supported & b->speed_supported;
    o->ext_supported = a->ext_supported & b->ext_supported;
    o->width_enabled = nt_en_width(a->width_enabled, a->width_supported) &
                       nt_en_width(b->width_enabled, b->width_supported);
    o->speed_enabled = nt_en_speed(a->speed_enabled, a->speed_supported) &
                       nt_en_speed(b->speed_enabled, b->speed_supported);
    o->ext_enabled = nt_en_ext(a->ext_enabled, a->ext_supported) &
                     nt_en_ext(b->ext_enabled, b->ext_supported);
    if (!o->ext_enabled)
        o->ext_enabled = 30; /* none, not "all supported" */
    if (!o->width_enabled)
        o->width_enabled = -1; /* none in common */
    if (!o->speed_enabled)
        o->speed_enabled = -1;
}

int nt_ib_caps_from_portinfo(const nt_ib_portinfo_t *pi, int enabled, nt_port_caps_t *out)
{
    static const struct { int bit, lanes; } wd[] = {{8, 12}, {4, 8}, {2, 4}, {16, 2}, {1, 1}};
    static const struct { int bit; const char *name; } ext[] = {
        {8, "NDR"}, {4, "HDR"}, {2, "EDR"}, {1, "FDR"}};
    static const struct { int bit; const char *name; } base[] = {
        {4, "QDR"}, {2, "DDR"}, {1, "SDR"}};
    int w = pi->width_supported, sp = pi->speed_supported, ex = pi->ext_supported;
    const nt_ib_speed_t *speed = NULL;
    nt_port_rate_t r;

    memset(out, 0, sizeof(*out));
    if (enabled) {
        w = pi->width_enabled < 0 ? 0 : nt_en_width(pi->width_enabled, w);
        sp = pi->speed_enabled < 0 ? 0 : nt_en_speed(pi->speed_enabled, sp);
        ex = nt_en_ext(pi->ext_enabled, ex);
    }
    for (size_t i = 0; i < sizeof(wd) / sizeof(wd[0]) && !out->lanes; i++)
        if (w & wd[i].bit)
            out->lanes = wd[i].lanes;
    for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]) && !speed; i++)
        if (ex & ext[i].bit)
            speed = nt_ib_speed_from_name(ext[i].name);
    for (size_t i = 0; i < sizeof(base) / sizeof(base[0]) && !speed; i++)
        if (sp & base[i].bit)
            speed = nt_ib_speed_from_name(base[i].name);
    if (!out->lanes || !speed || nt_port_rate_compute(out->lanes, speed, 0, &r) != NT_OK) {
        memset(out, 0, sizeof(*out));
        return 0;
    }
    out->known = 1;
    out->speed = speed;
    out->rate_Gbps = r.data_Gbps;
    return 1;
}

void nt_smp_build_dr_get(uint8_t mad[NT_SMP_SIZE], uint16_t attr, uint32_t mod, uint64_t tid,
                         int hops, int out_port)
{
    memset(mad, 0, NT_SMP_SIZE);
    mad[0] = 1;    /* BaseVersion */
    mad[1] = 0x81; /* MgmtClass: directed-route SMP */
    mad[2] = 1;    /* ClassVersion */
    mad[3] = 0x01; /* Method: Get */
    /* bytes 4-5: D bit and status (0 outbound); 6: hop pointer; 7: hop count */
    mad[6] = 0;
    mad[7] = (uint8_t)hops;
    for (int i = 0; i < 8; i++)
        mad[8 + i] = (uint8_t)(tid >> (56 - 8 * i));
    mad[16] = (uint8_t)(attr >> 8);
    mad[17] = (uint8_t)attr;
    mad[20] = (uint8_t)(mod >> 24);
    mad[21] = (uint8_t)(mod >> 16);
    mad[22] = (uint8_t)(mod >> 8);
    mad[23] = (uint8_t)mod;
    /* 24-31 M_Key 0; 32-33 DrSLID, 34-35 DrDLID: permissive */
    mad[32] = mad[33] = mad[34] = mad[35] = 0xff;
    if (hops >= 1)
        mad[128 + 1] = (uint8_t)out_port; /* InitialPath[1]; [0] is unused */
}

const uint8_t *nt_smp_response_data(const uint8_t *mad, int len, uint16_t attr, uint64_t tid)
{
    uint64_t t = 0;
    if (!mad || len < 128 || mad[0] != 1 || mad[1] != 0x81 || mad[3] != 0x81)
        return NULL;
    if (((mad[4] & 0x7f) << 8 | mad[5]) != 0) /* status, without the direction bit */
        return NULL;
    for (int i = 0; i < 8; i++)
        t = t << 8 | mad[8 + i];
    if (t != tid || (uint16_t)(mad[16] << 8 | mad[17]) != attr)
        return NULL;
    return mad + 64;
}

void nt_port_caps_text(const nt_port_caps_t *c, char *buf, size_t len)
{
    if (!c->known)
        snprintf(buf, len, "unknown");
    else if (c->speed)
        snprintf(buf, len, "%dX %s %g Gb/s", c->lanes, c->speed->name, c->rate_Gbps);
    else
        snprintf(buf, len, "%g Gb/s (%s)", c->rate_Gbps, c->mode);
}

int nt_port_rate_judge(const char *target, double active_Gbps, const char *active_text,
                       int active_lanes, int is_ethernet, const nt_port_caps_t *local,
                       const nt_port_caps_t *common, const nt_port_caps_t *enabled, char *msg,
                       size_t len)
{
    char lt[96], ct[96], et[96];
    /* within rounding: FDR's 13.64, Ethernet figures from two sources */
    double tol = 0.01 * active_Gbps;

    nt_port_caps_text(local, lt, sizeof(lt));
    nt_port_caps_text(common, ct, sizeof(ct));
    nt_port_caps_text(enabled, et, sizeof(et));
    if (!local->known || !(active_Gbps > 0)) {
        snprintf(msg, len, "%s runs %s; the fastest it supports is unknown", target, active_text);
        return NT_PASS;
    }
    if (active_Gbps + tol >= local->rate_Gbps) {
        snprintf(msg, len, "%s runs %s, the fastest it supports", target, active_text);
        return NT_PASS;
    }
    if (common && common->known) {
        if (active_Gbps + tol >= common->rate_Gbps) {
            snprintf(msg, len,
                     "%s runs %s, capable of %s: limited by its peer (%s is the most both ends "
                     "support)",
                     target, active_text, lt, ct);
            return NT_PASS;
        }
        if (enabled && enabled->known && active_Gbps + tol >= enabled->rate_Gbps) {
            snprintf(msg, len,
                     "%s runs %s; both ends support %s but enable at most %s: slower by "
                     "configuration (%s)",
                     target, active_text, ct, et,
                     is_ethernet ? "advertised link modes" : "LinkSpeedEnabled/LinkWidthEnabled");
            return NT_WARN;
        }
        snprintf(msg, len,
                 "%s runs %s, while both it and its peer support %s: check the cable and the "
                 "%s port",
                 target, active_text, ct, is_ethernet ? "switch" : "switch (or peer HCA)");
        return NT_FAIL;
    }
    if (!is_ethernet && active_lanes == 1 && local->lanes >= 2) {
        snprintf(msg, len,
                 "%s runs %s, capable of %s: a link that trained to 1X lost lanes: check the "
                 "cable and the switch port",
                 target, active_text, lt);
        return NT_FAIL;
    }
    snprintf(msg, len,
             "%s runs %s, capable of %s: check the cable and the switch port (the peer's "
             "capabilities could not be read: a slower switch port or cable by design looks "
             "the same)",
             target, active_text, lt);
    return NT_WARN;
}
