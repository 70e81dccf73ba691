/* Built without nvcc: no kernels. The copy-engine probes still run; the SM-copy and latency
 * probes are skipped ("built without nvcc"). */
#include <stddef.h>

const unsigned char nt_gpu_fatbin[1] = {0};
const unsigned long long nt_gpu_fatbin_size = 0;
