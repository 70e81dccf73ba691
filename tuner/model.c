/* NCCL's cost model (tuner/model.h). Stub: the implementation lands in the following commits. */
#include "model.h"

#include <string.h>

nt_status_t nt_model_input_init(nt_model_input_t *in, int version, int nranks, int nnodes)
{
    if (!in || nranks < 1 || nnodes < 1 || nnodes > nranks)
        return NT_ERR_INVALID;
    memset(in, 0, sizeof(*in));
    in->version = version;
    in->nranks = nranks;
    in->nnodes = nnodes;
    in->ppn = nranks / nnodes;
    return NT_OK;
}

int nt_model_version_supported(int version)
{
    (void)version;
    return 0;
}

nt_status_t nt_model_compute(const nt_model_input_t *in, const nt_model_env_filter_t *env,
                             nt_model_table_t *out)
{
    (void)in;
    (void)env;
    (void)out;
    return NT_ERR_UNSUPPORTED;
}
