/* libibverbs opened at run time: the RDMA probe's one way into verbs. The headers of rdma-core
 * are needed to build (libibverbs-dev), the library only to run: nettune-probe has no
 * libibverbs dependency, starts on a node without rdma-core, and the RDMA probe reports itself
 * skipped with the reason there. After NVIDIA/nccl v2.28.9-1 src/misc/ibvsymbols.cc:70-132
 * (buildIbvSymbols: dlopen, then every entry point with dlvsym at version IBVERBS_1.1, the newer
 * calls at their own version and optional, e.g. ibv_reg_dmabuf_mr at IBVERBS_1.12, :119) and
 * src/misc/ibvwrap.cc:23-27 (loaded once).
 *
 * Each nt_ibv_<call> has the signature and the error convention of ibv_<call> (pointer calls
 * return NULL and set errno, int calls return the errno value), so that the data path converts
 * verbs errors in one place as before; before a successful nt_ibv_load they fail with ENOSYS.
 * The calls that verbs.h inlines through the context's own operations (ibv_post_send,
 * ibv_post_recv, ibv_poll_cq) need no symbol of the library and are used as they are. */
#ifndef NT_PROBE_RDMA_IBV_H
#define NT_PROBE_RDMA_IBV_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "nettune/status.h"

/* The library opened when NETTUNE_IBVERBS_LIB is unset or empty: rdma-core's run-time soname
 * (the libibverbs1 package; libibverbs.so without the ABI number comes only with -dev). */
#define NT_IBV_DEFAULT_LIB "libibverbs.so.1"

/* nt_ibv_load - open libibverbs once (NETTUNE_IBVERBS_LIB names another file or soname, e.g.
 * to test a node without it) and resolve every entry point below. Thread-safe; later calls
 * return the first result. NT_OK; NT_ERR_UNSUPPORTED with a sentence in why (at most whylen
 * bytes, may be NULL) when the library cannot be opened or lacks a required call. */
nt_status_t nt_ibv_load(char *why, size_t whylen);

struct ibv_device **nt_ibv_get_device_list(int *num_devices);
void nt_ibv_free_device_list(struct ibv_device **list);
const char *nt_ibv_get_device_name(struct ibv_device *device);
struct ibv_context *nt_ibv_open_device(struct ibv_device *device);
int nt_ibv_close_device(struct ibv_context *context);
/* nt_ibv_query_port - the whole struct ibv_port_attr through the context's own operation when
 * the provider has one, else the library's compatible call (as verbs.h's ibv_query_port). */
int nt_ibv_query_port(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *attr);
int nt_ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid);
struct ibv_pd *nt_ibv_alloc_pd(struct ibv_context *context);
int nt_ibv_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *nt_ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access);
/* nt_ibv_reg_dmabuf_mr - NULL with errno EOPNOTSUPP when the library predates it
 * (IBVERBS_1.12, rdma-core 34). */
struct ibv_mr *nt_ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
                                    uint64_t iova, int fd, int access);
int nt_ibv_dereg_mr(struct ibv_mr *mr);
struct ibv_cq *nt_ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
                                struct ibv_comp_channel *channel, int comp_vector);
int nt_ibv_destroy_cq(struct ibv_cq *cq);
struct ibv_qp *nt_ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
int nt_ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
int nt_ibv_destroy_qp(struct ibv_qp *qp);
/* nt_ibv_wc_status_str - the library's name of a completion status ("unknown" before load). */
const char *nt_ibv_wc_status_str(enum ibv_wc_status status);

#endif
