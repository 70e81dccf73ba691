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

/* nt_pcie_link_GBps - the data bandwidth of a PCIe link in GB/s (1e9 B/s), one direction:
 * lanes x GT/s x coding / 8, coding 8b/10b up to 5 GT/s (Gen1, Gen2), 128b/130b from 8 GT/s
 * (Gen3-Gen5); Gen6 (64 GT/s, PAM4 with FLIT) counted as 242/256. Gen3 x16 = 15.75 GB/s,
 * Gen4 x16 = 31.5, Gen5 x16 = 63. NaN when either is unknown (<= 0). */
double nt_pcie_link_GBps(double gts, int width);

/* nt_pcie_gen_gts - GT/s per lane of a PCIe generation: 1->2.5, 2->5, 3->8, 4->16, 5->32,
 * 6->64; 0 for anything else. */
double nt_pcie_gen_gts(int gen);

/* nt_pcie_read - the link state of PCI device bdf ("0000:18:00.0") and the maxima of its
 * upstream port (the parent directory of the resolved /sys/bus/pci/devices/<bdf> link when
 * that is a PCI function; none for a device directly below pciDDDD:BB). Values the kernel
 * reports as "Unknown", or widths that are no PCIe lane count (0, 255), are left 0.
 * NT_ERR_NOT_FOUND when the device is absent, NT_ERR_UNSUPPORTED when it has no link files. */
nt_status_t nt_pcie_read(const char *bdf, nt_pcie_link_t *out);

/* nt_pcie_parse_speed - GT/s per lane from a sysfs *_link_speed value: "8.0 GT/s PCIe" and
 * the older "8 GT/s" give 8.0; "Unknown" or anything else gives 0 (unknown). */
double nt_pcie_parse_speed(const char *s);

/* nt_pcie_expected - what the link can train to: the lower of the device's and its upstream
 * port's maximum, per lane rate (GT/s) and width (lanes); an unknown (0) side is ignored,
 * both unknown gives 0. */
void nt_pcie_expected(const nt_pcie_link_t *l, double *gts, int *width);

/* nt_pcie_judge - the pcie_link verdict without traffic: a link narrower than
 * min(device max, upstream max) fails; slower is only a warning (idle GPUs lower their link
 * speed). label names the device ("GPU 0"; NULL or "" = the bus id alone). msg:
 * "0000:18:00.0 (GPU 0) runs x8, capable of x16". NT_SKIPPED when the current or the expected
 * width is unknown (link down, no link files). */
nt_verdict_t nt_pcie_judge(const nt_pcie_link_t *l, const char *label, char *msg, size_t len);

/* nt_pcie_check_create - a checks[] entry "pcie_link" for l (report.h nt_check_create) with
 * the verdict and message of nt_pcie_judge; target "<bdf> (<label>)". observed/expected are
 * the lanes ("unit": "lanes"), or the GT/s per lane for a speed warning. NULL on NOMEM. */
cJSON *nt_pcie_check_create(const nt_pcie_link_t *l, const char *host, const char *label);

/* nt_pcie_to_json - add the report's "pcie": {"gen", "width", "max_gen", "max_width"} of the
 * device to obj (the device's own maxima; unknown values are null). NT_ERR_NOMEM. */
nt_status_t nt_pcie_to_json(const nt_pcie_link_t *l, cJSON *obj);

#endif
