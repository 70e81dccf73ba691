/* The GPU probes' kernels, built by nvcc into a fatbin (sm_75 up to the newest architecture
 * nvcc offers, plus compute_75 PTX) that probe_gpu.c loads with cuModuleLoadData. extern "C"
 * keeps the names unmangled for cuModuleGetFunction. Every wait has a time limit read from
 * %globaltimer (ns), so a kernel never hangs a stream. After nvbandwidth's spin kernel
 * (NVIDIA/nvbandwidth kernels.cu: spinKernelDevice) and SM copy kernel. */
static __device__ __forceinline__ unsigned long long nt_now_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Hold the stream until the host sets *flag (or timeout_ns passes): copies queued behind it
 * start together, so the events around them time the copies, not the queueing. */
extern "C" __global__ void nt_spin(volatile int *flag, unsigned long long timeout_ns)
{
    unsigned long long end = nt_now_ns() + timeout_ns;
    while (*flag == 0 && nt_now_ns() < end)
        ;
}

/* SM copy: grid-stride loop over 16-byte words. */
extern "C" __global__ void nt_copy(const int4 *__restrict__ src, int4 *__restrict__ dst,
                                   unsigned long long n)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        dst[i] = src[i];
}

/* Flag ping-pong, one thread. Round i: the first side writes 2i+1 into *theirs and waits for
 * 2i+2 in *mine; the other waits for 2i+1 and answers 2i+2. *done gets the rounds completed. */
extern "C" __global__ void nt_pong(volatile int *mine, volatile int *theirs, int iters, int first,
                                   unsigned long long timeout_ns, int *done)
{
    unsigned long long end = nt_now_ns() + timeout_ns;
    int i;
    for (i = 0; i < iters; i++) {
        if (first) {
            *theirs = 2 * i + 1;
            __threadfence_system();
            while (*mine != 2 * i + 2 && nt_now_ns() < end)
                ;
        } else {
            while (*mine != 2 * i + 1 && nt_now_ns() < end)
                ;
            *theirs = 2 * i + 2;
            __threadfence_system();
        }
        if (nt_now_ns() >= end)
            break;
    }
    *done = i;
}
