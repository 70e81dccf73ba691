/* The fact store: the containers every stage shares (maps, evidence lines), the analysis
 * object itself (create/destroy: it holds what the readers record and what the rules find) and
 * the findings store the rules add to. The bottom of the pipeline: it calls no other stage.
 *   readers  read_log.c (NCCL log, launcher and PyTorch prefixes, nccl-tests), read_operator.c
 *   rules    rules.c (the log, the catalogue), rules_operator.c (operator files)
 *   output   output.c */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze_int.h"
#include "nettune/thresholds.h"
#include "nettune/ncclxml.h"

/* ---- small containers ------------------------------------------------------------------- */

void nt_map_init(nt_map_t *m)
{
    memset(m, 0, sizeof(*m));
}

void nt_map_cleanup(nt_map_t *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->keys[i]);
    free(m->keys);
    free(m->vals);
    free(m->slots);
    memset(m, 0, sizeof(*m));
}

static size_t nt_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return (size_t)h;
}

long nt_map_find(const nt_map_t *m, const char *key, size_t len)
{
    if (!m->cap)
        return -1;
    for (size_t i = nt_hash(key, len) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        size_t s = m->slots[i];
        if (!s)
            return -1;
        const char *k = m->keys[s - 1];
        if (strlen(k) == len && memcmp(k, key, len) == 0)
            return (long)(s - 1);
    }
}

static int nt_map_grow(nt_map_t *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 16;
    size_t *slots = calloc(ncap, sizeof(*slots));
    if (!slots)
        return -1;
    for (size_t j = 0; j < m->n; j++) {
        size_t i = nt_hash(m->keys[j], strlen(m->keys[j])) & (ncap - 1);
        while (slots[i])
            i = (i + 1) & (ncap - 1);
        slots[i] = j + 1;
    }
    free(m->slots);
    m->slots = slots;
    m->cap = ncap;
    return 0;
}

long nt_map_put(nt_map_t *m, const char *key, size_t len)
{
    long f = nt_map_find(m, key, len);
    if (f >= 0)
        return f;
    if (m->n >= NT_MAX_SET) {
        m->dropped++;
        return -1;
    }
    if ((m->n + 1) * 2 > m->cap && nt_map_grow(m) != 0)
        return -1;
    if (m->n == m->kcap) {
        size_t nk = m->kcap ? m->kcap * 2 : 8;
        char **k = realloc(m->keys, nk * sizeof(*k));
        if (!k)
            return -1;
        m->keys = k;
        long *v = realloc(m->vals, nk * sizeof(*v));
        if (!v)
            return -1;
        m->vals = v;
        m->kcap = nk;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return -1;
    memcpy(copy, key, len);
    copy[len] = '\0';
    size_t i = nt_hash(key, len) & (m->cap - 1);
    while (m->slots[i])
        i = (i + 1) & (m->cap - 1);
    m->slots[i] = m->n + 1;
    m->keys[m->n] = copy;
    m->vals[m->n] = 0;
    return (long)m->n++;
}

void nt_ev_set(nt_ev_t *e, unsigned input, unsigned long line, const char *text)
{
    size_t n = strlen(text);
    if (n > NT_EVIDENCE_TEXT)
        n = NT_EVIDENCE_TEXT;
    free(e->text);
    e->input = input;
    e->line = line;
    e->text = malloc(n + 1);
    if (e->text) {
        memcpy(e->text, text, n);
        e->text[n] = '\0';
    }
}

void nt_ev_free(nt_ev_t *e)
{
    free(e->text);
    e->text = NULL;
}

void nt_evlist_add(nt_evlist_t *l, unsigned input, unsigned long line, const char *text)
{
    for (size_t i = 0; line && i < l->n; i++)
        if (l->ev[i].input == input && l->ev[i].line == line)
            return;
    l->total++;
    if (l->n >= NT_EVIDENCE_MAX)
        return;
    memset(&l->ev[l->n], 0, sizeof(l->ev[0]));
    nt_ev_set(&l->ev[l->n], input, line, text);
    if (l->ev[l->n].text)
        l->n++;
}

void nt_evlist_add_ev(nt_evlist_t *l, const nt_ev_t *e)
{
    if (e->text)
        nt_evlist_add(l, e->input, e->line, e->text);
}

void nt_evlist_free(nt_evlist_t *l)
{
    for (size_t i = 0; i < l->n; i++)
        nt_ev_free(&l->ev[i]);
    l->n = 0;
}

/* ---- create / destroy -------------------------------------------------------------------- */

void nt_hw_init(nt_hw_t *hw)
{
    memset(hw, 0, sizeof(*hw));
    hw->gpus_per_node = -1;
    hw->nics_per_node = -1;
    hw->nic_rate_Gbps = -1;
    hw->efficiency = 0.90;
    hw->error_efficiency = 0.50;
    hw->min_busbw_GBps = -1;
}

void nt_hw_cleanup(nt_hw_t *hw)
{
    free(hw->gpu_model);
    free(hw->collective);
    free(hw->source);
    hw->gpu_model = hw->collective = hw->source = NULL;
}

int nt_hw_apply_expect(nt_hw_t *hw, const char *arg, char *err, size_t errlen)
{
    nt_expect_t e;
    nt_expect_init(&e);
    if (nt_expect_parse(arg, NT_EXPECT_FOR_DOCTOR, &e, err, errlen) != NT_OK)
        return -1;
    if (e.gpus >= 0)
        hw->gpus_per_node = e.gpus;
    if (e.nics >= 0)
        hw->nics_per_node = e.nics;
    if (e.nic_rate_Gbps > 0)
        hw->nic_rate_Gbps = e.nic_rate_Gbps;
    if (e.gpu_model[0]) {
        free(hw->gpu_model);
        hw->gpu_model = strdup(e.gpu_model);
    }
    if (e.collective[0]) {
        free(hw->collective);
        hw->collective = strdup(e.collective);
    }
    if (e.efficiency > 0)
        hw->efficiency = e.efficiency;
    if (e.error_efficiency > 0)
        hw->error_efficiency = e.error_efficiency;
    if (e.min_busbw_GBps > 0)
        hw->min_busbw_GBps = e.min_busbw_GBps;
    if (hw->error_efficiency > hw->efficiency) {
        snprintf(err, errlen, "--expect: need 0 < error_efficiency <= efficiency <= 2");
        return -1;
    }
    if (!hw->source)
        hw->source = strdup("expect");
    return 0;
}

nt_doctor_t *nt_doctor_create(const nt_kb_t *kb)
{
    nt_doctor_t *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->kb = kb;
    d->pdsh_row = nt_line_prefix_row("pdsh");
    d->sig = calloc(kb->nsigs ? kb->nsigs : 1, sizeof(*d->sig));
    d->sig_seen = calloc(kb->nsigs ? kb->nsigs : 1, sizeof(*d->sig_seen));
    d->msg = calloc(kb->nmsgs ? kb->nmsgs : 1, sizeof(*d->msg));
    d->msg_values = calloc(kb->nmsgs ? kb->nmsgs : 1, sizeof(*d->msg_values));
    if (!d->sig || !d->sig_seen || !d->msg || !d->msg_values) {
        free(d->sig);
        free(d->sig_seen);
        free(d->msg);
        free(d->msg_values);
        free(d);
        return NULL;
    }
    d->sig_acs = nt_kb_signature_index(kb, "acs_enabled");
    d->sig_iommu = nt_kb_signature_index(kb, "iommu_fault");
    d->sig_failure = nt_kb_signature_index(kb, "nccl_failure");
    d->sig_wc = nt_kb_signature_index(kb, "ib_completion");
    d->sig_plugin = nt_kb_signature_index(kb, "nccl_plugin_lines");
    d->nnodes = d->nranks = d->local_ranks = -1;
    d->nics_min = d->nics_max = -1;
    d->run_ranks = -1;
    d->fr_buffer = d->fr_dump = d->fr_src_rank = -1;
    d->ncclt = nt_ncclt_reader_create();
    if (!d->ncclt) {
        free(d->sig);
        free(d->sig_seen);
        free(d->msg);
        free(d->msg_values);
        free(d);
        return NULL;
    }
    nt_hw_init(&d->hw);
    d->report_gpus = d->report_nics = -1;
    d->report_rate_Gbps = -1;
    return d;
}

static void nt_table_free(nt_table_t *t)
{
    free(t->coll);
    free(t->coll_note);
    free(t->gpu_model);
    free(t->algo);
    free(t->basis);
    for (size_t i = 0; i < t->ntop; i++)
        free(t->top[i].text);
    for (size_t i = 0; i < t->nrowtext; i++)
        free(t->rowtext[i]);
    nt_ev_free(&t->run_ev);
    nt_ev_free(&t->cut_ev);
    nt_ev_free(&t->oob_ev);
}

void nt_doctor_destroy(nt_doctor_t *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->ninputs; i++) {
        free(d->inputs[i].path);
        free(d->inputs[i].message);
        free(d->inputs[i].host);
        if (d->inputs[i].log) {
            nt_nccllog_cleanup(d->inputs[i].log);
            free(d->inputs[i].log);
        }
    }
    free(d->inputs);
    for (size_t i = 0; i < d->kb->nsigs; i++) {
        nt_evlist_free(&d->sig[i].ev);
        nt_map_cleanup(&d->sig[i].hosts);
    }
    free(d->sig);
    free(d->sig_seen);
    for (size_t i = 0; i < d->kb->nmsgs; i++) {
        nt_evlist_free(&d->msg[i].ev);
        nt_map_cleanup(&d->msg[i].hosts);
        cJSON_Delete(d->msg_values[i]);
    }
    free(d->msg);
    free(d->msg_values);
    nt_op_free(d);
    for (int i = 0; i < NT_FACT_EV; i++) {
        nt_ev_free(&d->host_ev[i]);
        nt_ev_free(&d->net_ev[i]);
        nt_ev_free(&d->tr_ev[i]);
    }
    nt_ev_free(&d->run_ev);
    cJSON_Delete(d->per_file);
    for (size_t i = 0; i < d->nnot_judged; i++)
        free(d->not_judged[i]);
    for (size_t i = 0; i < 32; i++)
        nt_ev_free(&d->wc_first[i]);
    nt_map_cleanup(&d->hosts);
    nt_map_cleanup(&d->procmap);
    for (size_t i = 0; i < d->nprocs; i++) {
        free(d->procs[i].id);
        nt_map_cleanup(&d->procs[i].env);
        free(d->procs[i].host);
        free(d->procs[i].tuner);
        nt_ev_free(&d->procs[i].first_tuner);
        free(d->procs[i].tuning);
        nt_ev_free(&d->procs[i].tuning_ev);
        nt_ev_free(&d->procs[i].tuning_none_ev);
        nt_ev_free(&d->procs[i].first_init);
    }
    free(d->procs);
    free(d->rank_host);
    nt_map_cleanup(&d->versions);
    for (size_t i = 0; i < 4; i++)
        nt_ev_free(&d->version_ev[i]);
    nt_map_cleanup(&d->networks);
    nt_evlist_free(&d->socket_ev);
    nt_evlist_free(&d->netib_ev);
    free(d->nic_names);
    nt_map_cleanup(&d->transports);
    for (size_t i = 0; i < d->nenv; i++) {
        free(d->env[i].name);
        free(d->env[i].value);
        free(d->env[i].other);
        nt_ev_free(&d->env[i].first);
        nt_ev_free(&d->env[i].first_other);
    }
    free(d->env);
    nt_ev_free(&d->comm_ev);
    nt_ev_free(&d->nranks_ev);
    free(d->gdr);
    nt_evlist_free(&d->gdr_yes_ev);
    nt_evlist_free(&d->gdr_no_ev);
    nt_evlist_free(&d->gdr0_ev);
    nt_evlist_free(&d->rank_other_host_ev);
    nt_evlist_free(&d->footer_ev);
    nt_evlist_free(&d->shared_ev);
    nt_ev_free(&d->last_p2p);
    nt_evlist_free(&d->warn_unexplained);
    for (size_t i = 0; i < d->ntimeouts; i++)
        nt_ev_free(&d->timeouts[i].ev);
    nt_map_cleanup(&d->pg_ranks);
    nt_ev_free(&d->pg_ev);
    nt_ev_free(&d->fr_env_ev);
    nt_evlist_free(&d->fr_off_ev);
    nt_evlist_free(&d->fr_first_ev);
    nt_evlist_free(&d->fr_observed_ev);
    nt_evlist_free(&d->fr_on_ev);
    nt_map_cleanup(&d->fr_first_ranks);
    nt_map_cleanup(&d->fr_observed_ranks);
    for (size_t i = 0; i < d->ntables; i++)
        nt_table_free(&d->tables[i]);
    free(d->tables);
    nt_ncclt_reader_destroy(d->ncclt);
    free(d->run_algo);
    nt_map_cleanup(&d->run_hosts);
    free(d->report_path);
    nt_evlist_free(&d->report_ev);
    nt_map_cleanup(&d->report_hosts);
    nt_map_cleanup(&d->report_all_hosts);
    free(d->report_model);
    for (size_t i = 0; i < d->nfindings; i++) {
        nt_finding_t *f = &d->findings[i];
        nt_evlist_free(&f->ev);
        nt_map_cleanup(&f->hosts);
        free(f->detail);
        free(f->fix);
        cJSON_Delete(f->values);
    }
    free(d->findings);
    nt_hw_cleanup(&d->hw);
    free(d);
}

int nt_host_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

const char *nt_host_name(const char *h)
{
    return h ? h : "unknown host";
}

int nt_topo_col_is_gpu(const char *c)
{
    return strncmp(c, "GPU", 3) == 0;
}

/* ---- operator-file facts ------------------------------------------------------------------ */

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
    for (size_t i = 0; i < o->nfms; i++) {
        free(o->fms[i].host);
        nt_ev_free(&o->fms[i].ev);
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
    free(o->fms);
    free(o->xmls);
    free(o->ibts);
    free(o->ibt_buf);
    free(o->st);
    free(o->block_host);
    free(o->dsh_pending);
    free(o->input_host);
    free(o->prompt_host);
    free(o->xml_buf);
    if (o->nodefiles_free)
        o->nodefiles_free(d); /* read_nodefiles.c's, registered when it allocated */
}

/* ---- findings ------------------------------------------------------------------------------ */

nt_finding_t *nt_finding_add(nt_doctor_t *d, const char *key)
{
    for (size_t i = 0; i < d->nfindings; i++)
        if (strcmp(d->findings[i].kb->key, key) == 0)
            return &d->findings[i];
    const nt_kb_finding_t *k = nt_kb_finding(d->kb, key);
    if (!k)
        return NULL;
    /* Room for every finding the knowledge base has, allocated once: a key is added at most once
     * (above), so the array never moves and a finding's address stays valid while the rules
     * add others (diagnose_gdr links a cause found before it adds the effect). */
    if (!d->findings) {
        d->findings = calloc(d->kb->nfindings, sizeof(*d->findings));
        if (!d->findings)
            return NULL;
    }
    if (d->nfindings >= d->kb->nfindings)
        return NULL;
    nt_finding_t *f = &d->findings[d->nfindings++];
    memset(f, 0, sizeof(*f));
    f->kb = k;
    f->severity = k->severity;
    return f;
}

void nt_finding_detail(nt_finding_t *f, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    size_t old = f->detail ? strlen(f->detail) : 0;
    if (old > 8000)
        return;
    char *n = realloc(f->detail, old + strlen(buf) + 2);
    if (!n)
        return;
    if (old)
        n[old++] = ' ';
    strcpy(n + old, buf);
    f->detail = n;
}

void nt_finding_value(nt_finding_t *f, const char *name, double v)
{
    if (!f->values)
        f->values = cJSON_CreateObject();
    if (!f->values)
        return;
    cJSON_DeleteItemFromObjectCaseSensitive(f->values, name);
    cJSON_AddNumberToObject(f->values, name, v);
}

void nt_not_judged_add(nt_doctor_t *d, const char *reason)
{
    for (size_t k = 0; k < d->nnot_judged; k++)
        if (strcmp(d->not_judged[k], reason) == 0)
            return;
    if (d->nnot_judged < sizeof(d->not_judged) / sizeof(d->not_judged[0]))
        if ((d->not_judged[d->nnot_judged] = strdup(reason)))
            d->nnot_judged++;
}
