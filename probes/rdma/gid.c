/* GID parsing and the GID choice of NCCL (src/transport/net_ib.cc ncclIbGetGidIndex). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "rdma.h"

static const uint8_t nt_gid_zero[16];

static long nt_env_long(const char *name, long dflt, int *set)
{
    const char *v = getenv(name);
    char *end;
    long x;
    *set = 0;
    if (!v || !*v)
        return dflt;
    x = strtol(v, &end, 0);
    if (end == v)
        return dflt;
    *set = 1;
    return x;
}

void nt_gid_pref_from_env(nt_gid_pref_t *out)
{
    const char *fam = getenv("NCCL_IB_ADDR_FAMILY");
    const char *range = getenv("NCCL_IB_ADDR_RANGE");
    int set_v, set_i;
    size_t o;

    memset(out, 0, sizeof(*out));
    out->roce_version = (int)nt_env_long("NCCL_IB_ROCE_VERSION_NUM", 2, &set_v);
    out->env_gid_index = (int)nt_env_long("NCCL_IB_GID_INDEX", -1, &set_i);
    {
        int s;
        out->routable_flid_index = (int)nt_env_long("NCCL_IB_ROUTABLE_FLID_GID_INDEX", 1, &s);
    }
    out->family = AF_INET;
    if (fam && strcmp(fam, "AF_INET6") == 0)
        out->family = AF_INET6;
    if (range && *range) {
        char buf[128];
        char *slash;
        snprintf(buf, sizeof(buf), "%s", range);
        slash = strchr(buf, '/');
        if (slash) {
            int len;
            *slash++ = '\0';
            len = (int)strtol(slash, NULL, 10);
            if (inet_pton(out->family, buf, out->range) == 1 && len > 0 &&
                len <= (out->family == AF_INET ? 32 : 128))
                out->range_len = len;
        }
    }
    o = (size_t)snprintf(out->text, sizeof(out->text), "RoCE v%d%s, %s%s", out->roce_version,
                         set_v ? " (NCCL_IB_ROCE_VERSION_NUM)" : "",
                         out->family == AF_INET ? "IPv4" : "IPv6",
                         fam && *fam ? " (NCCL_IB_ADDR_FAMILY)" : "");
    if (out->range_len && o < sizeof(out->text))
        snprintf(out->text + o, sizeof(out->text) - o, ", in NCCL_IB_ADDR_RANGE=%s", range);
}

nt_status_t nt_gid_parse(const char *text, uint8_t raw[16])
{
    unsigned g[8];
    char tail;
    if (!text || sscanf(text, "%4x:%4x:%4x:%4x:%4x:%4x:%4x:%4x%c", &g[0], &g[1], &g[2], &g[3],
                        &g[4], &g[5], &g[6], &g[7], &tail) < 8)
        return NT_ERR_PARSE;
    for (int i = 0; i < 8; i++) {
        raw[2 * i] = (uint8_t)(g[i] >> 8);
        raw[2 * i + 1] = (uint8_t)(g[i] & 0xff);
    }
    return NT_OK;
}

void nt_gid_format(const uint8_t raw[16], char *buf, size_t len)
{
    char tmp[INET6_ADDRSTRLEN];
    if (!inet_ntop(AF_INET6, raw, tmp, sizeof(tmp)))
        snprintf(tmp, sizeof(tmp), "?");
    snprintf(buf, len, "%s", tmp);
}

nt_gid_type_t nt_gid_type_parse(const char *text, int is_ethernet)
{
    if (!text || !*text)
        return NT_GID_TYPE_UNKNOWN;
    if (strncmp(text, "RoCE v2", 7) == 0)
        return NT_GID_TYPE_ROCE_V2;
    if (strncmp(text, "IB/RoCE v1", 10) == 0 || strncmp(text, "RoCE v1", 7) == 0)
        return is_ethernet ? NT_GID_TYPE_ROCE_V1 : NT_GID_TYPE_IB;
    return NT_GID_TYPE_UNKNOWN;
}

const char *nt_gid_type_string(nt_gid_type_t t)
{
    switch (t) {
    case NT_GID_TYPE_IB: return "IB";
    case NT_GID_TYPE_ROCE_V1: return "RoCE v1";
    case NT_GID_TYPE_ROCE_V2: return "RoCE v2";
    default: return "unknown";
    }
}

static uint32_t nt_w32(const uint8_t raw[16], int i)
{
    uint32_t v;
    memcpy(&v, raw + 4 * i, 4);
    return v; /* network order, compared against htonl() constants as NCCL does */
}

int nt_gid_is_ipv4(const uint8_t raw[16])
{
    int mapped = (nt_w32(raw, 0) | nt_w32(raw, 1) | (nt_w32(raw, 2) ^ htonl(0x0000ffff))) == 0;
    int mcast = nt_w32(raw, 0) == htonl(0xff0e0000) &&
                (nt_w32(raw, 1) | (nt_w32(raw, 2) ^ htonl(0x0000ffff))) == 0;
    return mapped || mcast;
}

static int nt_gid_configured(const uint8_t raw[16])
{
    uint32_t trailer = nt_w32(raw, 1) | nt_w32(raw, 2) | nt_w32(raw, 3);
    if ((nt_w32(raw, 0) | trailer) == 0 || (nt_w32(raw, 0) == htonl(0xfe800000) && trailer == 0))
        return 0;
    return 1;
}

static int nt_gid_link_local(const uint8_t raw[16])
{
    return nt_w32(raw, 0) == htonl(0xfe800000) && nt_w32(raw, 1) == 0;
}

int nt_gid_valid(const uint8_t raw[16])
{
    return nt_gid_configured(raw) && !nt_gid_link_local(raw);
}

const nt_gid_entry_t *nt_gid_find(const nt_gid_entry_t *tbl, int n, int index)
{
    for (int i = 0; i < n; i++)
        if (tbl[i].index == index)
            return &tbl[i];
    return NULL;
}

/* NCCL matchGidAddrPrefix: IPv4 compares the last word under the mask; IPv6 word by word. */
static int nt_gid_in_range(const nt_gid_pref_t *pf, const uint8_t raw[16])
{
    int plen = pf->range_len, i = 0;
    while (plen > 0 && i < 4) {
        if (pf->family == AF_INET) {
            uint32_t mask = htonl(0xffffffffu ^ ((plen >= 32) ? 0 : ((1u << (32 - plen)) - 1)));
            uint32_t base;
            memcpy(&base, pf->range, 4);
            if ((base & mask) ^ (nt_w32(raw, 3) & mask))
                break;
            plen = 0;
            break;
        } else if (plen >= 32) {
            uint32_t base;
            memcpy(&base, pf->range + 4 * i, 4);
            if (base ^ nt_w32(raw, i))
                break;
            plen -= 32;
            i++;
        } else {
            uint32_t mask = htonl(0xffffffffu ^ ((1u << (32 - plen)) - 1));
            uint32_t base;
            memcpy(&base, pf->range + 4 * i, 4);
            if ((base & mask) ^ (nt_w32(raw, i) & mask))
                break;
            plen = 0;
        }
    }
    return plen == 0;
}

static int nt_roce_ver(nt_gid_type_t t)
{
    return t == NT_GID_TYPE_ROCE_V2 ? 2 : t == NT_GID_TYPE_ROCE_V1 ? 1 : -1;
}

int nt_gid_choose(const nt_gid_entry_t *tbl, int n, int tbl_len, int is_ethernet,
                  const nt_gid_pref_t *pref, int override, char *why, size_t whylen)
{
    int idx = 0;

    if (tbl_len <= 0)
        for (int i = 0; i < n; i++)
            if (tbl[i].index + 1 > tbl_len)
                tbl_len = tbl[i].index + 1;
    if (override >= 0) {
        snprintf(why, whylen, "--gid-index %d", override);
        return override;
    }
    if (!is_ethernet) {
        const nt_gid_entry_t *r = nt_gid_find(tbl, n, pref->routable_flid_index);
        /* FLID: bytes 4-5 of the GID (NCCL ncclIbExtractFlid). */
        if (pref->routable_flid_index < tbl_len && r && (r->raw[4] | r->raw[5]) != 0) {
            snprintf(why, whylen,
                     "InfiniBand: GID %d carries a routable FLID (NCCL_IB_ROUTABLE_FLID_GID_INDEX)",
                     pref->routable_flid_index);
            return pref->routable_flid_index;
        }
        snprintf(why, whylen, "InfiniBand: GID 0, as NCCL uses (NCCL_IB_GID_INDEX applies to RoCE only)");
        return 0;
    }
    if (pref->env_gid_index >= 0) {
        snprintf(why, whylen, "NCCL_IB_GID_INDEX=%d", pref->env_gid_index);
        return pref->env_gid_index;
    }
    for (int cand = 1; cand < tbl_len; cand++) {
        const nt_gid_entry_t *g = nt_gid_find(tbl, n, idx), *c = nt_gid_find(tbl, n, cand);
        const uint8_t *graw = g ? g->raw : nt_gid_zero, *craw = c ? c->raw : nt_gid_zero;
        int gfam = nt_gid_is_ipv4(graw) ? AF_INET : AF_INET6;
        int cfam = nt_gid_is_ipv4(craw) ? AF_INET : AF_INET6;
        int in_range = nt_gid_in_range(pref, craw);
        if (cfam != gfam && cfam == pref->family && in_range) {
            idx = cand;
            continue;
        }
        if (cfam != pref->family || !nt_gid_valid(craw) || !in_range)
            continue;
        {
            int gv = g ? nt_roce_ver(g->type) : -1, cv = c ? nt_roce_ver(c->type) : -1;
            if ((gv != cv || !nt_gid_valid(graw)) && cv == pref->roce_version)
                idx = cand;
        }
    }
    {
        const nt_gid_entry_t *g = nt_gid_find(tbl, n, idx);
        char txt[64] = "empty";
        if (g)
            nt_gid_format(g->raw, txt, sizeof(txt));
        snprintf(why, whylen, "chosen as NCCL does, preferring %s: %s (%s)", pref->text, txt,
                 g ? nt_gid_type_string(g->type) : "no such entry");
    }
    return idx;
}
