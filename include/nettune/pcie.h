/* PCIe link state without traffic, from sysfs (through NETTUNE_SYSFS_ROOT):
 * /sys/bus/pci/devices/<bdf>/{current,max}_link_{speed,width} of the device and of its
 * upstream port (the parent directory in the resolved sysfs path). */
#ifndef NETTUNE_PCIE_H
#define NETTUNE_PCIE_H

#include <stddef.h>

#include "nettune/report.h"
#include "nettune/status.h"

typedef struct nt_pcie_link {
    char bdf[16];
    char upstream_bdf[16];    /* "" when none was found */
    double cur_gts, max_gts;  /* GT/s per lane; 0 = unknown */
    int cur_width, max_width; /* lanes; 0 = unknown */
    double up_max_gts;        /* upstream port's maximum; 0 = unknown */
    int up_max_width;
} nt_pcie_link_t;

/* nt_pcie_gen - PCIe generation for a per-lane rate: 2.5->1, 5->2, 8->3, 16->4, 32->5, 64->6. */
int nt_pcie_gen(double gts);

/* nt_pcie_read - the link state of PCI device bdf ("0000:18:00.0").
 * NT_ERR_NOT_FOUND when the device is absent, NT_ERR_UNSUPPORTED when it has no link files. */
nt_status_t nt_pcie_read(const char *bdf, nt_pcie_link_t *out);

/* nt_pcie_judge - the pcie_link verdict without traffic: a link narrower than
 * min(device max, upstream max) fails; slower is only a warning (idle GPUs lower their link
 * speed). label names the device ("GPU 0"). msg: "0000:18:00.0 (GPU 0) runs x8, capable of x16". */
nt_verdict_t nt_pcie_judge(const nt_pcie_link_t *l, const char *label, char *msg, size_t len);

#endif
