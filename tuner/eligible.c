/* Eligibility layers 2 and 3 (tuner/model.h) and NCCL's names. Layer 1 (what the model offers)
 * is the table itself: nt_model_compute() marks each cell with why it is or is not offered. */
#include <string.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>

#include "model.h"

/* ncclAlgoStr / ncclProtoStr / ncclFuncStr: NVIDIA/nccl v2.28.9-1 src/enqueue.cc (the strings
 * NCCL prints in its table and parses in NCCL_ALGO / NCCL_PROTO, case-insensitive). */
static const char *const algo_names[NT_NUM_ALGOS] = {
    "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
static const char *const algo_alt[NT_NUM_ALGOS] = {
    "TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
static const char *const proto_names[NT_NUM_PROTOS] = {"LL", "LL128", "Simple"};
static const char *const coll_names[NT_NUM_COLLS] = {"Broadcast", "Reduce", "AllGather",
                                                     "ReduceScatter", "AllReduce"};
/* topoPathTypeStr: v2.28.9-1 src/graph/topo.cc */
static const char *const path_names[NT_NUM_PATHS] = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB",
                                                     "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};

const char *nt_model_algo_name(int a)
{
    return a >= 0 && a < NT_NUM_ALGOS ? algo_names[a] : NULL;
}
const char *nt_model_proto_name(int p)
{
    return p >= 0 && p < NT_NUM_PROTOS ? proto_names[p] : NULL;
}
const char *nt_model_coll_name(int c)
{
    return c >= 0 && c < NT_NUM_COLLS ? coll_names[c] : NULL;
}
const char *nt_model_path_name(int p)
{
    return p >= 0 && p < NT_NUM_PATHS ? path_names[p] : NULL;
}

static int nt_find(const char *s, const char *const *names, int n)
{
    if (!s)
        return -1;
    for (int i = 0; i < n; i++)
        if (strcasecmp(s, names[i]) == 0)
            return i;
    return -1;
}

int nt_model_algo_parse(const char *s)
{
    int a = nt_find(s, algo_names, NT_NUM_ALGOS);
    return a >= 0 ? a : nt_find(s, algo_alt, NT_NUM_ALGOS);
}
int nt_model_proto_parse(const char *s)
{
    return nt_find(s, proto_names, NT_NUM_PROTOS);
}
int nt_model_coll_parse(const char *s)
{
    return nt_find(s, coll_names, NT_NUM_COLLS);
}
int nt_model_path_parse(const char *s)
{
    return nt_find(s, path_names, NT_NUM_PATHS);
}

static void nt_set_err(char *err, size_t errlen, const char *fmt, const char *a, const char *b)
{
    if (err && errlen)
        snprintf(err, errlen, fmt, a, b);
}

/* One of NCCL_ALGO / NCCL_PROTO, as parseList() reads it:
 *   2.24+ (v2.28.9-1 tuning.cc:54-131): "list" or "list;func:list;..." where the first entry may
 *         omit the prefix; "^" negates (the listed elements off, every other one ON, which for
 *         NCCL_PROTO forces LL128 on); unknown elements or prefixes are errors.
 *   before (v2.14.3-1 tuning.cc:34-51): one list for every function; unknown tokens ignored. */
static nt_status_t nt_parse_list(int version, const char *str, const char *const *elems, int nelems,
                              int *list, int stride, char *err, size_t errlen)
{
    if (version < 22400) {
        const char *s = str;
        int def = 0, set = 1;
        if (*s == '^') {
            def = 1;
            set = 0;
            s++;
        }
        int row[NT_NUM_ALGOS];
        for (int e = 0; e < nelems; e++)
            row[e] = def;
        char *tok = strdup(s), *save = NULL;
        if (!tok)
            return NT_ERR_NOMEM;
        for (char *t = strtok_r(tok, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            int e = nt_find(t, elems, nelems);
            if (e >= 0)
                row[e] = set;
        }
        free(tok);
        for (int c = 0; c < NT_NUM_COLLS; c++)
            for (int e = 0; e < nelems; e++)
                list[c * stride + e] = row[e];
        return NT_OK;
    }
    nt_status_t rc = NT_OK;
    char *full = strdup(str), *save_full = NULL;
    if (!full)
        return NT_ERR_NOMEM;
    int first = 1;
    for (char *entry = strtok_r(full, ";", &save_full); entry;
         entry = strtok_r(NULL, ";", &save_full), first = 0) {
        char *colon = strchr(entry, ':');
        const char *prefix = NULL, *elist = entry;
        if (colon) {
            *colon = '\0';
            prefix = entry;
            elist = colon + 1;
        } else if (!first) {
            nt_set_err(err, errlen,
                    "\"%s\": every entry but the first needs a function prefix (func:list)%s", str,
                    "");
            rc = NT_ERR_INVALID;
            break;
        }
        int set = 1, unset = 0;
        if (*elist == '^') {
            set = 0;
            unset = 1;
            elist++;
        }
        int found = 0;
        for (int c = 0; c < NT_NUM_COLLS && rc == NT_OK; c++) {
            if (prefix && strcasecmp(prefix, coll_names[c]) != 0)
                continue;
            found = 1;
            for (int e = 0; e < nelems; e++)
                list[c * stride + e] = unset;
            char *tok = strdup(elist), *save = NULL;
            if (!tok) {
                rc = NT_ERR_NOMEM;
                break;
            }
            for (char *t = strtok_r(tok, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                int e = nt_find(t, elems, nelems);
                if (e < 0) {
                    nt_set_err(err, errlen, "unrecognized element \"%s\" in \"%s\"", t, str);
                    rc = NT_ERR_INVALID;
                    break;
                }
                list[c * stride + e] = set;
            }
            free(tok);
        }
        if (rc == NT_OK && !found) {
            nt_set_err(err, errlen, "unrecognized function prefix \"%s\" in \"%s\"", prefix, str);
            rc = NT_ERR_INVALID;
        }
        if (rc != NT_OK)
            break;
    }
    free(full);
    return rc;
}

nt_status_t nt_model_env_filter_parse(int version, const char *algo, const char *proto,
                                      nt_model_env_filter_t *f, char *err, size_t errlen)
{
    if (!f)
        return NT_ERR_INVALID;
    memset(f, 0, sizeof(*f));
    for (int c = 0; c < NT_NUM_COLLS; c++) {
        for (int a = 0; a < NT_NUM_ALGOS; a++)
            f->algo[c][a] = 1;
        for (int p = 0; p < NT_NUM_PROTOS; p++)
            f->proto[c][p] = p == NT_PROTO_LL128 ? 2 : 1; /* tuning.cc:410-417 */
    }
    nt_status_t rc;
    if (proto && *proto) {
        f->proto_set = 1;
        rc = nt_parse_list(version, proto, proto_names, NT_NUM_PROTOS, &f->proto[0][0],
                           NT_NUM_PROTOS, err, errlen);
        if (rc != NT_OK)
            return rc;
    }
    if (algo && *algo) {
        f->algo_set = 1;
        rc = nt_parse_list(version, algo, algo_names, NT_NUM_ALGOS, &f->algo[0][0], NT_NUM_ALGOS,
                           err, errlen);
        if (rc != NT_OK)
            return rc;
    }
    return NT_OK;
}

/* ncclNvlsSupported: v2.28.9-1 src/include/device.h:544-558 (= v2.27.7-1:548-562,
 * v2.29.7-1:566-580). Avg is PreMulSum/SumPostDiv on the device, never Sum. */
static int nt_nvls_supported(nt_redop_t op, nt_dtype_t t)
{
    switch (t) {
    case NT_DTYPE_INT32:
    case NT_DTYPE_UINT32:
    case NT_DTYPE_INT64:
    case NT_DTYPE_UINT64:
    case NT_DTYPE_FLOAT16:
    case NT_DTYPE_BFLOAT16:
        return op == NT_REDOP_SUM || op == NT_REDOP_MIN || op == NT_REDOP_MAX;
    case NT_DTYPE_FLOAT32:
    case NT_DTYPE_FLOAT64:
        return op == NT_REDOP_SUM;
    default:
        return 0;
    }
}

int nt_model_call_allows(int version, nt_coll_t coll, nt_algo_t algo, nt_proto_t proto,
                         nt_dtype_t dtype, nt_redop_t op)
{
    if ((unsigned)coll >= NT_NUM_COLLS || (unsigned)algo >= NT_NUM_ALGOS ||
        (unsigned)proto >= NT_NUM_PROTOS)
        return 0;
    if (version < 21700 && algo >= NT_ALGO_NVLS)
        return 0; /* no NVLS before 2.17, no PAT before 2.23 */
    if (version < 22300 && algo == NT_ALGO_PAT)
        return 0;
    if (version < 22400 && (dtype == NT_DTYPE_FP8_E4M3 || dtype == NT_DTYPE_FP8_E5M2))
        return 0; /* fp8 from 2.24 */
    /* v2.28.9-1 enqueue.cc:384: NVLS/NVLS_TREE need ncclNvlsSupported(op, type) unless AllGather;
     * :1802 (v2.27.7-1:1768, v2.29.7-1:1914) drops them otherwise */
    if ((algo == NT_ALGO_NVLS || algo == NT_ALGO_NVLS_TREE) && coll != NT_COLL_ALLGATHER &&
        !nt_nvls_supported(op, dtype))
        return 0;
    /* :1805-1806 (v2.27.7-1:1771, v2.29.7-1:1917): no PAT ReduceScatter with avg
     * (PreMulSum/SumPostDiv) */
    if (algo == NT_ALGO_PAT && coll == NT_COLL_REDUCESCATTER && op == NT_REDOP_AVG)
        return 0;
    return 1;
}

int nt_model_eligible(const nt_model_input_t *in, const nt_model_table_t *table, nt_coll_t coll,
                      nt_algo_t algo, nt_proto_t proto, nt_dtype_t dtype, nt_redop_t op)
{
    if (!in || !table || (unsigned)coll >= NT_NUM_COLLS || (unsigned)algo >= NT_NUM_ALGOS ||
        (unsigned)proto >= NT_NUM_PROTOS)
        return 0;
    /* enqueue.cc:1792-1795: a one-rank communicator runs Ring/Simple (a copy) */
    if (in->nranks == 1)
        return algo == NT_ALGO_RING && proto == NT_PROTO_SIMPLE;
    if (!(table->cell[coll][algo][proto].bw_GBps > 0))
        return 0; /* tuning.cc:588-590: time -1 */
    if (!nt_model_call_allows(in->version, coll, algo, proto, dtype, op))
        return 0;
    /* enqueue.cc:1799-1801 (NCCL_MAX_DIRECT_ARITY 7, device.h:193); CollNetChain from 2.28
     * (v2.27.7-1 enqueue.cc:1767 has the CollNetDirect rule only); CollNetDirect from 2.23
     * (v2.23.4-1 enqueue.cc:1793; v2.22.3-1 enqueue.cc:1555-1560 has no such rule) */
    if (algo == NT_ALGO_COLLNET_DIRECT && in->version >= 22300 && in->ppn > 8)
        return 0;
    if (algo == NT_ALGO_COLLNET_CHAIN && in->version >= 22800 && in->ppn > 8)
        return 0;
    /* enqueue.cc:1802: NCCL_MAX_NVLS_ARITY 32 (device.h:207) except AllReduce */
    if ((algo == NT_ALGO_NVLS || algo == NT_ALGO_NVLS_TREE) && coll != NT_COLL_ALLREDUCE &&
        in->ppn > 32)
        return 0;
    return 1;
}
