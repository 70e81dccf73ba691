/* NCCL topology and graph XML through libxml2 (include/nettune/ncclxml.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "nettune/ncclxml.h"

#define NT_XML_MAX_BYTES (64u << 20)

static int nt_attr_int(xmlNode *n, const char *name, int dflt)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
    if (!v)
        return dflt;
    char *end;
    long x = strtol((const char *)v, &end, 0);
    int ok = end != (char *)v;
    xmlFree(v);
    return ok ? (int)x : dflt;
}

static void nt_attr_str(xmlNode *n, const char *name, char *out, size_t len)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
    snprintf(out, len, "%s", v ? (const char *)v : "");
    if (v)
        xmlFree(v);
}

static int nt_is(xmlNode *n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && xmlStrcmp(n->name, (const xmlChar *)name) == 0;
}

typedef struct {
    nt_ncclxml_t *x;
    size_t cap;
    int nbridge_ids;
    int failed;
} walk_t;

static nt_xdev_t *nt_dev_add(walk_t *w)
{
    if (w->x->ndevs == w->cap) {
        size_t nc = w->cap ? w->cap * 2 : 16;
        nt_xdev_t *n = realloc(w->x->devs, nc * sizeof(*n));
        if (!n) {
            w->failed = 1;
            return NULL;
        }
        w->x->devs = n;
        w->cap = nc;
    }
    nt_xdev_t *d = &w->x->devs[w->x->ndevs++];
    memset(d, 0, sizeof(*d));
    d->rdma = -1;
    d->speed_Mbps = -1;
    return d;
}

/* The first <net> under `nic`: its name, speed and gdr. */
static void nt_net_of(xmlNode *nic, nt_xdev_t *d)
{
    for (xmlNode *c = nic->children; c; c = c->next)
        if (nt_is(c, "net")) {
            nt_attr_str(c, "name", d->name, sizeof(d->name));
            int sp = nt_attr_int(c, "speed", -1);
            d->speed_Mbps = sp;
            if (nt_attr_int(c, "gdr", 0) == 1)
                d->rdma = 1;
            return;
        }
}

static void nt_walk(walk_t *w, xmlNode *n, int cpu, int numaid, const int *chain, int nchain)
{
    for (xmlNode *c = n->children; c && !w->failed; c = c->next) {
        if (nt_is(c, "nic") && !nt_is(n, "pci")) { /* a NIC directly under the CPU */
            nt_xdev_t *d = nt_dev_add(w);
            if (!d)
                return;
            d->kind = NT_XDEV_NIC;
            d->cpu = cpu, d->numaid = numaid, d->parent = -1, d->nbridges = 0;
            d->line = xmlGetLineNo(c);
            nt_net_of(c, d);
            if (d->rdma < 0)
                d->rdma = 0;
            continue;
        }
        if (!nt_is(c, "pci"))
            continue;
        char cls[16], vendor[16];
        nt_attr_str(c, "class", cls, sizeof(cls));
        nt_attr_str(c, "vendor", vendor, sizeof(vendor));
        long klass = strtol(cls, NULL, 16);
        int base = (int)(klass >> 8); /* 0x0302, 0x0207, 0x0604 ... */
        if (base == 0x0604) {
            int nchain2[16];
            int id = w->nbridge_ids++;
            nchain2[0] = id;
            int k = nchain < 15 ? nchain : 15;
            if (k) /* chain is NULL at the root */
                memcpy(nchain2 + 1, chain, (size_t)k * sizeof(int));
            nt_walk(w, c, cpu, numaid, nchain2, k + 1);
            continue;
        }
        if (base == 0x0302 || base == 0x0300 || base == 0x0207 || base == 0x0200 ||
            base == 0x0280) {
            nt_xdev_t *d = nt_dev_add(w);
            if (!d)
                return;
            d->kind = (base == 0x0302 || base == 0x0300) ? NT_XDEV_GPU : NT_XDEV_NIC;
            nt_attr_str(c, "busid", d->busid, sizeof(d->busid));
            d->cpu = cpu, d->numaid = numaid;
            d->parent = nchain ? chain[0] : -1;
            d->nbridges = nchain;
            if (nchain) /* chain is NULL at the root */
                memcpy(d->bridges, chain, (size_t)nchain * sizeof(int));
            d->line = xmlGetLineNo(c);
            if (d->kind == NT_XDEV_NIC) {
                if (base == 0x0207 || strcmp(vendor, "0x15b3") == 0 ||
                    strcmp(vendor, "0x1d0f") == 0)
                    d->rdma = 1;
                for (xmlNode *g = c->children; g; g = g->next)
                    if (nt_is(g, "nic"))
                        nt_net_of(g, d);
                if (d->rdma < 0)
                    d->rdma = base == 0x0200 && vendor[0] ? 0 : -1;
            }
        }
    }
}

nt_status_t nt_ncclxml_read_memory(const char *buf, size_t len, const char *name,
                                   nt_ncclxml_t **out, char *err, size_t errlen)
{
    *out = NULL;
    if (len > NT_XML_MAX_BYTES) {
        snprintf(err, errlen, "'%s': XML larger than %u MiB", name, NT_XML_MAX_BYTES >> 20);
        return NT_ERR_PARSE;
    }
    xmlDoc *doc = xmlReadMemory(buf, (int)len, name, NULL,
                                XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!doc) {
        const xmlError *e = xmlGetLastError();
        snprintf(err, errlen, "'%s' is not well-formed XML%s%s", name,
                 e && e->line ? " near line " : "", "");
        if (e && e->line) {
            size_t n = strlen(err);
            snprintf(err + n, errlen - n, "%d: %s", e->line, e->message ? e->message : "");
            n = strlen(err);
            while (n && (err[n - 1] == '\n' || err[n - 1] == ' '))
                err[--n] = '\0';
        }
        return NT_ERR_PARSE;
    }
    xmlNode *root = xmlDocGetRootElement(doc);
    nt_ncclxml_t *x = calloc(1, sizeof(*x));
    if (!x) {
        xmlFreeDoc(doc);
        return NT_ERR_NOMEM;
    }
    nt_status_t st = NT_OK;
    if (root && nt_is(root, "system")) {
        x->kind = NT_NCCLXML_SYSTEM;
        x->version = nt_attr_int(root, "version", -1);
        walk_t w = {x, 0, 0, 0};
        for (xmlNode *c = root->children; c && !w.failed; c = c->next)
            if (nt_is(c, "cpu"))
                nt_walk(&w, c, x->ncpus++, nt_attr_int(c, "numaid", -1), NULL, 0);
        if (w.failed)
            st = NT_ERR_NOMEM;
    } else if (root && nt_is(root, "graphs")) {
        x->kind = NT_NCCLXML_GRAPHS;
        x->version = nt_attr_int(root, "version", -1);
        size_t cap = 0;
        for (xmlNode *c = root->children; c; c = c->next) {
            if (!nt_is(c, "graph"))
                continue;
            if (x->ngraphs == cap) {
                cap = cap ? cap * 2 : 4;
                nt_xgraph_t *ng = realloc(x->graphs, cap * sizeof(*ng));
                if (!ng) {
                    st = NT_ERR_NOMEM;
                    break;
                }
                x->graphs = ng;
            }
            nt_xgraph_t *g = &x->graphs[x->ngraphs++];
            g->id = nt_attr_int(c, "id", -1);
            g->pattern = nt_attr_int(c, "pattern", -1);
            g->nchannels = nt_attr_int(c, "nchannels", -1);
            nt_attr_str(c, "typeintra", g->typeintra, sizeof(g->typeintra));
            nt_attr_str(c, "typeinter", g->typeinter, sizeof(g->typeinter));
            g->line = xmlGetLineNo(c);
        }
    } else {
        snprintf(err, errlen,
                 "'%s': XML root <%s> is neither an NCCL topology (<system>) nor a graph file "
                 "(<graphs>)",
                 name, root ? (const char *)root->name : "");
        st = NT_ERR_PARSE;
    }
    xmlFreeDoc(doc);
    if (st != NT_OK) {
        nt_ncclxml_free(x);
        return st;
    }
    *out = x;
    return NT_OK;
}

nt_status_t nt_ncclxml_read_file(const char *path, nt_ncclxml_t **out, char *err, size_t errlen)
{
    FILE *fp = fopen(path, "rb");
    *out = NULL;
    if (!fp) {
        snprintf(err, errlen, "cannot open '%s'", path);
        return NT_ERR_IO;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n == cap) {
            if (cap >= NT_XML_MAX_BYTES + 1u)
                break;
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb, cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, fp);
        if (!got)
            break;
        n += got;
    }
    int bad = ferror(fp);
    fclose(fp);
    if (!buf)
        return NT_ERR_NOMEM;
    if (bad) {
        free(buf);
        snprintf(err, errlen, "cannot read '%s'", path);
        return NT_ERR_IO;
    }
    nt_status_t st = nt_ncclxml_read_memory(buf, n, path, out, err, errlen);
    free(buf);
    return st;
}

void nt_ncclxml_free(nt_ncclxml_t *x)
{
    if (!x)
        return;
    free(x->devs);
    free(x->graphs);
    free(x);
}

const char *nt_ncclxml_path(const nt_ncclxml_t *x, size_t a, size_t b)
{
    const nt_xdev_t *p = &x->devs[a], *q = &x->devs[b];
    if (p->cpu != q->cpu)
        return "SYS";
    if (p->parent >= 0 && p->parent == q->parent)
        return "PIX";
    for (int i = 0; i < p->nbridges; i++)
        for (int j = 0; j < q->nbridges; j++)
            if (p->bridges[i] == q->bridges[j])
                return "PXB";
    return "PHB";
}
