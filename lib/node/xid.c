/* Xid events of the kernel log (include/nettune/nodecheck.h): the one Xid table of the tree,
 * the one reader of the driver's Xid line, the kernel log through the sysfs root, and the
 * gpu_xid rule. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "nettune/nodecheck.h"
#include "nettune/sysfs.h"

/* NVIDIA's Xid catalogue for Ampere and later ("Analyzing Xid Errors with the Xid Catalog",
 * docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html): the numbers NCCL jobs meet,
 * each with the class of its immediate action. RESTART_APP and IGNORE (the application's
 * fault, or an event already handled) are monitor or info; RESET_GPU is reset; a GPU off the
 * bus (RESTART_BM, CHECK_MECHANICALS) and a row remapper out of spare rows are drain. 94 is
 * reset although the catalogue's immediate action is RESTART_APP: the row it marks is remapped
 * only at the next reset (NVIDIA A100/H100 "GPU Memory Error Management", row remapping). */
static const nt_xid_row_t nt_xid_table[] = {
    {13, NT_CAT_MONITOR, "graphics engine exception: usually an application fault (out-of-range access)"},
    {31, NT_CAT_MONITOR, "GPU memory page fault (MMU fault): usually an application bug, also bad memory"},
    {43, NT_CAT_MONITOR, "GPU stopped processing: the application hit a fault (user-mode); the GPU itself is fine"},
    {45, NT_CAT_INFO, "preemptive cleanup after an earlier error or a killed process"},
    {48, NT_CAT_RESET, "double-bit ECC error: uncorrectable memory error; drain the node"},
    {61, NT_CAT_RESET, "internal micro-controller breakpoint/warning (firmware)"},
    {62, NT_CAT_RESET, "internal micro-controller halt (firmware): reset the GPU"},
    {63, NT_CAT_RESET, "ECC page retirement or row remapping event"},
    {64, NT_CAT_DRAIN, "ECC page retirement or row remapper failure"},
    {74, NT_CAT_RESET, "NVLink error: a link or NVSwitch port failed"},
    {79, NT_CAT_DRAIN, "GPU has fallen off the bus: PCIe link lost (power, thermal, riser, hardware)"},
    {92, NT_CAT_MONITOR, "high single-bit ECC error rate"},
    {94, NT_CAT_RESET, "contained ECC error: the application was stopped, the GPU can continue"},
    {95, NT_CAT_RESET, "uncontained ECC error: reset the GPU"},
    {119, NT_CAT_RESET, "GSP RPC timeout: the GPU firmware stopped answering"},
    {120, NT_CAT_RESET, "GSP error: GPU firmware fault"},
};

const nt_xid_row_t *nt_xid_lookup(int xid)
{
    for (size_t i = 0; i < sizeof(nt_xid_table) / sizeof(nt_xid_table[0]); i++)
        if (nt_xid_table[i].xid == xid)
            return &nt_xid_table[i];
    return NULL;
}

int nt_xid_parse_line(const char *line, nt_xid_event_t *out)
{
    const char *x = line ? strstr(line, "NVRM: Xid (") : NULL;
    const char *p, *q;

    if (!x)
        return 0;
    p = x + strlen("NVRM: Xid (");
    q = strstr(p, "): ");
    if (strncmp(p, "PCI:", 4) == 0)
        p += 4;
    memset(out, 0, sizeof(*out));
    snprintf(out->pci, sizeof(out->pci), "%.*s", q ? (int)(q - p) : 0, p);
    out->xid = q ? atoi(q + 3) : -1;
    return 1;
}

/* One line of the log: kept when it is an Xid line. */
static void nt_xid_line(nt_xid_log_t *out, const char *line)
{
    nt_xid_event_t e;

    if (!nt_xid_parse_line(line, &e))
        return;
    out->total++;
    if (out->n < NT_XID_MAX)
        out->ev[out->n++] = e;
}

nt_status_t nt_xid_read(nt_xid_log_t *out)
{
    char path[PATH_MAX], buf[8192], line[4096];
    size_t ll = 0;
    int fd;

    memset(out, 0, sizeof(*out));
    if (nt_sysfs_path("/dev/kmsg", path, sizeof(path)) != NT_OK ||
        (fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0) {
        snprintf(out->source, sizeof(out->source), "/dev/kmsg: %s", strerror(errno));
        return NT_OK;
    }
    /* /dev/kmsg gives one whole record per read; a captured file gives any number of lines per
     * read: splitting every read at newlines serves both. */
    for (;;) {
        ssize_t r = read(fd, buf, sizeof(buf));
        if (r < 0 && errno == EPIPE)
            continue; /* records overwritten while reading: go on with the oldest kept */
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break; /* EAGAIN: the end of the ring buffer; 0: the end of a captured file */
        for (ssize_t i = 0; i < r; i++) {
            if (buf[i] == '\n') {
                line[ll] = '\0';
                nt_xid_line(out, line);
                ll = 0;
            } else if (ll < sizeof(line) - 1) {
                line[ll++] = buf[i];
            }
        }
    }
    if (ll) {
        line[ll] = '\0';
        nt_xid_line(out, line);
    }
    close(fd);
    out->readable = 1;
    snprintf(out->source, sizeof(out->source), "/dev/kmsg");
    return NT_OK;
}

/* pci is an Xid event's "dddd:bb:dd"; gpu a PCI address "dddd:bb:dd.f" of any case. */
static int nt_xid_same_gpu(const char *pci, const char *gpu)
{
    size_t n = strlen(pci);
    return n > 0 && strncasecmp(pci, gpu, n) == 0 && (gpu[n] == '\0' || gpu[n] == '.');
}

void nt_xid_judge(const nt_xid_log_t *log, const char *pci, const char *target,
                  nt_nodecheck_t *out)
{
    int nums[NT_XID_MAX], counts[NT_XID_MAX], worst = -1;
    nt_category_t wcat = NT_CAT_INFO;
    size_t k = 0, used = 0;
    char obs[128] = "";

    if (!log->readable) {
        nt_nodecheck_set(out, "gpu_xid", "NT-GPU-020", NT_NOT_JUDGED, target, "", "no Xid",
                         "the kernel log cannot be read (%s): run as root or set "
                         "kernel.dmesg_restrict=0", log->source);
        return;
    }
    for (size_t i = 0; i < log->n; i++) {
        size_t j = 0;
        if (pci && !nt_xid_same_gpu(log->ev[i].pci, pci))
            continue;
        while (j < k && nums[j] != log->ev[i].xid)
            j++;
        if (j == k) {
            nums[k] = log->ev[i].xid;
            counts[k++] = 0;
        }
        counts[j]++;
    }
    for (size_t j = 0; j < k; j++) {
        const nt_xid_row_t *r = nt_xid_lookup(nums[j]);
        /* a number the table does not hold is watched, not acted on */
        nt_category_t c = r ? r->category : NT_CAT_MONITOR;
        int n = snprintf(obs + used, sizeof(obs) - used, "%sXid %d x%d", j ? ", " : "", nums[j],
                         counts[j]);
        if (n > 0 && (size_t)n < sizeof(obs) - used)
            used += (size_t)n;
        if (worst < 0 || c < wcat) { /* checks.h orders drain, reset, config, monitor, info */
            worst = nums[j];
            wcat = c;
        }
    }
    if (!k) {
        nt_nodecheck_set(out, "gpu_xid", "NT-GPU-020", NT_PASS, target, "none", "no Xid",
                         "no Xid in the kernel log since boot (as far as its ring buffer holds)");
        return;
    }
    const nt_xid_row_t *r = nt_xid_lookup(worst);
    const char *meaning = r ? r->meaning : "a number the Xid table does not hold";
    if (wcat == NT_CAT_INFO)
        nt_nodecheck_set(out, "gpu_xid", "NT-GPU-020", NT_PASS, target, obs, "no Xid",
                         "only Xids that need no action: Xid %d, %s (NVIDIA Xid catalogue)",
                         worst, meaning);
    else
        nt_nodecheck_set(out, "gpu_xid",
                         wcat == NT_CAT_DRAIN   ? "NT-GPU-020"
                         : wcat == NT_CAT_RESET ? "NT-GPU-021"
                                                : "NT-GPU-022",
                         wcat == NT_CAT_MONITOR ? NT_WARN : NT_FAIL, target, obs, "no Xid",
                         "Xid %d since boot: %s (NVIDIA Xid catalogue)", worst, meaning);
}
