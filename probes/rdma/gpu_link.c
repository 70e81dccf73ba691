/* The GPU-memory variant of the RDMA rail test, decision part (no libibverbs, no CUDA): which
 * GPU a rail uses, the link endpoints, and what both ends agree to do once they know each
 * other's GPU and GPUDirect RDMA registration. The hardware calls stay in probe_rdma.c and
 * verbs_path.c; see docs/rdma.md "GPU memory". */
#include <stdio.h>
#include <string.h>

#include "rdma.h"

void nt_rdma_gpu_ep(const char *dev, int port, int gpu, char *buf, size_t len)
{
    if (gpu >= 0)
        snprintf(buf, len, "%s:%d/gpu%d", dev, port, gpu);
    else
        snprintf(buf, len, "%s:%d", dev, port);
}

int nt_rdma_gpu_for_nic(const nt_topo_t *t, const char *dev, char *why, size_t whylen)
{
    int n, g;
    if (why && whylen)
        why[0] = '\0';
    if (!t || t->ngpus <= 0) {
        if (why && whylen)
            snprintf(why, whylen, "no GPU on this node");
        return -1;
    }
    n = nt_topo_find_nic(t, dev);
    g = n >= 0 ? nt_topo_nearest_gpu(t, n) : -1;
    if (g >= 0) {
        if (why && whylen)
            snprintf(why, whylen, "GPU %d is nearest to %s (%s)", t->gpus[g].index, dev,
                     nt_path_string(nt_topo_path(t, g, n)));
        return g;
    }
    if (why && whylen)
        snprintf(why, whylen, "GPU %d: the first GPU, %s", t->gpus[0].index,
                 n < 0 ? "the NIC is not in the topology" : "no path from the NIC to a GPU is known");
    return 0;
}

const char *nt_rdma_gpu_reg_path(const char *memory)
{
    if (!memory)
        return NULL;
    if (strcmp(memory, "gpu (dma-buf)") == 0)
        return "dma-buf";
    if (strcmp(memory, "gpu (peer memory)") == 0)
        return "peer memory";
    return NULL;
}

/* Append "sep text" to buf. */
static void nt_cat(char *buf, size_t len, const char *sep, const char *fmt, const char *a,
                   const char *b)
{
    size_t u = strlen(buf);
    if (u + 1 >= len)
        return;
    snprintf(buf + u, len - u, "%s", u ? sep : "");
    u = strlen(buf);
    if (u + 1 < len)
        snprintf(buf + u, len - u, fmt, a, b);
}

/* buf := "not measured: <buf> <tail>". */
static void nt_wrap(char *buf, size_t len, const char *tail)
{
    char tmp[800];
    size_t n;
    snprintf(tmp, sizeof(tmp), "not measured: %s %s", buf, tail);
    n = strlen(tmp) < len ? strlen(tmp) : len - 1;
    memcpy(buf, tmp, n);
    buf[n] = '\0';
}

nt_gpu_link_t nt_gpu_link_decide(const nt_gpu_end_t *a, const nt_gpu_end_t *b, char *why,
                                 size_t whylen)
{
    const nt_gpu_end_t *e[2] = {a, b};
    char buf[600] = "";

    if (why && whylen)
        why[0] = '\0';
    if (a->gpu < 0 && b->gpu < 0)
        return NT_GPU_LINK_NONE;
    if (a->gpu < 0 || b->gpu < 0) {
        const nt_gpu_end_t *x = a->gpu < 0 ? a : b;
        snprintf(buf, sizeof(buf),
                 "not measured: no GPU on %s (GPU-memory RDMA needs a GPU at both ends)", x->host);
        goto skip;
    }
    for (int i = 0; i < 2; i++)
        if (!e[i]->active)
            nt_cat(buf, sizeof(buf), "; ", "port %s on %s is not ACTIVE", e[i]->ep, e[i]->host);
    if (buf[0]) {
        nt_wrap(buf, sizeof(buf), "(the host-memory link of this rail fails for it)");
        goto skip;
    }
    if (a->reg == NT_GPU_REG_UNTRIED || b->reg == NT_GPU_REG_UNTRIED)
        return NT_GPU_LINK_TRY;
    for (int i = 0; i < 2; i++)
        if (e[i]->reg != NT_GPU_REG_OK) {
            /* the data path's sentence may start with the words this one starts with */
            static const char pre[] = "GPUDirect RDMA unavailable: ";
            const char *w = e[i]->why && e[i]->why[0] ? e[i]->why : "GPU memory cannot be registered";
            if (strncmp(w, pre, sizeof(pre) - 1) == 0)
                w += sizeof(pre) - 1;
            nt_cat(buf, sizeof(buf), "; ", "GPUDirect RDMA unavailable on %s: %s", e[i]->host, w);
        }
    if (buf[0]) {
        nt_wrap(buf, sizeof(buf), "(the node's gpudirect check reports it; this is not a failed "
                                  "link)");
        goto skip;
    }
    return NT_GPU_LINK_MEASURE;
skip:
    if (why && whylen)
        snprintf(why, whylen, "%s", buf);
    return NT_GPU_LINK_SKIP;
}

const char *nt_gpu_link_string(nt_gpu_link_t d)
{
    switch (d) {
    case NT_GPU_LINK_NONE:
        return "none";
    case NT_GPU_LINK_SKIP:
        return "skip";
    case NT_GPU_LINK_TRY:
        return "try";
    case NT_GPU_LINK_MEASURE:
        return "measure";
    }
    return "?";
}
