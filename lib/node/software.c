/* Software versions of a node, found at run time, and the cross-node consistency rule.
 * See include/nettune/software.h for where each version comes from. */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <hwloc.h>

#include "nettune/cuda.h"
#include "nettune/log.h"
#include "nettune/software.h"

const char *const nt_software_keys[] = {"kernel",       "mpi",  "hwloc",     "cuda_driver",
                                        "cuda_runtime", "nccl", "rdma_core", NULL};

void nt_software_format_cuda(int v, char *buf, size_t len)
{
    snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10);
}

void nt_software_format_nccl(int v, char *buf, size_t len)
{
    if (v >= 10000) /* NCCL_VERSION(X,Y,Z) = X*10000 + Y*100 + Z since 2.9 */
        snprintf(buf, len, "%d.%d.%d", v / 10000, (v % 10000) / 100, v % 100);
    else /* X*1000 + Y*100 + Z before */
        snprintf(buf, len, "%d.%d.%d", v / 1000, (v % 1000) / 100, v % 100);
}

nt_status_t nt_software_dl_version(nt_software_lib_t kind, const char *const *names, char *buf,
                                   size_t len)
{
    static const char *const cudart_names[] = {"libcudart.so", "libcudart.so.13", "libcudart.so.12",
                                               "libcudart.so.11.0", NULL};
    static const char *const nccl_names[] = {"libnccl.so.2", NULL};
    const char *sym;
    void *h = NULL;
    int (*fn)(int *);
    int v = 0, rc;

    buf[0] = '\0';
    switch (kind) {
    case NT_SW_CUDA_DRIVER: /* libcuda is opened by the one CUDA wrapper (lib/node/cuda.c) */
        rc = (int)nt_cuda_driver_version_of(names, &v);
        if (rc == NT_OK)
            nt_software_format_cuda(v, buf, len);
        return (nt_status_t)rc;
    case NT_SW_CUDA_RUNTIME:
        sym = "cudaRuntimeGetVersion";
        names = names ? names : cudart_names;
        break;
    case NT_SW_NCCL:
        sym = "ncclGetVersion";
        names = names ? names : nccl_names;
        break;
    default:
        return NT_ERR_INVALID;
    }
    for (; *names && !h; names++) {
        h = dlopen(*names, RTLD_NOW | RTLD_LOCAL);
        if (!h)
            NT_DEBUG(INIT, "cannot load '%s': %s", *names, dlerror());
    }
    if (!h)
        return NT_ERR_UNSUPPORTED;
    *(void **)&fn = dlsym(h, sym);
    if (!fn) {
        NT_DEBUG(INIT, "no symbol '%s': %s", sym, dlerror());
        dlclose(h);
        return NT_ERR_UNSUPPORTED;
    }
    /* Both return 0 on success (cudaSuccess, ncclSuccess). */
    rc = fn(&v);
    dlclose(h);
    if (rc != 0 || v <= 0) {
        NT_DEBUG(INIT, "%s failed: error %d", sym, rc);
        return NT_ERR_SYSTEM;
    }
    if (kind == NT_SW_NCCL)
        nt_software_format_nccl(v, buf, len);
    else
        nt_software_format_cuda(v, buf, len);
    return NT_OK;
}

nt_status_t nt_software_rdma_core_from_path(const char *path, char *buf, size_t len)
{
    static const char prefix[] = "libibverbs.so.1.";
    const char *base = strrchr(path, '/'), *rest, *ver;
    int dots = 0;

    base = base ? base + 1 : path;
    if (strncmp(base, prefix, sizeof(prefix) - 1) != 0)
        return NT_ERR_PARSE;
    rest = base + sizeof(prefix) - 1; /* "14.44.0": ABI minor, then the rdma-core version */
    for (const char *p = rest; *p; p++) {
        if (*p == '.')
            dots++;
        else if (*p < '0' || *p > '9')
            return NT_ERR_PARSE;
    }
    ver = strchr(rest, '.');
    /* At least ABI.major.minor: a plain libibverbs.so.1.0.0 is the pre-rdma-core library. */
    if (dots < 2 || !ver || ver == rest || !ver[1] || strstr(rest, "..") ||
        rest[strlen(rest) - 1] == '.')
        return NT_ERR_PARSE;
    if (strlen(ver + 1) >= len)
        return NT_ERR_INVALID;
    strcpy(buf, ver + 1);
    return NT_OK;
}

nt_status_t nt_software_rdma_core(const char *soname, char *buf, size_t len)
{
    struct link_map *lm = NULL;
    char real[PATH_MAX];
    nt_status_t st;
    void *h;

    buf[0] = '\0';
    soname = soname ? soname : "libibverbs.so.1";
    /* RTLD_LAZY: nothing of the library is called; its providers load only with
     * ibv_get_device_list, so this has no side effect on the devices. */
    h = dlopen(soname, RTLD_LAZY | RTLD_LOCAL);
    if (!h) {
        NT_DEBUG(INIT, "cannot load '%s': %s", soname, dlerror());
        return NT_ERR_UNSUPPORTED;
    }
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name || !lm->l_name[0] ||
        !realpath(lm->l_name, real)) {
        dlclose(h);
        return NT_ERR_UNSUPPORTED;
    }
    dlclose(h);
    st = nt_software_rdma_core_from_path(real, buf, len);
    if (st != NT_OK) {
        NT_DEBUG(INIT, "'%s' does not name an rdma-core release", real);
        buf[0] = '\0';
        return NT_ERR_UNSUPPORTED;
    }
    return NT_OK;
}

nt_status_t nt_software_collect(nt_software_t *sw)
{
    struct utsname u;
    unsigned api = hwloc_get_api_version();

    memset(sw, 0, sizeof(*sw));
    if (uname(&u) != 0) {
        NT_ERROR(INIT, "uname failed: %m");
        return NT_ERR_SYSTEM;
    }
    snprintf(sw->kernel, sizeof(sw->kernel), "%s", u.release);
    if (api == HWLOC_API_VERSION)
        snprintf(sw->hwloc, sizeof(sw->hwloc), "%s", HWLOC_VERSION);
    else
        snprintf(sw->hwloc, sizeof(sw->hwloc), "%s (runtime API 0x%x)", HWLOC_VERSION, api);
    /* Absent libraries are normal (a CPU-only node): the empty string says "not found". */
    nt_software_dl_version(NT_SW_CUDA_DRIVER, NULL, sw->cuda_driver, sizeof(sw->cuda_driver));
    nt_software_dl_version(NT_SW_CUDA_RUNTIME, NULL, sw->cuda_runtime, sizeof(sw->cuda_runtime));
    nt_software_dl_version(NT_SW_NCCL, NULL, sw->nccl, sizeof(sw->nccl));
    nt_software_rdma_core(NULL, sw->rdma_core, sizeof(sw->rdma_core));
    return NT_OK;
}

void nt_software_set_mpi(nt_software_t *sw, const char *version)
{
    size_t n;

    snprintf(sw->mpi, sizeof(sw->mpi), "%s", version ? version : "");
    /* MPI_Get_library_version gives several lines (Open MPI adds the repo and release date):
     * keep the first, which names the library and its version. */
    n = strcspn(sw->mpi, "\r\n");
    sw->mpi[n] = '\0';
    while (n > 0 && (sw->mpi[n - 1] == ' ' || sw->mpi[n - 1] == ','))
        sw->mpi[--n] = '\0';
}

nt_status_t nt_software_to_json(const nt_software_t *sw, cJSON *node)
{
    const char *vals[NT_SOFTWARE_NKEYS] = {
        sw->kernel, sw->mpi, sw->hwloc, sw->cuda_driver, sw->cuda_runtime, sw->nccl, sw->rdma_core};
    cJSON *s = nt_json_add_obj(node, "software");

    if (!s)
        return NT_ERR_NOMEM;
    for (int i = 0; i < NT_SOFTWARE_NKEYS; i++)
        if (nt_json_add_str(s, nt_software_keys[i], vals[i][0] ? vals[i] : NULL))
            return NT_ERR_NOMEM;
    return NT_OK;
}

/* ---- consistency across nodes ---- */

/* The value of key in one node's software object as a string; NULL for absent or null.
 * Non-string values (not written by nt_software_to_json, but a report may carry them) are
 * compared by their JSON text, kept in *owned for the caller to free. */
static const char *nt_sw_value(const cJSON *sw, const char *key, char **owned)
{
    const cJSON *v = sw ? cJSON_GetObjectItemCaseSensitive(sw, key) : NULL;

    *owned = NULL;
    if (!v || cJSON_IsNull(v))
        return NULL;
    if (cJSON_IsString(v))
        return v->valuestring;
    *owned = cJSON_PrintUnformatted(v);
    return *owned ? *owned : "?";
}

static int nt_sw_same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

int nt_software_group(const cJSON *const *sw, const char *const *hosts, int n,
                      const nt_sw_rule_t *rule, const char *key, cJSON *checks)
{
    const char **val = calloc((size_t)n, sizeof(*val));
    char **owned = calloc((size_t)n, sizeof(*owned));
    int *count = calloc((size_t)n, sizeof(*count)); /* count[i]: nodes with node i's value */
    int ret = -1, best = 0, nbest = 0, ref = -1, ngroups = 0, added = 0;
    char split[256];
    nt_verdict_t verdict = rule->verdict;

    if (!val || !owned || !count)
        goto out;
    for (int i = 0; i < n; i++)
        val[i] = nt_sw_value(sw[i], key, &owned[i]);
    for (int i = 0; i < n; i++) {
        int first = 1;
        for (int j = 0; j < n; j++)
            if (nt_sw_same(val[i], val[j])) {
                count[i]++;
                if (j < i)
                    first = 0;
            }
        if (!first)
            continue;
        ngroups++;
        if (count[i] > best) {
            best = count[i];
            nbest = 1;
            ref = i;
        } else if (count[i] == best) {
            nbest++;
        }
    }
    if (ngroups <= 1 && (!rule->base_set || nt_sw_same(val[0], rule->base))) {
        ret = 0;
        goto out;
    }

    /* "2.19.3 on 2 nodes, none on 1 node" in order of first appearance. */
    split[0] = '\0';
    for (int i = 0; i < n; i++) {
        int first = 1;
        size_t used = strlen(split);
        for (int j = 0; j < i && first; j++)
            if (nt_sw_same(val[i], val[j]))
                first = 0;
        if (first)
            snprintf(split + used, sizeof(split) - used, "%s%s on %d node%s", used ? ", " : "",
                     val[i] ? val[i] : rule->none, count[i], count[i] == 1 ? "" : "s");
    }

    for (int i = 0; i < n; i++) {
        const char *host = hosts && hosts[i] ? hosts[i] : "?";
        cJSON *c;
        if (rule->base_set) {
            if (nt_sw_same(val[i], rule->base))
                continue;
            c = nt_check_create_str(
                rule->name, host, key, verdict, val[i], rule->base ? rule->base : rule->none,
                "%s %s differs from the baseline %s (%s)", key, val[i] ? val[i] : rule->none,
                rule->base ? rule->base : rule->none, split);
        } else if (nbest == 1 && nt_sw_same(val[i], val[ref])) {
            continue;
        } else if (nbest == 1) {
            c = nt_check_create_str(
                rule->name, host, key, verdict, val[i], val[ref] ? val[ref] : rule->none,
                "%s %s differs from the majority %s (%s)", key, val[i] ? val[i] : rule->none,
                val[ref] ? val[ref] : rule->none, split);
        } else {
            c = nt_check_create_str(rule->name, host, key, verdict, val[i], NULL,
                                    "%s %s, and no %s is held by a majority (%s)", key,
                                    val[i] ? val[i] : rule->none, rule->word, split);
        }
        if (c && strcmp(rule->name, "software_consistency") != 0 &&
            !cJSON_AddStringToObject(c, "reference", rule->base_set ? "baseline" : "majority")) {
            cJSON_Delete(c);
            c = NULL;
        }
        if (!c || !cJSON_AddItemToArray(checks, c)) {
            cJSON_Delete(c);
            goto out;
        }
        added++;
    }
    ret = added;
out:
    if (owned)
        for (int i = 0; i < n; i++)
            cJSON_free(owned[i]);
    free(owned);
    free(val);
    free(count);
    return ret;
}

static int nt_sw_key_seen(const char *const *keys, int nkeys, const char *k)
{
    for (int i = 0; i < nkeys; i++)
        if (strcmp(keys[i], k) == 0)
            return 1;
    return 0;
}

/* The keys of the objects obj[0..n) (first[] first, NULL-terminated, then the others in order
 * of appearance), into a new array (free it; the strings are the objects'); *nkeys its length.
 * NULL on NOMEM. */
static const char **nt_sw_keys(const cJSON *const *obj, int n, const char *const *first, int *nkeys)
{
    const char **keys;
    int cap = 1;

    *nkeys = 0;
    for (int i = 0; first && first[i]; i++)
        cap++;
    for (int i = 0; i < n; i++)
        for (const cJSON *c = obj[i] ? obj[i]->child : NULL; c; c = c->next)
            cap++;
    keys = calloc((size_t)cap, sizeof(*keys));
    if (!keys)
        return NULL;
    for (int i = 0; first && first[i]; i++)
        keys[(*nkeys)++] = first[i];
    for (int i = 0; i < n; i++)
        for (const cJSON *c = obj[i] ? obj[i]->child : NULL; c; c = c->next)
            if (c->string && !nt_sw_key_seen(keys, *nkeys, c->string))
                keys[(*nkeys)++] = c->string;
    return keys;
}

int nt_software_consistency(const cJSON *const *sw, const char *const *hosts, int n, int strict,
                            cJSON *checks)
{
    nt_sw_rule_t rule = {
        "software_consistency", strict ? NT_FAIL : NT_WARN, "version", "none", 0, NULL};
    const char **keys;
    int nkeys, total = 0;

    if (n < 0 || (n > 0 && !sw) || !cJSON_IsArray(checks))
        return -1;
    if (!(keys = nt_sw_keys(sw, n, nt_software_keys, &nkeys)))
        return -1;
    for (int k = 0; k < nkeys; k++) {
        int r = nt_software_group(sw, hosts, n, &rule, keys[k], checks);
        if (r < 0) {
            total = -1;
            break;
        }
        total += r;
    }
    free(keys);
    return total;
}

/* The value of key in the baseline's objects base[0..nb): the one most of them hold (the
 * first in a tie; NULL: none). *owned as nt_sw_value. */
static const char *nt_sw_base_value(const cJSON *const *base, int nb, const char *key, char **owned)
{
    const char *best = NULL;
    char *best_owned = NULL;
    int nbest = 0;

    *owned = NULL;
    for (int i = 0; i < nb; i++) {
        char *o, *o2;
        const char *v = nt_sw_value(base[i], key, &o);
        int c = 0;
        for (int k = 0; k < nb; k++) {
            const char *w = nt_sw_value(base[k], key, &o2);
            c += nt_sw_same(v, w);
            cJSON_free(o2);
        }
        if (c > nbest) {
            cJSON_free(best_owned);
            best = v;
            best_owned = o;
            nbest = c;
        } else {
            cJSON_free(o);
        }
    }
    *owned = best_owned;
    return best;
}

int nt_config_drift(const cJSON *const *sw, const cJSON *const *env, const char *const *hosts,
                    int n, const cJSON *const *base_sw, const cJSON *const *base_env, int nbase,
                    cJSON *checks)
{
    int total = 0;

    if (n < 0 || (n > 0 && (!sw || !env)) || nbase < 0 || (nbase > 0 && (!base_sw || !base_env)) ||
        !cJSON_IsArray(checks))
        return -1;
    /* Versions against the baseline (against the majority they are software_consistency's),
     * then the NCCL_* environment: against the baseline when it has one, else the majority. */
    const cJSON **envs = calloc((size_t)n + 1, sizeof(*envs));
    const char **ehosts = calloc((size_t)n + 1, sizeof(*ehosts));
    int ne = 0;

    if (!envs || !ehosts) {
        free(envs);
        free(ehosts);
        return -1;
    }
    /* A node that recorded no environment (an older probe's document) is not judged on it. */
    for (int i = 0; i < n; i++)
        if (env[i]) {
            ehosts[ne] = hosts ? hosts[i] : NULL;
            envs[ne++] = env[i];
        }
    for (int part = 0; part < 2 && total >= 0; part++) {
        const cJSON *const *obj = part ? envs : sw, *const *bobj = part ? base_env : base_sw;
        const char *const *h = part ? ehosts : hosts;
        int has_base = 0, nkeys, nobj = part ? ne : n;
        const char **keys;

        for (int i = 0; i < nbase; i++)
            has_base |= bobj[i] != NULL;
        if (part == 0 && !has_base)
            continue;
        /* Versions: only the keys the baseline has (one it did not record cannot drift from
         * it); the environment: every name on either side, unset being a value. */
        if (part == 1 && !has_base && nobj < 2)
            continue;
        keys =
            part == 0 ? nt_sw_keys(bobj, nbase, NULL, &nkeys) : nt_sw_keys(obj, nobj, NULL, &nkeys);
        if (keys && part == 1 && has_base) {
            const char **all = keys; /* the job's names, then the baseline's */
            keys = nt_sw_keys(bobj, nbase, all, &nkeys);
            free(all);
        }
        if (!keys) {
            total = -1;
            break;
        }
        for (int k = 0; k < nkeys && total >= 0; k++) {
            char *owned = NULL;
            nt_sw_rule_t rule = {"config_drift",          NT_FAIL,  "value",
                                 part ? "unset" : "none", has_base, NULL};
            int r;
            if (has_base)
                rule.base = nt_sw_base_value(bobj, nbase, keys[k], &owned);
            r = nt_software_group(obj, h, nobj, &rule, keys[k], checks);
            cJSON_free(owned);
            total = r < 0 ? -1 : total + r;
        }
        free(keys);
    }
    free(envs);
    free(ehosts);
    return total;
}

static int nt_env_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

nt_status_t nt_software_env_to_json(char *const *envp, cJSON *node)
{
    const char **names;
    size_t n = 0, k = 0;
    cJSON *e;

    for (size_t i = 0; envp && envp[i]; i++)
        n += strncmp(envp[i], "NCCL_", 5) == 0 && strchr(envp[i], '=');
    if (!(e = nt_json_add_obj(node, "environment")))
        return NT_ERR_NOMEM;
    if (n == 0)
        return NT_OK;
    if (!(names = calloc(n, sizeof(*names))))
        return NT_ERR_NOMEM;
    for (size_t i = 0; envp[i]; i++)
        if (strncmp(envp[i], "NCCL_", 5) == 0 && strchr(envp[i], '='))
            names[k++] = envp[i];
    qsort(names, n, sizeof(*names), nt_env_cmp);
    for (k = 0; k < n; k++) {
        const char *eq = strchr(names[k], '=');
        char name[256];
        snprintf(name, sizeof(name), "%.*s", (int)(eq - names[k]), names[k]);
        if (!cJSON_GetObjectItemCaseSensitive(e, name) && nt_json_add_str(e, name, eq + 1)) {
            free(names);
            return NT_ERR_NOMEM;
        }
    }
    free(names);
    return NT_OK;
}
