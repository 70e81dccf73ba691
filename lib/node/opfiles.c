/* The node checks' facts from the files operators collect (include/nettune/nodecheck.h):
 * ulimit -a, df /dev/shm, lsmod, nvidia-smi -q and lspci -vvv, one reader each, fed line by
 * line. The rules that judge them are the probe's own (limits.c, modules.c, pcie_acs.c,
 * gpu_health.c). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/nodecheck.h"

static const char *nt_of_skip(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* The last whitespace-separated word of line into buf. */
static void nt_of_last_word(const char *line, char *buf, size_t len)
{
    const char *e = line + strlen(line), *b;
    while (e > line && isspace((unsigned char)e[-1]))
        e--;
    b = e;
    while (b > line && !isspace((unsigned char)b[-1]))
        b--;
    snprintf(buf, len, "%.*s", (int)(e - b), b);
}

/* Up to max words of line (each at most 63 bytes); returns the count. */
static int nt_of_words(const char *line, char (*w)[64], int max)
{
    int n = 0;
    const char *p = nt_of_skip(line);
    while (*p && n < max) {
        size_t l = 0;
        while (p[l] && !isspace((unsigned char)p[l]))
            l++;
        snprintf(w[n++], 64, "%.*s", (int)(l < 63 ? l : 63), p);
        p = nt_of_skip(p + l);
    }
    return n;
}

static int nt_of_digits(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return 0;
    return 1;
}

int nt_ulimit_line(const char *line, nt_memlock_t *m)
{
    const char *p = nt_of_skip(line);
    const char *opt = strstr(p, ", -");
    /* bash: "... (kbytes, -l) 8192", "scheduling priority (-e) 0"; dash and busybox:
     * "-l: locked-memory size (kb) 64" */
    if (!opt && (opt = strstr(p, "(-")))
        opt -= 1; /* "(-e)": the option letter at the same place as in ", -e)" */
    int bash = opt && isalpha((unsigned char)opt[3]) && opt[4] == ')';
    int dash = p[0] == '-' && isalpha((unsigned char)p[1]) && p[2] == ':';
    char v[64];

    if (!bash && !dash && !(strstr(p, "locked memory") && strstr(p, "(kbytes)")))
        return 0;
    if ((bash && opt[3] != 'l') || (dash && p[1] != 'l'))
        return 1; /* another limit of the same listing */
    if (!strstr(p, "locked"))
        return 1;
    nt_of_last_word(p, v, sizeof(v));
    if (strcmp(v, "unlimited") == 0) {
        m->known = 1;
        m->unlimited = 1;
        m->soft_bytes = 0;
    } else if (nt_of_digits(v)) {
        m->known = 1;
        m->unlimited = 0;
        m->soft_bytes = strtoull(v, NULL, 10) * 1024ull;
    }
    return 1;
}

/* "64M", "7.8G", "0" as df -h (powers of 1024) or -H (of 1000) prints them. */
static unsigned long long nt_of_human(const char *s, int si)
{
    char *end;
    double v = strtod(s, &end);
    double k = si ? 1000.0 : 1024.0;
    const char *units = "KMGTP";
    const char *u = *end ? strchr(units, toupper((unsigned char)*end)) : NULL;
    if (end == s)
        return 0;
    for (int i = 0; u && i <= u - units; i++)
        v *= k;
    return (unsigned long long)v;
}

int nt_df_line(nt_df_state_t *st, const char *line, nt_shm_t *s)
{
    char w[10][64];
    int n = nt_of_words(line, w, 10);

    if (n >= 6 && strcmp(w[0], "Filesystem") == 0 && strstr(line, "Mounted on")) {
        st->in = 1;
        st->unit = strstr(line, "1K-blocks")   ? 1024ull
                   : strstr(line, "1M-blocks") ? 1ull << 20
                   : strstr(line, "1B-blocks") ? 1ull
                                               : 0; /* "Size": df -h or -H */
        return 1;
    }
    if (!st->in || n < 6)
        return 0;
    /* fs [type] size used avail use% mount: the mount point is last, the sizes before use% */
    int pct = n - 2;
    if (!strchr(w[pct], '%'))
        return 0;
    if (strcmp(w[n - 1], "/dev/shm") == 0) {
        const char *size = w[pct - 3], *avail = w[pct - 1];
        s->known = 1;
        s->size_bytes = st->unit ? strtoull(size, NULL, 10) * st->unit : nt_of_human(size, st->si);
        s->free_bytes = st->unit ? strtoull(avail, NULL, 10) * st->unit
                                 : nt_of_human(avail, st->si);
        s->container = strcmp(w[0], "shm") == 0;
    }
    return 1;
}

int nt_lsmod_line(int *in, const char *line, nt_peermem_t *p)
{
    char w[4][64];
    int n = nt_of_words(line, w, 4);

    if (n >= 3 && strcmp(w[0], "Module") == 0 && strcmp(w[1], "Size") == 0 &&
        strcmp(w[2], "Used") == 0) {
        *in = 1;
        return 1;
    }
    if (!*in || n < 3 || !nt_of_digits(w[1]) || !nt_of_digits(w[2]))
        return 0;
    p->peers_unknown = 1;
    if (strcmp(w[0], "nvidia_peermem") == 0)
        p->nvidia_peermem = 1;
    else if (strcmp(w[0], "nv_peer_mem") == 0)
        p->nv_peer_mem = p->nv_mem = 1; /* nv_peer_mem registers memory_peers/nv_mem */
    else if (strcmp(w[0], "nvidia_fs") == 0)
        p->nvidia_fs = 1;
    return 1;
}

/* The GPU block's facts for one "key : value" line under the headers of st. */
static void nt_smi_q_fact(nt_smi_q_t *st, nt_gpu_health_t *h, int level, const char *key,
                          const char *val)
{
    const char *sec = st->section[1];
    int yes = strcmp(val, "Yes") == 0, no = strcmp(val, "No") == 0;

    if (level == 1 && strcmp(key, "Persistence Mode") == 0 &&
        (strcmp(val, "Enabled") == 0 || strcmp(val, "Disabled") == 0)) {
        h->persistence_ok = 1;
        h->persistence = strcmp(val, "Enabled") == 0;
        st->fact = NT_SMI_FACT_PERSISTENCE;
        st->bad = !h->persistence;
    } else if (strcmp(sec, "Clocks Event Reasons") == 0 ||
               strcmp(sec, "Clocks Throttle Reasons") == 0) {
        static const struct {
            const char *name;
            unsigned long long bit;
        } r[] = {{"HW Slowdown", NT_THROTTLE_HW_SLOWDOWN},
                 {"HW Thermal Slowdown", NT_THROTTLE_HW_THERMAL},
                 {"HW Power Brake Slowdown", NT_THROTTLE_HW_POWER_BRAKE},
                 {"SW Thermal Slowdown", NT_THROTTLE_SW_THERMAL}};
        for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
            if (strcmp(key, r[i].name) == 0) {
                h->throttle_ok = 1;
                st->fact = NT_SMI_FACT_THROTTLE;
                if (strcmp(val, "Active") == 0) {
                    h->throttle |= r[i].bit;
                    st->bad = 1;
                }
            }
    } else if (strcmp(sec, "ECC Errors") == 0 && nt_of_digits(val)) {
        int agg = strcmp(st->section[2], "Aggregate") == 0;
        unsigned long long v = strtoull(val, NULL, 10);
        if (strcmp(st->section[2], "Volatile") != 0 && !agg)
            return;
        if (strncmp(key, "DRAM Uncorrectable", 18) == 0 ||
            strncmp(key, "SRAM Uncorrectable", 18) == 0 ||
            (strcmp(st->section[3], "Double Bit") == 0 && strcmp(key, "Total") == 0)) {
            h->ecc_ok = 1;
            st->fact = NT_SMI_FACT_ECC;
            st->bad = v > 0;
            if (agg)
                h->ecc_uncorr_aggregate += v;
            else
                h->ecc_uncorr_volatile += v;
        }
    } else if (strcmp(sec, "Retired Pages") == 0 && (yes || no) &&
               strncmp(key, "Pending", 7) == 0) {
        h->retired_ok = 1;
        h->retired_pending = yes;
        st->fact = NT_SMI_FACT_RETIRED;
        st->bad = yes;
    } else if (strcmp(sec, "Remapped Rows") == 0) {
        if (strcmp(key, "Pending") == 0 && (yes || no)) {
            h->remap_ok = 1;
            h->remap_pending = (unsigned)yes;
            st->fact = NT_SMI_FACT_REMAP;
            st->bad = yes;
        } else if (strcmp(key, "Remapping Failure Occurred") == 0 && (yes || no)) {
            h->remap_failed = (unsigned)yes;
            st->fact = NT_SMI_FACT_REMAP;
            st->bad = yes;
        } else if (strcmp(key, "Uncorrectable Error") == 0 && nt_of_digits(val)) {
            h->remap_uncorr_rows = (unsigned)strtoul(val, NULL, 10);
            st->fact = NT_SMI_FACT_REMAP;
            st->bad = h->remap_uncorr_rows > 0;
        }
    } else if (strcmp(sec, "GPU Reset Status") == 0 && strcmp(key, "Reset Required") == 0 &&
               (yes || no)) {
        h->reset_ok = 1;
        h->reset_required = (unsigned)yes;
        st->fact = NT_SMI_FACT_RESET;
        st->bad = yes;
    }
}

int nt_smi_q_line(nt_smi_q_t *st, const char *line)
{
    size_t indent = 0;
    const char *p, *colon;
    char key[64], val[64];

    st->fact = NT_SMI_FACT_NONE;
    st->bad = 0;
    if (strstr(line, "==NVSMI LOG==")) {
        st->in = 1;
        return 1;
    }
    while (line[indent] == ' ')
        indent++;
    p = line + indent;
    /* "GPU 00000000:18:00.0" starts a GPU block */
    if (indent == 0 && strncmp(p, "GPU ", 4) == 0 && strlen(p + 4) >= 12 &&
        isxdigit((unsigned char)p[4]) && strchr(p + 4, ':') && strchr(p + 4, '.') &&
        !strstr(p, " : ")) {
        st->in = 1;
        memset(st->section, 0, sizeof(st->section));
        if (st->ngpus < NT_SMI_GPUS) {
            nt_gpu_health_t *h = &st->gpu[st->ngpus];
            memset(h, 0, sizeof(*h));
            h->index = st->ngpus;
            h->source = "nvidia-smi -q";
            snprintf(st->bus[st->ngpus], sizeof(st->bus[0]), "%s", p + 4);
            st->ngpus++;
        }
        return 1;
    }
    if (!st->in)
        return 0;
    if (!*p)
        return 1;
    if (indent == 0 && !strstr(p, " : "))
        return 0; /* not a line of the query: the dump has ended */
    size_t level = indent / 4 < 6 ? indent / 4 : 5;
    for (size_t l = level; l < 6; l++)
        st->section[l][0] = '\0';
    colon = strstr(p, " : ");
    if (!colon) {
        /* nvidia-smi pads some headers to the key column ("Double Bit" and "Single Bit" of
         * the pre-Ampere ECC block, "GPU Memory Power Readings "): the name without them */
        size_t l = strlen(p);
        while (l && isspace((unsigned char)p[l - 1]))
            l--;
        snprintf(st->section[level], sizeof(st->section[0]), "%.*s", (int)l, p);
        return 1;
    }
    size_t kl = (size_t)(colon - p);
    while (kl && p[kl - 1] == ' ')
        kl--;
    snprintf(key, sizeof(key), "%.*s", (int)kl, p);
    snprintf(val, sizeof(val), "%s", nt_of_skip(colon + 3));
    for (size_t l = strlen(val); l && isspace((unsigned char)val[l - 1]); l--)
        val[l - 1] = '\0';
    if (st->ngpus > 0 && level >= 1)
        nt_smi_q_fact(st, &st->gpu[st->ngpus - 1], (int)level, key, val);
    return 1;
}

/* "18:00.0 " or "0000:18:00.0 ": the function's address with its domain into bdf. */
static int nt_lspci_device(const char *s, char *bdf, size_t len)
{
    const char *b = s;
    int dom = isxdigit((unsigned char)s[0]) && isxdigit((unsigned char)s[1]) &&
              isxdigit((unsigned char)s[2]) && isxdigit((unsigned char)s[3]) && s[4] == ':';
    if (dom)
        b = s + 5;
    if (!(isxdigit((unsigned char)b[0]) && isxdigit((unsigned char)b[1]) && b[2] == ':' &&
          isxdigit((unsigned char)b[3]) && isxdigit((unsigned char)b[4]) && b[5] == '.' &&
          isdigit((unsigned char)b[6]) && b[7] == ' '))
        return 0;
    snprintf(bdf, len, "%.4s:%.7s", dom ? s : "0000", b);
    for (char *c = bdf; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    return 1;
}

int nt_lspci_line(nt_lspci_t *st, const char *line)
{
    char bdf[16];
    const char *p = nt_of_skip(line);

    if (nt_lspci_device(line, bdf, sizeof(bdf))) {
        st->in = 1;
        st->denied = 0;
        /* only bridges route peer-to-peer traffic between a GPU and its NIC */
        snprintf(st->cur, sizeof(st->cur), "%s", strstr(line, "PCI bridge") ? bdf : "");
        return 1;
    }
    if (!st->in)
        return 0;
    if (!*p)
        return 1;
    if (line[0] != '\t' && line[0] != ' ')
        return 0;
    if (!st->cur[0] || st->n >= NT_LSPCI_DEVS)
        return 1;
    if (strstr(p, "Capabilities: <access denied>") && !st->denied) {
        nt_acs_t *a = &st->acs[st->n++];
        memset(a, 0, sizeof(*a));
        snprintf(a->bdf, sizeof(a->bdf), "%s", st->cur);
        st->denied = 1;
    } else if (strncmp(p, "ACSCtl:", 7) == 0) {
        static const char *const bits[] = {"SrcValid",    "TransBlk",   "ReqRedir",   "CmpltRedir",
                                           "UpstreamFwd", "EgressCtrl", "DirectTrans"};
        nt_acs_t *a = &st->acs[st->n++];
        memset(a, 0, sizeof(*a));
        snprintf(a->bdf, sizeof(a->bdf), "%s", st->cur);
        a->readable = a->present = 1;
        for (unsigned i = 0; i < 7; i++) {
            const char *b = strstr(p, bits[i]);
            if (b && b[strlen(bits[i])] == '+')
                a->ctl |= 1u << i;
        }
    }
    return 1;
}
