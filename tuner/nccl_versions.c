/* NCCL's tuning constants per release, read from NVIDIA/nccl src/graph/tuning.cc at each tag
 * (tuner/nccl_versions.h). Each entry cites the tag and lines it was copied from; entries that
 * share a table use the same macro. A release between two tags uses the older tag's data
 * (NCCL changes these tables only at releases). */
#include "nccl_versions.h"

#include <stddef.h>

/* ---- 2.27 / 2.28 / 2.29 (family 2.27) ---------------------------------------------------- */

/* baseLat: v2.27.7-1 tuning.cc:134-137 (no PAT row: 0); v2.28.9-1 tuning.cc:143-148 adds PAT 8/8/8
 */
#define BASE_LAT_227                                                                               \
    {                                                                                              \
        {6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0},            \
        {                                                                                          \
            0, 0, 0                                                                                \
        }                                                                                          \
    }
#define BASE_LAT_228                                                                               \
    {                                                                                              \
        {6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0},            \
        {                                                                                          \
            8.0, 8.0, 8.0                                                                          \
        }                                                                                          \
    }

/* baseLat 2.21-2.22: Tree Simple 0 (v2.22.3-1 tuning.cc:56-59 = v2.21.5-1:56-59); 2.23 has
 * 2.27's (v2.23.4-1:56-59, PAT row 0). */
#define BASE_LAT_221                                                                               \
    {                                                                                              \
        {6.8, 14.0, 0}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0},              \
        {                                                                                          \
            0, 0, 0                                                                                \
        }                                                                                          \
    }

/* hwLat [NVLINK, PCI, NET][algo][proto]: v2.27.7-1 tuning.cc:143-156 (no PAT row),
 * v2.28.9-1 tuning.cc:149-168 (PAT row; NET NVLSTree 20.9 from 2.28.9, 14 before);
 * 2.21-2.22 Tree Simple 28 on every row (v2.22.3-1:65-77 = v2.21.5-1:65-77), 2.23 2.27's
 * (v2.23.4-1:65-77). */
#define HW_LAT_T(tree_nvl, tree_pci, tree_net, nvlstree_net, pat_nvl, pat_pci, pat_net)             \
    {                                                                                               \
        {{.6, 1.25, tree_nvl}, {.6, 1.9, 3.4}, {0, 0, 3.7},    {0, 0, 2.8},                         \
         {0, 0, 25},           {0, 0, 25},     {0, 0, pat_nvl}},                                    \
            {{1.0, 1.9, tree_pci}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, \
             {0, 0, pat_pci}},                                                                      \
        {                                                                                           \
            {5.0, 8.5, tree_net}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18},             \
                {0, 0, nvlstree_net},                                                               \
            {                                                                                       \
                0, 0, pat_net                                                                       \
            }                                                                                       \
        }                                                                                           \
    }
#define HW_LAT(nvlstree_net, pat_nvl, pat_pci, pat_net)                                            \
    HW_LAT_T(4.0, 4.0, 14, nvlstree_net, pat_nvl, pat_pci, pat_net)

/* llMaxBws: v2.27.7-1 tuning.cc:165-170 = v2.28.9-1 tuning.cc:169-174. Row 0/1 double as the
 * Intel/AMD rows across nodes (tuning.cc:252-253). */
#define LL_MAX_BW_227                                                                              \
    {                                                                                              \
        {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0},                               \
        {                                                                                          \
            2 * 141.0, 2 * 45.0, 2 * 35.0                                                          \
        }                                                                                          \
    }

/* perChMaxRingLL128Bws, rows Volta..Blackwell: v2.27.7-1 tuning.cc:172-177; Blackwell row
 * {2*36.7 x3} to 2.28.3, {2*36.7, 34.6, 2*36.7} 2.28.7-2.28.9 (v2.28.9-1:179),
 * {34.5, 34.6, 34.5} 2.29.2-2.29.3 (v2.29.2-1:179), {40, 40, 40} 2.29.7 (v2.29.7-1:180). */
#define RING_LL128(b0, b1, b2)                                                                     \
    {                                                                                              \
        {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7},                                \
        {                                                                                          \
            b0, b1, b2                                                                             \
        }                                                                                          \
    }

/* perChMaxTreeLL128Bws: v2.27.7-1 tuning.cc:178-183 (Blackwell 2x Hopper);
 * v2.28.3-1+ (v2.28.9-1 tuning.cc:181-186) Blackwell {55.6, 31.67, 20.0}. */
#define TREE_LL128_227                                                                             \
    {                                                                                              \
        {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0},                                \
        {                                                                                          \
            2 * 36.7, 2 * 36.7, 2 * 29.0                                                           \
        }                                                                                          \
    }
#define TREE_LL128_228                                                                             \
    {                                                                                              \
        {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0},                                \
        {                                                                                          \
            55.6, 31.67, 20.0                                                                      \
        }                                                                                          \
    }

/* perChMaxTreeBws: v2.27.7-1 tuning.cc:184-189; v2.28.9-1 tuning.cc:187-192. */
#define TREE_227                                                                                   \
    {                                                                                              \
        {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0},                                \
        {                                                                                          \
            2 * 38.7, 2 * 41.4, 2 * 36.0                                                           \
        }                                                                                          \
    }
#define TREE_228                                                                                   \
    {                                                                                              \
        {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0},                                \
        {                                                                                          \
            70.0, 42.8, 24.0                                                                       \
        }                                                                                          \
    }

/* perChMaxNVLSTreeBws (2.28+): v2.28.9-1 tuning.cc:193-198; Blackwell N4 43.1 before 2.28.9. */
#define NVLS_TREE_228(bn4)                                                                         \
    {                                                                                              \
        {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5},                                 \
        {                                                                                          \
            0.0, 96.0, bn4                                                                         \
        }                                                                                          \
    }

/* nvlsEfficiency (2.28+): v2.28.9-1 tuning.cc:134-139. */
#define NVLS_EFF_228                                                                               \
    {                                                                                              \
        0.0f, 0.0f, 0.85f, 0.74f                                                                   \
    }

#define V227(from_, to_, tag_, gate_, v226_, sm60_, tpg_, cc_)                                     \
    {                                                                                              \
        .from = from_, .to = to_, .tag = tag_, .family = NT_FAMILY_227, .nalgos = 7,               \
        .base_lat = BASE_LAT_227, .hw_lat = HW_LAT(14, 0, 0, 0), .ll_max_bw = LL_MAX_BW_227,       \
        .per_ch_ring_ll128 = RING_LL128(2 * 36.7, 2 * 36.7, 2 * 36.7),                             \
        .per_ch_tree_ll128 = TREE_LL128_227, .per_ch_tree = TREE_227, .per_ch_nvls_tree = {{0}},   \
        .nvls_eff = {0}, .nvls_bw_228 = 0, .v226 = v226_, .pat_sm60 = sm60_,                       \
        .tree_pattern_graph = tpg_, .max_cc_idx = cc_, .pat_lat_assign = 1, .ll128_gate = gate_,   \
        .nvls_tree_correction = 0, .tree_corr_len = 23, .env_per_coll = 1, .ll_row_mixed = 1,      \
        .pat_bw = .75                                                                              \
    }

#define V228(from_, to_, tag_, nvlstree_net, r0, r1, r2, bn4, nvlstree_corr)                       \
    V230(from_, to_, tag_, nvlstree_net, r0, r1, r2, bn4, nvlstree_corr, NT_LL128_GATE_2275, 0)
#define V230(from_, to_, tag_, nvlstree_net, r0, r1, r2, bn4, nvlstree_corr, gate_, chain_)        \
    {                                                                                              \
        .from = from_, .to = to_, .tag = tag_, .family = NT_FAMILY_227, .nalgos = 7,               \
        .base_lat = BASE_LAT_228, .hw_lat = HW_LAT(nvlstree_net, 4.0, 4.0, 14),                    \
        .ll_max_bw = LL_MAX_BW_227, .per_ch_ring_ll128 = RING_LL128(r0, r1, r2),                   \
        .per_ch_tree_ll128 = TREE_LL128_228, .per_ch_tree = TREE_228,                              \
        .per_ch_nvls_tree = NVLS_TREE_228(bn4), .nvls_eff = NVLS_EFF_228, .nvls_bw_228 = 1,        \
        .pat_sm60 = 1, .max_cc_idx = 3, .pat_lat_assign = 0, .ll128_gate = gate_,                  \
        .nvls_tree_correction = nvlstree_corr, .tree_corr_len = 23, .env_per_coll = 1,             \
        .ll_row_mixed = 1, .pat_bw = .75, .collnet_chain_rule = chain_                             \
    }

/* 2.21-2.23: 2.24's tables without a Blackwell row (v2.23.4-1 tuning.cc:86-105, the same in
 * v2.21.5-1 and v2.22.3-1), one NCCL_ALGO/NCCL_PROTO list for every function (v2.23.4-1:34-52),
 * the CollNet override and the Ring fallback; OLD_ are the 2.21-2.22 formulas (see
 * nccl_versions.h). */
#define V221(from_, to_, tag_, nalgos_, base_, hw_, old_, backup_, log0_, patbw_)                  \
    {                                                                                              \
        .from = from_, .to = to_, .tag = tag_, .family = NT_FAMILY_227, .nalgos = nalgos_,         \
        .base_lat = base_, .hw_lat = hw_, .ll_max_bw = LL_MAX_BW_227,                              \
        .per_ch_ring_ll128 = RING_LL128(2 * 36.7, 2 * 36.7, 2 * 36.7),                             \
        .per_ch_tree_ll128 = TREE_LL128_227, .per_ch_tree = TREE_227, .v226 = 1, .pat_sm60 = 0,    \
        .tree_pattern_graph = 1, .max_cc_idx = 2, .pat_lat_assign = 1,                             \
        .ll128_gate = NT_LL128_GATE_224, .tree_corr_len = 23, .env_per_coll = 0,                   \
        .log2i_zero = log0_, .ll_row_mixed = 0, .pat_bw = patbw_, .ring_inter_old = old_,          \
        .ring_ll128_ppn1 = old_, .algbw_collnet_only = old_, .inter_lat_plain = old_,              \
        .collnet_off_override = 1, .ring_backup = backup_                                          \
    }

static const nt_model_version_t versions[] = {
    /* ---- 2.14 (family 2.14): v2.14.3-1 tuning.cc ---------------------------------------- */
    {.from = 21400,
     .to = 21499,
     .tag = "v2.14.3-1",
     .family = NT_FAMILY_214,
     .nalgos = 4,
     /* baseLat: v2.14.3-1 tuning.cc:56 */
     .base_lat = {{4.4, 4.4, 0}, {3.6, 10.0, 8.4}, {4.4, 4.4, 0}, {4.4, 4.4, 0}},
     /* hwLat: v2.14.3-1 tuning.cc:63-73 */
     .hw_lat = {{{.52, 1.25, 28}, {.47, 1.9, 3.4}, {0, 0, 8.0}, {0, 0, 8.0}},
                {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}, {0, 0, 8.0}, {0, 0, 8.0}},
                {{5.0, 8.5, 28}, {2.7, 4.0, 9.6}, {0, 0, 10.7}, {0, 0, 10.7}}},
     /* llMaxBws rows Volta/Intel, Ampere/AMD: v2.14.3-1 tuning.cc:77 (index compCap80, :97-104) */
     .ll_max_bw = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}},
     /* ll128MaxBwPerCh = 20 for every GPU and scale: v2.14.3-1 tuning.cc:76 */
     .per_ch_ring_ll128 = {{20, 20, 20}, {20, 20, 20}},
     .per_ch_tree_ll128 = {{20, 20, 20}, {20, 20, 20}},
     /* perChMaxTreeBws: v2.14.3-1 tuning.cc:78 */
     .per_ch_tree = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}},
     .ll128_gate = NT_LL128_GATE_214,
     .tree_corr_len = 23,
     .env_per_coll = 0,
     .log2i_zero = 1},
    /* ---- 2.21, 2.22, 2.23: one tag each in NVIDIA/nccl (v2.21.5-1, v2.22.3-1, v2.23.4-1); an
     * earlier patch release of the same minor uses its data. 2.21.5 and 2.22.3 have 6
     * algorithms (NCCL_NUM_ALGORITHMS 6, no PAT: v2.22.3-1 src/include/nccl_common.h:53);
     * 2.21.5 keeps the Ring fallback for disabled protocols too and has 2.14's log2i. */
    V221(22100, 22199, "v2.21.5-1", 6, BASE_LAT_221, HW_LAT_T(28, 28, 28, 14, 0, 0, 0), 1,
         NT_RING_BACKUP_ALL, 1, .75),
    V221(22200, 22299, "v2.22.3-1", 6, BASE_LAT_221, HW_LAT_T(28, 28, 28, 14, 0, 0, 0), 1,
         NT_RING_BACKUP_ENABLED, 0, .75),
    V221(22300, 22399, "v2.23.4-1", 7, BASE_LAT_227, HW_LAT(14, 0, 0, 0), 0, NT_RING_BACKUP_ENABLED,
         0, .85),
    /* ---- 2.27: v2.27.3-1 (LL128 gate :460), v2.27.5-1..v2.27.7-1 (identical tuning.cc) ---- */
    /* ---- 2.26: v2.26.6-1 (= v2.26.2-1): 2.27's constants (v2.26.6-1 tuning.cc:131-183),
     * formula switches v226 and the SM-list LL128 gate ------------------------------------ */
    /* 2.24 (v2.24.3-1): no Blackwell row (SM100 is Hopper), LL128 on SM 70/80/90 only; 2.25
     * (v2.25.1-1) adds Blackwell (2x Hopper) and SM 100/120; both test the Tree graph's own
     * pattern and let PAT run below SM60 (v2.26.2-1 changed both) */
    V227(22400, 22499, "v2.24.3-1", NT_LL128_GATE_224, 1, 0, 1, 2),
    V227(22500, 22599, "v2.25.1-1", NT_LL128_GATE_226, 1, 0, 1, 3),
    V227(22600, 22699, "v2.26.6-1", NT_LL128_GATE_226, 1, 1, 0, 3),
    V227(22700, 22704, "v2.27.3-1", NT_LL128_GATE_2273, 0, 1, 0, 3),
    V227(22705, 22799, "v2.27.7-1", NT_LL128_GATE_2275, 0, 1, 0, 3),
    /* ---- 2.28: v2.28.3-1, v2.28.7-1, v2.28.9-1 ------------------------------------------- */
    V228(22800, 22806, "v2.28.3-1", 14, 2 * 36.7, 2 * 36.7, 2 * 36.7, 43.1, 0),
    V228(22807, 22808, "v2.28.7-1", 14, 2 * 36.7, 34.6, 2 * 36.7, 43.1, 0),
    V228(22809, 22899, "v2.28.9-1", 20.9, 2 * 36.7, 34.6, 2 * 36.7, 43.8, 0),
    /* ---- 2.29: v2.29.2-1 = v2.29.3-1, v2.29.7-1 (NVLS_TREE correction, v2.29.7-1:596) ------ */
    V228(22900, 22906, "v2.29.3-1", 20.9, 34.5, 34.6, 34.5, 43.8, 1),
    V228(22907, 22999, "v2.29.7-1", 20.9, 40.0, 40.0, 40.0, 43.8, 1),
    /* ---- 2.30: v2.30.3-1 = v2.30.4-1 (identical tuning.cc): Blackwell N4 NVLS_TREE 80.0
     * (v2.30.4-1:205), LL128 for mixed compute capabilities from SM90 (:501); v2.30.7-1 adds
     * the CollNetChain support rule (v2.30.7-1:507), its other changes are layout ---------- */
    V230(23000, 23006, "v2.30.4-1", 20.9, 40.0, 40.0, 40.0, 80.0, 1, NT_LL128_GATE_230, 0),
    V230(23007, 23099, "v2.30.7-1", 20.9, 40.0, 40.0, 40.0, 80.0, 1, NT_LL128_GATE_230, 1),
};

const nt_model_version_t *nt_model_version_find(int version)
{
    for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
        if (version >= versions[i].from && version <= versions[i].to)
            return &versions[i];
    return NULL;
}

/* treeCorrectionFactor: v2.28.9-1 tuning.cc:578-582 (23 per protocol); v2.29.7-1 tuning.cc:581-585
 * appends a 24th (1.0, 1.0, .9) used only by the NVLS_TREE correction. v2.14.3-1:288-292 =
 * first 23. */
const float nt_model_tree_correction[NT_NUM_PROTOS][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6,  .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6,  .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
     .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};
