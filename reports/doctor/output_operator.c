/* The operator files' part of the output: hardware.operator in the JSON document and its text
 * section, from what read_operator.c recorded. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analyze_int.h"
#include "nettune/ncclxml.h"

/* ---- output ------------------------------------------------------------------------------- */

static cJSON *nt_ev_json(const nt_doctor_t *d, const nt_ev_t *e)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !e->text)
        return o;
    cJSON_AddStringToObject(o, "file", d->inputs[e->input].path);
    cJSON_AddNumberToObject(o, "line", (double)e->line);
    cJSON_AddStringToObject(o, "text", e->text);
    return o;
}

static void nt_add_host(cJSON *o, const char *h)
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
        nt_add_host(e, p->host);
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
        cJSON_AddItemToObject(e, "evidence",
                              nt_ev_json(d, p->ev_state.text ? &p->ev_state : &p->ev));
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
            nt_topo_col_is_gpu(tp->col[c]) ? ngpu++ : nnic++;
        nt_add_host(e, tp->host);
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
        nt_add_host(e, x->host);
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
    for (size_t i = 0; topos && i < o->nibts; i++) {
        const nt_opibt_t *b = &o->ibts[i];
        cJSON *e = cJSON_CreateObject();
        if (!e)
            break;
        nt_add_host(e, NULL); /* the fabric's view, of no one host */
        cJSON_AddStringToObject(e, "source", b->format);
        if (b->why[0]) {
            cJSON_AddStringToObject(e, "not_read", b->why);
        } else {
            cJSON_AddNumberToObject(e, "switches", (double)b->switches);
            cJSON_AddNumberToObject(e, "leaves", (double)b->leaves);
            cJSON_AddNumberToObject(e, "hosts", (double)b->hosts);
        }
        cJSON *ev = cJSON_CreateObject();
        cJSON_AddStringToObject(ev, "file", d->inputs[b->input].path);
        cJSON_AddNumberToObject(ev, "line", 1);
        cJSON_AddStringToObject(ev, "text", b->format);
        cJSON_AddItemToObject(e, "evidence", ev);
        cJSON_AddItemToArray(topos, e);
    }
    cJSON_AddNumberToObject(j, "xid_events", (double)o->xids_total);
    return j;
}

/* InfiniBand generation of a lane speed in Gb/s (IBTA: SDR 2.5 ... XDR 200), or "". */
static const char *nt_ib_gen(const char *speed)
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
    if (!o->nports && !o->ntopos && !o->nxmls && !o->nnvl && !o->xids_total && !o->nlinks &&
        !o->nfms && !o->nibts && !nt_nodefiles_any(d))
        return;
    fprintf(out, "  operator files:\n");
    for (size_t i = 0; i < o->nports; i++) {
        const nt_opport_t *p = &o->ports[i];
        char rate[48] = "rate unknown";
        const char *gen = strcasecmp(p->layer, "Ethernet") != 0 ? nt_ib_gen(p->speed) : "";
        if (p->rate_Gbps > 0)
            snprintf(rate, sizeof(rate), "%s%s%s%s%g Gb/s", p->width, gen[0] ? " " : "", gen,
                     p->width[0] ? " = " : "", p->rate_Gbps);
        fprintf(out, "    port %s %s/%d: %s%s%s, %s, %s, SM LID %s%ld\n", nt_host_name(p->host), p->hca,
                p->port, p->state[0] ? p->state : "state unknown", p->phys[0] ? " " : "", p->phys,
                rate, p->layer[0] ? p->layer : "link layer unknown",
                p->sm_lid >= 0 ? "" : "unknown ", p->sm_lid >= 0 ? p->sm_lid : 0L);
    }
    for (size_t i = 0; i < o->ntopos; i++) {
        const nt_optopo_t *tp = &o->topos[i];
        int ngpu = 0, nnic = 0;
        for (int c = 0; c < tp->ncols; c++)
            nt_topo_col_is_gpu(tp->col[c]) ? ngpu++ : nnic++;
        fprintf(out, "    nvidia-smi topo -m (%s): %d GPU(s), %d NIC(s)\n", nt_host_name(tp->host), ngpu,
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
    for (size_t i = 0; i < o->nibts; i++) {
        const nt_opibt_t *b = &o->ibts[i];
        if (b->why[0])
            fprintf(out, "    %s (%s): not read: %s\n", b->format, d->inputs[b->input].path,
                    b->why);
        else
            fprintf(out,
                    "    %s (%s): %zu switch(es), %zu with host ports (leaves), %zu host(s); "
                    "the fabric phases hold their groups against it (nettune probe "
                    "--fabric-topology FILE)\n",
                    b->format, d->inputs[b->input].path, b->switches, b->leaves, b->hosts);
    }
    if (o->nnvl)
        fprintf(out, "    nvidia-smi nvlink -s: %zu GPU(s)\n", o->nnvl);
    if (o->xids_total)
        fprintf(out, "    kernel log: %lu NVIDIA Xid line(s)\n", o->xids_total);
    if (o->nlinks)
        fprintf(out, "    kernel log: %zu mlx5 device(s) with link events\n", o->nlinks);
    for (size_t i = 0; i < o->nfms; i++)
        fprintf(out, "    systemctl status nvidia-fabricmanager (%s): %s\n",
                nt_host_name(o->fms[i].host), o->fms[i].state);
    nt_nodefiles_text(d, out);
}
