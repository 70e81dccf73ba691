/* What a port supports: ethtool link-mode bitmaps -> fastest mode, PortInfo bytes -> widest
 * and fastest (8b/10b and 64b/66b rules of rates.c), the intersection with the peer, the
 * directed-route SMP bytes, and the port_rate verdict. The PortInfo blocks below are built
 * byte by byte from the attribute layout (IBTA 14.2.5.6, rdma-core libibmad fields.c) with
 * the values `smpquery portinfo` prints for the named ports. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <linux/ethtool.h>

#include "nettune/report.h"
#include "rdma.h"

static void set_bit(uint32_t *w, int b) { w[b / 32] |= 1u << (b % 32); }

/* The table's bit numbers against the installed linux/ethtool.h (bits up to 92 are in every
 * header this project builds with). */
#define M(n) {ETHTOOL_LINK_MODE_##n##_BIT, #n}
static void test_table_matches_header(void **state)
{
    static const struct { int bit; const char *name; } hdr[] = {
        M(10baseT_Full), M(1000baseT_Full), M(10000baseT_Full), M(2500baseX_Full),
        M(1000baseKX_Full), M(10000baseKX4_Full), M(10000baseKR_Full), M(20000baseMLD2_Full),
        M(20000baseKR2_Full), M(40000baseKR4_Full), M(40000baseCR4_Full), M(40000baseSR4_Full),
        M(40000baseLR4_Full), M(56000baseKR4_Full), M(56000baseCR4_Full), M(56000baseSR4_Full),
        M(56000baseLR4_Full), M(25000baseCR_Full), M(25000baseKR_Full), M(25000baseSR_Full),
        M(50000baseCR2_Full), M(50000baseKR2_Full), M(100000baseKR4_Full),
        M(100000baseSR4_Full), M(100000baseCR4_Full), M(100000baseLR4_ER4_Full),
        M(50000baseSR2_Full), M(1000baseX_Full), M(10000baseCR_Full), M(10000baseSR_Full),
        M(10000baseLR_Full), M(10000baseLRM_Full), M(10000baseER_Full), M(2500baseT_Full),
        M(5000baseT_Full), M(50000baseKR_Full), M(50000baseSR_Full), M(50000baseCR_Full),
        M(50000baseLR_ER_FR_Full), M(50000baseDR_Full), M(100000baseKR2_Full),
        M(100000baseSR2_Full), M(100000baseCR2_Full), M(100000baseLR2_ER2_FR2_Full),
        M(100000baseDR2_Full), M(200000baseKR4_Full), M(200000baseSR4_Full),
        M(200000baseLR4_ER4_FR4_Full), M(200000baseDR4_Full), M(200000baseCR4_Full),
        M(100baseT1_Full), M(1000baseT1_Full), M(400000baseKR8_Full), M(400000baseSR8_Full),
        M(400000baseLR8_ER8_FR8_Full), M(400000baseDR8_Full), M(400000baseCR8_Full),
        M(100000baseKR_Full), M(100000baseSR_Full), M(100000baseLR_ER_FR_Full),
        M(100000baseCR_Full), M(100000baseDR_Full), M(200000baseKR2_Full),
        M(200000baseSR2_Full), M(200000baseLR2_ER2_FR2_Full), M(200000baseDR2_Full),
        M(200000baseCR2_Full), M(400000baseKR4_Full), M(400000baseSR4_Full),
        M(400000baseLR4_ER4_FR4_Full), M(400000baseDR4_Full), M(400000baseCR4_Full),
        M(100baseFX_Full), M(10baseT1L_Full),
    };
    int n;
    const nt_eth_link_mode_t *t = nt_eth_link_modes(&n);
    (void)state;
    for (size_t i = 0; i < sizeof(hdr) / sizeof(hdr[0]); i++) {
        int found = 0;
        for (int j = 0; j < n; j++)
            if (strcmp(t[j].name, hdr[i].name) == 0) {
                assert_int_equal(t[j].bit, hdr[i].bit);
                found = 1;
            }
        assert_true(found);
    }
    /* speeds and lanes read back from the names */
    for (int j = 0; j < n; j++) {
        int mbps = 0;
        assert_int_equal(sscanf(t[j].name, "%dbase", &mbps), 1);
        assert_int_equal(t[j].Mbps, mbps);
    }
}
#undef M

static void test_eth_connectx5_100g(void **state)
{
    /* supported modes of a ConnectX-5 100GbE port as ethtool lists them */
    uint32_t w[3] = {0};
    static const int bits[] = {17, 19, 23, 24, 25, 26, 31, 32, 33, 34, 35, 36, 37, 38, 39};
    nt_port_caps_t c;
    char txt[96];
    (void)state;
    for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
        set_bit(w, bits[i]);
    assert_int_equal(nt_eth_caps_from_modes(w, 3, &c), 1);
    assert_true(c.known);
    assert_true(fabs(c.rate_Gbps - 100.0) < 1e-9);
    assert_int_equal(c.lanes, 4);
    assert_null(c.speed);
    assert_string_equal(c.mode, "100000baseKR4_Full");
    nt_port_caps_text(&c, txt, sizeof(txt));
    assert_string_equal(txt, "100 Gb/s (100000baseKR4_Full)");
}

static void test_eth_connectx7_400g_and_800g(void **state)
{
    uint32_t w[4] = {0};
    nt_port_caps_t c;
    (void)state;
    set_bit(w, 66); /* 200000baseCR4 */
    set_bit(w, 84); /* 200000baseCR2 */
    set_bit(w, 89); /* 400000baseCR4 */
    set_bit(w, 73); /* 400000baseCR8 */
    assert_int_equal(nt_eth_caps_from_modes(w, 3, &c), 1);
    assert_true(fabs(c.rate_Gbps - 400.0) < 1e-9);
    assert_int_equal(c.lanes, 4); /* the tie goes to fewer lanes: CR4 over CR8 */
    assert_string_equal(c.mode, "400000baseCR4_Full");
    set_bit(w, 93); /* 800000baseCR8 */
    assert_int_equal(nt_eth_caps_from_modes(w, 4, &c), 1);
    assert_true(fabs(c.rate_Gbps - 800.0) < 1e-9);
    assert_int_equal(c.lanes, 8);
    /* the same bitmap cut to 2 words loses everything past bit 63 */
    assert_int_equal(nt_eth_caps_from_modes(w, 2, &c), 0);
    assert_false(c.known);
}

static void test_eth_unknown(void **state)
{
    uint32_t w[4] = {0};
    uint32_t gset = 0;
    nt_port_caps_t c;
    (void)state;
    /* virtio-net: no supported mode at all */
    assert_int_equal(nt_eth_caps_from_modes(w, 4, &c), 0);
    assert_int_equal(nt_eth_caps_from_modes(NULL, 4, &c), 0);
    /* only Autoneg, TP, Pause: no speed */
    set_bit(w, 6), set_bit(w, 7), set_bit(w, 13);
    assert_int_equal(nt_eth_caps_from_modes(w, 4, &c), 0);
    /* a mode newer than the table: the maximum cannot be told */
    set_bit(w, 89);
    set_bit(w, 115);
    assert_int_equal(nt_eth_caps_from_modes(w, 4, &c), 0);
    /* ETHTOOL_GSET's 32-bit supported word: 56000baseCR4 (bit 28) and 40000baseCR4 (24) */
    gset = 1u << 28 | 1u << 24 | 1u << 5;
    assert_int_equal(nt_eth_caps_from_modes(&gset, 1, &c), 1);
    assert_true(fabs(c.rate_Gbps - 56.0) < 1e-9);
}

/* A PortInfo data block: CapabilityMask, widths, speeds, extended speeds. */
static void portinfo(uint8_t d[64], uint32_t cap, int w_en, int w_sup, int w_act, int sp_sup,
                     int state, int phys, int sp_act, int sp_en, int ext_act, int ext_sup,
                     int ext_en, int local_port)
{
    memset(d, 0, 64);
    d[20] = (uint8_t)(cap >> 24), d[21] = (uint8_t)(cap >> 16), d[22] = (uint8_t)(cap >> 8);
    d[23] = (uint8_t)cap;
    d[28] = (uint8_t)local_port;
    d[29] = (uint8_t)w_en, d[30] = (uint8_t)w_sup, d[31] = (uint8_t)w_act;
    d[32] = (uint8_t)(sp_sup << 4 | state);
    d[33] = (uint8_t)(phys << 4 | 2);
    d[35] = (uint8_t)(sp_act << 4 | sp_en);
    d[62] = (uint8_t)(ext_act << 4 | ext_sup);
    d[63] = (uint8_t)ext_en;
}

/* ConnectX-7 NDR HCA port: CapMask 0xa651e848 (IsExtendedSpeedsSupported), widths 1X/2X/4X
 * (0x13), 4X active, SDR/DDR/QDR supported, extended FDR..NDR (0xf), running HDR (4). */
#define CX7_CAP 0xa651e848u

static void test_portinfo_ndr_hca(void **state)
{
    uint8_t d[64];
    nt_ib_portinfo_t pi;
    nt_port_caps_t c;
    char txt[96];
    (void)state;
    portinfo(d, CX7_CAP, 0x13, 0x13, 2, 7, 4, 5, 0, 7, 4, 0xf, 0xf, 1);
    nt_ib_portinfo_decode(d, &pi);
    assert_int_equal(pi.cap_mask, CX7_CAP);
    assert_int_equal(pi.width_supported, 0x13);
    assert_int_equal(pi.width_active, 2);
    assert_int_equal(pi.speed_supported, 7);
    assert_int_equal(pi.state, 4);
    assert_int_equal(pi.phys_state, 5);
    assert_int_equal(pi.ext_active, 4);
    assert_int_equal(pi.ext_supported, 0xf);
    assert_int_equal(pi.local_port, 1);
    assert_int_equal(nt_ib_caps_from_portinfo(&pi, 0, &c), 1);
    assert_int_equal(c.lanes, 4);
    assert_string_equal(c.speed->name, "NDR");
    assert_true(fabs(c.rate_Gbps - 400.0) < 1e-9);
    nt_port_caps_text(&c, txt, sizeof(txt));
    assert_string_equal(txt, "4X NDR 400 Gb/s");
}

static void test_portinfo_qdr_and_no_ext(void **state)
{
    uint8_t d[64];
    nt_ib_portinfo_t pi;
    nt_port_caps_t c;
    (void)state;
    /* ConnectX-2 QDR: no extended speeds, 1X/4X, SDR/DDR/QDR: 4x QDR carries 32 Gb/s */
    portinfo(d, 0x02510868u, 3, 3, 2, 7, 4, 5, 4, 7, 0, 0, 0, 1);
    nt_ib_portinfo_decode(d, &pi);
    assert_int_equal(nt_ib_caps_from_portinfo(&pi, 0, &c), 1);
    assert_string_equal(c.speed->name, "QDR");
    assert_true(fabs(c.rate_Gbps - 32.0) < 1e-9);
    /* extended bits without IsExtendedSpeedsSupported are not trusted */
    portinfo(d, 0x02510868u, 3, 3, 2, 7, 4, 5, 4, 7, 2, 3, 3, 1);
    nt_ib_portinfo_decode(d, &pi);
    assert_int_equal(pi.ext_supported, 0);
    assert_int_equal(nt_ib_caps_from_portinfo(&pi, 0, &c), 1);
    assert_string_equal(c.speed->name, "QDR");
    /* FDR: 64b/66b on the 14.0625 signalling: 4x = 54.5 Gb/s */
    portinfo(d, 0x4000, 3, 3, 2, 7, 4, 5, 0, 7, 1, 1, 1, 1);
    nt_ib_portinfo_decode(d, &pi);
    assert_int_equal(nt_ib_caps_from_portinfo(&pi, 0, &c), 1);
    assert_true(fabs(c.rate_Gbps - 4 * 14.0625 * 64 / 66) < 1e-6);
    /* 12X EDR switch port */
    portinfo(d, 0x4000, 0xb, 0xb, 8, 7, 4, 5, 0, 7, 2, 3, 3, 1);
    nt_ib_portinfo_decode(d, &pi);
    assert_int_equal(nt_ib_caps_from_portinfo(&pi, 0, &c), 1);
    assert_int_equal(c.lanes, 12);
    assert_true(fabs(c.rate_Gbps - 300.0) < 1e-9);
    /* nothing supported */
    memset(d, 0, sizeof(d));
    nt_ib_portinfo_decode(d, &pi);
    assert_int_equal(nt_ib_caps_from_portinfo(&pi, 0, &c), 0);
    assert_false(c.known);
}

static void test_portinfo_with_peer(void **state)
{
    uint8_t d[64];
    nt_ib_portinfo_t hca, sw, both;
    nt_port_caps_t c, e;
    (void)state;
    portinfo(d, CX7_CAP, 0x13, 0x13, 2, 7, 4, 5, 0, 7, 4, 0xf, 0xf, 1);
    nt_ib_portinfo_decode(d, &hca);
    /* Quantum HDR switch port 17: 1X/2X/4X, FDR/EDR/HDR (7) */
    portinfo(d, 0x4000, 0x13, 0x13, 2, 7, 4, 5, 0, 7, 4, 7, 7, 17);
    nt_ib_portinfo_decode(d, &sw);
    nt_ib_portinfo_and(&hca, &sw, &both);
    assert_int_equal(nt_ib_caps_from_portinfo(&both, 0, &c), 1);
    assert_string_equal(c.speed->name, "HDR");
    assert_true(fabs(c.rate_Gbps - 200.0) < 1e-9);
    assert_int_equal(nt_ib_caps_from_portinfo(&both, 1, &e), 1);
    assert_true(fabs(e.rate_Gbps - 200.0) < 1e-9);
    /* the switch port enables only EDR: both support HDR, enable at most EDR */
    portinfo(d, 0x4000, 0x13, 0x13, 2, 7, 4, 5, 0, 7, 2, 7, 2, 17);
    nt_ib_portinfo_decode(d, &sw);
    nt_ib_portinfo_and(&hca, &sw, &both);
    assert_int_equal(nt_ib_caps_from_portinfo(&both, 1, &e), 1);
    assert_string_equal(e.speed->name, "EDR");
    assert_true(fabs(e.rate_Gbps - 100.0) < 1e-9);
    /* extended speeds disabled (30) on the switch: QDR is the best enabled */
    portinfo(d, 0x4000, 0xff, 0x13, 2, 7, 4, 5, 0, 0xf, 0, 7, 30, 17);
    nt_ib_portinfo_decode(d, &sw);
    nt_ib_portinfo_and(&hca, &sw, &both);
    assert_int_equal(nt_ib_caps_from_portinfo(&both, 1, &e), 1);
    assert_string_equal(e.speed->name, "QDR");
    assert_int_equal(e.lanes, 4);
}

static void test_smp_bytes(void **state)
{
    uint8_t mad[NT_SMP_SIZE], resp[NT_SMP_SIZE];
    (void)state;
    nt_smp_build_dr_get(mad, NT_IB_ATTR_PORT_INFO, 1, 0x0000123400000007ull, 0, 0);
    assert_int_equal(mad[0], 1);
    assert_int_equal(mad[1], 0x81);
    assert_int_equal(mad[2], 1);
    assert_int_equal(mad[3], 1);
    assert_int_equal(mad[7], 0);
    assert_int_equal(mad[12], 0);
    assert_int_equal(mad[15], 7);
    assert_int_equal(mad[10], 0x12);
    assert_int_equal(mad[16], 0x00);
    assert_int_equal(mad[17], 0x15);
    assert_int_equal(mad[23], 1);
    assert_int_equal(mad[32] & mad[33] & mad[34] & mad[35], 0xff);
    assert_int_equal(mad[129], 0);
    nt_smp_build_dr_get(mad, NT_IB_ATTR_NODE_INFO, 0, 9, 1, 2);
    assert_int_equal(mad[7], 1);
    assert_int_equal(mad[129], 2);
    /* the response: method GetResp, direction bit set, data in bytes 64.. */
    nt_smp_build_dr_get(mad, NT_IB_ATTR_PORT_INFO, 1, 42, 0, 0);
    memcpy(resp, mad, sizeof(resp));
    resp[3] = 0x81;
    resp[4] = 0x80;
    resp[64 + 30] = 0x13;
    assert_ptr_equal(nt_smp_response_data(resp, 256, NT_IB_ATTR_PORT_INFO, 42), resp + 64);
    assert_null(nt_smp_response_data(resp, 256, NT_IB_ATTR_PORT_INFO, 43));
    assert_null(nt_smp_response_data(resp, 256, NT_IB_ATTR_NODE_INFO, 42));
    assert_null(nt_smp_response_data(resp, 100, NT_IB_ATTR_PORT_INFO, 42));
    assert_null(nt_smp_response_data(mad, 256, NT_IB_ATTR_PORT_INFO, 42)); /* a Get */
    resp[5] = 0x1c; /* status: unsupported attribute */
    assert_null(nt_smp_response_data(resp, 256, NT_IB_ATTR_PORT_INFO, 42));
}

static nt_port_caps_t ib_caps(int lanes, const char *sp)
{
    nt_port_caps_t c;
    nt_port_rate_t r;
    memset(&c, 0, sizeof(c));
    c.known = 1;
    c.lanes = lanes;
    c.speed = nt_ib_speed_from_name(sp);
    nt_port_rate_compute(lanes, c.speed, 0, &r);
    c.rate_Gbps = r.data_Gbps;
    return c;
}

static void test_judge(void **state)
{
    nt_port_caps_t ndr = ib_caps(4, "NDR"), hdr = ib_caps(4, "HDR"), edr = ib_caps(4, "EDR");
    nt_port_caps_t none;
    char msg[768];
    (void)state;
    memset(&none, 0, sizeof(none));
    /* maximum unknown: pass */
    assert_int_equal(nt_port_rate_judge("mlx5_0:1", 200, "4X HDR 200 Gb/s", 4, 0, &none, &none,
                                        &none, msg, sizeof(msg)),
                     NT_PASS);
    assert_non_null(strstr(msg, "unknown"));
    /* at the maximum: pass */
    assert_int_equal(nt_port_rate_judge("mlx5_0:1", 400, "4X NDR 400 Gb/s", 4, 0, &ndr, &none,
                                        &none, msg, sizeof(msg)),
                     NT_PASS);
    /* below, peer unknown: warn with the brief's sentence */
    assert_int_equal(nt_port_rate_judge("mlx5_0:1", 200, "4X HDR 200 Gb/s", 4, 0, &ndr, &none,
                                        &none, msg, sizeof(msg)),
                     NT_WARN);
    assert_non_null(strstr(msg, "mlx5_0:1 runs 4X HDR 200 Gb/s, capable of 4X NDR 400 Gb/s: "
                                "check the cable and the switch port"));
    /* lost lanes (1X of 4X), peer unknown: fail */
    assert_int_equal(nt_port_rate_judge("mlx5_0:1", 100, "1X NDR 100 Gb/s", 1, 0, &ndr, &none,
                                        &none, msg, sizeof(msg)),
                     NT_FAIL);
    assert_non_null(strstr(msg, "lost lanes"));
    /* peer known to support HDR only: pass, limited by the peer */
    assert_int_equal(nt_port_rate_judge("mlx5_0:1", 200, "4X HDR 200 Gb/s", 4, 0, &ndr, &hdr,
                                        &hdr, msg, sizeof(msg)),
                     NT_PASS);
    assert_non_null(strstr(msg, "limited by its peer"));
    /* both support NDR and enable it, runs HDR: fail */
    assert_int_equal(nt_port_rate_judge("mlx5_0:1", 200, "4X HDR 200 Gb/s", 4, 0, &ndr, &ndr,
                                        &ndr, msg, sizeof(msg)),
                     NT_FAIL);
    assert_non_null(strstr(msg, "both it and its peer support 4X NDR 400 Gb/s"));
    /* both support NDR, enable at most EDR, runs EDR: warn (configuration) */
    assert_int_equal(nt_port_rate_judge("mlx5_0:1", 100, "4X EDR 100 Gb/s", 4, 0, &ndr, &ndr,
                                        &edr, msg, sizeof(msg)),
                     NT_WARN);
    assert_non_null(strstr(msg, "by configuration"));
    /* RoCE 400GbE NIC at 100 GbE, partner unknown: warn; partner at 100G max: pass */
    {
        uint32_t w[3] = {0}, p[3] = {0};
        nt_port_caps_t l, c;
        set_bit(w, 89), set_bit(w, 38);
        set_bit(p, 38);
        nt_eth_caps_from_modes(w, 3, &l);
        assert_int_equal(nt_port_rate_judge("mlx5_2:1", 100, "100 Gb/s", 4, 1, &l, &none,
                                            &none, msg, sizeof(msg)),
                         NT_WARN);
        assert_non_null(strstr(msg, "capable of 400 Gb/s (400000baseCR4_Full)"));
        for (int i = 0; i < 3; i++)
            p[i] &= w[i];
        nt_eth_caps_from_modes(p, 3, &c);
        assert_int_equal(nt_port_rate_judge("mlx5_2:1", 100, "100 Gb/s", 4, 1, &l, &c, &c, msg,
                                            sizeof(msg)),
                         NT_PASS);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_matches_header), cmocka_unit_test(test_eth_connectx5_100g),
        cmocka_unit_test(test_eth_connectx7_400g_and_800g), cmocka_unit_test(test_eth_unknown),
        cmocka_unit_test(test_portinfo_ndr_hca), cmocka_unit_test(test_portinfo_qdr_and_no_ext),
        cmocka_unit_test(test_portinfo_with_peer), cmocka_unit_test(test_smp_bytes),
        cmocka_unit_test(test_judge),
    };
    return cmocka_run_group_tests_name("rdma_portcap", tests, NULL, NULL);
}
