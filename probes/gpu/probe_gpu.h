/* The GPU probe (probes/gpu/probe_gpu.c): its ops table and defaults. */
#ifndef NETTUNE_PROBE_GPU_H
#define NETTUNE_PROBE_GPU_H

#include "probe.h"

#define NT_GPU_DEFAULT_BYTES (256u << 20) /* --gpu-buffer-size default: 256 MiB */

extern const nt_link_probe_ops_t nt_gpu_probe_ops;

#endif
