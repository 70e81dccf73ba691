/* `--print-model` (tuner/print_model.h). Stub: the implementation lands in the following commits.
 */
#include "print_model.h"

nt_status_t nt_tune_print_model(FILE *out, nt_model_input_t *in, const nt_nccl_table_t *nccl,
                                const char *env_algo, const char *env_proto, int json,
                                nt_model_fit_t *fit)
{
    (void)out;
    (void)in;
    (void)nccl;
    (void)env_algo;
    (void)env_proto;
    (void)json;
    (void)fit;
    return NT_ERR_UNSUPPORTED;
}
