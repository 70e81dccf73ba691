/* The node checks' facts in the files operators collect: ulimit -a, df /dev/shm, lsmod,
 * nvidia-smi -q and lspci -vvv (read by lib/node/opfiles.c), judged by the probe's own rules
 * (lib/node/) and reported as the finding of the catalogue cause that names the same fact
 * (include/nettune/checks_same.def), else as the probe check's own finding. A finding says which
 * probe code checks it before the job. docs/node-checks.md lists the formats. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze_int.h"
#include "nettune/checks.h"
#include "nettune/nodecheck.h"

/* The facts of one host. */
typedef struct {
    char *host;
    int has_ml, has_shm, has_pm;
    nt_memlock_t ml;
    nt_shm_t shm;
    nt_peermem_t pm;
    nt_ev_t ev_ml, ev_shm, ev_pm;
    nt_smi_q_t *smi;
    nt_ev_t ev_gpu[NT_SMI_GPUS];
    nt_ev_t (*ev_fact)[NT_SMI_FACTS][2]; /* per GPU and rule: the first two lines with a faulty
                                          * value ("Uncorrectable Error : 4", "Pending : Yes") */
    nt_lspci_t *pci;
    nt_ev_t ev_pci[NT_LSPCI_DEVS];
    /* what the diagnosis judged, for the text summary: nothing passes silently */
    int judged, passed, not_judged;
    char why[400]; /* the first reason a check was not judged */
} nt_nfhost_t;

struct nt_nodefiles {
    unsigned input; /* the input the per-input states below belong to, +1 (0: none yet) */
    nt_df_state_t df;
    int lsmod_in;
    nt_nfhost_t *h;
    size_t nh;
};

static nt_nfhost_t *nt_nodefiles_host(nt_doctor_t *d, const char *host)
{
    struct nt_nodefiles *nf = d->op.nodefiles;
    for (size_t i = 0; i < nf->nh; i++)
        if (nt_host_eq(nf->h[i].host, host))
            return &nf->h[i];
    if (nf->nh >= NT_OP_MAX)
        return NULL;
    nt_nfhost_t *p = realloc(nf->h, (nf->nh + 1) * sizeof(*p));
    if (!p)
        return NULL;
    nf->h = p;
    p = &nf->h[nf->nh++];
    memset(p, 0, sizeof(*p));
    p->host = host ? strdup(host) : NULL;
    return p;
}

/* A new input starts every format's table afresh (a df header or an lsmod header of the last
 * file does not run on into this one). */
static void nt_nodefiles_input(struct nt_nodefiles *nf, unsigned cur)
{
    if (nf->input == cur + 1)
        return;
    nf->input = cur + 1;
    memset(&nf->df, 0, sizeof(nf->df));
    nf->lsmod_in = 0;
    for (size_t i = 0; i < nf->nh; i++) {
        if (nf->h[i].smi)
            nf->h[i].smi->in = 0;
        if (nf->h[i].pci)
            nf->h[i].pci->in = 0;
    }
}

static void nt_nodefiles_free(nt_doctor_t *d);

int nt_nodefiles_line(nt_doctor_t *d, const char *host, const char *b, const char *line)
{
    struct nt_nodefiles *nf = d->op.nodefiles;
    unsigned long ln = d->inputs[d->cur].lines;
    nt_nfhost_t *h;

    if (!nf) {
        if (!(nf = d->op.nodefiles = calloc(1, sizeof(*nf))))
            return 0;
        d->op.nodefiles_free = nt_nodefiles_free; /* facts.c frees it without calling here */
    }
    nt_nodefiles_input(nf, d->cur);
    if (!(h = nt_nodefiles_host(d, host)))
        return 0;
    if (!h->smi && !(h->smi = calloc(1, sizeof(*h->smi))))
        return 0;
    if (!h->ev_fact && !(h->ev_fact = calloc(NT_SMI_GPUS, sizeof(*h->ev_fact))))
        return 0;
    if (!h->pci && !(h->pci = calloc(1, sizeof(*h->pci))))
        return 0;
    {
        int had = h->ml.known;
        if (nt_ulimit_line(b, &h->ml)) {
            if (h->ml.known && !had) {
                h->has_ml = 1;
                nt_ev_set(&h->ev_ml, d->cur, ln, line);
            }
            return 1;
        }
    }
    {
        int had = h->shm.known;
        if (nt_df_line(&nf->df, b, &h->shm)) {
            if (h->shm.known && !had) {
                h->has_shm = 1;
                nt_ev_set(&h->ev_shm, d->cur, ln, line);
            }
            return 1;
        }
    }
    if (nt_lsmod_line(&nf->lsmod_in, b, &h->pm)) {
        if (!h->has_pm)
            nt_ev_set(&h->ev_pm, d->cur, ln, line);
        h->has_pm = 1;
        return 1;
    }
    {
        int n = h->smi->ngpus;
        if (nt_smi_q_line(h->smi, b)) {
            if (h->smi->ngpus > n)
                nt_ev_set(&h->ev_gpu[h->smi->ngpus - 1], d->cur, ln, line);
            else if (h->smi->bad && h->smi->ngpus > 0) {
                nt_ev_t *fe = h->ev_fact[h->smi->ngpus - 1][h->smi->fact];
                if (!fe[0].text || !fe[1].text)
                    nt_ev_set(&fe[fe[0].text ? 1 : 0], d->cur, ln, line);
            }
            return 1;
        }
    }
    {
        size_t n = h->pci->n;
        if (nt_lspci_line(h->pci, b)) {
            if (h->pci->n > n)
                nt_ev_set(&h->ev_pci[h->pci->n - 1], d->cur, ln, line);
            return 1;
        }
    }
    return 0;
}

/* The finding key of a probe verdict's code: the doctor's row paired with it
 * (checks_same.def); NULL when none is, or the knowledge base lacks its finding. */
static const char *nt_nodefiles_key(const nt_doctor_t *d, const char *code)
{
    const char *cause, *probe;
    for (size_t i = 0; nt_check_same_at(i, &cause, &probe); i++) {
        const nt_check_row_t *r = strcmp(probe, code) == 0 ? nt_check_by_code(cause) : NULL;
        if (r && nt_kb_finding(d->kb, r->check))
            return r->check;
    }
    return NULL;
}

/* One verdict of the probe's rule: counted for host h, a finding when it warns or fails, with
 * the line ev (and ev2 when not NULL) as its evidence. */
static void nt_nodefiles_put(nt_doctor_t *d, nt_nfhost_t *h, const char *what,
                             const nt_nodecheck_t *c, const nt_ev_t *ev, const nt_ev_t *ev2)
{
    const char *host = h->host;
    const char *key;
    nt_finding_t *f;

    if (c->verdict == NT_NOT_JUDGED) {
        if (!h->not_judged++)
            snprintf(h->why, sizeof(h->why), "%s %s: %s", c->check, c->target, c->message);
        return;
    }
    h->judged++;
    h->passed += c->verdict == NT_PASS;
    if (c->verdict != NT_WARN && c->verdict != NT_FAIL)
        return;
    if (!(key = nt_nodefiles_key(d, c->code)) || !(f = nt_finding_add(d, key)))
        return;
    nt_severity_t sev = c->verdict == NT_FAIL ? NT_SEV_ERROR : NT_SEV_WARN;
    if (sev > f->severity)
        f->severity = sev;
    if (host)
        nt_map_put(&f->hosts, host, strlen(host));
    nt_evlist_add_ev(&f->ev, ev);
    if (ev2)
        nt_evlist_add_ev(&f->ev, ev2);
    nt_finding_detail(f, "%s (%s) %s: %s; %s (the probe's %s).", nt_host_name(host), what,
                      c->target, c->observed, c->message, c->code);
}

/* The NCCL version the logs name (the first), as a version code; 0 when none. */
static int nt_nodefiles_nccl(const nt_doctor_t *d)
{
    int a, b, c;
    if (!d->versions.n || sscanf(d->versions.keys[0], "%d.%d.%d", &a, &b, &c) != 3)
        return 0;
    return a * 10000 + b * 100 + c;
}

void nt_nodefiles_diagnose(nt_doctor_t *d)
{
    /* each GPU rule with the nvidia-smi -q fact it reads: a finding cites the fact's line */
    static const struct {
        void (*judge)(const nt_gpu_health_t *, nt_nodecheck_t *);
        int fact;
    } gpu_rules[] = {{nt_gpu_ecc_judge, NT_SMI_FACT_ECC},
                     {nt_gpu_remap_judge, NT_SMI_FACT_REMAP},
                     {nt_gpu_throttle_judge, NT_SMI_FACT_THROTTLE},
                     {nt_gpu_persistence_judge, NT_SMI_FACT_PERSISTENCE},
                     {nt_gpu_reset_judge, NT_SMI_FACT_RESET},
                     {nt_gpu_retired_judge, NT_SMI_FACT_RETIRED}};
    struct nt_nodefiles *nf = d->op.nodefiles;
    nt_nodecheck_t c;

    for (size_t i = 0; nf && i < nf->nh; i++) {
        nt_nfhost_t *h = &nf->h[i];
        if (h->has_ml) {
            nt_memlock_judge(&h->ml, &c);
            nt_nodefiles_put(d, h, "ulimit -a", &c, &h->ev_ml, NULL);
        }
        /* --expect gpus_per_node, else the GPUs of the host's nvidia-smi -q, else the job's
         * ranks per node */
        int gpus = d->hw.gpus_per_node > 0  ? d->hw.gpus_per_node
                   : h->smi && h->smi->ngpus ? h->smi->ngpus
                                             : d->local_ranks;
        if (h->has_shm && gpus >= 2) {
            h->shm.gpus = gpus;
            nt_shm_judge(&h->shm, &c);
            nt_nodefiles_put(d, h, "df /dev/shm", &c, &h->ev_shm, NULL);
        } else if (h->has_shm) {
            /* NCCL's need grows with the GPUs that share the node: without their count a
             * size is neither enough nor too small, and saying nothing would pass it */
            char obs[96];
            snprintf(obs, sizeof(obs), "size %llu MiB", h->shm.size_bytes >> 20);
            nt_nodecheck_set(&c, "dev_shm", "NT-CFG-002", NT_NOT_JUDGED, "/dev/shm", obs, "",
                             gpus == 1 ? "size %llu MiB; one GPU per node: no GPU of this node "
                                         "shares NCCL's shared-memory buffers with another"
                                       : "size %llu MiB; NCCL's need depends on the GPUs per "
                                         "node, which no input names: give --expect "
                                         "gpus_per_node=N or the node's nvidia-smi -q",
                             h->shm.size_bytes >> 20);
            nt_nodefiles_put(d, h, "df /dev/shm", &c, &h->ev_shm, NULL);
        }
        if (h->has_pm) {
            h->pm.nccl_code = nt_nodefiles_nccl(d);
            nt_peermem_judge(&h->pm, &c);
            nt_nodefiles_put(d, h, "lsmod", &c, &h->ev_pm, NULL);
        }
        for (int g = 0; h->smi && g < h->smi->ngpus; g++)
            for (size_t r = 0; r < sizeof(gpu_rules) / sizeof(gpu_rules[0]); r++) {
                const nt_gpu_health_t *gh = &h->smi->gpu[g];
                if (gpu_rules[r].judge == nt_gpu_retired_judge && !nt_gpu_retired_applies(gh))
                    continue;
                gpu_rules[r].judge(gh, &c);
                snprintf(c.target, sizeof(c.target), "GPU %s", h->smi->bus[g]);
                const nt_ev_t *fe = h->ev_fact[g][gpu_rules[r].fact];
                nt_nodefiles_put(d, h, "nvidia-smi -q", &c, fe[0].text ? &fe[0] : &h->ev_gpu[g],
                                 fe[1].text ? &fe[1] : NULL);
            }
        for (size_t a = 0; h->pci && a < h->pci->n; a++) {
            nt_acs_judge(&h->pci->acs[a], &c);
            nt_nodefiles_put(d, h, "lspci -vvv, a PCI bridge", &c, &h->ev_pci[a], NULL);
        }
    }
}

int nt_nodefiles_any(const nt_doctor_t *d)
{
    const struct nt_nodefiles *nf = d->op.nodefiles;
    for (size_t i = 0; nf && i < nf->nh; i++)
        if (nf->h[i].judged || nf->h[i].not_judged)
            return 1;
    return 0;
}

void nt_nodefiles_text(const nt_doctor_t *d, FILE *out)
{
    const struct nt_nodefiles *nf = d->op.nodefiles;
    for (size_t i = 0; nf && i < nf->nh; i++) {
        const nt_nfhost_t *h = &nf->h[i];
        if (!h->judged && !h->not_judged)
            continue;
        fprintf(out, "    node checks (%s; ulimit -a, df, lsmod, nvidia-smi -q, lspci -vvv): %d judged, "
                "%d passed, %d not judged%s%s\n",
                nt_host_name(h->host), h->judged, h->passed, h->not_judged,
                h->not_judged ? ": " : "", h->why);
    }
}

static void nt_nodefiles_free(nt_doctor_t *d)
{
    struct nt_nodefiles *nf = d->op.nodefiles;
    if (!nf)
        return;
    for (size_t i = 0; i < nf->nh; i++) {
        nt_nfhost_t *h = &nf->h[i];
        free(h->host);
        nt_ev_free(&h->ev_ml);
        nt_ev_free(&h->ev_shm);
        nt_ev_free(&h->ev_pm);
        for (int g = 0; g < NT_SMI_GPUS; g++) {
            nt_ev_free(&h->ev_gpu[g]);
            for (int r = 0; h->ev_fact && r < NT_SMI_FACTS; r++) {
                nt_ev_free(&h->ev_fact[g][r][0]);
                nt_ev_free(&h->ev_fact[g][r][1]);
            }
        }
        free(h->ev_fact);
        for (int a = 0; a < NT_LSPCI_DEVS; a++)
            nt_ev_free(&h->ev_pci[a]);
        free(h->smi);
        free(h->pci);
    }
    free(nf->h);
    free(nf);
    d->op.nodefiles = NULL;
}
