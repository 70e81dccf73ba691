/* The files operators collect and paste into tickets, detected by their content: nvidia-smi
 * topo -m, nvidia-smi nvlink -s, ibv_devinfo (plain, -v, -vv), ibstat, NCCL topology and graph XML
 * (through lib/ncclxml.c), and kernel log lines (dmesg, journalctl: NVIDIA Xid, mlx5 link
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
#include "nettune/ibtopo.h"
#include "nettune/ncclxml.h"
#include "nettune/nodecheck.h"

enum { OP_NONE = 0, OP_IBV, OP_IBSTAT, OP_TOPO, OP_NVLINK, OP_FM };

#define XML_MAX (64u << 20)

static char *nt_dupn(const char *s, size_t n)
{
    char *r = malloc(n + 1);
    if (r) {
        memcpy(r, s, n);
        r[n] = '\0';
    }
    return r;
}

static char *nt_dup0(const char *s)
{
    return s ? strdup(s) : NULL;
}

static int nt_starts(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static const char *nt_skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* Grows an array of `size`-byte items to hold one more; NULL at NT_OP_MAX or out of memory. */
static void *nt_read_operator_grow(void **arr, size_t *n, size_t *cap, size_t size)
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
    o->input_host = nt_dup0(host);
    o->xml = 0;
    o->xml_len = 0;
    o->ibt_len = 0;
    o->seen_content = 0;
    o->op_lines = 0;
}

static nt_opstate_t *nt_state_of(nt_doctor_t *d, const char *host)
{
    nt_op_t *o = &d->op;
    for (size_t i = 0; i < o->nst; i++)
        if (nt_host_eq(o->st[i].host, host))
            return &o->st[i];
    nt_opstate_t *s = nt_read_operator_grow((void **)&o->st, &o->nst, &o->cap_st, sizeof(*s));
    if (!s)
        return NULL;
    s->host = nt_dup0(host);
    s->port = s->topo = s->nvl = -1;
    return s;
}

static unsigned long nt_cur_line(const nt_doctor_t *d)
{
    return d->inputs[d->cur].lines;
}

static int nt_is_rule(const char *s)
{
    size_t n = 0;
    while (s[n] == '-')
        n++;
    return n >= 8 && s[n] == '\0';
}

/* ---- ibv_devinfo ----------------------------------------------------------------------------- */

static nt_opport_t *nt_port_new(nt_doctor_t *d, nt_opstate_t *st, const char *host, const char *hca,
                             int port, const char *line)
{
    nt_op_t *o = &d->op;
    nt_opport_t *p =
        nt_read_operator_grow((void **)&o->ports, &o->nports, &o->cap_ports, sizeof(*p));
    if (!p) {
        st->port = -1;
        return NULL;
    }
    p->host = nt_dup0(host);
    p->input = d->cur;
    snprintf(p->hca, sizeof(p->hca), "%s", hca);
    p->port = port;
    p->rate_Gbps = -1;
    p->sm_lid = -1;
    nt_ev_set(&p->ev, d->cur, nt_cur_line(d), line);
    st->port = (long)(p - o->ports);
    return p;
}

/* "4X" -> 4 */
static int nt_width_lanes(const char *w)
{
    return atoi(w);
}

static void nt_read_operator_port_rate(nt_opport_t *p)
{
    int lanes = nt_width_lanes(p->width);
    double sp = atof(p->speed); /* "50.0 Gbps (64)" */
    if (lanes > 0 && sp > 0 && strstr(p->speed, "Gbps"))
        p->rate_Gbps = lanes * sp;
}

/* The value after "key:" with tabs: "state:\t\t\tPORT_ACTIVE (4)" -> "PORT_ACTIVE (4)". */
static const char *nt_kv(const char *s, const char *key)
{
    size_t n = strlen(key);
    if (strncmp(s, key, n) != 0 || s[n] != ':')
        return NULL;
    return nt_skip_ws(s + n + 1);
}

static void nt_word(char *dst, size_t len, const char *v)
{
    size_t n = 0;
    while (v[n] && v[n] != ' ' && v[n] != '\t' && v[n] != '(')
        n++;
    snprintf(dst, len, "%.*s", (int)n, v);
}

static int nt_feed_ibv(nt_doctor_t *d, nt_opstate_t *st, const char *host, const char *b,
                    const char *line)
{
    const char *s = nt_skip_ws(b), *v;
    if ((v = nt_kv(s, "hca_id"))) {
        st->mode = OP_IBV;
        nt_word(st->hca, sizeof(st->hca), v);
        st->port = -1;
        return 1;
    }
    if (st->mode != OP_IBV)
        return 0;
    if ((v = nt_kv(s, "port")) && isdigit((unsigned char)*v)) {
        nt_port_new(d, st, host, st->hca, atoi(v), line);
        return 1;
    }
    nt_opport_t *p = st->port >= 0 ? &d->op.ports[st->port] : NULL;
    if (p) {
        if ((v = nt_kv(s, "state"))) {
            nt_word(p->state, sizeof(p->state), v);
            nt_ev_set(&p->ev_state, d->cur, nt_cur_line(d), line);
        } else if ((v = nt_kv(s, "phys_state"))) {
            nt_word(p->phys, sizeof(p->phys), v);
            nt_ev_set(&p->ev_phys, d->cur, nt_cur_line(d), line);
        } else if ((v = nt_kv(s, "active_width"))) {
            nt_word(p->width, sizeof(p->width), v);
            nt_read_operator_port_rate(p);
        } else if ((v = nt_kv(s, "active_speed"))) {
            snprintf(p->speed, sizeof(p->speed), "%s", v);
            nt_read_operator_port_rate(p);
            if (p->rate_Gbps > 0)
                nt_ev_set(&p->ev_rate, d->cur, nt_cur_line(d), line);
        } else if ((v = nt_kv(s, "sm_lid"))) {
            p->sm_lid = strtol(v, NULL, 0);
        } else if ((v = nt_kv(s, "link_layer"))) {
            nt_word(p->layer, sizeof(p->layer), v);
        }
    }
    return 1; /* every line of an ibv_devinfo block (capability lists too) */
}

/* ---- ibstat --------------------------------------------------------------------------------- */

static int nt_feed_ibstat(nt_doctor_t *d, nt_opstate_t *st, const char *host, const char *b,
                       const char *line)
{
    const char *s = nt_skip_ws(b), *v;
    if (nt_starts(b, "CA '")) {
        st->mode = OP_IBSTAT;
        const char *e = strchr(b + 4, '\'');
        snprintf(st->hca, sizeof(st->hca), "%.*s", (int)(e ? e - (b + 4) : 0), b + 4);
        st->port = -1;
        return 1;
    }
    if (st->mode != OP_IBSTAT)
        return 0;
    if (nt_starts(s, "Port ") && isdigit((unsigned char)s[5]) && s[strlen(s) - 1] == ':') {
        nt_port_new(d, st, host, st->hca, atoi(s + 5), line);
        return 1;
    }
    nt_opport_t *p = st->port >= 0 ? &d->op.ports[st->port] : NULL;
    if (p) {
        if ((v = nt_kv(s, "State"))) {
            nt_word(p->state, sizeof(p->state), v);
            nt_ev_set(&p->ev_state, d->cur, nt_cur_line(d), line);
        } else if ((v = nt_kv(s, "Physical state"))) {
            nt_word(p->phys, sizeof(p->phys), v);
            nt_ev_set(&p->ev_phys, d->cur, nt_cur_line(d), line);
        } else if ((v = nt_kv(s, "Rate"))) {
            p->rate_Gbps = atof(v);
            nt_ev_set(&p->ev_rate, d->cur, nt_cur_line(d), line);
        } else if ((v = nt_kv(s, "SM lid"))) {
            p->sm_lid = strtol(v, NULL, 0);
        } else if ((v = nt_kv(s, "Link layer"))) {
            nt_word(p->layer, sizeof(p->layer), v);
        }
    }
    return 1;
}

/* ---- nvidia-smi topo -m ---------------------------------------------------------------------- */

static int nt_topo_col_name(const char *t, size_t n)
{
    return (n > 3 && strncmp(t, "GPU", 3) == 0 && isdigit((unsigned char)t[3])) ||
           (n > 3 && strncmp(t, "NIC", 3) == 0 && isdigit((unsigned char)t[3])) ||
           (n > 3 && strncmp(t, "mlx", 3) == 0) || (n > 3 && strncmp(t, "bnxt", 4) == 0) ||
           (n > 3 && strncmp(t, "ionic", 5) == 0) || (n > 3 && strncmp(t, "efa", 3) == 0);
}

/* Splits on blanks into at most `max` tokens; returns their number. */
static int nt_tokens(const char *s, const char **t, size_t *tl, int max)
{
    int n = 0;
    while (*s && n < max) {
        s = nt_skip_ws(s);
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

static int nt_feed_topo(nt_doctor_t *d, nt_opstate_t *st, const char *host, const char *b,
                     const char *line)
{
    const char *t[NT_TOPO_COLS + 8];
    size_t tl[NT_TOPO_COLS + 8];
    int nt = nt_tokens(b, t, tl, NT_TOPO_COLS + 8);
    nt_op_t *o = &d->op;
    /* the header: GPU0 GPU1 ... NIC0 ... CPU Affinity ... */
    if (nt >= 2 && tl[0] == 4 && strncmp(t[0], "GPU0", 4) == 0 && (b[0] == ' ' || b[0] == '\t')) {
        nt_optopo_t *tp =
            nt_read_operator_grow((void **)&o->topos, &o->ntopos, &o->cap_topos, sizeof(*tp));
        if (!tp)
            return 1;
        tp->host = nt_dup0(host);
        tp->input = d->cur;
        tp->header_line = nt_cur_line(d);
        for (int i = 0; i < nt && tp->ncols < NT_TOPO_COLS && nt_topo_col_name(t[i], tl[i]); i++)
            snprintf(tp->col[tp->ncols++], sizeof(tp->col[0]), "%.*s", (int)tl[i], t[i]);
        st->mode = OP_TOPO;
        st->topo = (long)(tp - o->topos);
        st->nic_legend = 0;
        return 1;
    }
    if (st->mode != OP_TOPO || st->topo < 0)
        return 0;
    nt_optopo_t *tp = &o->topos[st->topo];
    const char *s = nt_skip_ws(b);
    if (nt_starts(s, "NIC Legend:")) {
        st->nic_legend = 1;
        return 1;
    }
    if (st->nic_legend && nt_starts(s, "NIC") && strchr(s, ':')) { /* "  NIC0: mlx5_0" */
        int k = atoi(s + 3);
        const char *v = nt_skip_ws(strchr(s, ':') + 1);
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
            tp->line[r] = nt_cur_line(d);
            tp->text[r] =
                nt_dupn(line, strlen(line) > NT_EVIDENCE_TEXT ? NT_EVIDENCE_TEXT : strlen(line));
            return 1;
        }
    }
    if (tp->nrows > 0 && (!*s || nt_starts(s, "Legend:")))
        tp->done = 1;
    /* the legend lines belong to the output too */
    return !*s || nt_starts(s, "Legend:") || nt_starts(s, "X    =") || (s[0] && strstr(s, " = ")) ||
           nt_starts(s, "NV#");
}

/* ---- nvidia-smi nvlink -s ---------------------------------------------------------------------
 */

static int nt_feed_nvlink(nt_doctor_t *d, nt_opstate_t *st, const char *host, const char *b,
                       const char *line)
{
    const char *s = nt_skip_ws(b);
    nt_op_t *o = &d->op;
    if (nt_starts(b, "GPU ") && isdigit((unsigned char)b[4]) && strstr(b, "(UUID:")) {
        nt_opnvl_t *n = nt_read_operator_grow((void **)&o->nvl, &o->nnvl, &o->cap_nvl, sizeof(*n));
        st->mode = OP_NVLINK;
        st->nvl = n ? (long)(n - o->nvl) : -1;
        if (n) {
            n->host = nt_dup0(host);
            n->gpu = atoi(b + 4);
            nt_ev_set(&n->ev_gpu, d->cur, nt_cur_line(d), line);
        }
        return 1;
    }
    if (st->mode != OP_NVLINK || !nt_starts(s, "Link ") || !isdigit((unsigned char)s[5]))
        return 0;
    if (st->nvl >= 0) {
        nt_opnvl_t *n = &o->nvl[st->nvl];
        if (strstr(s, "<inactive>")) {
            if (!n->inactive)
                nt_ev_set(&n->ev_inactive, d->cur, nt_cur_line(d), line);
            n->inactive++;
        } else if (strstr(s, "GB/s")) {
            n->active++;
        }
    }
    return 1;
}

/* ---- systemctl status nvidia-fabricmanager ------------------------------------------------- */

/* "● nvidia-fabricmanager.service - NVIDIA fabric manager service" opens the unit's block (the
 * bullet is systemd's state mark, one of several characters, so only the unit name is looked
 * for at the line's start); its "Active: failed (Result: exit-code) since ..." line is the state.
 * The other lines of the block (Loaded:, Process:, Main PID:, CGroup:) are read, not kept. */
static int nt_feed_fm_unit(nt_doctor_t *d, nt_opstate_t *st, const char *host, const char *b,
                           const char *line)
{
    const char *s = nt_skip_ws(b);
    const char *u = strstr(s, "nvidia-fabricmanager.service");
    int lead = u && u - s <= 4; /* the bullet and its space, or nothing */
    for (const char *c = s; lead && c < u; c++)
        lead = !isalnum((unsigned char)*c);
    if (lead) {
        st->mode = OP_FM;
        return 1;
    }
    if (st->mode != OP_FM)
        return 0;
    const char *v = nt_kv(s, "Active");
    if (!v)
        return 0;
    nt_op_t *o = &d->op;
    nt_opunit_t *e = nt_read_operator_grow((void **)&o->fms, &o->nfms, &o->cap_fms, sizeof(*e));
    if (e) {
        const char *since = strstr(v, " since ");
        size_t n = since ? (size_t)(since - v) : strlen(v);
        snprintf(e->state, sizeof(e->state), "%.*s", (int)n, v);
        e->down = !nt_starts(v, "active") && !nt_starts(v, "reloading");
        e->host = nt_dup0(host);
        nt_ev_set(&e->ev, d->cur, nt_cur_line(d), line);
    }
    return 1;
}

/* ---- kernel log ---------------------------------------------------------------------------- */

/* The host of a journal line: "Dec 01 10:00:00 node01 kernel: ..." or ISO timestamps. */
static char *nt_journal_host(const char *line)
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
    return nt_dupn(b, (size_t)(e - b));
}

static int nt_feed_kernel(nt_doctor_t *d, const char *host, const char *b, const char *line)
{
    nt_op_t *o = &d->op;
    nt_xid_event_t xe;
    if (nt_xid_parse_line(b, &xe)) { /* the one reader of the line: lib/node/xid.c */
        char *jh = host ? NULL : nt_journal_host(b);
        o->xids_total++;
        nt_opxid_t *e =
            nt_read_operator_grow((void **)&o->xids, &o->nxids, &o->cap_xids, sizeof(*e));
        if (e) {
            snprintf(e->pci, sizeof(e->pci), "%s", xe.pci);
            e->xid = xe.xid;
            e->host = nt_dup0(host ? host : jh);
            nt_ev_set(&e->ev, d->cur, nt_cur_line(d), line);
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
        char *jh = host ? NULL : nt_journal_host(b);
        const char *h = host ? host : jh;
        nt_oplink_t *l = NULL;
        for (size_t i = 0; i < o->nlinks; i++)
            if (nt_host_eq(o->links[i].host, h) && strcmp(o->links[i].dev, dev) == 0)
                l = &o->links[i];
        if (!l && (l = nt_read_operator_grow((void **)&o->links, &o->nlinks, &o->cap_links,
                                             sizeof(*l)))) {
            l->host = nt_dup0(h);
            snprintf(l->dev, sizeof(l->dev), "%s", dev);
        }
        if (l) {
            if (down) {
                if (!l->downs)
                    nt_ev_set(&l->ev_down, d->cur, nt_cur_line(d), line);
                l->downs++;
                l->last_down = 1;
            } else {
                if (!l->ups)
                    nt_ev_set(&l->ev_up, d->cur, nt_cur_line(d), line);
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

static int nt_looks_xml(const char *s)
{
    s = nt_skip_ws(s);
    return nt_starts(s, "<?xml") || nt_starts(s, "<!--") ||
           (s[0] == '<' && isalpha((unsigned char)s[1]));
}

/* Append line and a newline to a growing buffer of at most XML_MAX bytes (lines past it are
 * dropped: what is kept is still read). */
static void nt_buf_append(char **buf, size_t *len, size_t *cap, const char *line)
{
    size_t n = strlen(line);
    if (*len + n + 2 > XML_MAX)
        return;
    if (*len + n + 2 > *cap) {
        size_t nc = *cap ? *cap : 65536;
        while (nc < *len + n + 2)
            nc *= 2;
        char *b = realloc(*buf, nc);
        if (!b)
            return;
        *buf = b;
        *cap = nc;
    }
    memcpy(*buf + *len, line, n);
    *len += n;
    (*buf)[(*len)++] = '\n';
}

static void nt_xml_append(nt_op_t *o, const char *line)
{
    nt_buf_append(&o->xml_buf, &o->xml_len, &o->xml_cap, line);
}

/* A line of the switches' view: kept for lib/node/ibtopo.c, which reads the input's lines whole
 * at its end (a switch section spans many lines). */
static int nt_feed_ibtopo(nt_op_t *o, const char *b)
{
    if (!nt_ibtopo_line(b))
        return 0;
    nt_buf_append(&o->ibt_buf, &o->ibt_len, &o->ibt_cap, b);
    return 1;
}

int nt_op_line(nt_doctor_t *d, const char *line, const char **body, const char **host)
{
    nt_op_t *o = &d->op;
    const char *b = line;
    const char *h = o->input_host;
    *body = line;
    *host = NULL;
    if (o->xml) {
        nt_xml_append(o, line);
        o->op_lines++;
        return 1;
    }
    if (!o->seen_content && *nt_skip_ws(line)) {
        o->seen_content = 1;
        if (nt_looks_xml(line)) {
            o->xml = 1;
            nt_xml_append(o, line);
            o->op_lines++;
            return 1;
        }
    }
    /* dshbak: "----------------" / "node01" / "----------------" */
    if (nt_is_rule(line)) {
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
    size_t hp = nt_line_pdsh_host(line);
    if (o->pdsh < 0 && *nt_skip_ws(line))
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
            o->prompt_host = nt_dupn(at + 1, (size_t)(e - at - 1));
    }
    if (!h)
        h = o->prompt_host;
    if (*nt_skip_ws(b) == '#')
        return 0; /* a collector's comment (or nccl-tests' own '#' lines): never an operator fact */
    nt_opstate_t *st = nt_state_of(d, h);
    if (!st)
        return 0;
    int used = nt_feed_ibv(d, st, h, b, line) || nt_feed_ibstat(d, st, h, b, line) ||
               nt_feed_topo(d, st, h, b, line) || nt_feed_nvlink(d, st, h, b, line) ||
               nt_feed_fm_unit(d, st, h, b, line) || nt_feed_kernel(d, h, b, line) || nt_nodefiles_line(d, h, b, line) ||
               nt_feed_ibtopo(o, b);
    if (!used && st->mode != OP_NONE && !*nt_skip_ws(b))
        used = 1; /* blank lines inside a block */
    if (!used && st->mode != OP_NONE && (b[0] == '\t' || b[0] == ' ') && st->mode != OP_TOPO &&
        st->mode != OP_NVLINK)
        used = 1; /* indented lines of ibv_devinfo -vv / ibstat */
    if (used)
        o->op_lines++;
    return used;
}


/* The input's switch-view lines, read whole: how many switches, leaves (switches with host
 * ports) and hosts it shows, or why it could not be read (kept as a note, never an error: the
 * file is the operator's, and the rest of the input is still read). */
static void nt_ibtopo_end(nt_doctor_t *d)
{
    nt_op_t *o = &d->op;
    if (!o->ibt_len)
        return;
    const char *fmt = nt_ibtopo_sniff(o->ibt_buf, o->ibt_len);
    nt_opibt_t *e = nt_read_operator_grow((void **)&o->ibts, &o->nibts, &o->cap_ibts, sizeof(*e));
    if (!e)
        return;
    e->input = d->cur;
    e->format = fmt ? fmt : "iblinkinfo";
    nt_ibtopo_t t;
    memset(&t, 0, sizeof(t));
    nt_status_t st = fmt && strcmp(fmt, "ibnetdiscover") == 0
                         ? nt_ibtopo_parse_ibnetdiscover(o->ibt_buf, o->ibt_len, &t, e->why,
                                                         sizeof(e->why))
                         : nt_ibtopo_parse_iblinkinfo(o->ibt_buf, o->ibt_len, &t, e->why,
                                                      sizeof(e->why));
    if (st == NT_OK) {
        e->why[0] = '\0';
        e->switches = t.nswitches;
        e->hosts = t.nhosts;
        for (size_t i = 0; i < t.nswitches; i++)
            e->leaves += t.switches[i].nhosts > 0;
    } else if (!e->why[0]) {
        snprintf(e->why, sizeof(e->why), "%s", nt_status_string(st));
    }
    nt_ibtopo_free(&t);
    o->ibt_len = 0;
}

int nt_op_end(nt_doctor_t *d, char *msg, size_t msglen, int *bad)
{
    nt_op_t *o = &d->op;
    *bad = 0;
    nt_ibtopo_end(d);
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
        nt_opxml_t *e =
            nt_read_operator_grow((void **)&o->xmls, &o->nxmls, &o->cap_xmls, sizeof(*e));
        if (!e) {
            nt_ncclxml_free(x);
            return 1;
        }
        e->host = nt_dup0(o->input_host);
        e->input = d->cur;
        e->xml = x;
        e->buf = nt_dupn(o->xml_buf, o->xml_len);
        e->len = o->xml_len;
    }
    return o->op_lines > 0;
}

