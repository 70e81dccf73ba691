/* libibverbs through dlopen: see ibv.h. One table of entry points filled once, as lib/node/cuda.c
 * does for the CUDA driver. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibv.h"
#include "nettune/log.h"

/* rdma-core's symbol versions (libibverbs/libibverbs.map.in): every call used here exists at
 * IBVERBS_1.1 (rdma-core 12 and later) except ibv_reg_dmabuf_mr (IBVERBS_1.12). */
#define NT_IBV_VERSION "IBVERBS_1.1"

static struct {
    struct ibv_device **(*get_device_list)(int *);
    void (*free_device_list)(struct ibv_device **);
    const char *(*get_device_name)(struct ibv_device *);
    struct ibv_context *(*open_device)(struct ibv_device *);
    int (*close_device)(struct ibv_context *);
    int (*query_port)(struct ibv_context *, uint8_t, struct ibv_port_attr *);
    int (*query_gid)(struct ibv_context *, uint8_t, int, union ibv_gid *);
    struct ibv_pd *(*alloc_pd)(struct ibv_context *);
    int (*dealloc_pd)(struct ibv_pd *);
    struct ibv_mr *(*reg_mr)(struct ibv_pd *, void *, size_t, int);
    struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *, uint64_t, size_t, uint64_t, int, int);
    int (*dereg_mr)(struct ibv_mr *);
    struct ibv_cq *(*create_cq)(struct ibv_context *, int, void *, struct ibv_comp_channel *, int);
    int (*destroy_cq)(struct ibv_cq *);
    struct ibv_qp *(*create_qp)(struct ibv_pd *, struct ibv_qp_init_attr *);
    int (*modify_qp)(struct ibv_qp *, struct ibv_qp_attr *, int);
    int (*destroy_qp)(struct ibv_qp *);
    const char *(*wc_status_str)(enum ibv_wc_status);
} ibv;

#define SYM(field, name, version, required)                                                        \
    {                                                                                              \
        (void **)&ibv.field, name, version, required                                               \
    }
static const struct {
    void **slot;
    const char *name, *version;
    int required;
} nt_ibv_syms[] = {
    SYM(get_device_list, "ibv_get_device_list", NT_IBV_VERSION, 1),
    SYM(free_device_list, "ibv_free_device_list", NT_IBV_VERSION, 1),
    SYM(get_device_name, "ibv_get_device_name", NT_IBV_VERSION, 1),
    SYM(open_device, "ibv_open_device", NT_IBV_VERSION, 1),
    SYM(close_device, "ibv_close_device", NT_IBV_VERSION, 1),
    SYM(query_port, "ibv_query_port", NT_IBV_VERSION, 1),
    SYM(query_gid, "ibv_query_gid", NT_IBV_VERSION, 1),
    SYM(alloc_pd, "ibv_alloc_pd", NT_IBV_VERSION, 1),
    SYM(dealloc_pd, "ibv_dealloc_pd", NT_IBV_VERSION, 1),
    SYM(reg_mr, "ibv_reg_mr", NT_IBV_VERSION, 1),
    SYM(reg_dmabuf_mr, "ibv_reg_dmabuf_mr", "IBVERBS_1.12", 0),
    SYM(dereg_mr, "ibv_dereg_mr", NT_IBV_VERSION, 1),
    SYM(create_cq, "ibv_create_cq", NT_IBV_VERSION, 1),
    SYM(destroy_cq, "ibv_destroy_cq", NT_IBV_VERSION, 1),
    SYM(create_qp, "ibv_create_qp", NT_IBV_VERSION, 1),
    SYM(modify_qp, "ibv_modify_qp", NT_IBV_VERSION, 1),
    SYM(destroy_qp, "ibv_destroy_qp", NT_IBV_VERSION, 1),
    SYM(wc_status_str, "ibv_wc_status_str", NT_IBV_VERSION, 1),
};

static pthread_mutex_t nt_ibv_mu = PTHREAD_MUTEX_INITIALIZER;
static int nt_ibv_tried;
static int nt_ibv_loaded;
static char nt_ibv_why[320];

nt_status_t nt_ibv_load(char *why, size_t whylen)
{
    const char *env = getenv("NETTUNE_IBVERBS_LIB");
    const char *lib = env && *env ? env : NT_IBV_DEFAULT_LIB;
    void *h;

    pthread_mutex_lock(&nt_ibv_mu);
    if (nt_ibv_tried)
        goto done;
    nt_ibv_tried = 1;
    h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *err = dlerror();
        NT_DEBUG(RDMA, "cannot load '%s': %s", lib, err ? err : "?");
        /* dlerror names the file: "libibverbs.so.1: cannot open shared object file: ..." */
        snprintf(nt_ibv_why, sizeof(nt_ibv_why),
                 "libibverbs cannot be loaded (%.200s): install rdma-core's libibverbs1 and its "
                 "providers (ibverbs-providers)",
                 err ? err : lib);
        goto done;
    }
    for (size_t i = 0; i < sizeof(nt_ibv_syms) / sizeof(nt_ibv_syms[0]); i++) {
        *nt_ibv_syms[i].slot = dlvsym(h, nt_ibv_syms[i].name, nt_ibv_syms[i].version);
        if (!*nt_ibv_syms[i].slot && nt_ibv_syms[i].required) {
            snprintf(nt_ibv_why, sizeof(nt_ibv_why),
                     "libibverbs '%s' lacks %s@%s (rdma-core too old: nettune needs 12 or later)",
                     lib, nt_ibv_syms[i].name, nt_ibv_syms[i].version);
            memset(&ibv, 0, sizeof(ibv));
            dlclose(h);
            goto done;
        }
    }
    /* The handle stays open for the life of the process: the providers it loads do too. */
    nt_ibv_loaded = 1;
    NT_DEBUG(RDMA, "libibverbs loaded from %s", lib);
done:
    if (why && whylen)
        snprintf(why, whylen, "%s", nt_ibv_loaded ? "" : nt_ibv_why);
    pthread_mutex_unlock(&nt_ibv_mu);
    return nt_ibv_loaded ? NT_OK : NT_ERR_UNSUPPORTED;
}

/* Calls before a successful load fail as the library's own would, with ENOSYS. */
#define NT_IBV_PTR(field, ...)                                                                     \
    do {                                                                                           \
        if (!ibv.field) {                                                                          \
            errno = ENOSYS;                                                                        \
            return NULL;                                                                           \
        }                                                                                          \
        return ibv.field(__VA_ARGS__);                                                             \
    } while (0)
#define NT_IBV_INT(field, ...) return ibv.field ? ibv.field(__VA_ARGS__) : ENOSYS

struct ibv_device **nt_ibv_get_device_list(int *num_devices)
{
    NT_IBV_PTR(get_device_list, num_devices);
}

void nt_ibv_free_device_list(struct ibv_device **list)
{
    if (ibv.free_device_list && list)
        ibv.free_device_list(list);
}

const char *nt_ibv_get_device_name(struct ibv_device *device)
{
    NT_IBV_PTR(get_device_name, device);
}

struct ibv_context *nt_ibv_open_device(struct ibv_device *device)
{
    NT_IBV_PTR(open_device, device);
}

int nt_ibv_close_device(struct ibv_context *context)
{
    NT_IBV_INT(close_device, context);
}

int nt_ibv_query_port(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *attr)
{
    /* verbs.h's ___ibv_query_port: the provider's query_port fills the whole structure; the
     * exported call fills its compatible prefix only. */
    struct verbs_context *vctx = verbs_get_ctx_op(context, query_port);
    if (vctx)
        return vctx->query_port(context, port_num, attr, sizeof(*attr));
    memset(attr, 0, sizeof(*attr));
    NT_IBV_INT(query_port, context, port_num, attr);
}

int nt_ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid)
{
    NT_IBV_INT(query_gid, context, port_num, index, gid);
}

struct ibv_pd *nt_ibv_alloc_pd(struct ibv_context *context)
{
    NT_IBV_PTR(alloc_pd, context);
}

int nt_ibv_dealloc_pd(struct ibv_pd *pd)
{
    NT_IBV_INT(dealloc_pd, pd);
}

struct ibv_mr *nt_ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
    NT_IBV_PTR(reg_mr, pd, addr, length, access);
}

struct ibv_mr *nt_ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
                                    uint64_t iova, int fd, int access)
{
    if (nt_ibv_loaded && !ibv.reg_dmabuf_mr) {
        errno = EOPNOTSUPP;
        return NULL;
    }
    NT_IBV_PTR(reg_dmabuf_mr, pd, offset, length, iova, fd, access);
}

int nt_ibv_dereg_mr(struct ibv_mr *mr)
{
    NT_IBV_INT(dereg_mr, mr);
}

struct ibv_cq *nt_ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
                                struct ibv_comp_channel *channel, int comp_vector)
{
    NT_IBV_PTR(create_cq, context, cqe, cq_context, channel, comp_vector);
}

int nt_ibv_destroy_cq(struct ibv_cq *cq)
{
    NT_IBV_INT(destroy_cq, cq);
}

struct ibv_qp *nt_ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
    NT_IBV_PTR(create_qp, pd, attr);
}

int nt_ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
    NT_IBV_INT(modify_qp, qp, attr, attr_mask);
}

int nt_ibv_destroy_qp(struct ibv_qp *qp)
{
    NT_IBV_INT(destroy_qp, qp);
}

const char *nt_ibv_wc_status_str(enum ibv_wc_status status)
{
    return ibv.wc_status_str ? ibv.wc_status_str(status) : "unknown";
}
