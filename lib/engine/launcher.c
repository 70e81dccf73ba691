/* Launcher helpers shared by every implementation, and the single-rank launcher of --local. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/launcher.h"

#define NT_BLOB_MAX (1ull << 30)

nt_status_t nt_launcher_send_blob(nt_launcher_t *l, int peer, int tag, const void *buf,
                                  size_t bytes, double timeout_s)
{
    uint64_t n = bytes;
    nt_status_t st;

    if (n > NT_BLOB_MAX)
        return NT_ERR_INVALID;
    st = l->ops->send(l, peer, tag, &n, sizeof(n), timeout_s);
    if (st != NT_OK || n == 0)
        return st;
    return l->ops->send(l, peer, tag, buf, bytes, timeout_s);
}

nt_status_t nt_launcher_recv_blob(nt_launcher_t *l, int peer, int tag, char **buf, size_t *bytes,
                                  double timeout_s)
{
    uint64_t n = 0;
    nt_status_t st;
    char *b;

    *buf = NULL;
    *bytes = 0;
    st = l->ops->recv(l, peer, tag, &n, sizeof(n), timeout_s);
    if (st != NT_OK)
        return st;
    if (n > NT_BLOB_MAX)
        return NT_ERR_PEER;
    b = malloc(n + 1);
    if (!b)
        return NT_ERR_NOMEM;
    if (n) {
        st = l->ops->recv(l, peer, tag, b, n, timeout_s);
        if (st != NT_OK) {
            free(b);
            return st;
        }
    }
    b[n] = '\0';
    *buf = b;
    *bytes = n;
    return NT_OK;
}

int nt_launcher_env_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                       "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return atoi(v);
    }
    return -1;
}

int nt_launcher_env_size(void)
{
    /* Ranks on this node: Open MPI says it directly; Slurm's per-node task count may be a list
     * ("2(x3)"), whose first figure is enough to tell one from several. */
    static const char *const vars[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS",
                                       "SLURM_NTASKS_PER_NODE"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return atoi(v);
    }
    return -1;
}

/* ---- the single-rank launcher ---- */

static int nt_local_rank(nt_launcher_t *l)
{
    (void)l;
    return 0;
}
static int nt_local_size(nt_launcher_t *l)
{
    (void)l;
    return 1;
}

static int nt_local_group(nt_launcher_t *l, int *local_rank, int *local_size)
{
    (void)l;
    *local_rank = 0;
    *local_size = 1;
    return 0;
}

static nt_status_t nt_local_barrier(nt_launcher_t *l, double t)
{
    (void)l;
    (void)t;
    return NT_OK;
}

static nt_status_t nt_local_allgather(nt_launcher_t *l, const void *s, void *r, size_t n, double t)
{
    (void)l;
    (void)t;
    memmove(r, s, n);
    return NT_OK;
}

static nt_status_t nt_local_bcast(nt_launcher_t *l, void *b, size_t n, int root, double t)
{
    (void)l;
    (void)b;
    (void)n;
    (void)t;
    return root == 0 ? NT_OK : NT_ERR_INVALID;
}

static nt_status_t nt_local_send(nt_launcher_t *l, int peer, int tag, const void *b, size_t n,
                                 double t)
{
    (void)l, (void)peer, (void)tag, (void)b, (void)n, (void)t;
    return NT_ERR_INVALID; /* there is no other rank */
}

static nt_status_t nt_local_recv(nt_launcher_t *l, int peer, int tag, void *b, size_t n, double t)
{
    (void)l, (void)peer, (void)tag, (void)b, (void)n, (void)t;
    return NT_ERR_INVALID;
}

static void nt_local_abort(nt_launcher_t *l, int code)
{
    (void)l;
    (void)code;
}

static const nt_launcher_ops_t nt_local_ops = {
    .name = "local",
    .rank = nt_local_rank,
    .size = nt_local_size,
    .local_group = nt_local_group,
    .barrier = nt_local_barrier,
    .allgather = nt_local_allgather,
    .bcast = nt_local_bcast,
    .send = nt_local_send,
    .recv = nt_local_recv,
    .abort = nt_local_abort,
};

nt_launcher_t *nt_launcher_local_create(void)
{
    nt_launcher_t *l = calloc(1, sizeof(*l));
    if (l)
        l->ops = &nt_local_ops;
    return l;
}

void nt_launcher_local_destroy(nt_launcher_t *l)
{
    free(l);
}
