/* libFuzzer target for the topology reader of --topology (lib/node/topo.c): the input is written to
 * a memory file and loaded as an hwloc XML export (hwloc parses the XML; nettune then walks the
 * objects: GPUs and NICs by PCI class and vendor, their PCIe link attributes, NUMA nodes), then
 * written as report JSON and asked every GPU-NIC and GPU-GPU path, the nearest GPU of each NIC
 * and a few look-ups by name. Any crash, leak or UB in nettune's code is a bug. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create (the fuzz build passes -D_GNU_SOURCE too) */
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nettune/topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    nt_topo_t *t = NULL;
    int fd = memfd_create("fuzz-topo.xml", MFD_CLOEXEC);

    if (fd < 0)
        return 0;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    if (nt_topo_load(path, &t) == NT_OK && t) {
        cJSON *node = cJSON_CreateObject();
        if (node) {
            nt_topo_to_json(t, node);
            cJSON_Delete(node);
        }
        for (int g = 0; g < t->ngpus && g < 16; g++) {
            for (int n = 0; n < t->nnics && n < 16; n++)
                (void)nt_path_string(nt_topo_path(t, g, n));
            for (int h = 0; h < t->ngpus && h < 16; h++)
                (void)nt_topo_gpu_path(t, g, h);
        }
        for (int n = 0; n < t->nnics && n < 16; n++) {
            cJSON *o = cJSON_CreateObject();
            (void)nt_topo_nearest_gpu(t, n);
            if (o) {
                nt_topo_nic_to_json(t, n, o);
                cJSON_Delete(o);
            }
        }
        (void)nt_topo_find_gpu(t, "0000:07:00.0");
        (void)nt_topo_find_nic(t, "mlx5_0");
        nt_topo_destroy(t);
    }
    close(fd);
    return 0;
}
