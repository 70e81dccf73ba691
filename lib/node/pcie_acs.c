/* PCIe node checks (include/nettune/nodecheck.h): ACS control on the bridges between a GPU and
 * its NIC, the IOMMU mode, AER counters. Every read goes through the sysfs root. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/nodecheck.h"
#include "nettune/sysfs.h"

#define NT_PCI_EXT_CAP_ID_ACS 0x000du /* include/uapi/linux/pci_regs.h PCI_EXT_CAP_ID_ACS */
#define NT_PCI_ACS_CTRL 0x06u         /* PCI_ACS_CTRL: the control word's offset in the cap */
#define NT_PCI_CFG_SPACE 256u         /* PCI_CFG_SPACE_SIZE: extended space starts here */
#define NT_PCI_CFG_SPACE_EXP 4096u    /* PCI_CFG_SPACE_EXP_SIZE */

static unsigned nt_le32(const unsigned char *p)
{
    return (unsigned)p[0] | (unsigned)p[1] << 8 | (unsigned)p[2] << 16 | (unsigned)p[3] << 24;
}

void nt_acs_parse(const char *bdf, const unsigned char *cfg, size_t len, nt_acs_t *out)
{
    unsigned off = NT_PCI_CFG_SPACE;

    memset(out, 0, sizeof(*out));
    snprintf(out->bdf, sizeof(out->bdf), "%s", bdf);
    if (len <= NT_PCI_CFG_SPACE)
        return;
    out->readable = 1;
    /* A capability list is at most (4096 - 256) / 4 entries long; the bound stops a loop. */
    for (int guard = 0; guard < 960 && off >= NT_PCI_CFG_SPACE && off + 8 <= len; guard++) {
        unsigned h = nt_le32(cfg + off);
        if (h == 0 || h == 0xffffffffu)
            return;
        if ((h & 0xffffu) == NT_PCI_EXT_CAP_ID_ACS) {
            out->present = 1;
            out->offset = off;
            out->ctl = (unsigned)cfg[off + NT_PCI_ACS_CTRL] |
                       (unsigned)cfg[off + NT_PCI_ACS_CTRL + 1] << 8;
            return;
        }
        off = (h >> 20) & 0xffcu;
    }
}

nt_status_t nt_acs_read(const char *bdf, nt_acs_t *out)
{
    char rel[128], path[PATH_MAX];
    unsigned char cfg[NT_PCI_CFG_SPACE_EXP];
    size_t n;
    FILE *f;

    snprintf(rel, sizeof(rel), "/sys/bus/pci/devices/%s/config", bdf);
    memset(out, 0, sizeof(*out));
    snprintf(out->bdf, sizeof(out->bdf), "%s", bdf);
    if (nt_sysfs_path(rel, path, sizeof(path)) != NT_OK)
        return NT_ERR_INVALID;
    if (!(f = fopen(path, "rb")))
        return NT_ERR_NOT_FOUND;
    n = fread(cfg, 1, sizeof(cfg), f);
    fclose(f);
    nt_acs_parse(bdf, cfg, n, out);
    return NT_OK;
}

void nt_acs_judge(const nt_acs_t *a, nt_nodecheck_t *out)
{
    char obs[64];
    const char *exp = "ReqRedir- CmpltRedir-";

    if (!a->readable) {
        nt_nodecheck_set(out, "pcie_acs", "NT-PCIE-005", NT_NOT_JUDGED, a->bdf, "", exp,
                         "ACS control not judged: the extended config space needs root (run "
                         "the probe as root)");
        return;
    }
    if (!a->present) {
        nt_nodecheck_set(out, "pcie_acs", "NT-PCIE-005", NT_PASS, a->bdf, "no ACS capability",
                         exp, "the bridge has no ACS capability: it cannot redirect P2P");
        return;
    }
    snprintf(obs, sizeof(obs), "ACSCtl 0x%04x (ReqRedir%c CmpltRedir%c)", a->ctl,
             a->ctl & NT_ACS_REQ_REDIR ? '+' : '-', a->ctl & NT_ACS_CMPLT_REDIR ? '+' : '-');
    if (a->ctl & (NT_ACS_REQ_REDIR | NT_ACS_CMPLT_REDIR))
        nt_nodecheck_set(out, "pcie_acs", "NT-PCIE-005", NT_FAIL, a->bdf, obs, exp,
                         "ACS redirects peer-to-peer requests on this bridge to the root "
                         "complex: GPUDirect between the GPU and NIC below it hangs or crawls");
    else
        nt_nodecheck_set(out, "pcie_acs", "NT-PCIE-005", NT_PASS, a->bdf, obs, exp,
                         "ACS does not redirect peer-to-peer requests");
}

/* The BDF components of the resolved device path of bdf, top first ("0000:00:01.0", ...,
 * bdf itself last). */
static nt_status_t nt_pci_chain(const char *bdf, char (*chain)[16], size_t max, size_t *n)
{
    char rel[128], path[PATH_MAX], real[PATH_MAX], *save = NULL;

    *n = 0;
    snprintf(rel, sizeof(rel), "/sys/bus/pci/devices/%s", bdf);
    if (nt_sysfs_path(rel, path, sizeof(path)) != NT_OK || !realpath(path, real))
        return NT_ERR_NOT_FOUND;
    for (char *tok = strtok_r(real, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
        unsigned d, b, s, f;
        char tail;
        if (sscanf(tok, "%4x:%2x:%2x.%1x%c", &d, &b, &s, &f, &tail) == 4 && *n < max)
            snprintf(chain[(*n)++], 16, "%s", tok);
    }
    return *n ? NT_OK : NT_ERR_NOT_FOUND;
}

nt_status_t nt_pcie_bridges_between(const char *a, const char *b, char (*out)[16], size_t max,
                                    size_t *n)
{
    char ca[16][16], cb[16][16];
    size_t na, nb, common = 0, from;
    nt_status_t st;

    *n = 0;
    if ((st = nt_pci_chain(a, ca, 16, &na)) != NT_OK || (st = nt_pci_chain(b, cb, 16, &nb)) != NT_OK)
        return st;
    /* The last entry of each chain is the device itself. */
    while (common + 1 < na && common + 1 < nb && strcmp(ca[common], cb[common]) == 0)
        common++;
    from = common ? common - 1 : 0;
    for (size_t i = from; i + 1 < na && *n < max; i++)
        snprintf(out[(*n)++], 16, "%s", ca[i]);
    for (size_t i = common ? common : 0; i + 1 < nb && *n < max; i++)
        snprintf(out[(*n)++], 16, "%s", cb[i]);
    return NT_OK;
}

/* Whether a kernel command line has the token tok (a whole word). */
static int nt_has_word(const char *line, const char *tok)
{
    size_t len = strlen(tok);
    for (const char *p = strstr(line, tok); p; p = strstr(p + 1, tok))
        if ((p == line || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0' || p[len] == '\n'))
            return 1;
    return 0;
}

void nt_iommu_parse_cmdline(const char *cmdline, nt_iommu_t *out)
{
    out->cmdline_pt = nt_has_word(cmdline, "iommu=pt") || nt_has_word(cmdline, "iommu.passthrough=1");
    /* iommu.passthrough=0: "Use IOMMU translation for DMA" (kernel-parameters.txt), the
     * translated default made explicit */
    out->cmdline_on = !out->cmdline_pt && (nt_has_word(cmdline, "intel_iommu=on") ||
                                           nt_has_word(cmdline, "amd_iommu=on") ||
                                           nt_has_word(cmdline, "iommu.passthrough=0"));
}

nt_status_t nt_iommu_read(const char *bdf, nt_iommu_t *out)
{
    char rel[160], line[4096];
    char **names = NULL;
    size_t count = 0;

    memset(out, 0, sizeof(*out));
    snprintf(out->bdf, sizeof(out->bdf), "%s", bdf);
    out->groups = -1;
    if (nt_sysfs_list("/sys/kernel/iommu_groups", &names, &count) == NT_OK)
        out->groups = (int)count;
    nt_sysfs_list_free(names);
    snprintf(rel, sizeof(rel), "/sys/bus/pci/devices/%s/iommu_group/type", bdf);
    if (nt_sysfs_read_str(rel, out->type, sizeof(out->type)) != NT_OK)
        out->type[0] = '\0';
    if (nt_sysfs_read_str("/proc/cmdline", line, sizeof(line)) == NT_OK)
        nt_iommu_parse_cmdline(line, out);
    return NT_OK;
}

void nt_iommu_judge(const nt_iommu_t *m, nt_nodecheck_t *out)
{
    const char *exp = "identity (iommu=pt) or no IOMMU";
    const char *t = m->type;

    if (strcmp(t, "DMA") == 0 || strcmp(t, "DMA-FQ") == 0)
        nt_nodecheck_set(out, "iommu", "NT-PCIE-006", NT_WARN, m->bdf, t, exp,
                         "the IOMMU translates this device's DMA: GPUDirect P2P and RDMA go "
                         "through translation (slower, or completion errors)");
    else if (*t)
        nt_nodecheck_set(out, "iommu", "NT-PCIE-006", NT_PASS, m->bdf, t, exp,
                         "the IOMMU does not translate this device's DMA");
    else if (m->groups == 0)
        nt_nodecheck_set(out, "iommu", "NT-PCIE-006", NT_PASS, m->bdf, "no IOMMU groups", exp,
                         "no IOMMU is active");
    else if (m->cmdline_pt)
        nt_nodecheck_set(out, "iommu", "NT-PCIE-006", NT_PASS, m->bdf, "iommu=pt", exp,
                         "the kernel command line sets passthrough");
    else if (m->cmdline_on && m->groups > 0)
        nt_nodecheck_set(out, "iommu", "NT-PCIE-006", NT_WARN, m->bdf, "iommu on, no pt", exp,
                         "the IOMMU is on without passthrough: DMA is translated");
    else
        nt_nodecheck_set(out, "iommu", "NT-PCIE-006", NT_NOT_JUDGED, m->bdf, "", exp,
                         "no iommu_group/type (Linux < 5.11) and the command line does not say");
}

nt_status_t nt_aer_parse_total(const char *text, unsigned long long *out)
{
    const char *p = strstr(text, "TOTAL_ERR_");
    if (!p || !(p = strchr(p, ' ')))
        return NT_ERR_PARSE;
    *out = strtoull(p, NULL, 10);
    return NT_OK;
}

static nt_status_t nt_aer_file(const char *bdf, const char *name, unsigned long long *v)
{
    char rel[160], path[PATH_MAX], text[4096];
    size_t n;
    FILE *f;

    snprintf(rel, sizeof(rel), "/sys/bus/pci/devices/%s/%s", bdf, name);
    if (nt_sysfs_path(rel, path, sizeof(path)) != NT_OK || !(f = fopen(path, "r")))
        return NT_ERR_NOT_FOUND;
    n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    return nt_aer_parse_total(text, v);
}

nt_status_t nt_aer_read(const char *bdf, nt_aer_t *out)
{
    memset(out, 0, sizeof(*out));
    snprintf(out->bdf, sizeof(out->bdf), "%s", bdf);
    out->present = nt_aer_file(bdf, "aer_dev_correctable", &out->correctable) == NT_OK &&
                   nt_aer_file(bdf, "aer_dev_fatal", &out->fatal) == NT_OK &&
                   nt_aer_file(bdf, "aer_dev_nonfatal", &out->nonfatal) == NT_OK;
    return NT_OK;
}

void nt_aer_judge(const nt_aer_t *a, nt_nodecheck_t *out)
{
    char obs[96];

    if (!a->present) {
        nt_nodecheck_set(out, "pcie_aer", "NT-PCIE-007", NT_NOT_JUDGED, a->bdf, "", "0",
                         "no AER counters (kernel without CONFIG_PCIEAER, or no AER on the "
                         "device)");
        return;
    }
    snprintf(obs, sizeof(obs), "correctable %llu, fatal %llu, non-fatal %llu", a->correctable,
             a->fatal, a->nonfatal);
    if (a->fatal || a->nonfatal)
        nt_nodecheck_set(out, "pcie_aer", "NT-PCIE-007", NT_FAIL, a->bdf, obs, "0 uncorrectable",
                         "uncorrectable PCIe errors since boot: the link or device is faulty");
    else if (a->correctable)
        nt_nodecheck_set(out, "pcie_aer", "NT-PCIE-008", NT_WARN, a->bdf, obs, "0 correctable",
                         "correctable PCIe errors since boot: the link retrains or replays");
    else
        nt_nodecheck_set(out, "pcie_aer", "NT-PCIE-007", NT_PASS, a->bdf, obs, "0",
                         "no PCIe errors since boot");
}
