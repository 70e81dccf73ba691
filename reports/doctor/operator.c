/* The files operators collect and paste into tickets, detected by their content: nvidia-smi
 * topo -m, nvidia-smi nvlink -s, ibv_devinfo (plain, -v, -vv), ibstat, NCCL topology and graph XML
 * (through lib/nccl/ncclxml.c), and kernel log lines (dmesg, journalctl: NVIDIA Xid, mlx5 link
 * down/up). Multi-node collections: pdsh/clush "host: " line prefixes and dshbak blocks; otherwise
 * the host is --host, a shell prompt "user@host:" in the file, or the journal's host field, or it
 * is unknown. The formats are described in docs/doctor-inputs.md. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analyze_int.h"
#include "nettune/ncclxml.h"

enum { OP_NONE = 0, OP_IBV, OP_IBSTAT, OP_TOPO, OP_NVLINK };

#define XML_MAX (64u << 20)

static char *dupn(const char *s, size_t n)
{
    char *r = malloc(n + 1);
    if (r) {
        memcpy(r, s, n);
        r[n] = '\0';
    }
    return r;
}

static char *dup0(const char *s)
{
    return s ? strdup(s) : NULL;
}

static int starts(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static const char *skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* Grows an array of `size`-byte items to hold one more; NULL at NT_OP_MAX or out of memory. */
static void *grow(void **arr, size_t *n, size_t *cap, size_t size)
{
    if (*n >= NT_OP_MAX)
        return NULL;
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        void *p = realloc(*arr, nc * size);
        if (!p)
            return NULL;
        *arr = p;
        *cap = nc;
    }
    char *item = (char *)*arr + (*n)++ * size;
    memset(item, 0, size);
    return item;
}

static int host_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

void nt_op_begin(nt_doctor_t *d, const char *host)
{
    nt_op_t *o = &d->op;
    for (size_t i = 0; i < o->nst; i++)
        free(o->st[i].host);
    o->nst = 0;
    o->pdsh = -1;
    free(o->block_host);
    free(o->dsh_pending);
    free(o->input_host);
    free(o->prompt_host);
    o->block_host = o->dsh_pending = o->prompt_host = NULL;
    o->dsh_state = 0;
    o->input_host = dup0(host);
    o->xml = 0;
    o->xml_len = 0;
    o->seen_content = 0;
    o->op_lines = 0;
}

static nt_opstate_t *state_of(nt_doctor_t *d, const char *host)
{
    nt_op_t *o = &d->op;
    for (size_t i = 0; i < o->nst; i++)
        if (host_eq(o->st[i].host, host))
            return &o->st[i];
    nt_opstate_t *s = grow((void **)&o->st, &o->nst, &o->cap_st, sizeof(*s));
    if (!s)
        return NULL;
    s->host = dup0(host);
    s->port = s->topo = s->nvl = -1;
    return s;
}

static unsigned long cur_line(const nt_doctor_t *d)
{
    return d->inputs[d->cur].lines;
}

/* A host name as pdsh/clush prints it before ": " (letters, digits, '.', '-', '_'). */
static size_t host_prefix(const char *s)
{
    size_t n = 0;
    if (!isalnum((unsigned char)s[0]))
        return 0;
    while (isalnum((unsigned char)s[n]) || s[n] == '.' || s[n] == '-' || s[n] == '_')
        n++;
    if (n == 0 || n > 63 || s[n] != ':' || s[n + 1] != ' ')
        return 0;
    /* words that start lines of the formats themselves, not host names */
    static const char *const words[] = {"NVRM", "Legend", "Warning", "Error", "WARNING", "ERROR",
                                        "Note", "hca_id", "port",    "CA",    "Port",    "GPU"};
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strlen(words[i]) == n && strncmp(s, words[i], n) == 0)
            return 0;
    int digits = 1, mark = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            digits = 0;
        if (isdigit((unsigned char)s[i]) || s[i] == '.' || s[i] == '-' || s[i] == '_')
            mark = 1;
    }
    /* srun --label " 0: " is a task number; a host name has a digit, '.', '-' or '_' ("node01",
     * "gpu-a"), which words like "INFO: " do not */
    return digits || !mark ? 0 : n;
}

static int is_rule(const char *s)
{
    size_t n = 0;
    while (s[n] == '-')
        n++;
    return n >= 8 && s[n] == '\0';
}

/* ---- ibv_devinfo ----------------------------------------------------------------------------- */

static nt_opport_t *port_new(nt_doctor_t *d, nt_opstate_t *st, const char *host, const char *hca,
                             int port, const char *line)
{
    nt_op_t *o = &d->op;
    nt_opport_t *p = grow((void **)&o->ports, &o->nports, &o->cap_ports, sizeof(*p));
    if (!p) {
        st->port = -1;
        return NULL;
    }
    p->host = dup0(host);
    p->input = d->cur;
    snprintf(p->hca, sizeof(p->hca), "%s", hca);
    p->port = port;
    p->rate_Gbps = -1;
    p->sm_lid = -1;
    nt_ev_set(&p->ev, d->cur, cur_line(d), line);
    st->port = (long)(p - o->ports);
    return p;
}

/* "4X" -> 4 */
static int width_lanes(const char *w)
{
    return atoi(w);
}

static void port_rate(nt_opport_t *p)
{
    int lanes = width_lanes(p->width);
    double sp = atof(p->speed); /* "50.0 Gbps (64)" */
    if (lanes > 0 && sp > 0 && strstr(p->speed, "Gbps"))
        p->rate_Gbps = lanes * sp;
}

/* The value after "key:" with tabs: "state:\t\t\tPORT_ACTIVE (4)" -> "PORT_ACTIVE (4)". */
static const char *kv(const char *s, const char *key)
{
    size_t n = strlen(key);
    if (strncmp(s, key, n) != 0 || s[n] != ':')
        return NULL;
    return skip_ws(s + n + 1);
}

static void word(char *dst, size_t len, const char *v)
{
    size_t n = 0;
    while (v[n] && v[n] != ' ' && v[n] != '\t' && v[n] != '(')
        n++;
    snprintf(dst, len, "%.*s", (int)n, v);
}

static int feed_ibv(nt_doctor_t *d, nt_opstate_t *st, const char *host, const char *b,
                    const char *line)
{
    const char *s = skip_ws(b), *v;
    if ((v = kv(s, "hca_id"))) {
        st->mode = OP_IBV;
        word(st->hca, sizeof(st->hca), v);
        st->port = -1;
        return 1;
    }
    if (st->mode != OP_IBV)
        return 0;
    if ((v = kv(s, "port")) && isdigit((unsigned char)*v)) {
        port_new(d, st, host, st->hca, atoi(v), line);
        return 1;
    }
    nt_opport_t *p = st->port >= 0 ? &d->op.ports[st->port] : NULL;
    if (p) {
        if ((v = kv(s, "state"))) {
            word(p->state, sizeof(p->state), v);
            nt_ev_set(&p->ev_state, d->cur, cur_line(d), line);
        } else if ((v = kv(s, "phys_state"))) {
            word(p->phys, sizeof(p->phys), v);
            nt_ev_set(&p->ev_phys, d->cur, cur_line(d), line);
        } else if ((v = kv(s, "active_width"))) {
            word(p->width, sizeof(p->width), v);
            port_rate(p);
        } else if ((v = kv(s, "active_speed"))) {
            snprintf(p->speed, sizeof(p->speed), "%s", v);
            port_rate(p);
            if (p->rate_Gbps > 0)
                nt_ev_set(&p->ev_rate, d->cur, cur_line(d), line);
        } else if ((v = kv(s, "sm_lid"))) {
            p->sm_lid = strtol(v, NULL, 0);
        } else if ((v = kv(s, "link_layer"))) {
            word(p->layer, sizeof(p->layer), v);
        }
    }
    return 1; /* every line of an ibv_devinfo block (capability lists too) */
}

/* ---- ibstat --------------------------------------------------------------------------------- */

static int feed_ibstat(nt_doctor_t *d, nt_opstate_t *st, const char *host, const char *b,
                       const char *line)
{
    const char *s = skip_ws(b), *v;
    if (starts(b, "CA '")) {
        st->mode = OP_IBSTAT;
        const char *e = strchr(b + 4, '\'');
        snprintf(st->hca, sizeof(st->hca), "%.*s", (int)(e ? e - (b + 4) : 0), b + 4);
        st->port = -1;
        return 1;
    }
    if (st->mode != OP_IBSTAT)
        return 0;
    if (starts(s, "Port ") && isdigit((unsigned char)s[5]) && s[strlen(s) - 1] == ':') {
        port_new(d, st, host, st->hca, atoi(s + 5), line);
        return 1;
    }
    nt_opport_t *p = st->port >= 0 ? &d->op.ports[st->port] : NULL;
    if (p) {
        if ((v = kv(s, "State"))) {
            word(p->state, sizeof(p->state), v);
            nt_ev_set(&p->ev_state, d->cur, cur_line(d), line);
        } else if ((v = kv(s, "Physical state"))) {
            word(p->phys, sizeof(p->phys), v);
            nt_ev_set(&p->ev_phys, d->cur, cur_line(d), line);
        } else if ((v = kv(s, "Rate"))) {
            p->rate_Gbps = atof(v);
            nt_ev_set(&p->ev_rate, d->cur, cur_line(d), line);
        } else if ((v = kv(s, "SM lid"))) {
            p->sm_lid = strtol(v, NULL, 0);
        } else if ((v = kv(s, "Link layer"))) {
            word(p->layer, sizeof(p->layer), v);
        }
    }
    return 1;
}

/* ---- nvidia-smi topo -m ---------------------------------------------------------------------- */

static int topo_col_name(const char *t, size_t n)
{
    return (n > 3 && strncmp(t, "GPU", 3) == 0 && isdigit((unsigned char)t[3])) ||
           (n > 3 && strncmp(t, "NIC", 3) == 0 && isdigit((unsigned char)t[3])) ||
           (n > 3 && strncmp(t, "mlx", 3) == 0) || (n > 3 && strncmp(t, "bnxt", 4) == 0) ||
           (n > 3 && strncmp(t, "ionic", 5) == 0) || (n > 3 && strncmp(t, "efa", 3) == 0);
}

/* Splits on blanks into at most `max` tokens; returns their number. */
static int tokens(const char *s, const char **t, size_t *tl, int max)
{
    int n = 0;
    while (*s && n < max) {
        s = skip_ws(s);
        if (!*s)
            break;
        const char *e = s;
        while (*e && *e != ' ' && *e != '\t')
            e++;
        t[n] = s;
        tl[n++] = (size_t)(e - s);
        s = e;
    }
    return n;
}

static int feed_topo(nt_doctor_t *d, nt_opstate_t *st, const char *host, const char *b,
                     const char *line)
{
    const char *t[NT_TOPO_COLS + 8];
    size_t tl[NT_TOPO_COLS + 8];
    int nt = tokens(b, t, tl, NT_TOPO_COLS + 8);
    nt_op_t *o = &d->op;
    /* the header: GPU0 GPU1 ... NIC0 ... CPU Affinity ... */
    if (nt >= 2 && tl[0] == 4 && strncmp(t[0], "GPU0", 4) == 0 && (b[0] == ' ' || b[0] == '\t')) {
        nt_optopo_t *tp = grow((void **)&o->topos, &o->ntopos, &o->cap_topos, sizeof(*tp));
        if (!tp)
            return 1;
        tp->host = dup0(host);
        tp->input = d->cur;
        tp->header_line = cur_line(d);
        for (int i = 0; i < nt && tp->ncols < NT_TOPO_COLS && topo_col_name(t[i], tl[i]); i++)
            snprintf(tp->col[tp->ncols++], sizeof(tp->col[0]), "%.*s", (int)tl[i], t[i]);
        st->mode = OP_TOPO;
        st->topo = (long)(tp - o->topos);
        st->nic_legend = 0;
        return 1;
    }
    if (st->mode != OP_TOPO || st->topo < 0)
        return 0;
    nt_optopo_t *tp = &o->topos[st->topo];
    const char *s = skip_ws(b);
    if (starts(s, "NIC Legend:")) {
        st->nic_legend = 1;
        return 1;
    }
    if (st->nic_legend && starts(s, "NIC") && strchr(s, ':')) { /* "  NIC0: mlx5_0" */
        int k = atoi(s + 3);
        const char *v = skip_ws(strchr(s, ':') + 1);
        char name[24];
        snprintf(name, sizeof(name), "NIC%d", k);
        for (int c = 0; c < tp->ncols; c++)
            if (strcmp(tp->col[c], name) == 0)
                snprintf(tp->nicname[c], sizeof(tp->nicname[0]), "%s", v);
        return 1;
    }
    if (!tp->done && nt >= 1 && tp->nrows < NT_TOPO_COLS) {
        for (int c = 0; c < tp->ncols; c++) {
            if (strlen(tp->col[c]) != tl[0] || strncmp(tp->col[c], t[0], tl[0]) != 0)
                continue;
            int r = tp->nrows++;
            snprintf(tp->row[r], sizeof(tp->row[0]), "%s", tp->col[c]);
            for (int k = 0; k < tp->ncols && k + 1 < nt; k++)
                snprintf(tp->path[r][k], sizeof(tp->path[0][0]), "%.*s", (int)tl[k + 1], t[k + 1]);
            tp->line[r] = cur_line(d);
            tp->text[r] =
                dupn(line, strlen(line) > NT_EVIDENCE_TEXT ? NT_EVIDENCE_TEXT : strlen(line));
            return 1;
        }
    }
    if (tp->nrows > 0 && (!*s || starts(s, "Legend:")))
        tp->done = 1;
    /* the legend lines belong to the output too */
    return !*s || starts(s, "Legend:") || starts(s, "X    =") || (s[0] && strstr(s, " = ")) ||
           starts(s, "NV#");
}

/* ---- nvidia-smi nvlink -s ---------------------------------------------------------------------
 */

static int feed_nvlink(nt_doctor_t *d, nt_opstate_t *st, const char *host, const char *b,
                       const char *line)
{
    const char *s = skip_ws(b);
    nt_op_t *o = &d->op;
    if (starts(b, "GPU ") && isdigit((unsigned char)b[4]) && strstr(b, "(UUID:")) {
        nt_opnvl_t *n = grow((void **)&o->nvl, &o->nnvl, &o->cap_nvl, sizeof(*n));
        st->mode = OP_NVLINK;
        st->nvl = n ? (long)(n - o->nvl) : -1;
        if (n) {
            n->host = dup0(host);
            n->gpu = atoi(b + 4);
            nt_ev_set(&n->ev_gpu, d->cur, cur_line(d), line);
        }
        return 1;
    }
    if (st->mode != OP_NVLINK || !starts(s, "Link ") || !isdigit((unsigned char)s[5]))
        return 0;
    if (st->nvl >= 0) {
        nt_opnvl_t *n = &o->nvl[st->nvl];
        if (strstr(s, "<inactive>")) {
            if (!n->inactive)
                nt_ev_set(&n->ev_inactive, d->cur, cur_line(d), line);
            n->inactive++;
        } else if (strstr(s, "GB/s")) {
            n->active++;
        }
    }
    return 1;
}

/* ---- kernel log ---------------------------------------------------------------------------- */

/* The host of a journal line: "Dec 01 10:00:00 node01 kernel: ..." or ISO timestamps. */
static char *journal_host(const char *line)
{
    const char *k = strstr(line, " kernel: ");
    if (!k)
        return NULL;
    const char *e = k;
    const char *b = e;
    while (b > line && b[-1] != ' ')
        b--;
    if (b == e || b == line)
        return NULL;
    return dupn(b, (size_t)(e - b));
}

static int feed_kernel(nt_doctor_t *d, const char *host, const char *b, const char *line)
{
    nt_op_t *o = &d->op;
    const char *x = strstr(b, "NVRM: Xid (");
    if (x) { /* "NVRM: Xid (PCI:0000:3b:00): 79, pid=..., GPU has fallen off the bus." */
        char *jh = host ? NULL : journal_host(b);
        o->xids_total++;
        nt_opxid_t *e = grow((void **)&o->xids, &o->nxids, &o->cap_xids, sizeof(*e));
        if (e) {
            const char *p = x + 11;
            const char *q = strstr(p, "): ");
            if (starts(p, "PCI:"))
                p += 4;
            snprintf(e->pci, sizeof(e->pci), "%.*s", q ? (int)(q - p) : 0, p);
            e->xid = q ? atoi(q + 3) : -1;
            e->host = dup0(host ? host : jh);
            nt_ev_set(&e->ev, d->cur, cur_line(d), line);
        }
        free(jh);
        return 1;
    }
    const char *m = strstr(b, "mlx5_core ");
    if (m) {
        int down = strstr(m, "Link down") || strstr(m, "link down");
        int up = strstr(m, "Link up") || strstr(m, "link up");
        if (!down && !up)
            return 1; /* other mlx5 lines of the kernel log: read, no fact kept */
        /* "mlx5_core 0000:3b:00.0 ens1f0np0: Link down" / "mlx5_core 0000:3b:00.0: ... link down"
         */
        const char *p = m + 10;
        const char *e = strchr(p, ':');
        /* the PCI address holds colons: the device name ends at ": " */
        const char *ce = strstr(p, ": ");
        if (ce)
            e = ce;
        char dev[64];
        snprintf(dev, sizeof(dev), "%.*s", e ? (int)(e - p) : 0, p);
        char *jh = host ? NULL : journal_host(b);
        const char *h = host ? host : jh;
        nt_oplink_t *l = NULL;
        for (size_t i = 0; i < o->nlinks; i++)
            if (host_eq(o->links[i].host, h) && strcmp(o->links[i].dev, dev) == 0)
                l = &o->links[i];
        if (!l && (l = grow((void **)&o->links, &o->nlinks, &o->cap_links, sizeof(*l)))) {
            l->host = dup0(h);
            snprintf(l->dev, sizeof(l->dev), "%s", dev);
        }
        if (l) {
            if (down) {
                if (!l->downs)
                    nt_ev_set(&l->ev_down, d->cur, cur_line(d), line);
                l->downs++;
                l->last_down = 1;
            } else {
                if (!l->ups)
                    nt_ev_set(&l->ev_up, d->cur, cur_line(d), line);
                l->ups++;
                l->last_down = 0;
            }
        }
        free(jh);
        return 1;
    }
    return 0;
}

/* ---- per line ---------------------------------------------------------------------------- */

static int looks_xml(const char *s)
{
    s = skip_ws(s);
    return starts(s, "<?xml") || starts(s, "<!--") || (s[0] == '<' && isalpha((unsigned char)s[1]));
}

static void xml_append(nt_op_t *o, const char *line)
{
    size_t n = strlen(line);
    if (o->xml_len + n + 2 > XML_MAX)
        return;
    if (o->xml_len + n + 2 > o->xml_cap) {
        size_t nc = o->xml_cap ? o->xml_cap : 65536;
        while (nc < o->xml_len + n + 2)
            nc *= 2;
        char *b = realloc(o->xml_buf, nc);
        if (!b)
            return;
        o->xml_buf = b;
        o->xml_cap = nc;
    }
    memcpy(o->xml_buf + o->xml_len, line, n);
    o->xml_len += n;
    o->xml_buf[o->xml_len++] = '\n';
}

int nt_op_line(nt_doctor_t *d, const char *line, const char **body, const char **host)
{
    nt_op_t *o = &d->op;
    const char *b = line;
    const char *h = o->input_host;
    *body = line;
    *host = NULL;
    if (o->xml) {
        xml_append(o, line);
        o->op_lines++;
        return 1;
    }
    if (!o->seen_content && *skip_ws(line)) {
        o->seen_content = 1;
        if (looks_xml(line)) {
            o->xml = 1;
            xml_append(o, line);
            o->op_lines++;
            return 1;
        }
    }
    /* dshbak: "----------------" / "node01" / "----------------" */
    if (is_rule(line)) {
        if (o->dsh_state == 2) {
            free(o->block_host);
            o->block_host = o->dsh_pending;
            o->dsh_pending = NULL;
            o->dsh_state = 0;
        } else {
            o->dsh_state = 1;
        }
        return 1;
    }
    if (o->dsh_state == 1) {
        size_t n = strlen(line);
        int ok = n > 0 && n < 64;
        for (size_t i = 0; ok && i < n; i++)
            if (!(isalnum((unsigned char)line[i]) || strchr(".-_[],", line[i])))
                ok = 0;
        if (ok) {
            free(o->dsh_pending);
            o->dsh_pending = strdup(line);
            o->dsh_state = 2;
            return 1;
        }
        o->dsh_state = 0;
    } else if (o->dsh_state == 2) {
        o->dsh_state = 0;
    }
    if (o->block_host)
        h = o->block_host;
    /* pdsh / clush: "node01: text" on every line; decided on the first line that has one */
    size_t hp = host_prefix(line);
    if (o->pdsh < 0 && *skip_ws(line))
        o->pdsh = hp > 0;
    static char hostbuf[64];
    if (o->pdsh == 1 && hp) {
        snprintf(hostbuf, sizeof(hostbuf), "%.*s", (int)hp, line);
        h = hostbuf;
        b = line + hp + 2;
        *body = b;
        *host = hostbuf;
    }
    /* a shell prompt names the host: "root@node01:/# nvidia-smi topo -m" */
    const char *at = strchr(b, '@');
    if (!o->prompt_host && at && at > b &&
        (strstr(at, ":/") || strstr(at, ":~") || strstr(at, "]$") || strstr(at, "]#"))) {
        const char *e = at + 1;
        while (*e && (isalnum((unsigned char)*e) || *e == '.' || *e == '-' || *e == '_'))
            e++;
        if (e > at + 1 && (*e == ':' || *e == ' '))
            o->prompt_host = dupn(at + 1, (size_t)(e - at - 1));
    }
    if (!h)
        h = o->prompt_host;
    if (*skip_ws(b) == '#')
        return 0; /* a collector's comment (or nccl-tests' own '#' lines): never an operator fact */
    nt_opstate_t *st = state_of(d, h);
    if (!st)
        return 0;
    int used = feed_ibv(d, st, h, b, line) || feed_ibstat(d, st, h, b, line) ||
               feed_topo(d, st, h, b, line) || feed_nvlink(d, st, h, b, line) ||
               feed_kernel(d, h, b, line);
    if (!used && st->mode != OP_NONE && !*skip_ws(b))
        used = 1; /* blank lines inside a block */
    if (!used && st->mode != OP_NONE && (b[0] == '\t' || b[0] == ' ') && st->mode != OP_TOPO &&
        st->mode != OP_NVLINK)
        used = 1; /* indented lines of ibv_devinfo -vv / ibstat */
    if (used)
        o->op_lines++;
    return used;
}

static const char *nth_line(const char *buf, size_t len, long n, size_t *out_len)
{
    long k = 1;
    const char *p = buf, *end = buf + len;
    while (p < end && k < n) {
        const char *q = memchr(p, '\n', (size_t)(end - p));
        if (!q)
            return NULL;
        p = q + 1;
        k++;
    }
    const char *q = memchr(p, '\n', (size_t)(end - p));
    *out_len = q ? (size_t)(q - p) : (size_t)(end - p);
    return p;
}

int nt_op_end(nt_doctor_t *d, char *msg, size_t msglen, int *bad)
{
    nt_op_t *o = &d->op;
    *bad = 0;
    if (o->xml && o->xml_len) {
        nt_ncclxml_t *x = NULL;
        char err[512] = "";
        nt_status_t st = nt_ncclxml_read_memory(o->xml_buf, o->xml_len, d->inputs[d->cur].path, &x,
                                                err, sizeof(err));
        if (st != NT_OK) {
            snprintf(
                msg, msglen, "%s: %s", err[0] ? err : d->inputs[d->cur].path,
                "give an NCCL topology (NCCL_TOPO_DUMP_FILE) or graph (NCCL_GRAPH_DUMP_FILE) file");
            *bad = 1;
            return 1;
        }
        nt_opxml_t *e = grow((void **)&o->xmls, &o->nxmls, &o->cap_xmls, sizeof(*e));
        if (!e) {
            nt_ncclxml_free(x);
            return 1;
        }
        e->host = dup0(o->input_host);
        e->input = d->cur;
        e->xml = x;
        e->buf = dupn(o->xml_buf, o->xml_len);
        e->len = o->xml_len;
    }
    return o->op_lines > 0;
}

void nt_op_free(nt_doctor_t *d)
{
    nt_op_t *o = &d->op;
    for (size_t i = 0; i < o->nports; i++) {
        free(o->ports[i].host);
        nt_ev_free(&o->ports[i].ev);
        nt_ev_free(&o->ports[i].ev_state);
        nt_ev_free(&o->ports[i].ev_phys);
        nt_ev_free(&o->ports[i].ev_rate);
    }
    for (size_t i = 0; i < o->ntopos; i++) {
        free(o->topos[i].host);
        for (int r = 0; r < o->topos[i].nrows; r++)
            free(o->topos[i].text[r]);
    }
    for (size_t i = 0; i < o->nnvl; i++) {
        free(o->nvl[i].host);
        nt_ev_free(&o->nvl[i].ev_gpu);
        nt_ev_free(&o->nvl[i].ev_inactive);
    }
    for (size_t i = 0; i < o->nxids; i++) {
        free(o->xids[i].host);
        nt_ev_free(&o->xids[i].ev);
    }
    for (size_t i = 0; i < o->nlinks; i++) {
        free(o->links[i].host);
        nt_ev_free(&o->links[i].ev_down);
        nt_ev_free(&o->links[i].ev_up);
    }
    for (size_t i = 0; i < o->nxmls; i++) {
        free(o->xmls[i].host);
        nt_ncclxml_free(o->xmls[i].xml);
        free(o->xmls[i].buf);
    }
    for (size_t i = 0; i < o->nst; i++)
        free(o->st[i].host);
    free(o->ports);
    free(o->topos);
    free(o->nvl);
    free(o->xids);
    free(o->links);
    free(o->xmls);
    free(o->st);
    free(o->block_host);
    free(o->dsh_pending);
    free(o->input_host);
    free(o->prompt_host);
    free(o->xml_buf);
}

/* ---- diagnosis ------------------------------------------------------------------------------ */

#define f_detail nt_finding_detail
#define f_value nt_finding_value

static nt_finding_t *add(nt_doctor_t *d, const char *key, nt_severity_t sev, const char *host)
{
    nt_finding_t *f = NULL;
    int fresh = 1;
    for (size_t i = 0; i < d->nfindings; i++)
        if (strcmp(d->findings[i].kb->key, key) == 0)
            f = &d->findings[i], fresh = 0;
    if (!f)
        f = nt_finding_add(d, key);
    if (!f)
        return NULL;
    if (fresh || sev > f->severity)
        f->severity = sev;
    if (host)
        nt_map_put(&f->hosts, host, strlen(host));
    return f;
}

static const char *hname(const char *h)
{
    return h ? h : "unknown host";
}

static int is_down(const nt_opport_t *p)
{
    return p->state[0] && strcasecmp(p->state, "PORT_ACTIVE") != 0 &&
           strcasecmp(p->state, "Active") != 0;
}

static int is_disabled(const nt_opport_t *p)
{
    return strcasecmp(p->phys, "DISABLED") == 0;
}

/* Ports of the same node: same host, or the same input when the host is unknown. */
static int same_node(const nt_opport_t *a, const nt_opport_t *b)
{
    if (a->host || b->host)
        return host_eq(a->host, b->host);
    return a->input == b->input;
}

static void diagnose_ports(nt_doctor_t *d)
{
    nt_op_t *o = &d->op;
    for (size_t i = 0; i < o->nports; i++) {
        nt_opport_t *p = &o->ports[i];
        if (!is_down(p))
            continue;
        int dis = is_disabled(p);
        nt_finding_t *f = add(d, "port_down", dis ? NT_SEV_INFO : NT_SEV_WARN, p->host);
        if (!f)
            continue;
        nt_evlist_add_ev(&f->ev, &p->ev_state);
        nt_evlist_add_ev(&f->ev, &p->ev_phys);
        f_detail(f, "%s %s port %d: %s%s%s%s.", hname(p->host), p->hca, p->port, p->state,
                 p->phys[0] ? ", physical state " : "", p->phys,
                 dis ? " (disabled: administratively or by the subnet manager; info)"
                 : strcasecmp(p->phys, "POLLING") == 0
                     ? " (no link partner: cable, transceiver or switch port)"
                     : "");
    }
    /* rates and subnet managers of the ACTIVE ports of each node */
    for (size_t i = 0; i < o->nports; i++) {
        nt_opport_t *p = &o->ports[i];
        if (is_down(p) || !p->state[0])
            continue;
        int first = 1;
        for (size_t j = 0; j < i; j++)
            if (same_node(&o->ports[j], p) && !is_down(&o->ports[j]) && o->ports[j].state[0])
                first = 0;
        if (!first)
            continue;
        double lo = -1, hi = -1;
        long sm0 = -1;
        int smdiff = 0, n = 0;
        for (size_t j = i; j < o->nports; j++) {
            nt_opport_t *q = &o->ports[j];
            if (!same_node(q, p) || is_down(q) || !q->state[0] || strcmp(q->layer, p->layer) != 0)
                continue;
            n++;
            if (q->rate_Gbps > 0) {
                if (lo < 0 || q->rate_Gbps < lo)
                    lo = q->rate_Gbps;
                if (q->rate_Gbps > hi)
                    hi = q->rate_Gbps;
            }
            if (q->sm_lid > 0 && strcasecmp(q->layer, "Ethernet") != 0) {
                if (sm0 < 0)
                    sm0 = q->sm_lid;
                else if (q->sm_lid != sm0)
                    smdiff = 1;
            }
        }
        if (n > 1 && lo > 0 && hi > lo) {
            nt_finding_t *f = add(d, "port_rate_differs", NT_SEV_WARN, p->host);
            for (size_t j = i; f && j < o->nports; j++) {
                nt_opport_t *q = &o->ports[j];
                if (same_node(q, p) && !is_down(q) && q->rate_Gbps > 0 &&
                    strcmp(q->layer, p->layer) == 0) {
                    nt_evlist_add_ev(&f->ev, q->ev_rate.text ? &q->ev_rate : &q->ev_state);
                    f_detail(f, "%s %s port %d: %g Gb/s.", hname(q->host), q->hca, q->port,
                             q->rate_Gbps);
                }
            }
            if (f) {
                f_value(f, "slowest_Gbps", lo);
                f_value(f, "fastest_Gbps", hi);
            }
        }
        if (smdiff) {
            nt_finding_t *f = add(d, "sm_differs", NT_SEV_INFO, p->host);
            for (size_t j = i; f && j < o->nports; j++) {
                nt_opport_t *q = &o->ports[j];
                if (same_node(q, p) && !is_down(q) && q->sm_lid > 0) {
                    nt_evlist_add_ev(&f->ev, &q->ev_state);
                    f_detail(f, "%s %s port %d: SM LID %ld.", hname(q->host), q->hca, q->port,
                             q->sm_lid);
                }
            }
        }
    }
}

/* nvidia-smi's path types, nearest first; -1 for anything else. */
static int path_rank(const char *p)
{
    static const char *const order[] = {"X", "PIX", "PXB", "PHB", "NODE", "SYS"};
    if (p[0] == 'N' && p[1] == 'V' && isdigit((unsigned char)p[2]))
        return 0;
    for (int i = 0; i < 6; i++)
        if (strcmp(p, order[i]) == 0)
            return i;
    return -1;
}

static int col_is_gpu(const char *c)
{
    return strncmp(c, "GPU", 3) == 0;
}

static const char *nic_label(const nt_optopo_t *tp, int c)
{
    return tp->nicname[c][0] ? tp->nicname[c] : tp->col[c];
}

static void diagnose_topo(nt_doctor_t *d)
{
    nt_op_t *o = &d->op;
    for (size_t i = 0; i < o->ntopos; i++) {
        nt_optopo_t *tp = &o->topos[i];
        int ngpu = 0, nnic = 0;
        for (int c = 0; c < tp->ncols; c++)
            col_is_gpu(tp->col[c]) ? ngpu++ : nnic++;
        if (!nnic)
            continue;
        int nic_near[NT_TOPO_COLS] = {0};
        for (int r = 0; r < tp->nrows; r++) {
            if (!col_is_gpu(tp->row[r]))
                continue;
            int best = 99, bc = -1;
            for (int c = 0; c < tp->ncols; c++) {
                if (col_is_gpu(tp->col[c]))
                    continue;
                int k = path_rank(tp->path[r][c]);
                if (k >= 0 && k < best)
                    best = k, bc = c;
            }
            for (int c = 0; c < tp->ncols; c++)
                if (!col_is_gpu(tp->col[c]) && path_rank(tp->path[r][c]) == best && best < 5)
                    nic_near[c]++;
            if (best == 5) {
                nt_finding_t *f = add(d, "gpu_nic_far", NT_SEV_WARN, tp->host);
                if (f) {
                    nt_evlist_add(&f->ev, tp->input, tp->line[r], tp->text[r]);
                    f_detail(f, "%s %s: nearest NIC %s is SYS (across the CPU interconnect).",
                             hname(tp->host), tp->row[r], bc >= 0 ? nic_label(tp, bc) : "?");
                }
            }
        }
        if (ngpu > nnic) {
            nt_finding_t *f = add(d, "nic_shared", NT_SEV_INFO, tp->host);
            if (f) {
                for (int r = 0; r < tp->nrows; r++)
                    if (col_is_gpu(tp->row[r]))
                        nt_evlist_add(&f->ev, tp->input, tp->line[r], tp->text[r]);
                f_detail(f,
                         "%s: %d GPUs and %d NIC(s) in nvidia-smi topo -m: GPUs share NICs by the "
                         "hardware's design.",
                         hname(tp->host), ngpu, nnic);
                f_value(f, "gpus_per_node", ngpu);
                f_value(f, "nics_per_node", nnic);
            }
        }
        for (int r = 0; r < tp->nrows; r++) {
            if (col_is_gpu(tp->row[r]))
                continue;
            int c0 = -1;
            for (int c = 0; c < tp->ncols; c++)
                if (strcmp(tp->col[c], tp->row[r]) == 0)
                    c0 = c;
            if (c0 < 0 || nic_near[c0])
                continue;
            int best = 99;
            for (int c = 0; c < tp->ncols; c++)
                if (col_is_gpu(tp->col[c])) {
                    int k = path_rank(tp->path[r][c]);
                    if (k >= 0 && k < best)
                        best = k;
                }
            if (best < 5)
                continue;
            nt_finding_t *f = add(d, "nic_no_gpu", NT_SEV_INFO, tp->host);
            if (f) {
                nt_evlist_add(&f->ev, tp->input, tp->line[r], tp->text[r]);
                f_detail(f, "%s %s: no GPU nearer than SYS.", hname(tp->host), nic_label(tp, c0));
            }
        }
    }
}

static void diagnose_nvlink(nt_doctor_t *d)
{
    nt_op_t *o = &d->op;
    for (size_t i = 0; i < o->nnvl; i++) {
        nt_opnvl_t *n = &o->nvl[i];
        int max = 0;
        for (size_t j = 0; j < o->nnvl; j++)
            if (host_eq(o->nvl[j].host, n->host) && o->nvl[j].active > max)
                max = o->nvl[j].active;
        if (max == 0 || (n->active >= max && !n->inactive))
            continue;
        nt_finding_t *f = add(d, "nvlink_inactive", NT_SEV_WARN, n->host);
        if (!f)
            continue;
        nt_evlist_add_ev(&f->ev, &n->ev_gpu);
        nt_evlist_add_ev(&f->ev, &n->ev_inactive);
        f_detail(f,
                 "%s GPU %d: %d NVLink(s) active, %d inactive (other GPUs of the node: %d active).",
                 hname(n->host), n->gpu, n->active, n->inactive, max);
    }
}

static void diagnose_kernel(nt_doctor_t *d)
{
    nt_op_t *o = &d->op;
    for (size_t i = 0; i < o->nxids; i++) {
        nt_opxid_t *x = &o->xids[i];
        const nt_kb_xid_t *k = nt_kb_xid(d->kb, x->xid);
        nt_finding_t *f = add(d, "gpu_xid", k ? k->severity : NT_SEV_WARN, x->host);
        if (!f)
            continue;
        nt_evlist_add_ev(&f->ev, &x->ev);
        int seen = 0;
        for (size_t j = 0; j < i; j++)
            if (o->xids[j].xid == x->xid && host_eq(o->xids[j].host, x->host) &&
                strcmp(o->xids[j].pci, x->pci) == 0)
                seen = 1;
        if (!seen)
            f_detail(f, "%s GPU %s: Xid %d (%s).", hname(x->host), x->pci, x->xid,
                     k ? k->meaning : "not in the knowledge base: see NVIDIA's Xid catalog");
    }
    for (size_t i = 0; i < o->nlinks; i++) {
        nt_oplink_t *l = &o->links[i];
        if (!l->downs)
            continue;
        nt_finding_t *f = add(d, "nic_link_down", NT_SEV_WARN, l->host);
        if (!f)
            continue;
        nt_evlist_add_ev(&f->ev, &l->ev_down);
        nt_evlist_add_ev(&f->ev, &l->ev_up);
        f_detail(f, "%s %s: link down %d time(s), up %d time(s); %s at the end of the log.",
                 hname(l->host), l->dev, l->downs, l->ups, l->last_down ? "down" : "up");
    }
}

static void xml_ev(nt_finding_t *f, const nt_opxml_t *e, long line)
{
    size_t n = 0;
    const char *t = nth_line(e->buf, e->len, line, &n);
    char buf[NT_EVIDENCE_TEXT + 1];
    snprintf(buf, sizeof(buf), "%.*s", t ? (int)(n > NT_EVIDENCE_TEXT ? NT_EVIDENCE_TEXT : n) : 0,
             t ? t : "");
    nt_evlist_add(&f->ev, e->input, (unsigned long)line, buf);
}

static void diagnose_xml(nt_doctor_t *d)
{
    nt_op_t *o = &d->op;
    for (size_t i = 0; i < o->nxmls; i++) {
        nt_opxml_t *e = &o->xmls[i];
        nt_ncclxml_t *x = e->xml;
        if (x->kind != NT_NCCLXML_SYSTEM)
            continue;
        int ngpu = 0, nnic = 0;
        for (size_t a = 0; a < x->ndevs; a++) {
            if (x->devs[a].kind == NT_XDEV_GPU)
                ngpu++;
            else
                nnic++;
        }
        if (!nnic || !ngpu)
            continue;
        static const char *const order[] = {"PIX", "PXB", "PHB", "SYS"};
        for (size_t a = 0; a < x->ndevs; a++) {
            if (x->devs[a].kind != NT_XDEV_GPU)
                continue;
            int best = 9;
            size_t bn = 0;
            for (size_t b = 0; b < x->ndevs; b++) {
                if (x->devs[b].kind != NT_XDEV_NIC)
                    continue;
                const char *p = nt_ncclxml_path(x, a, b);
                for (int k = 0; k < 4; k++)
                    if (strcmp(p, order[k]) == 0 && k < best)
                        best = k, bn = b;
            }
            if (best != 3)
                continue;
            int rdma = x->devs[bn].rdma != 0;
            nt_finding_t *f = add(d, "gpu_nic_far", rdma ? NT_SEV_WARN : NT_SEV_INFO, e->host);
            if (!f)
                continue;
            xml_ev(f, e, x->devs[a].line);
            xml_ev(f, e, x->devs[bn].line);
            f_detail(f, "%s GPU %s (CPU %d): nearest NIC %s%s%s is on CPU %d (SYS)%s.",
                     hname(e->host), x->devs[a].busid, x->devs[a].numaid,
                     x->devs[bn].name[0] ? x->devs[bn].name : x->devs[bn].busid, "", "",
                     x->devs[bn].numaid,
                     rdma ? ""
                          : "; an Ethernet NIC without RDMA: GPUDirect RDMA does not apply (info)");
        }
        if (ngpu > nnic) {
            nt_finding_t *f = add(d, "nic_shared", NT_SEV_INFO, e->host);
            if (f) {
                for (size_t b = 0; b < x->ndevs; b++)
                    if (x->devs[b].kind == NT_XDEV_NIC)
                        xml_ev(f, e, x->devs[b].line);
                f_detail(f,
                         "%s: %d GPUs and %d NIC(s) in the topology file: GPUs share NICs by the "
                         "hardware's design.",
                         hname(e->host), ngpu, nnic);
                f_value(f, "gpus_per_node", ngpu);
                f_value(f, "nics_per_node", nnic);
            }
        }
        for (size_t b = 0; b < x->ndevs; b++) {
            if (x->devs[b].kind != NT_XDEV_NIC)
                continue;
            int near = 0;
            for (size_t a = 0; a < x->ndevs; a++)
                if (x->devs[a].kind == NT_XDEV_GPU && strcmp(nt_ncclxml_path(x, a, b), "SYS") != 0)
                    near = 1;
            if (near)
                continue;
            nt_finding_t *f = add(d, "nic_no_gpu", NT_SEV_INFO, e->host);
            if (f) {
                xml_ev(f, e, x->devs[b].line);
                f_detail(f, "%s NIC %s (CPU %d): no GPU on its CPU.", hname(e->host),
                         x->devs[b].name[0] ? x->devs[b].name : x->devs[b].busid,
                         x->devs[b].numaid);
            }
        }
    }
}

void nt_op_diagnose(nt_doctor_t *d)
{
    diagnose_ports(d);
    diagnose_topo(d);
    diagnose_nvlink(d);
    diagnose_kernel(d);
    diagnose_xml(d);
}

/* ---- output ------------------------------------------------------------------------------- */

static cJSON *ev_json(const nt_doctor_t *d, const nt_ev_t *e)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !e->text)
        return o;
    cJSON_AddStringToObject(o, "file", d->inputs[e->input].path);
    cJSON_AddNumberToObject(o, "line", (double)e->line);
    cJSON_AddStringToObject(o, "text", e->text);
    return o;
}

static void add_host(cJSON *o, const char *h)
{
    if (h)
        cJSON_AddStringToObject(o, "host", h);
    else
        cJSON_AddStringToObject(o, "host", "unknown");
}

cJSON *nt_op_json(const nt_doctor_t *d)
{
    const nt_op_t *o = &d->op;
    cJSON *j = cJSON_CreateObject();
    if (!j)
        return NULL;
    cJSON *ports = cJSON_AddArrayToObject(j, "ports");
    for (size_t i = 0; ports && i < o->nports; i++) {
        const nt_opport_t *p = &o->ports[i];
        cJSON *e = cJSON_CreateObject();
        if (!e)
            break;
        add_host(e, p->host);
        cJSON_AddStringToObject(e, "hca", p->hca);
        cJSON_AddNumberToObject(e, "port", p->port);
        cJSON_AddStringToObject(e, "state", p->state[0] ? p->state : "unknown");
        cJSON_AddStringToObject(e, "phys_state", p->phys[0] ? p->phys : "unknown");
        if (p->rate_Gbps > 0)
            cJSON_AddNumberToObject(e, "rate_Gbps", p->rate_Gbps);
        else
            cJSON_AddStringToObject(e, "rate_Gbps", "unknown");
        cJSON_AddStringToObject(e, "link_layer", p->layer[0] ? p->layer : "unknown");
        if (p->sm_lid >= 0)
            cJSON_AddNumberToObject(e, "sm_lid", (double)p->sm_lid);
        cJSON_AddItemToObject(e, "evidence", ev_json(d, p->ev_state.text ? &p->ev_state : &p->ev));
        cJSON_AddItemToArray(ports, e);
    }
    cJSON *topos = cJSON_AddArrayToObject(j, "topologies");
    for (size_t i = 0; topos && i < o->ntopos; i++) {
        const nt_optopo_t *tp = &o->topos[i];
        cJSON *e = cJSON_CreateObject();
        if (!e)
            break;
        int ngpu = 0, nnic = 0;
        for (int c = 0; c < tp->ncols; c++)
            col_is_gpu(tp->col[c]) ? ngpu++ : nnic++;
        add_host(e, tp->host);
        cJSON_AddStringToObject(e, "source", "nvidia-smi topo -m");
        cJSON_AddNumberToObject(e, "gpus", ngpu);
        cJSON_AddNumberToObject(e, "nics", nnic);
        cJSON *ev = cJSON_CreateObject();
        cJSON_AddStringToObject(ev, "file", d->inputs[tp->input].path);
        cJSON_AddNumberToObject(ev, "line", (double)tp->header_line);
        cJSON_AddStringToObject(ev, "text", "nvidia-smi topo -m header");
        cJSON_AddItemToObject(e, "evidence", ev);
        cJSON_AddItemToArray(topos, e);
    }
    for (size_t i = 0; topos && i < o->nxmls; i++) {
        const nt_opxml_t *x = &o->xmls[i];
        const nt_ncclxml_t *t = x->xml;
        cJSON *e = cJSON_CreateObject();
        if (!e)
            break;
        int ngpu = 0, nnic = 0;
        for (size_t k = 0; k < t->ndevs; k++)
            t->devs[k].kind == NT_XDEV_GPU ? ngpu++ : nnic++;
        add_host(e, x->host);
        cJSON_AddStringToObject(
            e, "source", t->kind == NT_NCCLXML_SYSTEM ? "NCCL topology XML" : "NCCL graph XML");
        if (t->kind == NT_NCCLXML_SYSTEM) {
            cJSON_AddNumberToObject(e, "cpus", t->ncpus);
            cJSON_AddNumberToObject(e, "gpus", ngpu);
            cJSON_AddNumberToObject(e, "nics", nnic);
        } else {
            cJSON_AddNumberToObject(e, "graphs", (double)t->ngraphs);
        }
        cJSON *ev = cJSON_CreateObject();
        cJSON_AddStringToObject(ev, "file", d->inputs[x->input].path);
        cJSON_AddNumberToObject(ev, "line", 1);
        cJSON_AddStringToObject(ev, "text", t->kind == NT_NCCLXML_SYSTEM ? "<system>" : "<graphs>");
        cJSON_AddItemToObject(e, "evidence", ev);
        cJSON_AddItemToArray(topos, e);
    }
    cJSON_AddNumberToObject(j, "xid_events", (double)o->xids_total);
    return j;
}

/* InfiniBand generation of a lane speed in Gb/s (IBTA: SDR 2.5 ... XDR 200), or "". */
static const char *ib_gen(const char *speed)
{
    static const struct {
        double g;
        const char *n;
    } t[] = {{2.5, "SDR"}, {5, "DDR"},  {10, "QDR"},  {14, "FDR"},
             {25, "EDR"},  {50, "HDR"}, {100, "NDR"}, {200, "XDR"}};
    double v = atof(speed);
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (fabs(v - t[i].g) < 0.01 * t[i].g)
            return t[i].n;
    return "";
}

void nt_op_text(const nt_doctor_t *d, FILE *out)
{
    const nt_op_t *o = &d->op;
    if (!o->nports && !o->ntopos && !o->nxmls && !o->nnvl && !o->xids_total && !o->nlinks)
        return;
    fprintf(out, "  operator files:\n");
    for (size_t i = 0; i < o->nports; i++) {
        const nt_opport_t *p = &o->ports[i];
        char rate[48] = "rate unknown";
        const char *gen = strcasecmp(p->layer, "Ethernet") != 0 ? ib_gen(p->speed) : "";
        if (p->rate_Gbps > 0)
            snprintf(rate, sizeof(rate), "%s%s%s%s%g Gb/s", p->width, gen[0] ? " " : "", gen,
                     p->width[0] ? " = " : "", p->rate_Gbps);
        fprintf(out, "    port %s %s/%d: %s%s%s, %s, %s, SM LID %s%ld\n", hname(p->host), p->hca,
                p->port, p->state[0] ? p->state : "state unknown", p->phys[0] ? " " : "", p->phys,
                rate, p->layer[0] ? p->layer : "link layer unknown",
                p->sm_lid >= 0 ? "" : "unknown ", p->sm_lid >= 0 ? p->sm_lid : 0L);
    }
    for (size_t i = 0; i < o->ntopos; i++) {
        const nt_optopo_t *tp = &o->topos[i];
        int ngpu = 0, nnic = 0;
        for (int c = 0; c < tp->ncols; c++)
            col_is_gpu(tp->col[c]) ? ngpu++ : nnic++;
        fprintf(out, "    nvidia-smi topo -m (%s): %d GPU(s), %d NIC(s)\n", hname(tp->host), ngpu,
                nnic);
    }
    for (size_t i = 0; i < o->nxmls; i++) {
        const nt_ncclxml_t *t = o->xmls[i].xml;
        int ngpu = 0, nnic = 0;
        for (size_t k = 0; k < t->ndevs; k++)
            t->devs[k].kind == NT_XDEV_GPU ? ngpu++ : nnic++;
        if (t->kind == NT_NCCLXML_SYSTEM)
            fprintf(out, "    NCCL topology (%s): %d CPU(s), %d GPU(s), %d NIC(s)\n",
                    d->inputs[o->xmls[i].input].path, t->ncpus, ngpu, nnic);
        else
            fprintf(
                out,
                "    NCCL graph file (%s): %zu graph(s); a graph file has no hardware to judge\n",
                d->inputs[o->xmls[i].input].path, t->ngraphs);
    }
    if (o->nnvl)
        fprintf(out, "    nvidia-smi nvlink -s: %zu GPU(s)\n", o->nnvl);
    if (o->xids_total)
        fprintf(out, "    kernel log: %lu NVIDIA Xid line(s)\n", o->xids_total);
    if (o->nlinks)
        fprintf(out, "    kernel log: %zu mlx5 device(s) with link events\n", o->nlinks);
}
