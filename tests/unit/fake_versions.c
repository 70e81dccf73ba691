/* Test stand-in for the version calls of libcuda, libcudart and libnccl (see
 * tests/unit/module.mk): fixed versions, so the dlopen path of lib/node/software.c is tested
 * without CUDA or NCCL installed. */
int cuDriverGetVersion(int *v);
int cudaRuntimeGetVersion(int *v);
int ncclGetVersion(int *v);

int cuDriverGetVersion(int *v)
{
    *v = 12040; /* CUDA 12.4 */
    return 0;
}

int cudaRuntimeGetVersion(int *v)
{
    *v = 11080; /* CUDA 11.8 */
    return 0;
}

int ncclGetVersion(int *v)
{
    *v = 21903; /* NCCL 2.19.3 */
    return 0;
}
