/* PCIe link state without traffic, from sysfs through NETTUNE_SYSFS_ROOT.
 *
 * Facts come from the kernel's PCI sysfs attributes (drivers/pci/pci-sysfs.c):
 * current_link_speed / max_link_speed print "<rate> GT/s PCIe" (kernels before 5.x print
 * "<rate> GT/s", and "Unknown" when the rate field is not one they know), and
 * current_link_width / max_link_width print the lane count. They exist only for PCI Express
 * functions. The upstream port of a device is the parent directory of its resolved
 * /sys/bus/pci/devices/<bdf> link (/sys/devices/pci0000:00/0000:00:01.0/0000:18:00.0 has the
 * root port 0000:00:01.0 above it); its max_link_* are the capabilities of the slot side of
 * the link, so min(device max, upstream max) is what the link can train to. */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/log.h"
#include "nettune/pcie.h"
#include "nettune/sysfs.h"

int nt_pcie_gen(double gts)
{
    static const double rates[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
    for (int i = 0; i < (int)(sizeof(rates) / sizeof(rates[0])); i++)
        if (fabs(gts - rates[i]) < 0.05)
            return i + 1;
    return 0;
}

/* "8.0 GT/s PCIe", "8 GT/s", "2.5 GT/s" -> GT/s; "Unknown", garbage -> 0. */
double nt_pcie_parse_speed(const char *s)
{
    char *end;
    double v;

    if (!s)
        return 0;
    v = strtod(s, &end);
    if (end == s || v <= 0 || !isfinite(v))
        return 0;
    while (*end == ' ')
        end++;
    return strncmp(end, "GT/s", 4) == 0 ? v : 0;
}

/* A lane count the PCIe spec allows; anything else (0, 255 from a link that is down) is
 * unknown. */
static int nt_pcie_valid_width(long long w)
{
    return w == 1 || w == 2 || w == 4 || w == 8 || w == 12 || w == 16 || w == 32;
}

/* Reads one attribute of device bdf. Returns 1 when the file exists. */
static int nt_pcie_attr(const char *bdf, const char *attr, double *speed, int *width)
{
    char path[PATH_MAX], buf[64];
    long long w;

    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", bdf, attr);
    if (speed) {
        *speed = 0;
        if (nt_sysfs_read_str(path, buf, sizeof(buf)) != NT_OK)
            return 0;
        *speed = nt_pcie_parse_speed(buf);
        return 1;
    }
    *width = 0;
    switch (nt_sysfs_read_long(path, &w)) {
    case NT_OK:
        *width = nt_pcie_valid_width(w) ? (int)w : 0;
        return 1;
    case NT_ERR_PARSE:
        return 1;
    default:
        return 0;
    }
}

/* "0000:18:00.0": a full PCI address (domain, bus, device, function). */
static int nt_is_bdf(const char *s)
{
    unsigned d, b, dev, f;
    char tail;
    return strlen(s) == 12 && sscanf(s, "%4x:%2x:%2x.%1x%c", &d, &b, &dev, &f, &tail) == 4;
}

/* The upstream port of bdf: the parent directory of the resolved device link, when that is a
 * PCI function itself (not pci0000:00, the host bridge's directory). */
static void nt_pcie_upstream(const char *bdf, char *up, size_t len)
{
    char link[PATH_MAX], real[PATH_MAX], *slash;

    up[0] = '\0';
    snprintf(link, sizeof(link), "/sys/bus/pci/devices/%s", bdf);
    if (nt_sysfs_path(link, real, sizeof(real)) != NT_OK || !realpath(real, link))
        return;
    slash = strrchr(link, '/');
    if (!slash)
        return;
    *slash = '\0';
    slash = strrchr(link, '/');
    if (slash && nt_is_bdf(slash + 1) && strlen(slash + 1) < len)
        strcpy(up, slash + 1);
}

nt_status_t nt_pcie_read(const char *bdf, nt_pcie_link_t *out)
{
    char path[PATH_MAX], full[PATH_MAX], real[PATH_MAX];
    int have = 0;

    memset(out, 0, sizeof(*out));
    if (!bdf || strlen(bdf) >= sizeof(out->bdf))
        return NT_ERR_INVALID;
    snprintf(out->bdf, sizeof(out->bdf), "%s", bdf);
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", bdf);
    if (nt_sysfs_path(path, full, sizeof(full)) != NT_OK)
        return NT_ERR_INVALID;
    if (!realpath(full, real)) {
        NT_DEBUG(PCIE, "no PCI device '%s' in '%s'", bdf, full);
        return NT_ERR_NOT_FOUND;
    }

    have += nt_pcie_attr(bdf, "current_link_speed", &out->cur_gts, NULL);
    have += nt_pcie_attr(bdf, "max_link_speed", &out->max_gts, NULL);
    have += nt_pcie_attr(bdf, "current_link_width", NULL, &out->cur_width);
    have += nt_pcie_attr(bdf, "max_link_width", NULL, &out->max_width);
    if (!have) {
        NT_DEBUG(PCIE, "PCI device '%s' has no link attributes (not PCI Express)", bdf);
        return NT_ERR_UNSUPPORTED;
    }

    nt_pcie_upstream(bdf, out->upstream_bdf, sizeof(out->upstream_bdf));
    if (out->upstream_bdf[0]) {
        nt_pcie_attr(out->upstream_bdf, "max_link_speed", &out->up_max_gts, NULL);
        nt_pcie_attr(out->upstream_bdf, "max_link_width", NULL, &out->up_max_width);
    }
    NT_DEBUG(PCIE, "'%s': %.1f GT/s x%d of %.1f GT/s x%d, upstream '%s' %.1f GT/s x%d", bdf,
             out->cur_gts, out->cur_width, out->max_gts, out->max_width, out->upstream_bdf,
             out->up_max_gts, out->up_max_width);
    return NT_OK;
}

/* The lower of two maxima, where 0 means unknown. */
static double nt_min_known(double a, double b)
{
    if (a <= 0)
        return b;
    if (b <= 0)
        return a;
    return a < b ? a : b;
}

void nt_pcie_expected(const nt_pcie_link_t *l, double *gts, int *width)
{
    *gts = nt_min_known(l->max_gts, l->up_max_gts);
    *width = (int)nt_min_known(l->max_width, l->up_max_width);
}

nt_verdict_t nt_pcie_judge(const nt_pcie_link_t *l, const char *label, char *msg, size_t len)
{
    char who[64];
    double exp_gts;
    int exp_width;

    if (label && *label)
        snprintf(who, sizeof(who), "%s (%s)", l->bdf, label);
    else
        snprintf(who, sizeof(who), "%s", l->bdf);
    nt_pcie_expected(l, &exp_gts, &exp_width);

    if (l->cur_width <= 0 || exp_width <= 0) {
        snprintf(msg, len, "%s link width unknown (current x%d, capable of x%d)", who, l->cur_width,
                 exp_width);
        return NT_SKIPPED;
    }
    if (l->cur_width < exp_width) {
        if (l->cur_gts > 0 && exp_gts > 0 && l->cur_gts < exp_gts)
            snprintf(msg, len, "%s runs x%d, capable of x%d (and %g GT/s, capable of %g GT/s)", who,
                     l->cur_width, exp_width, l->cur_gts, exp_gts);
        else
            snprintf(msg, len, "%s runs x%d, capable of x%d", who, l->cur_width, exp_width);
        return NT_FAIL;
    }
    if (l->cur_gts > 0 && exp_gts > 0 && l->cur_gts < exp_gts) {
        snprintf(msg, len,
                 "%s runs %g GT/s (Gen%d), capable of %g GT/s (Gen%d); idle devices lower "
                 "their link speed, so this is judged under load",
                 who, l->cur_gts, nt_pcie_gen(l->cur_gts), exp_gts, nt_pcie_gen(exp_gts));
        return NT_WARN;
    }
    if (l->max_width > exp_width)
        snprintf(msg, len,
                 "%s runs x%d at %g GT/s, the most its slot allows (device capable of x%d)", who,
                 l->cur_width, l->cur_gts, l->max_width);
    else
        snprintf(msg, len, "%s runs x%d at %g GT/s as capable", who, l->cur_width, l->cur_gts);
    return NT_PASS;
}

cJSON *nt_pcie_check_create(const nt_pcie_link_t *l, const char *host, const char *label)
{
    char msg[256], target[64];
    double exp_gts;
    int exp_width;
    nt_verdict_t v = nt_pcie_judge(l, label, msg, sizeof(msg));

    nt_pcie_expected(l, &exp_gts, &exp_width);
    if (label && *label)
        snprintf(target, sizeof(target), "%s (%s)", l->bdf, label);
    else
        snprintf(target, sizeof(target), "%s", l->bdf);
    if (v == NT_WARN)
        return nt_check_create("pcie_link", host, target, v, l->cur_gts, exp_gts, "GT/s", "%s",
                               msg);
    return nt_check_create("pcie_link", host, target, v, l->cur_width > 0 ? l->cur_width : NAN,
                           exp_width > 0 ? exp_width : NAN, "lanes", "%s", msg);
}

nt_status_t nt_pcie_to_json(const nt_pcie_link_t *l, cJSON *obj)
{
    cJSON *p = nt_json_add_obj(obj, "pcie");
    int gen = nt_pcie_gen(l->cur_gts), max_gen = nt_pcie_gen(l->max_gts);

    if (!p || nt_json_add_num(p, "gen", gen ? gen : NAN) ||
        nt_json_add_num(p, "width", l->cur_width ? l->cur_width : NAN) ||
        nt_json_add_num(p, "max_gen", max_gen ? max_gen : NAN) ||
        nt_json_add_num(p, "max_width", l->max_width ? l->max_width : NAN))
        return NT_ERR_NOMEM;
    return NT_OK;
}

double nt_pcie_link_GBps(double gts, int width)
{
    double coding;
    if (!(gts > 0) || width <= 0)
        return NAN;
    if (gts < 8.0)
        coding = 8.0 / 10.0;
    else if (gts < 64.0)
        coding = 128.0 / 130.0;
    else
        coding = 242.0 / 256.0;
    return width * gts * coding / 8.0;
}

double nt_pcie_gen_gts(int gen)
{
    static const double gts[] = {0, 2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
    return gen >= 1 && gen <= 6 ? gts[gen] : 0.0;
}
