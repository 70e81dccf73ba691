/* Readers of the InfiniBand switches' view (include/nettune/ibtopo.h): `ibnetdiscover` and
 * `iblinkinfo` output into hosts per leaf switch. The formats are infiniband-diags'
 * (rdma-core infiniband-diags/ibnetdiscover.c and iblinkinfo.c); the captures in
 * tests/fixtures/ibtopo/ (MANIFEST) are what they are held to. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/ibtopo.h"
#include "nettune/log.h"

#define NT_IBTOPO_MAX_FILE (64u << 20)

void nt_ibtopo_free(nt_ibtopo_t *t)
{
    if (!t)
        return;
    free(t->hosts);
    free(t->switches);
    t->hosts = NULL;
    t->switches = NULL;
    t->nhosts = t->nswitches = 0;
}

/* One line of text: [*p, end of line), *p moved past it; 0 at the end. */
static int nt_next_line(const char **p, const char *end, char *buf, size_t len)
{
    size_t n = 0;
    if (*p >= end)
        return 0;
    while (*p < end && **p != '\n') {
        if (n + 1 < len && **p != '\r')
            buf[n++] = **p;
        (*p)++;
    }
    if (*p < end)
        (*p)++;
    buf[n] = '\0';
    return 1;
}

/* The text between the first pair of double quotes at or after s into out; s past it, or
 * NULL when there is none. Leading and trailing blanks are dropped (iblinkinfo pads names). */
static const char *nt_quoted(const char *s, char *out, size_t len)
{
    const char *a = strchr(s, '"'), *b;
    size_t n;
    if (!a || !(b = strchr(a + 1, '"')))
        return NULL;
    a++;
    while (a < b && isspace((unsigned char)*a))
        a++;
    n = (size_t)(b - a);
    while (n && isspace((unsigned char)a[n - 1]))
        n--;
    if (n >= len)
        n = len - 1;
    memcpy(out, a, n);
    out[n] = '\0';
    return b + 1;
}

/* Whether a node description names a host's adapter: "node018 HCA-1", "ip-211 mlx4_0" (two
 * words, the second an RDMA device name as the drivers name them). Switch descriptions
 * ("SwitchIB Mellanox Technologies", "MF0;leaf01:MQM9700/U1") are not. */
static int nt_host_desc(const char *desc, char *host, size_t len)
{
    static const char *const dev[] = {"mlx", "HCA-", "hfi", "qib", "mthca", "irdma", "bnxt_re"};
    const char *sp = strchr(desc, ' ');
    const char *w2;
    if (!sp || sp == desc)
        return 0;
    w2 = sp + 1;
    if (!*w2 || strchr(w2, ' '))
        return 0;
    for (size_t i = 0; i < sizeof(dev) / sizeof(dev[0]); i++) {
        if (strncmp(w2, dev[i], strlen(dev[i])) == 0) {
            size_t n = (size_t)(sp - desc);
            if (n >= len)
                n = len - 1;
            memcpy(host, desc, n);
            host[n] = '\0';
            return 1;
        }
    }
    return 0;
}

static int nt_add_switch(nt_ibtopo_t *t, size_t *cap, const char *guid, const char *desc)
{
    for (size_t i = 0; i < t->nswitches; i++)
        if (strcmp(t->switches[i].guid, guid) == 0)
            return (int)i;
    if (t->nswitches == *cap) {
        size_t n = *cap ? 2 * *cap : 16;
        nt_ibtopo_switch_t *g = realloc(t->switches, n * sizeof(*g));
        if (!g)
            return -1;
        t->switches = g;
        *cap = n;
    }
    memset(&t->switches[t->nswitches], 0, sizeof(t->switches[0]));
    snprintf(t->switches[t->nswitches].guid, sizeof(t->switches[0].guid), "%s", guid);
    snprintf(t->switches[t->nswitches].desc, sizeof(t->switches[0].desc), "%s", desc);
    return (int)t->nswitches++;
}

static int nt_add_host(nt_ibtopo_t *t, size_t *cap, const char *name, int leaf)
{
    for (size_t i = 0; i < t->nhosts; i++)
        if (t->hosts[i].leaf == leaf && strcmp(t->hosts[i].name, name) == 0)
            return 0; /* a host's second port on the same switch */
    if (t->nhosts == *cap) {
        size_t n = *cap ? 2 * *cap : 32;
        nt_ibtopo_host_t *g = realloc(t->hosts, n * sizeof(*g));
        if (!g)
            return -1;
        t->hosts = g;
        *cap = n;
    }
    snprintf(t->hosts[t->nhosts].name, sizeof(t->hosts[0].name), "%s", name);
    t->hosts[t->nhosts++].leaf = leaf;
    t->switches[leaf].nhosts++;
    return 0;
}

nt_status_t nt_ibtopo_parse_ibnetdiscover(const char *text, size_t len, nt_ibtopo_t *out,
                                          char *why, size_t whylen)
{
    const char *p = text, *end = text + len;
    char line[1024], q[256], host[128];
    size_t caps = 0, caph = 0;
    int cur = -1; /* the switch block we are in; -1: none (a CA block, or before any) */

    memset(out, 0, sizeof(*out));
    out->format = "ibnetdiscover";
    while (nt_next_line(&p, end, line, sizeof(line))) {
        const char *s = line, *r;
        while (isspace((unsigned char)*s))
            s++;
        if (strncmp(s, "Switch", 6) == 0 && isspace((unsigned char)s[6])) {
            /* Switch\t36 "S-0002c9020046c588"\t\t# "desc" base port 0 lid 2 lmc 0 */
            char id[36], guid[40], desc[128] = "";
            if (!(r = nt_quoted(s, id, sizeof(id))) || strncmp(id, "S-", 2) != 0) {
                cur = -1;
                continue;
            }
            snprintf(guid, sizeof(guid), "0x%s", id + 2);
            if ((r = strchr(r, '#')))
                nt_quoted(r, desc, sizeof(desc));
            if ((cur = nt_add_switch(out, &caps, guid, desc)) < 0)
                goto nomem;
            continue;
        }
        if (strncmp(s, "Ca", 2) == 0 && isspace((unsigned char)s[2])) {
            cur = -1;
            continue;
        }
        if (cur >= 0 && *s == '[') {
            /* [1]\t"H-506b4b03003fa9b6"[1](506b4b03003fa9b6) \t\t# "node018 HCA-1" lid 67 */
            char id[64];
            if (!(r = nt_quoted(s, id, sizeof(id))) || strncmp(id, "H-", 2) != 0)
                continue;
            if (!(r = strchr(r, '#')) || !nt_quoted(r, q, sizeof(q)) ||
                !nt_host_desc(q, host, sizeof(host)))
                snprintf(host, sizeof(host), "%s", id); /* no host in the description */
            if (nt_add_host(out, &caph, host, cur) < 0)
                goto nomem;
        }
    }
    if (!out->nswitches) {
        snprintf(why, whylen, "no \"Switch N \\\"S-...\\\"\" block: not ibnetdiscover output");
        nt_ibtopo_free(out);
        return NT_ERR_PARSE;
    }
    return NT_OK;
nomem:
    nt_ibtopo_free(out);
    return NT_ERR_NOMEM;
}

/* The link part of an iblinkinfo port line: after "==>", the remote's LID, port and quoted
 * description; 1 with the description in q when the line has one. */
static int nt_linkinfo_remote(const char *s, char *q, size_t len)
{
    const char *a = strstr(s, "==>");
    return a && nt_quoted(a, q, len) != NULL;
}

nt_status_t nt_ibtopo_parse_iblinkinfo(const char *text, size_t len, nt_ibtopo_t *out,
                                       char *why, size_t whylen)
{
    const char *p = text, *end = text + len;
    char line[1024], q[256], host[128];
    size_t caps = 0, caph = 0;
    int cur = -1, ports = 0;

    memset(out, 0, sizeof(*out));
    out->format = "iblinkinfo";
    while (nt_next_line(&p, end, line, sizeof(line))) {
        const char *s = line;
        while (isspace((unsigned char)*s))
            s++;
        if (strncmp(s, "Switch:", 7) == 0) {
            /* Switch: 0x0002c9020046c588 Infiniscale-IV Mellanox Technologies: */
            char guid[40] = "", desc[128] = "";
            const char *g = s + 7;
            size_t n = 0, dl;
            while (isspace((unsigned char)*g))
                g++;
            while (g[n] && !isspace((unsigned char)g[n]) && n + 1 < sizeof(guid)) {
                guid[n] = g[n];
                n++;
            }
            guid[n] = '\0';
            g += n;
            while (isspace((unsigned char)*g))
                g++;
            snprintf(desc, sizeof(desc), "%s", g);
            dl = strlen(desc);
            if (dl && desc[dl - 1] == ':')
                desc[--dl] = '\0';
            if (!guid[0] || (cur = nt_add_switch(out, &caps, guid, desc)) < 0) {
                if (guid[0])
                    goto nomem;
                cur = -1;
            }
            continue;
        }
        if (strncmp(s, "CA:", 3) == 0) {
            cur = -1;
            continue;
        }
        if (strncmp(s, "0x", 2) == 0 && strchr(s, '"') && strstr(s, "==(") &&
            strchr(s, '"') < strstr(s, "==(")) {
            /* iblinkinfo -l: 0x<guid> "desc"  LID PORT[  ] ==( ... )==> 0x<guid> LID PORT[  ]
             * "remote" ( ) -- a switch's line when its own description is no host's. Its own
             * description comes before the link; a CA section's port line of the default
             * layout also starts with a GUID, but its only quoted text is the remote's. */
            char guid[40], desc[128];
            size_t n = 0;
            int sw;
            while (s[n] && !isspace((unsigned char)s[n]) && n + 1 < sizeof(guid)) {
                guid[n] = s[n];
                n++;
            }
            guid[n] = '\0';
            if (!nt_quoted(s, desc, sizeof(desc)) || nt_host_desc(desc, host, sizeof(host)))
                continue;
            if ((sw = nt_add_switch(out, &caps, guid, desc)) < 0)
                goto nomem;
            ports++;
            if (nt_linkinfo_remote(s, q, sizeof(q)) && nt_host_desc(q, host, sizeof(host)) &&
                nt_add_host(out, &caph, host, sw) < 0)
                goto nomem;
            continue;
        }
        if (cur >= 0 && strstr(s, "==(")) {
            ports++;
            if (nt_linkinfo_remote(s, q, sizeof(q)) && nt_host_desc(q, host, sizeof(host)) &&
                nt_add_host(out, &caph, host, cur) < 0)
                goto nomem;
        }
    }
    if (!ports) {
        snprintf(why, whylen, "no switch port line (\"Switch: 0x...\" then \"==( ... )==>\"): "
                              "not iblinkinfo output");
        nt_ibtopo_free(out);
        return NT_ERR_PARSE;
    }
    return NT_OK;
nomem:
    nt_ibtopo_free(out);
    return NT_ERR_NOMEM;
}

const char *nt_ibtopo_sniff(const char *text, size_t len)
{
    const char *p = text, *end = text + (len > 65536 ? 65536 : len);
    char line[512];
    while (nt_next_line(&p, end, line, sizeof(line))) {
        const char *s = line;
        while (isspace((unsigned char)*s))
            s++;
        if (strncmp(s, "switchguid=0x", 13) == 0 ||
            (strncmp(s, "Switch", 6) == 0 && strstr(s, "\"S-")))
            return "ibnetdiscover";
        if ((strncmp(s, "Switch: 0x", 10) == 0 || strncmp(s, "CA: ", 4) == 0) ||
            (strstr(s, "==(") && strstr(s, ")==>")))
            return "iblinkinfo";
    }
    return NULL;
}

int nt_ibtopo_line(const char *line)
{
    static const char *const heads[] = {"vendid=0x", "devid=0x", "sysimgguid=0x",
                                        "switchguid=0x", "caguid=0x", "Switch: 0x", "CA: "};
    const char *s = line;
    if (!s)
        return 0;
    while (isspace((unsigned char)*s))
        s++;
    for (size_t i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
        if (strncmp(s, heads[i], strlen(heads[i])) == 0)
            return 1;
    if ((strncmp(s, "Switch", 6) == 0 && strstr(s, "\"S-")) ||
        (strncmp(s, "Ca", 2) == 0 && isspace((unsigned char)s[2]) && strstr(s, "\"H-")))
        return 1;
    if (*s == '[' && (strstr(s, "\"H-") || strstr(s, "\"S-")))
        return 1; /* ibnetdiscover's port lines */
    return strstr(s, "==(") && strstr(s, ")==>"); /* iblinkinfo's link lines */
}

nt_status_t nt_ibtopo_load(const char *path, nt_ibtopo_t *out)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL, why[256] = "";
    size_t n = 0, cap = 0;
    const char *fmt;
    nt_status_t st;

    memset(out, 0, sizeof(*out));
    if (!f) {
        NT_ERROR(VERDICT, "cannot open fabric topology '%s': %m (give ibnetdiscover or "
                          "iblinkinfo output saved to a file)",
                 path);
        return errno == ENOENT ? NT_ERR_NOT_FOUND : NT_ERR_IO;
    }
    for (;;) {
        size_t got;
        if (n == cap) {
            char *g;
            cap = cap ? 2 * cap : 65536;
            if (cap > NT_IBTOPO_MAX_FILE || !(g = realloc(buf, cap + 1))) {
                fclose(f);
                free(buf);
                NT_ERROR(VERDICT, "fabric topology '%s' is larger than 64 MiB or memory ran "
                                  "out (give the ibnetdiscover output of one fabric)",
                         path);
                return NT_ERR_NOMEM;
            }
            buf = g;
        }
        if (!(got = fread(buf + n, 1, cap - n, f)))
            break;
        n += got;
    }
    fclose(f);
    fmt = buf ? nt_ibtopo_sniff(buf, n) : NULL;
    if (!fmt) {
        free(buf);
        NT_ERROR(VERDICT, "fabric topology '%s' is neither ibnetdiscover nor iblinkinfo "
                          "output (save `ibnetdiscover > FILE` on a node of the fabric)",
                 path);
        return NT_ERR_PARSE;
    }
    st = strcmp(fmt, "ibnetdiscover") == 0
             ? nt_ibtopo_parse_ibnetdiscover(buf, n, out, why, sizeof(why))
             : nt_ibtopo_parse_iblinkinfo(buf, n, out, why, sizeof(why));
    free(buf);
    if (st == NT_ERR_PARSE)
        NT_ERROR(VERDICT, "fabric topology '%s': %s (save the tool's plain output)", path, why);
    return st;
}

int nt_ibtopo_leaf_of(const nt_ibtopo_t *t, const char *host)
{
    size_t hl;
    if (!t || !host)
        return -1;
    hl = strcspn(host, ".");
    for (size_t i = 0; i < t->nhosts; i++) {
        const char *n = t->hosts[i].name;
        size_t nl = strcspn(n, ".");
        if (nl == hl && strncmp(n, host, hl) == 0)
            return t->hosts[i].leaf;
    }
    return -1;
}
