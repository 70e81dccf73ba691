/* Stand-ins for the link probes' ops tables, so that the registry (probes/registry.c) and the
 * option parser that reads it are unit-tested without MPI or libibverbs. */
#include "probe.h"

const nt_link_probe_ops_t nt_mpi_probe_ops = {.kind = "mpi", .what = "MPI (test stand-in)"};
const nt_link_probe_ops_t nt_rdma_probe_ops = {
    .kind = "rdma", .what = "RDMA (test stand-in)", .live_hw = 1};
