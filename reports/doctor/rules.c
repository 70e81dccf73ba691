/* The diagnosis: turns the facts gathered by the readers (read_log.c, read_operator.c) into findings, with the knowledge base's
 * text, evidence lines, ranks and hosts, and the causal links between findings. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analyze_int.h"
#include "nettune/anomaly.h"
#include "nettune/report.h"

/* Every key this file can report; main() refuses a knowledge base that lacks one. */
static const char *const required_keys[] = {"socket_fallback",
                                            "libibverbs_missing",
                                            "rdma_device_unusable",
                                            "no_rdma_device",
                                            "ib_disabled_by_env",
                                            "rdma_hidden_from_job",
                                            "gdr_asymmetric",
                                            "gdr_not_used",
                                            "gdr_disabled_distance",
                                            "nic_shared",
                                            "ib_retry_exceeded",
                                            "ib_local_protection_error",
                                            "ib_completion_error",
                                            "ib_wrong_hca",
                                            "ib_gid_index_wrong",
                                            "shm_too_small",
                                            "cuda_driver_too_old",
                                            "fabric_manager_not_ready",
                                            "bootstrap_no_interface",
                                            "socket_ifname_loopback",
                                            "p2p_hang_acs_iommu",
                                            "tuner_plugin_partial",
                                            "nccl_version_mismatch",
                                            "env_mismatch",
                                            "busbw_below_expected",
                                            "two_node_tree_busbw",
                                            "busbw_mid_sweep_drop",
                                            "busbw_outlier",
                                            "runs_differ",
                                            "port_down",
                                            "port_rate_differs",
                                            "sm_differs",
                                            "gpu_nic_far",
                                            "topo_gpu_nic",
                                            "topo_gpu_no_gdr_nic",
                                            "nic_no_gpu",
                                            "nvlink_inactive",
                                            "gpu_xid",
                                            "nic_link_down",
                                            "report_hosts_differ",
                                            "nccl_warning",
                                            "nccl_error",
                                            "job_error"};

/* Signatures whose id is reported directly as the finding of the same key. */
static const char *const direct_sigs[] = {
    "shm_too_small",          "cuda_driver_too_old",  "fabric_manager_not_ready",
    "ib_wrong_hca",           "ib_gid_index_wrong",   "bootstrap_no_interface",
    "socket_ifname_loopback", "gdr_disabled_distance"};

const char *nt_doctor_kb_missing(const nt_kb_t *kb)
{
    for (size_t i = 0; i < sizeof(required_keys) / sizeof(required_keys[0]); i++)
        if (!nt_kb_finding(kb, required_keys[i]))
            return required_keys[i];
    return NULL;
}


static void nt_f_evlist(nt_finding_t *f, const nt_evlist_t *l)
{
    for (size_t i = 0; i < l->n; i++)
        nt_evlist_add_ev(&f->ev, &l->ev[i]);
    if (l->total > l->n)
        f->ev.total += l->total - l->n;
}

static void nt_f_hosts(nt_finding_t *f, const nt_map_t *m)
{
    for (size_t i = 0; i < m->n; i++)
        nt_map_put(&f->hosts, m->keys[i], strlen(m->keys[i]));
}

static void nt_f_host(nt_finding_t *f, const char *h)
{
    if (h)
        nt_map_put(&f->hosts, h, strlen(h));
}

static const char *nt_rank_host(const nt_doctor_t *d, long r)
{
    if (r < 0 || (size_t)r >= d->cap_rank_host || !d->rank_host[r])
        return NULL;
    return d->hosts.keys[d->rank_host[r] - 1];
}

static void nt_f_rank(nt_doctor_t *d, nt_finding_t *f, long r)
{
    f->ranks_total++;
    if (f->nranks < sizeof(f->ranks) / sizeof(f->ranks[0]))
        f->ranks[f->nranks++] = (int)r;
    nt_f_host(f, nt_rank_host(d, r));
}



#define f_detail nt_finding_detail
/* rules.c's figures are shown to 2 decimals */
static void nt_f_value(nt_finding_t *f, const char *name, double v)
{
    nt_finding_value(f, name, round(v * 100) / 100);
}

static void nt_link_cause(nt_finding_t *effect, nt_finding_t *cause)
{
    if (effect->ncaused_by < NT_MAX_LINKS)
        effect->caused_by[effect->ncaused_by++] = cause->kb->key;
    if (cause->ncauses < NT_MAX_LINKS)
        cause->causes[cause->ncauses++] = effect->kb->key;
}

static void nt_link_related(nt_finding_t *a, nt_finding_t *b)
{
    if (a->nrelated < NT_MAX_LINKS)
        a->related[a->nrelated++] = b->kb->key;
    if (b->nrelated < NT_MAX_LINKS)
        b->related[b->nrelated++] = a->kb->key;
}

static nt_finding_t *nt_find(nt_doctor_t *d, const char *key)
{
    for (size_t i = 0; i < d->nfindings; i++)
        if (strcmp(d->findings[i].kb->key, key) == 0)
            return &d->findings[i];
    return NULL;
}

static const nt_sighit_t *nt_sig(const nt_doctor_t *d, const char *id)
{
    int i = nt_kb_signature_index(d->kb, id);
    return i >= 0 && d->sig[i].count ? &d->sig[i] : NULL;
}

/* Finding from a signature, with its lines and hosts. */
static nt_finding_t *nt_from_sig(nt_doctor_t *d, const char *key, const char *sig_id)
{
    const nt_sighit_t *h = nt_sig(d, sig_id);
    if (!h)
        return NULL;
    nt_finding_t *f = nt_finding_add(d, key);
    if (!f)
        return NULL;
    nt_f_evlist(f, &h->ev);
    nt_f_hosts(f, &h->hosts);
    return f;
}

static const nt_env_t *nt_env(const nt_doctor_t *d, const char *name)
{
    for (size_t i = 0; i < d->nenv; i++)
        if (strcmp(d->env[i].name, name) == 0)
            return &d->env[i];
    return NULL;
}

/* Replaces "{hcas}" in the knowledge base's fix text. */
static char *nt_fill_fix(const char *fix, const char *hcas)
{
    const char *p = strstr(fix, "{hcas}");
    if (!p)
        return NULL;
    const char *v = hcas ? hcas : "<hca>";
    size_t n = strlen(fix) - 6 + strlen(v) + 1;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%.*s%s%s", (int)(p - fix), fix, v, p + 6);
    return out;
}

/* ---- network ------------------------------------------------------------------------------ */

static int nt_single_node_known(const nt_doctor_t *d)
{
    if (d->nnodes == 1)
        return 1;
    if (d->nnodes < 0) {
        /* nccl-tests listed every rank on one host */
        for (size_t i = 0; i < d->ntables; i++)
            if (d->tables[i].nhosts > 1)
                return 0;
        if (d->run_hosts.n == 1)
            return 1;
    }
    return 0;
}

static void nt_diagnose_network(nt_doctor_t *d)
{
    int socket = nt_map_find(&d->networks, "Socket", 6) >= 0 || d->socket_ev.n > 0;
    int single = nt_single_node_known(d);
    const nt_env_t *ibdis = nt_env(d, "NCCL_IB_DISABLE");
    int ib_disabled = ibdis && strcmp(ibdis->value, "1") == 0;
    const char *cause = NULL;
    if (nt_sig(d, "rdma_device_unusable"))
        cause = "rdma_device_unusable";
    else if (nt_sig(d, "libibverbs_missing"))
        cause = "libibverbs_missing";
    else if (ib_disabled)
        cause = "ib_disabled_by_env";
    else if (nt_sig(d, "ib_no_device"))
        cause = "no_rdma_device";

    if (socket && !single) {
        nt_finding_t *f = nt_finding_add(d, "socket_fallback");
        if (!f)
            return;
        nt_f_evlist(f, &d->socket_ev);
        for (size_t i = 0; i < d->socket_ev.n; i++) {
            /* hosts of the lines that show sockets */
            nt_logline_t l;
            nt_line_parse(d->socket_ev.ev[i].text, &l);
            if (l.host)
                nt_map_put(&f->hosts, l.host, l.host_len);
        }
        if (cause) {
            nt_finding_t *c = NULL;
            if (strcmp(cause, "ib_disabled_by_env") == 0) {
                c = nt_finding_add(d, cause);
                if (c)
                    nt_evlist_add_ev(&c->ev, &ibdis->first);
            } else {
                c = nt_from_sig(d, cause,
                             strcmp(cause, "no_rdma_device") == 0 ? "ib_no_device" : cause);
            }
            if (c) {
                nt_link_cause(f, c);
                /* the evidence of the cause comes first in the chain */
                f_detail(f, "Cause: %s.", c->kb->title);
            }
            /* A host without any RDMA device (a cloud VM) has sockets only: that is what it is,
             * not a fault, unless the job expected RDMA (--expect nics_per_node, a probe report
             * with active ports, NCCL_NET=IB). */
            const nt_env_t *net = nt_env(d, "NCCL_NET");
            int expected = d->hw.nics_per_node > 0 || d->report_active_ports > 0 ||
                           (net && strcasecmp(net->value, "IB") == 0);
            if (c && strcmp(cause, "no_rdma_device") == 0 && !expected) {
                f->severity = c->severity = NT_SEV_INFO;
                f_detail(f, "Information: the hosts have no RDMA device, so sockets are their "
                            "network; give --expect nics_per_node=N, a probe report or set "
                            "NCCL_NET=IB where RDMA was expected.");
            }
        } else {
            f_detail(f, "The log does not show why IB was not used; look for NET/IB lines with "
                        "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET.");
        }
        if (d->nnodes < 0 && d->hosts.n == 1)
            /* NCCL's network carries only traffic between nodes: one host seen, and no line
             * that gives the node count, leaves it open whether any went through it */
            f_detail(f, "One host (%s) and no node count (nNodes) in the log: sockets matter "
                        "only if the job spans nodes.",
                     d->hosts.keys[0]);
        if (d->report_active_ports > 0) {
            /* only hosts that are in both the report and the log are cross-checked */
            nt_map_t common;
            nt_map_init(&common);
            for (size_t i = 0; i < d->report_hosts.n; i++)
                if (nt_map_find(&f->hosts, d->report_hosts.keys[i],
                                strlen(d->report_hosts.keys[i])) >= 0)
                    nt_map_put(&common, d->report_hosts.keys[i], strlen(d->report_hosts.keys[i]));
            if (common.n > 0) {
                nt_finding_t *r = nt_finding_add(d, "rdma_hidden_from_job");
                if (r) {
                    int ports = 0;
                    for (size_t i = 0; i < d->report_ev.n; i++)
                        for (size_t h = 0; h < common.n; h++) {
                            char pat[300];
                            snprintf(pat, sizeof(pat), ": %s ", common.keys[h]);
                            if (strstr(d->report_ev.ev[i].text, pat)) {
                                nt_evlist_add_ev(&r->ev, &d->report_ev.ev[i]);
                                ports++;
                                break;
                            }
                        }
                    nt_f_hosts(r, &common);
                    f_detail(r,
                             "The report %s lists ACTIVE RDMA port(s) on %zu of the host(s) that "
                             "used sockets.",
                             d->report_path ? d->report_path : "", common.n);
                    nt_link_related(f, r);
                    (void)ports;
                }
            }
            if (common.n < d->report_hosts.n || common.n < f->hosts.n) {
                nt_finding_t *m = nt_finding_add(d, "report_hosts_differ");
                if (m) {
                    char a[512] = "", b[512] = "";
                    size_t na = 0, nb = 0;
                    for (size_t i = 0; i < d->report_hosts.n && na + 70 < sizeof(a); i++)
                        if (nt_map_find(&common, d->report_hosts.keys[i],
                                        strlen(d->report_hosts.keys[i])) < 0)
                            na += (size_t)snprintf(a + na, sizeof(a) - na, "%s%s", na ? ", " : "",
                                                   d->report_hosts.keys[i]);
                    for (size_t i = 0; i < f->hosts.n && nb + 70 < sizeof(b); i++)
                        if (nt_map_find(&common, f->hosts.keys[i], strlen(f->hosts.keys[i])) < 0)
                            nb += (size_t)snprintf(b + nb, sizeof(b) - nb, "%s%s", nb ? ", " : "",
                                                   f->hosts.keys[i]);
                    nt_f_evlist(m, &d->report_ev);
                    nt_f_evlist(m, &d->socket_ev);
                    f_detail(m,
                             "Not cross-checked: report host(s) not in the log: %s; log host(s) "
                             "not in the report: %s.",
                             na ? a : "none",
                             nb ? b : (f->hosts.n ? "none" : "unknown (the log names no host)"));
                }
            }
            nt_map_cleanup(&common);
        }
        return;
    }
    if (single)
        return; /* the network is not used on one node: say nothing about it */
    /* No fallback: a cause alone is worth a note only. */
    if (cause && strcmp(cause, "ib_disabled_by_env") != 0) {
        nt_finding_t *c =
            nt_from_sig(d, cause, strcmp(cause, "no_rdma_device") == 0 ? "ib_no_device" : cause);
        if (c) {
            c->severity = NT_SEV_INFO;
            if (nt_sig(d, "bootstrap_no_interface"))
                f_detail(c, "Harmless here: the job failed earlier, at bootstrap (see "
                            "bootstrap_no_interface), and never chose a network.");
            else
                f_detail(c, "No socket fallback is visible in this log, so this is harmless unless "
                            "InfiniBand/RoCE was wanted.");
        }
    }
}

/* ---- GPUDirect RDMA, NIC sharing ---------------------------------------------------------- */

/* The NCCL version every line of the job printed, or NULL when none or several. */
static const char *nt_job_version(const nt_doctor_t *d)
{
    return d->versions.n == 1 ? d->versions.keys[0] : NULL;
}

/* What a path type number means in the job's NCCL version, as detail text. */
static void nt_path_detail(nt_doctor_t *d, nt_finding_t *f, const char *name, long v)
{
    const char *ver = nt_job_version(d);
    const char *t = nt_kb_path_type(d->kb, ver, v);
    if (t) {
        f_detail(f, "%s %ld = %s in NCCL %s.", name, v, t, ver);
        return;
    }
    /* every meaning the number has had, so that the reader sees why it is not decoded */
    char alts[256];
    size_t n = 0;
    alts[0] = '\0';
    for (size_t i = 0; i < d->kb->npaths && n + 40 < sizeof(alts); i++) {
        const nt_kb_pathtypes_t *p = &d->kb->paths[i];
        if (v >= 0 && v < p->nnames)
            n += (size_t)snprintf(alts + n, sizeof(alts) - n, "%s%s in %s..%s", n ? ", " : "",
                                  p->names[v], p->first, p->last);
    }
    f_detail(
        f,
        "%s %ld: path type unknown (%s, and NCCL renumbered its path types between releases)%s%s.",
        name, v,
        ver ? "this NCCL version is not in the knowledge base"
            : "the log does not show one NCCL version",
        n ? "; the number means " : "", alts);
}

/* "2.18.5" within the tags "v2.18.1-1".."v2.28.9-1" (NCCL_VERSION_CODE compared). */
static int nt_version_in(const char *v, const char *first, const char *last)
{
    long x = nt_kb_version_code(v), lo = nt_kb_version_code(first), hi = nt_kb_version_code(last);
    return x >= 0 && lo >= 0 && hi >= 0 && x >= lo && x <= hi;
}

/* Findings straight from NCCL messages the knowledge base knows by their format string. */
static void nt_diagnose_messages(nt_doctor_t *d)
{
    for (size_t i = 0; i < d->kb->nmsgs; i++) {
        const nt_kb_message_t *m = &d->kb->msgs[i];
        const nt_sighit_t *h = &d->msg[i];
        if (!m->finding || !h->count)
            continue;
        nt_finding_t *f = nt_finding_add(d, m->finding->key);
        if (!f)
            continue;
        nt_f_evlist(f, &h->ev);
        nt_f_hosts(f, &h->hosts);
        /* several formats of one message over the releases may match a line: cite the one of the
         * job's NCCL version */
        const char *ver = nt_job_version(d);
        if (ver && h->ev.n && !nt_version_in(ver, m->first, m->last)) {
            nt_logline_t l;
            nt_line_parse(h->ev.ev[0].text, &l);
            for (size_t j = 0; j < d->kb->nmsgs; j++) {
                const nt_kb_message_t *o = &d->kb->msgs[j];
                if (o->finding == m->finding && nt_version_in(ver, o->first, o->last) &&
                    nt_fmt_match(o->format, l.msg, NULL, 0) >= 0) {
                    m = o;
                    break;
                }
            }
        }
        f_detail(f, "NCCL prints this at %s (%s..%s); %lu line(s).", m->at ? m->at : "?",
                 m->first ? m->first : "?", m->last ? m->last : "?", h->count);
        const cJSON *vals = d->msg_values[i], *v;
        cJSON_ArrayForEach (v, vals) {
            int is_path = 0;
            for (int k = 0; k < m->npath_values; k++)
                if (m->path_values[k] && strcmp(m->path_values[k], v->string) == 0)
                    is_path = 1;
            if (cJSON_IsNumber(v)) {
                nt_f_value(f, v->string, v->valuedouble);
                /* a path type is a small integer: a number beyond a long (a %d field of
                 * 20 digits) is no path type and is not converted (that is UB) */
                if (is_path && v->valuedouble >= -0x1p63 && v->valuedouble < 0x1p63)
                    nt_path_detail(d, f, v->string, (long)v->valuedouble);
            } else if (cJSON_IsString(v)) {
                f_detail(f, "%s: %s.", v->string, v->valuestring);
            }
        }
    }
}

static void nt_diagnose_gdr(nt_doctor_t *d)
{
    size_t yes = 0, no = 0;
    for (size_t r = 0; r < d->cap_gdr; r++) {
        if (d->gdr[r] & 1)
            yes++;
        if (d->gdr[r] & 2)
            no++;
    }
    nt_finding_t *dist = nt_from_sig(d, "gdr_disabled_distance", "gdr_disabled_distance");
    if (!dist)
        dist = nt_find(d, "gdr_disabled_distance");
    nt_finding_t *hca = nt_find(d, "gdr_disabled_hca");
    if (!no)
        return;
    if (yes) {
        nt_finding_t *f = nt_finding_add(d, "gdr_asymmetric");
        if (!f)
            return;
        nt_f_evlist(f, &d->gdr_no_ev);
        nt_f_evlist(f, &d->gdr_yes_ev);
        for (size_t r = 0; r < d->cap_gdr; r++)
            if ((d->gdr[r] & 2) && !(d->gdr[r] & 1))
                nt_f_rank(d, f, (long)r);
        f_detail(f,
                 "%zu rank(s) use GDRDMA, %zu rank(s) stage network data through host memory; the "
                 "ranks and hosts named are those without it (a [send] line belongs to its source "
                 "rank, a [receive] line to its destination).",
                 yes, no);
        nt_f_value(f, "ranks_with_gdr", (double)yes);
        nt_f_value(f, "ranks_without_gdr", (double)no);
        if (dist)
            nt_link_cause(f, dist);
        if (hca)
            nt_link_cause(f, hca);
    } else {
        nt_finding_t *f = nt_finding_add(d, "gdr_not_used");
        if (!f)
            return;
        nt_f_evlist(f, &d->gdr_no_ev);
        nt_f_evlist(f, &d->gdr0_ev);
        for (size_t r = 0; r < d->cap_gdr; r++)
            if (d->gdr[r] & 2)
                nt_f_rank(d, f, (long)r);
        f_detail(f, "%lu network connection(s), none with GDRDMA.", d->net_conns);
        if (nt_map_find(&d->transports, "NET/IB", 6) < 0 && !dist && !hca) {
            /* a network plugin (EFA, libfabric) prints /GDRDMA only where its provider does
             * GPUDirect; instances without it (AWS g4dn) run this way by design */
            f->severity = NT_SEV_INFO;
            f_detail(f, "The network is a plugin's, not NET/IB: whether it can use GPUDirect RDMA "
                        "depends on the provider and the instance, so this is not judged a fault.");
        }
        if (dist)
            nt_link_cause(f, dist);
        if (hca)
            nt_link_cause(f, hca);
    }
}

static int nt_gpus_per_node_log(const nt_doctor_t *d)
{
    int g = d->local_ranks;
    for (size_t i = 0; i < d->ntables; i++)
        if (d->tables[i].gpus_per_host > g)
            g = d->tables[i].gpus_per_host;
    for (size_t i = 0; i < d->run_hosts.n; i++)
        if (d->run_hosts.vals[i] > g)
            g = (int)d->run_hosts.vals[i];
    return g;
}

static int nt_nnodes_log(const nt_doctor_t *d)
{
    int n = d->nnodes;
    for (size_t i = 0; i < d->ntables; i++)
        if (d->tables[i].nhosts > n)
            n = d->tables[i].nhosts;
    if ((int)d->run_hosts.n > n)
        n = (int)d->run_hosts.n;
    return n;
}

static void nt_diagnose_nic_shared(nt_doctor_t *d)
{
    int gpn = nt_gpus_per_node_log(d);
    int nics = d->nics_min;
    int multi = nt_nnodes_log(d) > 1 || d->net_conns > 0;
    if (nics <= 0 || gpn <= nics || !multi)
        return;
    if (!d->net_conns && nt_map_find(&d->networks, "IB", 2) < 0)
        return;
    nt_finding_t *f = nt_finding_add(d, "nic_shared");
    if (!f)
        return;
    nt_f_evlist(f, &d->netib_ev);
    const nt_env_t *hca = nt_env(d, "NCCL_IB_HCA");
    if (hca)
        nt_evlist_add_ev(&f->ev, &hca->first);
    nt_evlist_add_ev(&f->ev, &d->comm_ev);
    nt_f_evlist(f, &d->shared_ev);
    for (size_t i = 0; i < d->netib_ev.n; i++) {
        nt_logline_t l;
        nt_line_parse(d->netib_ev.ev[i].text, &l);
        if (l.host)
            nt_map_put(&f->hosts, l.host, l.host_len);
    }
    f_detail(f, "%d GPU(s) per node share %d NIC(s) (%s).", gpn, nics,
             d->nic_names ? d->nic_names : "?");
    if (hca)
        f_detail(f, "NCCL_IB_HCA=%s restricts NCCL to %s.", hca->value,
                 nics == 1 ? "that one device" : "those devices");
    if (d->hw.nics_per_node > nics)
        f_detail(f, "The node has %d NIC(s) (%s).", d->hw.nics_per_node,
                 d->hw.source ? d->hw.source : "given");
    if (d->hw.nics_per_node > 0 && d->hw.nics_per_node <= nics) {
        /* NCCL uses every NIC the node has: the sharing is the platform's design, not a setting */
        f->severity = NT_SEV_INFO;
        f_detail(f,
                 "NCCL uses all %d NIC(s) the node has (%s): the sharing is the hardware's design.",
                 d->hw.nics_per_node, d->hw.source ? d->hw.source : "given");
    }
    nt_f_value(f, "gpus_per_node", gpn);
    nt_f_value(f, "nics_used", nics);
}

/* ---- RDMA completion errors ----------------------------------------------------------------- */

static void nt_diagnose_wc(nt_doctor_t *d)
{
    for (int st = 0; st < 32; st++) {
        if (!d->wc_count[st])
            continue;
        const nt_kb_wc_t *w = NULL;
        for (size_t i = 0; i < d->kb->nwcs; i++)
            if (d->kb->wcs[i].status == st)
                w = &d->kb->wcs[i];
        nt_finding_t *f = nt_finding_add(d, w ? w->finding : "ib_completion_error");
        if (!f)
            continue;
        nt_evlist_add_ev(&f->ev, &d->wc_first[st]);
        f->ev.total += d->wc_count[st] - 1;
        nt_logline_t l;
        nt_line_parse(d->wc_first[st].text, &l);
        if (l.host)
            nt_map_put(&f->hosts, l.host, l.host_len);
        if (w)
            f_detail(f, "Status %d (%s): %s; vendor error %lu (0x%lx); seen %lu time(s).", st,
                     w->name, w->meaning, d->wc_vendor[st], d->wc_vendor[st], d->wc_count[st]);
        else
            f_detail(f, "Status %d; vendor error %lu; seen %lu time(s).", st, d->wc_vendor[st],
                     d->wc_count[st]);
        nt_f_value(f, "wc_status", st);
    }
    const nt_sighit_t *h = nt_sig(d, "ib_completion");
    if (h) {
        /* every host that printed a completion error, whatever the status */
        for (size_t i = 0; i < d->nfindings; i++) {
            const char *k = d->findings[i].kb->key;
            if (strcmp(k, "ib_retry_exceeded") == 0 ||
                strcmp(k, "ib_local_protection_error") == 0 ||
                strcmp(k, "ib_completion_error") == 0)
                nt_f_hosts(&d->findings[i], &h->hosts);
        }
    }
}

/* ---- nccl-tests without MPI ---------------------------------------------------------------- */

/* nccl-tests built without MPI=1 and started by mpirun: every process is a job of its own, so
 * the log holds several "# Avg bus bandwidth" footers, and either the same communicator rank on
 * more than one host or footers that follow each other with no run or table begun between them
 * (a single job has one footer per test, after its own table, and each rank on one host). */
static void nt_diagnose_ncclt_no_mpi(nt_doctor_t *d)
{
    if (d->footer_ev.total < 2 || (!d->rank_other_host_ev.n && !d->footers_together))
        return;
    nt_finding_t *f = nt_finding_add(d, "nccl_tests_built_without_mpi");
    if (!f)
        return;
    nt_f_evlist(f, &d->rank_other_host_ev);
    nt_f_evlist(f, &d->footer_ev);
    nt_f_hosts(f, &d->hosts);
    if (d->rank_other_host_ev.n)
        f_detail(f,
                 "%lu \"# Avg bus bandwidth\" footers in one log, and %lu communicator line(s) "
                 "naming a rank already seen on another host: separate runs, not one job across "
                 "the nodes.",
                 d->footer_ev.total, d->rank_other_host_ev.total);
    else
        f_detail(f,
                 "%lu \"# Avg bus bandwidth\" footers in one log, %lu of them right after "
                 "another with no run or table begun between: runs that went on at once, each "
                 "process its own job, not one job across the nodes.",
                 d->footer_ev.total, d->footers_together);
}

/* ---- P2P hang ------------------------------------------------------------------------------- */

static void nt_diagnose_p2p(nt_doctor_t *d)
{
    const nt_sighit_t *acs = nt_sig(d, "acs_enabled"), *iommu = nt_sig(d, "iommu_fault");
    int stalled = d->tests_started && d->last_p2p_seq && d->last_progress_seq < d->last_p2p_seq;
    if (!acs && !iommu && !stalled)
        return;
    nt_finding_t *f = nt_finding_add(d, "p2p_hang_acs_iommu");
    if (!f)
        return;
    if (stalled) {
        nt_evlist_add_ev(&f->ev, &d->last_p2p);
        f_detail(f, "nccl-tests set up peer-to-peer channels and printed nothing after the last "
                    "one: the run hung there.");
    }
    if (acs) {
        nt_f_evlist(f, &acs->ev);
        f_detail(f, "lspci shows ACS source validation on (ACSCtl: SrcValid+) on %lu bridge(s).",
                 acs->count);
    }
    if (iommu) {
        nt_f_evlist(f, &iommu->ev);
        f_detail(f, "The kernel logged IOMMU faults.");
    }
    if (!stalled && !d->last_p2p_seq)
        f->severity = NT_SEV_WARN;
    if (stalled && !acs && !iommu) {
        f->severity = NT_SEV_WARN;
        f_detail(f, "No ACS/IOMMU evidence in the input: check `lspci -vvv | grep ACSCtl` and "
                    "`dmesg | grep -i iommu`.");
    }
}

/* ---- tuner plugin, versions, environment ---------------------------------------------------- */

static void nt_diagnose_tuner(nt_doctor_t *d)
{
    const char *name = NULL;
    int differ = 0;
    size_t with = 0;
    for (size_t i = 0; i < d->nprocs; i++) {
        const nt_proc_t *p = &d->procs[i];
        if (!p->tuner)
            continue;
        with++;
        if (!name)
            name = p->tuner;
        else if (strcmp(name, p->tuner) != 0)
            differ = 1;
    }
    if (!with)
        return;
    size_t without = 0;
    for (size_t i = 0; i < d->nprocs; i++)
        if (!d->procs[i].tuner && d->procs[i].init_seen)
            without++;
    if (!without && !differ)
        return;
    nt_finding_t *f = nt_finding_add(d, "tuner_plugin_partial");
    if (!f)
        return;
    for (size_t i = 0; i < d->nprocs; i++) {
        const nt_proc_t *p = &d->procs[i];
        if (p->tuner && (!differ || strcmp(p->tuner, name) == 0)) {
            if (f->ev.n < 2)
                nt_evlist_add_ev(&f->ev, &p->first_tuner);
            continue;
        }
        if (!p->init_seen && !p->tuner)
            continue;
        nt_evlist_add_ev(&f->ev, p->tuner ? &p->first_tuner : &p->first_init);
        nt_f_host(f, p->host);
        for (int k = 0; k < p->nranks; k++)
            nt_f_rank(d, f, p->ranks[k]);
    }
    f_detail(f,
             "%zu process(es) loaded tuner plugin '%s'; %zu did not%s. The ranks and hosts named "
             "are those without it.",
             with, name, without, differ ? " or loaded another one" : "");
    nt_f_value(f, "processes_with_plugin", (double)with);
    nt_f_value(f, "processes_without_plugin", (double)without);
}

/* Appends to buf (size n, at offset *off) the ranks of p, or its id when it printed none:
 * "rank 0,1 (node01)" or "node01:100". */
static void nt_tuning_who(char *buf, size_t n, size_t *off, const nt_proc_t *p)
{
    if (*off >= n)
        return;
    size_t o = *off;
    if (p->nranks > 0) {
        o += (size_t)snprintf(buf + o, n - o, "%s ", p->nranks > 1 ? "ranks" : "rank");
        for (int k = 0; k < p->nranks && o < n; k++)
            o += (size_t)snprintf(buf + o, n - o, "%s%d", k ? "," : "", p->ranks[k]);
        if (o < n)
            o += (size_t)snprintf(buf + o, n - o, " (%s)", p->host ? p->host : p->id);
    } else {
        o += (size_t)snprintf(buf + o, n - o, "%s", p->id);
    }
    *off = o < n ? o : n;
}

/* Ranks of one job and nettune's tuning file (plugins/nccl-tuner/src/plugin.c init_common logs
 * "TUNER/nettune: tuning file '%s' (%s) fnv1a64 %016llx: ..." on every rank at init):
 *  - tuning_file_differs (error): two or more fnv1a64 hashes (the same contents at two paths are
 *    the same file); each rank chooses from its own file, so they can run different algorithms
 *    for one collective and hang. Evidence: the first line of each hash; the detail names each
 *    hash with its ranks/hosts and that line.
 *  - tuning_file_missing (warn): some processes logged the line, others that printed NCCL init
 *    lines (init_seen) did not: those ran with NCCL's own choices or another tuner. */
static void nt_diagnose_tuning_files(nt_doctor_t *d)
{
    enum { NT_TUNING_HASHES = 8 };
    const nt_proc_t *first_of[NT_TUNING_HASHES]; /* the first process of each hash */
    size_t nseen = 0, nfiles = 0, with = 0, without = 0;
    for (size_t i = 0; i < d->nprocs; i++) {
        const nt_proc_t *p = &d->procs[i];
        if (!p->tuning) {
            without += p->init_seen != 0;
            continue;
        }
        with++;
        size_t k = 0;
        while (k < nseen && strcmp(first_of[k]->tuning_hash, p->tuning_hash) != 0)
            k++;
        if (k == nseen) {
            nfiles++;
            if (nseen < NT_TUNING_HASHES)
                first_of[nseen++] = p;
        }
    }
    if (nfiles > 1) {
        nt_finding_t *f = nt_finding_add(d, "tuning_file_differs");
        if (f) {
            for (size_t k = 0; k < nseen; k++) {
                const nt_proc_t *h = first_of[k];
                char who[512];
                size_t off = 0, nprocs = 0;
                who[0] = '\0';
                for (size_t i = 0; i < d->nprocs; i++) {
                    const nt_proc_t *p = &d->procs[i];
                    if (!p->tuning || strcmp(p->tuning_hash, h->tuning_hash) != 0)
                        continue;
                    if (nprocs++ && off < sizeof(who))
                        off += (size_t)snprintf(who + off, sizeof(who) - off, "; ");
                    nt_tuning_who(who, sizeof(who), &off, p);
                    if (k > 0) { /* the ranks and hosts named: those not using the first file */
                        nt_f_host(f, p->host);
                        for (int r = 0; r < p->nranks; r++)
                            nt_f_rank(d, f, p->ranks[r]);
                    }
                }
                nt_evlist_add_ev(&f->ev, &h->tuning_ev);
                f_detail(f, "%s: %s; read from %s:%lu.", h->tuning, who,
                         d->inputs[h->tuning_ev.input].path, h->tuning_ev.line);
            }
            f_detail(f,
                     "%zu different tuning files (by fnv1a64); the ranks and hosts named are those "
                     "not using the first one.",
                     nfiles);
            nt_f_value(f, "files", (double)nfiles);
        }
    }
    if (!with || !without)
        return;
    nt_finding_t *f = nt_finding_add(d, "tuning_file_missing");
    if (!f)
        return;
    nt_evlist_add_ev(&f->ev, &first_of[0]->tuning_ev);
    char who[512];
    size_t off = 0, n = 0;
    who[0] = '\0';
    for (size_t i = 0; i < d->nprocs; i++) {
        const nt_proc_t *p = &d->procs[i];
        if (p->tuning || !p->init_seen)
            continue;
        if (p->tuning_none_ev.text) /* the plugin's own line saying it uses no file */
            nt_evlist_add_ev(&f->ev, &p->tuning_none_ev);
        else if (p->first_init.text)
            nt_evlist_add_ev(&f->ev, &p->first_init);
        else if (p->first_tuner.text)
            nt_evlist_add_ev(&f->ev, &p->first_tuner);
        nt_f_host(f, p->host);
        for (int r = 0; r < p->nranks; r++)
            nt_f_rank(d, f, p->ranks[r]);
        if (n++ && off < sizeof(who))
            off += (size_t)snprintf(who + off, sizeof(who) - off, "; ");
        nt_tuning_who(who, sizeof(who), &off, p);
    }
    f_detail(f,
             "%zu process(es) logged nettune's tuning file (%s); %zu that printed NCCL init lines "
             "did not: %s. The ranks and hosts named are those without the line.",
             with, first_of[0]->tuning, without, who);
    nt_f_value(f, "processes_with_file", (double)with);
    nt_f_value(f, "processes_without_file", (double)without);
}

static void nt_diagnose_versions_env(nt_doctor_t *d)
{
    if (d->versions.n > 1) {
        nt_finding_t *f = nt_finding_add(d, "nccl_version_mismatch");
        if (f) {
            char list[256];
            size_t n = 0;
            list[0] = '\0';
            for (size_t i = 0; i < d->versions.n && i < 4; i++) {
                nt_evlist_add_ev(&f->ev, &d->version_ev[i]);
                n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "",
                                      d->versions.keys[i]);
                if (n >= sizeof(list))
                    break;
            }
            f_detail(f, "Versions seen: %s.", list);
        }
    }
    for (size_t i = 0; i < d->nenv; i++) {
        const nt_env_t *e = &d->env[i];
        if (!e->mismatch)
            continue;
        nt_finding_t *f = nt_finding_add(d, "env_mismatch");
        if (!f)
            continue;
        nt_evlist_add_ev(&f->ev, &e->first);
        nt_evlist_add_ev(&f->ev, &e->first_other);
        f_detail(f, "%s is '%s' on some ranks and '%s' on others.", e->name, e->value, e->other);
    }
    /* Not propagated: NCCL echoes a variable once per process, from whichever thread reads it
     * first, so only processes that reached the same init stage (Init COMPLETE: init has read
     * every variable it reads) are compared; "absent" elsewhere is unknown. */
    for (size_t i = 0; i < d->nenv; i++) {
        const nt_env_t *e = &d->env[i];
        if (e->from_cmdline)
            continue;
        size_t with = 0, without = 0, unknown = 0;
        const nt_proc_t *miss = NULL;
        for (size_t k = 0; k < d->nprocs; k++) {
            const nt_proc_t *p = &d->procs[k];
            int has = nt_map_find(&p->env, e->name, strlen(e->name)) >= 0;
            if (has)
                with++;
            else if (p->complete) {
                without++;
                if (!miss)
                    miss = p;
            } else if (p->init_seen)
                unknown++;
        }
        size_t with_complete = 0;
        for (size_t k = 0; k < d->nprocs; k++)
            if (d->procs[k].complete &&
                nt_map_find(&d->procs[k].env, e->name, strlen(e->name)) >= 0)
                with_complete++;
        if (!with_complete || !without)
            continue;
        nt_finding_t *f = nt_finding_add(d, "env_mismatch");
        if (!f)
            continue;
        nt_evlist_add_ev(&f->ev, &e->first);
        if (miss)
            nt_evlist_add_ev(&f->ev, &miss->first_init);
        for (size_t k = 0; k < d->nprocs; k++) {
            const nt_proc_t *p = &d->procs[k];
            if (p->complete && nt_map_find(&p->env, e->name, strlen(e->name)) < 0 && p->host)
                nt_f_host(f, p->host);
        }
        f_detail(
            f,
            "%s=%s is echoed by %zu process(es) but not by %zu other(s) that also reached Init "
            "COMPLETE (first: %s): it is not set there (not exported to every rank)%s.",
            e->name, e->value, with, without, miss ? miss->id : "?",
            unknown ? "; processes that did not reach Init COMPLETE are not counted (unknown)"
                    : "");
    }
}

/* ---- nccl-tests busbw -------------------------------------------------------------------------
 */

static const nt_kb_gpu_t *nt_kb_gpu(const nt_doctor_t *d, const char *model)
{
    if (!model)
        return NULL;
    for (size_t i = 0; i < d->kb->ngpus; i++)
        if (strstr(model, d->kb->gpus[i].match))
            return &d->kb->gpus[i];
    return NULL;
}

static void nt_set_basis(nt_table_t *t, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    free(t->basis);
    t->basis = strdup(buf);
}

/* The collective of a table whose log does not name the test, from the table itself: the one
 * rule in lib/nccl/nccltests.c (nt_ncclt_infer_coll). Sets t->coll when one collective fits, and
 * t->coll_note with the reasoning (the candidates when several fit). */
static void nt_infer_coll(nt_doctor_t *d, nt_table_t *t, int n)
{
    const nt_ncclt_table_t *lt = nt_ncclt_reader_table(d->ncclt, t->sweep);
    char how[256] = "";
    if (!lt || n < 2)
        return;
    const char *one = nt_ncclt_infer_coll(lt, n, how, sizeof(how));
    if (one) {
        t->coll = strdup(one);
        t->coll_source = "table";
    }
    if (how[0]) {
        free(t->coll_note);
        t->coll_note = strdup(how);
    }
}

/* The slowest NIC speed the log's NET/IB device lines print (NCCL 2.27+, "speed=" in Mb/s, read
 * by lib/nccl/nccllog.c), in Gb/s; -1 when no line shows one. */
static double nt_log_nic_rate(const nt_doctor_t *d)
{
    double r = -1;
    for (size_t i = 0; i < d->ninputs; i++) {
        const nt_nccllog_t *g = d->inputs[i].log;
        for (size_t k = 0; g && k < g->nnics; k++)
            if (g->nic_Gbps[k] > 0 && (r < 0 || g->nic_Gbps[k] < r))
                r = g->nic_Gbps[k];
    }
    return r;
}

static void nt_judge_table(nt_doctor_t *d, nt_table_t *t, const nt_hw_t *hw)
{
    t->plateau = -1;
    t->expected = -1;
    t->ratio = -1;
    t->network_GBps = -1;
    for (size_t i = 0; i < t->ntop; i++) {
        double b =
            t->top[i].busbw_oop > t->top[i].busbw_ip ? t->top[i].busbw_oop : t->top[i].busbw_ip;
        if (b > t->plateau)
            t->plateau = b;
    }
    if (t->ntop == 0) {
        nt_set_basis(t, "no result rows (the run stopped before the first size)");
        return;
    }
    /* a run cut short (the job killed or hung mid-sweep): no "Avg bus bandwidth" footer and the
     * largest row below the header's maxBytes; its largest sizes are not the plateau */
    const nt_ncclt_table_t *lt = nt_ncclt_reader_table(d->ncclt, t->sweep);
    /* a run that returned wrong data (nt_diagnose_wrong_results): no figure to judge */
    if (lt && lt->oob_values > 0) {
        snprintf(t->not_judged_buf, sizeof(t->not_judged_buf),
                 "the run returned wrong data: %ld out of bounds values", lt->oob_values);
        t->not_judged = t->not_judged_buf;
        nt_set_basis(t, "not judged: %s", t->not_judged);
        return;
    }
    if (!t->complete && t->max_bytes > t->top[0].bytes) {
        char have[32], want[32];
        int partial = t->cut_ev.text && lt && lt->partial_line == t->cut_ev.line;
        nt_bytes_str(have, sizeof(have), t->top[0].bytes);
        nt_bytes_str(want, sizeof(want), t->max_bytes);
        nt_finding_t *f = nt_finding_add(d, "run_cut_short");
        if (f) {
            if (t->run_ev.text)
                nt_evlist_add_ev(&f->ev, &t->run_ev);
            nt_evlist_add(&f->ev, t->top[0].input, t->top[0].line, t->top[0].text);
            if (partial)
                nt_evlist_add_ev(&f->ev, &t->cut_ev);
            f_detail(f, "%s%srun cut short at %s of %s (no footer%s): %lu row(s) read.",
                     t->coll ? t->coll : "", t->coll ? ": " : "", have, want,
                     partial ? ", last row incomplete" : "", t->rows);
            nt_f_value(f, "last_bytes", (double)t->top[0].bytes);
            nt_f_value(f, "max_bytes", (double)t->max_bytes);
            for (size_t h = 0; h < d->run_hosts.n && h < 64; h++)
                nt_f_host(f, d->run_hosts.keys[h]);
        }
        snprintf(t->not_judged_buf, sizeof(t->not_judged_buf), "run cut short at %s of %s", have,
                 want);
        t->not_judged = t->not_judged_buf;
        nt_set_basis(t, "not judged: %s (no footer%s)", t->not_judged,
                  partial ? ", last row incomplete" : "");
        return;
    }
    /* busbw rises with the message size until latency no longer matters: a sweep that ends
     * below NT_PLATEAU_MIN_BYTES has not reached the plateau, whatever the hardware */
    if (t->top[0].bytes < NT_PLATEAU_MIN_BYTES) {
        char have[32], need[32];
        snprintf(t->not_judged_buf, sizeof(t->not_judged_buf),
                 "the sweep ends at %s, the plateau needs sizes up to %s or more: rerun with -e 8G",
                 nt_bytes_str(have, sizeof(have), t->top[0].bytes),
                 nt_bytes_str(need, sizeof(need), NT_PLATEAU_MIN_BYTES));
        t->not_judged = t->not_judged_buf;
        nt_set_basis(t, "not judged: %s", t->not_judged);
        return;
    }
    int nnodes = t->nhosts > 0 ? t->nhosts : d->nnodes;
    /* GPUs per node: the run's own shape first (a job may use fewer GPUs than the node has) */
    int gpn = t->gpus_per_host > 0 ? t->gpus_per_host
              : d->local_ranks > 0 ? d->local_ranks
                                   : hw->gpus_per_node;
    int nics = hw->nics_per_node > 0 ? hw->nics_per_node : d->nics_min;
    const char *nics_src =
        hw->nics_per_node > 0
            ? (hw->source && strcmp(hw->source, "report") == 0 ? "--report" : "--expect")
            : "the NET/IB line";
    double rate = hw->nic_rate_Gbps;
    const char *model = hw->gpu_model ? hw->gpu_model : t->gpu_model;
    if (!t->coll && hw->collective) {
        t->coll = strdup(hw->collective);
        t->coll_source = "expect";
    }
    if (!t->coll)
        nt_infer_coll(d, t, t->nranks > 0 ? t->nranks : d->nranks);
    const char *coll = t->coll ? t->coll : "unknown";

    if (hw->min_busbw_GBps > 0) {
        t->expected = hw->min_busbw_GBps / hw->efficiency;
        nt_set_basis(t, "--expect min_busbw_GBps=%.1f", hw->min_busbw_GBps);
    } else if (nnodes >= 2) {
        const char *rate_src = NULL;
        if (rate <= 0 && (rate = nt_log_nic_rate(d)) > 0)
            rate_src = "NIC rate from the log's NET/IB device lines (speed=, NCCL 2.27+)";
        if (rate <= 0) {
            if (d->report_hw_unused) {
                snprintf(t->not_judged_buf, sizeof(t->not_judged_buf),
                         "NIC rate unknown: %s, its hardware not used: give --expect "
                         "nic_rate_Gbps=N",
                         d->report_hw_unused);
                t->not_judged = t->not_judged_buf;
                nt_set_basis(t, "not judged: %s", t->not_judged);
                return;
            }
            t->not_judged = "NIC rate unknown: give --expect nic_rate_Gbps=N or --report";
            nt_set_basis(t,
                      "not judged: NIC rate unknown (give --expect nic_rate_Gbps=N or --report)");
            return;
        }
        int lanes = nics > 0 && gpn > 0 ? (nics < gpn ? nics : gpn) : nics > 0 ? nics : gpn;
        if (lanes <= 0) {
            t->not_judged = "NICs per node unknown: give --expect nics_per_node=N or --report";
            nt_set_basis(t, "not judged: NICs per node unknown (give --expect nics_per_node=N)");
            return;
        }
        t->network_GBps = lanes * rate / 8.0;
        t->expected = t->network_GBps;
        /* The node's figure, worded so that no number reads as a GPU count: "1 NIC x 400 Gb/s = 50
         * GB/s per node (400 Gb/s / 8 bits per byte)". Lanes are min(NICs, GPUs per node): a GPU
         * drives at most one NIC. */
        char node[256], used[96] = "";
        if (nics > 0 && gpn > 0 && nics > gpn)
            snprintf(used, sizeof(used), "; %d GPU%s per node use%s %d of the node's %d NICs", gpn,
                     gpn == 1 ? "" : "s", gpn == 1 ? "s" : "", lanes, nics);
        if (lanes == 1)
            snprintf(node, sizeof(node),
                     "1 NIC x %.0f Gb/s = %.0f GB/s per node (%.0f Gb/s / 8 bits per byte)%s; NIC "
                     "count from %s",
                     rate, t->network_GBps, rate, used, nics_src);
        else
            snprintf(node, sizeof(node),
                     "%d NICs x %.0f Gb/s = %.0f GB/s per node (%.0f Gb/s / 8 bits per byte)%s; "
                     "NIC count from %s",
                     lanes, rate, t->network_GBps, lanes * rate, used, nics_src);
        /* nccl-tests' busbw per collective (doc/PERFORMANCE.md): ring-like collectives move the
         * node's NIC bandwidth; sendrecv and alltoall report per-rank figures. */
        if (strcmp(coll, "sendrecv") == 0 && gpn > 0) {
            t->expected = t->network_GBps / gpn;
            nt_set_basis(t, "%s; sendrecv: shared by %d rank%s per node = %.1f GB/s per rank", node,
                      gpn, gpn == 1 ? "" : "s", t->expected);
        } else if (strcmp(coll, "alltoall") == 0 && gpn > 0 && t->nranks > gpn) {
            t->expected = t->network_GBps / gpn * (t->nranks - 1) / (double)(t->nranks - gpn);
            nt_set_basis(t,
                      "%s; alltoall share per rank: %.0f GB/s / %d rank%s per node x (n-1)/(n-%d) "
                      "with n = %d ranks = %.1f GB/s",
                      node, t->network_GBps, gpn, gpn == 1 ? "" : "s", gpn, t->nranks, t->expected);
        } else {
            nt_set_basis(t, "%s", node);
        }
        if (rate_src) {
            char *b = strdup(t->basis ? t->basis : "");
            if (b)
                nt_set_basis(t, "%s; %s", b, rate_src);
            free(b);
        }
    } else if (nnodes == 1) {
        const nt_kb_gpu_t *g = nt_kb_gpu(d, model);
        if (!g) {
            t->not_judged = "single node, GPU model not in the knowledge base: give --expect "
                            "min_busbw_GBps=N";
            nt_set_basis(t, "not judged: single node, GPU model %s%s%s not in the knowledge base",
                      model ? "'" : "unknown", model ? model : "", model ? "'" : "");
            return;
        }
        if (gpn != g->gpus_per_node) {
            t->not_judged = "single node, no knowledge-base figure for this GPU count: give "
                            "--expect min_busbw_GBps=N";
            nt_set_basis(t,
                      "not judged: the knowledge base has %s figures for %d GPUs per node, this "
                      "run has %d",
                      g->match, g->gpus_per_node, gpn);
            return;
        }
        t->expected = g->busbw_GBps;
        nt_set_basis(t, "single node, %d x %s: %s", gpn, g->match,
                  g->note ? g->note : "knowledge base figure");
    } else {
        t->not_judged = "number of nodes unknown: give --expect min_busbw_GBps=N";
        nt_set_basis(t, "not judged: number of nodes unknown");
        return;
    }
    t->ratio = t->plateau / t->expected;
    const char *algo = t->algo;
    int ring = algo && strcasestr(algo, "ring") && !strcasestr(algo, "tree");
    if (nnodes == 2 && t->network_GBps > 0 && t->plateau > t->network_GBps && !ring &&
        (strcmp(coll, "all_reduce") == 0 || strcmp(coll, "unknown") == 0)) {
        t->verdict = "pass";
        nt_finding_t *f = nt_finding_add(d, "two_node_tree_busbw");
        if (f) {
            nt_evlist_add(&f->ev, t->top[0].input, t->top[0].line, t->top[0].text);
            f_detail(f,
                     "busbw %.1f GB/s at the largest sizes is above the %.0f GB/s the NICs can "
                     "carry: %s.",
                     t->plateau, t->network_GBps, t->basis);
            nt_f_value(f, "plateau_busbw_GBps", t->plateau);
            nt_f_value(f, "network_busbw_GBps", t->network_GBps);
        }
        return;
    }
    if (t->ratio >= hw->efficiency) {
        t->verdict = "pass";
        return;
    }
    nt_severity_t sev = t->ratio < hw->error_efficiency ? NT_SEV_ERROR : NT_SEV_WARN;
    t->verdict = sev == NT_SEV_ERROR ? "fail" : "warn";
    nt_finding_t *f = nt_finding_add(d, "busbw_below_expected");
    if (!f)
        return;
    /* advice that fits the job: no Ring advice where it is set already or cannot matter (2 ranks:
     * ring and tree are the same pattern), no NCCL_DEBUG=INFO advice when the log has INFO lines,
     * nothing set already suggested again */
    if (!f->fix) {
        int two_ranks = (t->nranks > 0 ? t->nranks : d->nranks) == 2;
        int info = d->netib_ev.n > 0 || d->versions.n > 0;
        const char *const drop[] = {
            ring || two_ranks || nnodes != 2
                ? "On 2 nodes rerun with NCCL_ALGO=Ring for a network figure; "
                : NULL,
            info ? "rerun with NCCL_DEBUG=INFO and check NIC selection" : NULL,
            nt_env(d, "NCCL_MIN_CTAS")
                ? "try NCCL_MIN_CTAS=16..32 and NCCL_IB_QPS_PER_CONNECTION=2; "
                : NULL};
        char *fx = strdup(f->kb->fix);
        for (size_t k = 0; fx && k < sizeof(drop) / sizeof(drop[0]); k++) {
            char *at = drop[k] ? strstr(fx, drop[k]) : NULL;
            if (!at)
                continue;
            if (k == 1) { /* keep the check, drop the rerun: "check NIC selection" */
                memmove(at, at + strlen("rerun with NCCL_DEBUG=INFO and "),
                        strlen(at + strlen("rerun with NCCL_DEBUG=INFO and ")) + 1);
                continue;
            }
            memmove(at, at + strlen(drop[k]), strlen(at + strlen(drop[k])) + 1);
        }
        if (fx && fx[0] >= 'a' && fx[0] <= 'z')
            fx[0] = (char)(fx[0] - 'a' + 'A');
        f->fix = fx;
    }
    int first = f->ev.n == 0;
    if (first || sev > f->severity)
        f->severity = sev;
    for (size_t i = 0; i < t->ntop; i++)
        nt_evlist_add(&f->ev, t->top[i].input, t->top[i].line, t->top[i].text);
    f_detail(f,
             "%s%sbusbw %.1f GB/s at the largest sizes (max over the %zu largest, up to %llu "
             "bytes) is %.0f%% of the expected %.0f GB/s: %s.",
             t->coll ? t->coll : "", t->coll ? ": " : "", t->plateau, t->ntop, t->top[0].bytes,
             100 * t->ratio, t->expected, t->basis);
    if (t->avg_busbw >= 0)
        f_detail(f, "(\"Avg bus bandwidth\" %.1f is not used.)", t->avg_busbw);
    if (nnodes == 2 && !ring)
        f_detail(
            f, "This was a 2-node run without NCCL_ALGO=Ring: rerun with it for a network figure.");
    if (!f->values || t->ratio < cJSON_GetNumberValue(cJSON_GetObjectItem(f->values, "ratio"))) {
        nt_f_value(f, "plateau_busbw_GBps", t->plateau);
        nt_f_value(f, "expected_busbw_GBps", t->expected);
        nt_f_value(f, "ratio", t->ratio);
    }
    for (size_t h = 0; h < d->run_hosts.n && h < 64; h++)
        nt_f_host(f, d->run_hosts.keys[h]);
}

static const nt_ncclt_row_t *nt_sweep_row(const nt_ncclt_table_t *t, size_t i)
{
    return i < t->nrows ? &t->rows[i] : NULL;
}

/* The row's own line as evidence (the doctor keeps the first NT_ROW_TEXTS row lines of each
 * table); past those, the figures as read, marked so. */
static void nt_row_ev(nt_doctor_t *d, nt_finding_t *f, const nt_ncclt_table_t *t, size_t i)
{
    const nt_ncclt_row_t *r = nt_sweep_row(t, i);
    if (!r || !r->line)
        return;
    for (size_t k = 0; k < d->ntables; k++) {
        const nt_table_t *dt = &d->tables[k];
        if (nt_ncclt_reader_table(d->ncclt, dt->sweep) != t)
            continue;
        for (size_t j = 0; j < dt->nrowtext; j++)
            if (dt->rowline[j] == r->line) {
                nt_evlist_add(&f->ev, t->input, r->line, dt->rowtext[j]);
                return;
            }
    }
    char text[200];
    snprintf(text, sizeof(text),
             "(figures as read) %llu bytes: busbw %.2f GB/s out-of-place, %.2f in-place", r->bytes,
             r->busbw_GBps[0], r->busbw_GBps[1]);
    nt_evlist_add(&f->ev, t->input, r->line, text);
}

/* Mid-sweep drops and outliers of every table (lib/nccl/anomaly.c: the one rule). */
static void nt_diagnose_sweeps(nt_doctor_t *d)
{
    for (size_t i = 0; i < d->ntables; i++) {
        const nt_ncclt_table_t *t = nt_ncclt_reader_table(d->ncclt, d->tables[i].sweep);
        if (!t)
            continue;
        nt_anomaly_t a[16];
        size_t n = nt_anomaly_sweep(t, a, 16);
        for (size_t k = 0; k < n && k < 16; k++) {
            int drop = a[k].kind == NT_ANOMALY_MID_SWEEP_DROP;
            if (!drop && a[k].kind != NT_ANOMALY_OUTLIER)
                continue;
            nt_finding_t *f = nt_finding_add(d, drop ? "busbw_mid_sweep_drop" : "busbw_outlier");
            if (!f)
                continue;
            for (size_t r = a[k].first; r <= a[k].last && r < t->nrows; r++)
                nt_row_ev(d, f, t, r);
            f_detail(f,
                     "%s:%lu %s: busbw %.2f GB/s is %.0f%% of the %.2f GB/s reached at a smaller "
                     "size, at %llu%s%.0llu bytes (%zu size%s).",
                     d->inputs[t->input].path, t->header_line, t->coll ? t->coll : "table",
                     a[k].busbw_GBps, 100 * a[k].ratio, a[k].ref_GBps, a[k].bytes_first,
                     a[k].bytes_last != a[k].bytes_first ? ".." : "",
                     a[k].bytes_last != a[k].bytes_first ? a[k].bytes_last : 0ULL,
                     a[k].last - a[k].first + 1, a[k].last > a[k].first ? "s" : "");
            if (!f->values ||
                a[k].ratio < cJSON_GetNumberValue(cJSON_GetObjectItem(f->values, "ratio"))) {
                nt_f_value(f, "busbw_GBps", a[k].busbw_GBps);
                nt_f_value(f, "ref_busbw_GBps", a[k].ref_GBps);
                nt_f_value(f, "ratio", a[k].ratio);
            }
        }
    }
}

/* The NCCL_* settings echoed in an input, as "NAME=VALUE" (pointers into d->env). */
static size_t nt_input_env(const nt_doctor_t *d, unsigned input, char **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < d->nenv && n < max; i++) {
        const nt_env_t *e = &d->env[i];
        const char *v = NULL;
        if (e->first.text && e->first.input == input)
            v = e->value;
        else if (e->first_other.text && e->first_other.input == input)
            v = e->other;
        if (!v)
            continue;
        size_t l = strlen(e->name) + strlen(v) + 2;
        if ((out[n] = malloc(l)))
            snprintf(out[n++], l, "%s=%s", e->name, v);
    }
    return n;
}

/* Per-call TUNING lines of an input (lib/nccl/nccllog.c), so that a moved switch point is only claimed
 * when they show it. */
static size_t nt_input_calls(const nt_doctor_t *d, unsigned input)
{
    return input < d->ninputs && d->inputs[input].log ? d->inputs[input].log->ncalls : 0;
}

/* Runs of the same test and shape that differ (lib/nccl/anomaly.c). */
static void nt_diagnose_runs(nt_doctor_t *d)
{
    size_t nt = nt_ncclt_reader_ntables(d->ncclt);
    for (size_t i = 0; i < nt; i++) {
        const nt_ncclt_table_t *a = nt_ncclt_reader_table(d->ncclt, i);
        for (size_t j = i + 1; j < nt; j++) {
            const nt_ncclt_table_t *b = nt_ncclt_reader_table(d->ncclt, j);
            if (!a || !b || !nt_anomaly_same_shape(a, b))
                continue;
            nt_anomaly_t an[4];
            size_t n = nt_anomaly_compare(a, b, an, 4);
            for (size_t k = 0; k < n && k < 4; k++) {
                if (an[k].kind != NT_ANOMALY_RUNS_DIFFER)
                    continue;
                nt_finding_t *f = nt_finding_add(d, "runs_differ");
                if (!f)
                    continue;
                const nt_ncclt_table_t *slow = an[k].slower ? b : a, *fast = an[k].slower ? a : b;
                /* the first differing size in both runs, then the rest of the run of sizes */
                for (size_t r = 0; r < b->nrows; r++)
                    if (b->rows[r].bytes == an[k].bytes_first) {
                        nt_row_ev(d, f, a, an[k].first);
                        nt_row_ev(d, f, b, r);
                        break;
                    }
                for (size_t r = an[k].first; r <= an[k].last && r < a->nrows; r++)
                    nt_row_ev(d, f, a, r);
                f_detail(f,
                         "%s: the run at %s:%lu is slower than the one at %s:%lu at %llu..%llu "
                         "bytes (%zu sizes; at worst %.2f vs %.2f GB/s, %.0f%%).",
                         a->coll ? a->coll : "same test", d->inputs[slow->input].path,
                         slow->header_line, d->inputs[fast->input].path, fast->header_line,
                         an[k].bytes_first, an[k].bytes_last, an[k].last - an[k].first + 1,
                         an[k].busbw_GBps, an[k].ref_GBps, 100 * an[k].ratio);
                f_detail(f, "They start to differ at %llu bytes: the slope changes there.",
                         an[k].bytes_first);
                if (nt_input_calls(d, slow->input) && nt_input_calls(d, fast->input))
                    f_detail(f, "Both logs have per-call TUNING lines: compare the algorithm and "
                                "protocol NCCL chose at that size in each.");
                else
                    f_detail(f, "Whether NCCL's algorithm or protocol switch point moved is not "
                                "shown (no per-call TUNING lines: rerun with NCCL_DEBUG=INFO "
                                "NCCL_DEBUG_SUBSYS=TUNING).");
                char *ea[256], *eb[256], name[128];
                size_t na = nt_input_env(d, slow->input, ea, 256),
                       nb = nt_input_env(d, fast->input, eb, 256);
                if (slow->input == fast->input)
                    f_detail(f,
                             "Both runs are in one file: the environment NCCL echoed is the same.");
                else if (!na && !nb)
                    f_detail(f, "Environment: unknown (neither log echoes NCCL_* settings).");
                else if (nt_anomaly_env_diff((const char *const *)ea, na, (const char *const *)eb,
                                             nb, name, sizeof(name)))
                    f_detail(f, "Their environments differ: %s.", name);
                else
                    f_detail(f, "The NCCL_* settings the logs echo are the same.");
                for (size_t x = 0; x < na; x++)
                    free(ea[x]);
                for (size_t x = 0; x < nb; x++)
                    free(eb[x]);
                nt_f_value(f, "ratio", an[k].ratio);
            }
        }
    }
}

/* nccl-tests' own check of the results (-c 1, the default) found wrong data: its footer's "Out of
 * bounds values" count is above 0 (printed "N FAILED", and the run exits non-zero: nccl-tests
 * v2.19.6 src/util.cu:777, src/common.cu:1853; v2.0.0 src/common.cu:879). */
static void nt_diagnose_wrong_results(nt_doctor_t *d)
{
    for (size_t i = 0; i < d->ntables; i++) {
        nt_table_t *t = &d->tables[i];
        const nt_ncclt_table_t *lt = nt_ncclt_reader_table(d->ncclt, t->sweep);
        if (!lt || lt->oob_values <= 0)
            continue;
        nt_finding_t *f = nt_finding_add(d, "nccl_tests_wrong_results");
        if (!f)
            continue;
        if (t->oob_ev.text)
            nt_evlist_add_ev(&f->ev, &t->oob_ev);
        long wrong = 0;
        for (size_t r = 0; r < lt->nrows; r++)
            for (int h = 0; h < 2; h++)
                if (lt->rows[r].wrong[h] > 0 && wrong++ < 4)
                    nt_row_ev(d, f, lt, r);
        f_detail(f, "%s%s%lu check(s) found wrong data (Out of bounds values)%s.",
                 t->coll ? t->coll : "", t->coll ? ": " : "", (unsigned long)lt->oob_values,
                 wrong ? "; the rows with a #wrong count are below" : "");
        nt_f_value(f, "out_of_bounds_values", (double)lt->oob_values);
        for (size_t h = 0; h < d->run_hosts.n && h < 64; h++)
            nt_f_host(f, d->run_hosts.keys[h]);
    }
}

static void nt_diagnose_tests(nt_doctor_t *d, const nt_hw_t *hw)
{
    for (size_t i = 0; i < d->ntables; i++) {
        nt_judge_table(d, &d->tables[i], hw);
        nt_table_t *t = &d->tables[i];
        if (t->not_judged) {
            char buf[300];
            snprintf(buf, sizeof(buf), "busbw (%s)", t->not_judged);
            nt_not_judged_add(d, buf);
        }
    }
    nt_diagnose_sweeps(d);
    nt_diagnose_runs(d);
    nt_diagnose_wrong_results(d);
    nt_finding_t *b = nt_find(d, "busbw_below_expected");
    /* GPUDirect RDMA off because GPU and NIC are across the CPU interconnect: with low busbw
     * (or a drop), the GPU/NIC locality is the lead */
    nt_finding_t *far = nt_find(d, "gpu_nic_far");
    nt_finding_t *dist = nt_find(d, "gdr_disabled_distance");
    int sys = far != NULL || (dist && dist->detail && strstr(dist->detail, "= SYS"));
    if (b && sys) {
        nt_finding_t *c = far ? far : dist;
        nt_link_cause(b, c);
        f_detail(b,
                 "GPUDirect RDMA is off across the CPU interconnect (%s): GPU/NIC locality is the "
                 "likely cause; put each GPU's traffic on a NIC of its own socket.",
                 c->kb->key);
    }
    if (!b)
        return;
    nt_finding_t *g = nt_find(d, "gdr_not_used");
    if (g)
        nt_link_related(b, g);
    nt_finding_t *s = nt_find(d, "socket_fallback");
    if (s)
        nt_link_cause(b, s);
    nt_finding_t *n = nt_find(d, "nic_shared");
    if (n)
        nt_link_related(b, n);
}

/* ---- warnings and errors nobody explained --------------------------------------------------- */

static void nt_diagnose_leftovers(nt_doctor_t *d)
{
    if (d->warn_unexplained.n) {
        nt_finding_t *f = nt_finding_add(d, "nccl_warning");
        if (f) {
            nt_f_evlist(f, &d->warn_unexplained);
            for (size_t i = 0; i < d->warn_unexplained.n; i++) {
                nt_logline_t l;
                nt_line_parse(d->warn_unexplained.ev[i].text, &l);
                if (l.host)
                    nt_map_put(&f->hosts, l.host, l.host_len);
            }
        }
    }
    /* A log that shows a failure never passes: where no rule gave an error, an NCCL failure
     * is the catch-all nccl_error, and else a failure that is not NCCL's (a CUDA error the
     * framework raised, torchrun's ChildFailedError after a crash) job_error. */
    static const char *const catch_all[][2] = {{"nccl_error", "nccl_failure"},
                                              {"job_error", "job_failure"}};
    for (size_t c = 0; c < sizeof(catch_all) / sizeof(catch_all[0]); c++) {
        if (!nt_sig(d, catch_all[c][1]))
            continue;
        for (size_t i = 0; i < d->nfindings; i++)
            if (d->findings[i].severity == NT_SEV_ERROR)
                return;
        (void)nt_from_sig(d, catch_all[c][0], catch_all[c][1]);
    }
}

/* Whether key is one of the catch-alls (nt_diagnose_leftovers): no cause of its own. */
static int nt_is_catch_all(const char *key)
{
    return strcmp(key, "nccl_warning") == 0 || strcmp(key, "nccl_error") == 0 ||
           strcmp(key, "job_error") == 0;
}

static const char *nt_job_version(const nt_doctor_t *d);

/* ---- jobs that fail without an NCCL error ---------------------------------------------------- */

static int nt_cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return x < y ? -1 : x > y;
}

/* What PyTorch's flight recorder said about a timeout (the facts: analyze_int.h, read from
 * torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp's lines): which ranks' own watchdog signalled
 * the dump first (the ranks stuck in the collective, against those that only observed the
 * signal), and whether a dump of each rank's last collectives exists or how to get one next
 * time: TORCH_NCCL_TRACE_BUFFER_SIZE (0: nothing recorded) and TORCH_NCCL_DUMP_ON_TIMEOUT (0:
 * recorded, not dumped), dumped to TORCH_NCCL_DEBUG_INFO_TEMP_FILE's prefix and the rank
 * (/tmp/nccl_trace_rank_ by default, DebugInfoWriter). */
static void nt_map_list(const nt_map_t *m, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < m->n && n + 24 < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? ", " : "", m->keys[i]);
    if (m->n && n + 24 >= cap)
        snprintf(out + n, cap - n, ", ...");
}

/* "Rank(s) 0, 3 <what>." with the lines as evidence and the count as values.<value> */
static void nt_fr_ranks(nt_finding_t *f, const nt_map_t *ranks, const nt_evlist_t *ev,
                        const char *what, const char *value)
{
    char lst[160];
    nt_f_evlist(f, ev);
    if (!ranks->n)
        return;
    nt_map_list(ranks, lst, sizeof(lst));
    f_detail(f, "Rank(s) %s %s.", lst, what);
    nt_f_value(f, value, (double)ranks->n);
}

static void nt_timeouts_flight_recorder(nt_doctor_t *d, nt_finding_t *f)
{
    if (d->fr_env_ev.text)
        nt_evlist_add_ev(&f->ev, &d->fr_env_ev);
    nt_fr_ranks(f, &d->fr_first_ranks, &d->fr_first_ev,
                "signalled the flight recorder's dump first (\"First PG on this rank to signal "
                "dumping\": their own watchdog fired)",
                "fr_first_ranks");
    /* a rank's monitor can observe the signal before its own watchdog fires: listed, not judged */
    nt_fr_ranks(f, &d->fr_observed_ranks, &d->fr_observed_ev,
                "only observed another rank's dump signal (\"Observed flight recorder dump signal "
                "from another rank\")",
                "fr_observed_ranks");
    if (d->fr_src_rank >= 0)
        f_detail(f, "The dump signal came from rank %ld.", d->fr_src_rank);
    if (d->fr_off_ev.total || d->fr_buffer == 0) {
        nt_f_evlist(f, &d->fr_off_ev);
        f_detail(f, "The flight recorder was off (%s): no dump of the ranks' last collectives; "
                    "run again with TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1 "
                    "(each rank writes TORCH_NCCL_DEBUG_INFO_TEMP_FILE<rank>, "
                    "/tmp/nccl_trace_rank_<rank> by default).",
                 d->fr_buffer == 0 ? "TORCH_NCCL_TRACE_BUFFER_SIZE: 0"
                                   : "\"Stack trace of the failed collective not found\"");
        nt_f_value(f, "fr_buffer", 0);
    } else if (d->fr_buffer > 0 && d->fr_dump == 0) {
        f_detail(f, "The flight recorder recorded (TORCH_NCCL_TRACE_BUFFER_SIZE: %ld) but did not "
                    "dump (TORCH_NCCL_DUMP_ON_TIMEOUT: 0): set TORCH_NCCL_DUMP_ON_TIMEOUT=1 for "
                    "each rank's dump next time.",
                 d->fr_buffer);
        nt_f_value(f, "fr_buffer", (double)d->fr_buffer);
    } else if (d->fr_buffer > 0 || d->fr_on_ev.total) {
        char why[64] = "";
        if (d->fr_buffer > 0)
            snprintf(why, sizeof(why), " (TORCH_NCCL_TRACE_BUFFER_SIZE: %ld)", d->fr_buffer);
        nt_f_evlist(f, &d->fr_on_ev);
        f_detail(f, "The flight recorder was on%s: each rank's dump (TORCH_NCCL_DEBUG_INFO_TEMP_FILE"
                    "<rank>, /tmp/nccl_trace_rank_<rank> by default) holds its last collectives.",
                 why);
        if (d->fr_buffer > 0)
            nt_f_value(f, "fr_buffer", (double)d->fr_buffer);
    }
}

/* PyTorch watchdog timeouts: the ranks that timed out, their collective and sequence numbers, and
 * the ranks the job names (process groups initialized) that printed no timeout: those never
 * joined the collective the others wait in, which is the application's doing. */
static void nt_diagnose_timeouts(nt_doctor_t *d)
{
    if (!d->ntimeouts)
        return;
    nt_finding_t *f = nt_finding_add(d, "rank_skipped_collective");
    if (!f)
        return;
    char ops[256] = "";
    size_t no = 0;
    long minseq = -1, maxseq = -1;
    for (size_t i = 0; i < d->ntimeouts; i++) {
        const nt_timeout_t *t = &d->timeouts[i];
        nt_evlist_add_ev(&f->ev, &t->ev);
        if (t->rank >= 0)
            nt_f_rank(d, f, t->rank);
        if (t->op[0] && !strstr(ops, t->op) && no + strlen(t->op) + 3 < sizeof(ops))
            no += (size_t)snprintf(ops + no, sizeof(ops) - no, "%s%s", no ? ", " : "", t->op);
        if (t->seq >= 0) {
            minseq = minseq < 0 || t->seq < minseq ? t->seq : minseq;
            maxseq = t->seq > maxseq ? t->seq : maxseq;
        }
    }
    f->ev.total += d->timeouts_total - d->ntimeouts;
    /* a timeout below a second, against the 10 minute default (init_process_group(timeout=...)):
     * no collective, even a healthy first one that sets its communicator up, fits in it, so the
     * setting is why; seconds-long timeouts are what test scripts use to catch missing ranks */
    long tmin = -1;
    for (size_t i = 0; i < d->ntimeouts; i++)
        if (d->timeouts[i].timeout_ms >= 0 && (tmin < 0 || d->timeouts[i].timeout_ms < tmin))
            tmin = d->timeouts[i].timeout_ms;
    if (tmin >= 0 && tmin < 1000) {
        nt_finding_t *s = nt_finding_add(d, "pg_timeout_too_short");
        if (s) {
            nt_evlist_add_ev(&s->ev, &d->timeouts[0].ev);
            f_detail(s, "The process group's timeout is %ld ms.", tmin);
            nt_f_value(s, "timeout_ms", (double)tmin);
            nt_link_cause(f, s);
            s->severity = f->severity;
        }
    }
    f_detail(f, "%lu watchdog timeout line(s)%s%s.", d->timeouts_total, ops[0] ? " in " : "", ops);
    if (minseq >= 0 && minseq != maxseq) {
        f_detail(f, "The sequence numbers differ (SeqNum %ld to %ld):", minseq, maxseq);
        for (size_t i = 0; i < d->ntimeouts && i < 8; i++)
            if (d->timeouts[i].seq >= 0)
                f_detail(f, "rank %ld at %ld%s", d->timeouts[i].rank, d->timeouts[i].seq,
                         i + 1 < d->ntimeouts && i < 7 ? "," : ".");
        nt_f_value(f, "seq_min", (double)minseq);
        nt_f_value(f, "seq_max", (double)maxseq);
    } else if (minseq >= 0) {
        f_detail(f, "Every rank that timed out waits at SeqNum %ld.", minseq);
        nt_f_value(f, "seq", (double)minseq);
    }
    /* the ranks the job names without a timeout */
    long missing[16];
    size_t nm = 0;
    for (size_t i = 0; i < d->pg_ranks.n && nm < 16; i++) {
        long r = strtol(d->pg_ranks.keys[i], NULL, 10);
        int timed = 0;
        for (size_t j = 0; j < d->ntimeouts; j++)
            timed |= d->timeouts[j].rank == r;
        if (!timed)
            missing[nm++] = r;
    }
    if (nm) {
        qsort(missing, nm, sizeof(missing[0]), nt_cmp_long);
        char lst[160] = "";
        size_t n = 0;
        for (size_t i = 0; i < nm && n + 24 < sizeof(lst); i++)
            n += (size_t)snprintf(lst + n, sizeof(lst) - n, "%s%ld", i ? ", " : "", missing[i]);
        f_detail(f,
                 "Rank(s) %s started their process group but printed no timeout: the rank(s) "
                 "that never joined.",
                 lst);
        nt_f_value(f, "ranks_not_joined", (double)nm);
    }
    nt_timeouts_flight_recorder(d, f);
}

/* A whole log (it starts at NCCL's banner or the launcher's start) that stops before Init
 * COMPLETE for the ranks it names, or before any result or error, is incomplete: the job hung or
 * was killed, and the log's last line is where. An excerpt is not judged (the summary says so). */
static void nt_diagnose_completeness(nt_doctor_t *d)
{
    for (size_t i = 0; i < d->ninputs; i++) {
        const nt_input_t *in = &d->inputs[i];
        if (in->start != 1 || strcmp(in->status, "ok") != 0 || in->op_lines || !in->last_no)
            continue;
        size_t named = 0, incomplete = 0;
        for (size_t p = 0; p < d->nprocs; p++)
            if (d->procs[p].input == i && d->procs[p].init_seen) {
                named++;
                incomplete += !d->procs[p].complete;
            }
        /* a rank that printed Init COMPLETE shows the log went past init (the other ranks' lines
         * may be filtered: torchrun --local-ranks-filter, NCCL_DEBUG_SUBSYS) */
        if (in->outcomes || in->completes)
            continue;
        int stuck_init = incomplete > 0;
        nt_finding_t *f = nt_finding_add(d, "log_incomplete");
        if (!f)
            continue;
        nt_evlist_add(&f->ev, (unsigned)i, in->last_no, in->last);
        if (stuck_init)
            f_detail(f, "%zu of the %zu process(es) that started communicator init never printed "
                        "Init COMPLETE.",
                     incomplete, named);
        else
            f_detail(f, "The log shows no result and no error.");
        f_detail(f, "Incomplete: the last line was %s:%lu: %s", in->path, in->last_no, in->last);
        nt_f_value(f, "last_line", (double)in->last_no);
        /* what else the log shows wrong is the likely cause of the stop (a loopback bootstrap
         * interface, a wrong setting): the stop is listed under it */
        nt_finding_t *why = NULL;
        for (size_t k = 0; k < d->nfindings; k++) {
            nt_finding_t *g = &d->findings[k];
            if (g != f && g->severity >= NT_SEV_WARN && !nt_is_catch_all(g->kb->key) &&
                (!why || g->severity > why->severity))
                why = g;
        }
        if (why)
            nt_link_cause(f, why);
        /* PyTorch created its process groups and NCCL printed nothing after: the ranks wait in
         * their first collective, which some rank did not enter (the watchdog of older PyTorch
         * releases never fired for it) */
        if (in->pg_inits && !d->ntimeouts && in->completes == 0 && !named) {
            nt_finding_t *c = nt_finding_add(d, "rank_skipped_collective");
            if (c) {
                nt_evlist_add_ev(&c->ev, &d->pg_ev);
                f_detail(c,
                         "%zu rank(s) initialized their process group and the log stops: they "
                         "wait in a collective that some rank did not enter.",
                         d->pg_ranks.n);
                nt_link_cause(f, c);
                c->severity = f->severity;
            }
        }
    }
}

/* ---- the catalogue ------------------------------------------------------------------------- */

/* Every catalogue cause whose lines the inputs show (and its "also" lines, and none of its
 * "unless" lines) is a finding with those lines as evidence: the rule is the entry's data. */
static void nt_diagnose_catalogue(nt_doctor_t *d)
{
    for (size_t i = 0; i < d->kb->ncauses; i++) {
        const nt_kb_cause_t *c = &d->kb->causes[i];
        const nt_sighit_t *h = &d->sig[c->sig];
        if (c->by_rule)
            continue;
        if (!h->count || (c->also >= 0 && !d->sig[c->also].count) ||
            (c->unless >= 0 && d->sig[c->unless].count) ||
            (c->launcher >= 0 && !(d->labels_seen & (1ul << c->launcher))))
            continue;
        /* only for the NCCL versions it names; where the log does not print the version the
         * cause is reported with that said, since the lines alone fit it */
        long v = c->first >= 0 ? nt_kb_version_code(nt_job_version(d)) : -1;
        if (c->first >= 0 && v >= 0 && (v < c->first || v > c->last))
            continue;
        nt_finding_t *f = nt_finding_add(d, c->finding->key);
        if (!f)
            continue;
        nt_f_evlist(f, &h->ev);
        nt_f_hosts(f, &h->hosts);
        if (c->also >= 0)
            nt_f_evlist(f, &d->sig[c->also].ev);
        if (c->first >= 0 && v < 0)
            f_detail(f,
                     "Assumed: the log does not print the NCCL version (or prints several); this "
                     "cause holds for NCCL %ld.%ld.%ld to %ld.%ld.%ld only.",
                     c->first / 10000, c->first / 100 % 100, c->first % 100, c->last / 10000,
                     c->last / 100 % 100, c->last % 100);
    }
}

/* Links each catalogue cause found to the findings it explains, and gives the cause the
 * severity of the worst of them: a cause that explains an error is the error's root. */
static void nt_link_catalogue(nt_doctor_t *d)
{
    for (size_t i = 0; i < d->kb->ncauses; i++) {
        const nt_kb_cause_t *c = &d->kb->causes[i];
        nt_finding_t *f = nt_find(d, c->finding->key);
        if (!f)
            continue;
        for (int e = 0; e < c->nexplains; e++) {
            nt_finding_t *x = nt_find(d, c->explains[e]);
            if (!x || x == f)
                continue;
            nt_link_cause(x, f);
            if (x->severity > f->severity)
                f->severity = x->severity;
        }
    }
}

/* The order of the findings: causes outrank symptoms. A root is a finding no other finding
 * found here explains; roots come first by rank (NCCL versions that differ across ranks first:
 * every other finding may be its effect), then by severity, stable otherwise; each finding that
 * a root explains follows it (listed under it), depth first. The top finding is the first root. */
static int nt_root_rank(const nt_finding_t *f)
{
    return strcmp(f->kb->key, "nccl_version_mismatch") == 0 ? 3 : (int)f->severity;
}

static int nt_is_root(const nt_finding_t *all, size_t n, const nt_finding_t *f)
{
    for (size_t c = 0; c < f->ncaused_by; c++)
        for (size_t i = 0; i < n; i++)
            if (&all[i] != f && strcmp(all[i].kb->key, f->caused_by[c]) == 0)
                return 0;
    return 1;
}

static void nt_place(nt_finding_t *all, size_t n, size_t i, unsigned char *done, size_t *order,
                  size_t *k)
{
    if (done[i])
        return;
    done[i] = 1;
    order[(*k)++] = i;
    /* the findings it explains, in their severity order */
    for (int sev = NT_SEV_ERROR; sev >= NT_SEV_INFO; sev--)
        for (size_t c = 0; c < all[i].ncauses; c++)
            for (size_t j = 0; j < n; j++)
                if (!done[j] && (int)all[j].severity == sev &&
                    strcmp(all[j].kb->key, all[i].causes[c]) == 0)
                    nt_place(all, n, j, done, order, k);
}

static void nt_sort_findings(nt_finding_t *f, size_t n)
{
    if (n < 2)
        return;
    size_t *order = calloc(n, sizeof(*order));
    unsigned char *done = calloc(n, 1);
    nt_finding_t *tmp = calloc(n, sizeof(*tmp));
    if (!order || !done || !tmp) {
        free(order);
        free(done);
        free(tmp);
        return; /* out of memory: the order found is kept */
    }
    size_t k = 0;
    for (int rank = 3; rank >= 0; rank--)
        for (size_t i = 0; i < n; i++)
            if (!done[i] && nt_root_rank(&f[i]) == rank && nt_is_root(f, n, &f[i]))
                nt_place(f, n, i, done, order, &k);
    for (int rank = 3; rank >= 0; rank--) /* a cycle of causes: what is left, by rank */
        for (size_t i = 0; i < n; i++)
            if (!done[i] && nt_root_rank(&f[i]) == rank)
                nt_place(f, n, i, done, order, &k);
    for (size_t i = 0; i < n; i++)
        tmp[i] = f[order[i]];
    memcpy(f, tmp, n * sizeof(*f));
    free(order);
    free(done);
    free(tmp);
}

/* The first three keys of `m` into buf ("gpu01, gpu02, gpu03, ... (8)"), "none" when empty. */
static void nt_host_list(char *buf, size_t len, const nt_map_t *m)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < m->n && i < 3 && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%.32s", i ? ", " : "", m->keys[i]);
    if (m->n > 3 && n < len)
        snprintf(buf + n, len - n, ", ... (%zu)", m->n);
    if (!m->n)
        snprintf(buf, len, "none");
}

/* --report's hardware (read_log.c nt_doctor_load_report) for the fields --expect left unknown,
 * when the report is of the log's machines: the log names no host, or one of its hosts is a node
 * of the report (the cross-check, too, is made only for hosts in both). A report of other hosts
 * is not used: busbw is then not judged from it, and report_hosts_differ names both sides. */
static void nt_report_hardware(nt_doctor_t *d)
{
    nt_hw_t *hw = &d->hw;
    if (!d->report_path)
        return;
    size_t common = 0;
    for (size_t i = 0; i < d->hosts.n; i++)
        for (size_t j = 0; j < d->report_all_hosts.n; j++)
            if (nt_host_eq(d->hosts.keys[i], d->report_all_hosts.keys[j])) {
                common++;
                break;
            }
    if (d->hosts.n && !common) {
        char a[120], b[120];
        nt_host_list(a, sizeof(a), &d->report_all_hosts);
        nt_host_list(b, sizeof(b), &d->hosts);
        snprintf(d->report_hw_unused_buf, sizeof(d->report_hw_unused_buf),
                 "--report is of other hosts (%s), not the log's (%s)", a, b);
        d->report_hw_unused = d->report_hw_unused_buf;
        nt_finding_t *m = nt_finding_add(d, "report_hosts_differ");
        if (m) {
            nt_f_evlist(m, &d->report_ev);
            nt_f_hosts(m, &d->hosts);
            int given = hw->gpus_per_node > 0 && hw->nics_per_node > 0 && hw->nic_rate_Gbps > 0;
            f_detail(m,
                     "None of the log's host(s) (%s) is a node of the report %s (%s): its hardware "
                     "(GPUs and NICs per node, NIC rate, GPU model) is not used for the busbw "
                     "verdicts%s.",
                     b, d->report_path, a, given ? " (--expect gives them)" : "; give --expect for them");
        }
        return;
    }
    int used = 0;
    if (hw->gpus_per_node < 0 && d->report_gpus > 0)
        hw->gpus_per_node = d->report_gpus, used = 1;
    if (hw->nics_per_node < 0 && d->report_nics > 0)
        hw->nics_per_node = d->report_nics, used = 1;
    if (hw->nic_rate_Gbps < 0 && d->report_rate_Gbps > 0)
        hw->nic_rate_Gbps = d->report_rate_Gbps, used = 1;
    if (!hw->gpu_model && d->report_model)
        used = !!(hw->gpu_model = strdup(d->report_model));
    if (used && !hw->source)
        hw->source = strdup("report");
}

void nt_doctor_diagnose(nt_doctor_t *d, const nt_hw_t *hw_in)
{
    if (d->diagnosed)
        return;
    d->diagnosed = 1;
    nt_hw_t *hw = &d->hw;
    if (hw_in) {
        hw->gpus_per_node = hw_in->gpus_per_node;
        hw->nics_per_node = hw_in->nics_per_node;
        hw->nic_rate_Gbps = hw_in->nic_rate_Gbps;
        hw->gpu_model = hw_in->gpu_model ? strdup(hw_in->gpu_model) : NULL;
        hw->collective = hw_in->collective ? strdup(hw_in->collective) : NULL;
        hw->efficiency = hw_in->efficiency;
        hw->error_efficiency = hw_in->error_efficiency;
        hw->min_busbw_GBps = hw_in->min_busbw_GBps;
        hw->source = hw_in->source ? strdup(hw_in->source) : NULL;
    }
    nt_report_hardware(d);
    for (size_t i = 0; i < sizeof(direct_sigs) / sizeof(direct_sigs[0]); i++) {
        if (strcmp(direct_sigs[i], "gdr_disabled_distance") == 0)
            continue; /* nt_diagnose_gdr */
        nt_finding_t *f = nt_from_sig(d, direct_sigs[i], direct_sigs[i]);
        if (f && strcmp(direct_sigs[i], "ib_wrong_hca") == 0) {
            nt_f_evlist(f, &d->netib_ev);
            f->fix = nt_fill_fix(f->kb->fix, d->nic_names);
            if (d->nic_names)
                f_detail(f, "NCCL listed: %s.", d->nic_names);
        }
    }
    nt_diagnose_catalogue(d);
    nt_diagnose_messages(d);
    nt_op_diagnose(d);
    nt_diagnose_network(d);
    nt_diagnose_wc(d);
    nt_diagnose_gdr(d);
    nt_diagnose_nic_shared(d);
    nt_diagnose_p2p(d);
    nt_diagnose_ncclt_no_mpi(d);
    nt_diagnose_tuner(d);
    nt_diagnose_tuning_files(d);
    nt_diagnose_versions_env(d);
    nt_diagnose_tests(d, hw);
    nt_diagnose_timeouts(d);
    nt_diagnose_completeness(d);
    nt_diagnose_leftovers(d);
    nt_link_catalogue(d);
    /* sorting moves findings, so the causal links are stored as keys, not pointers */
    nt_sort_findings(d->findings, d->nfindings);
}

int nt_doctor_worst(const nt_doctor_t *d)
{
    int w = -1;
    for (size_t i = 0; i < d->nfindings; i++)
        if ((int)d->findings[i].severity > w)
            w = (int)d->findings[i].severity;
    return w;
}

size_t nt_doctor_not_judged(const nt_doctor_t *d, const char *what)
{
    size_t n = 0, l = strlen(what);
    for (size_t i = 0; i < d->nnot_judged; i++)
        if (strncmp(d->not_judged[i], what, l) == 0 && d->not_judged[i][l] == ' ')
            n++;
    return n;
}

void nt_doctor_compare_single(nt_doctor_t *d, unsigned input, const nt_doctor_t *single)
{
    for (size_t i = 0; i < single->nfindings; i++) {
        const nt_finding_t *sf = &single->findings[i];
        if (nt_find(d, sf->kb->key))
            continue; /* the joint diagnosis has it (with this file's lines among its evidence) */
        if (!d->per_file && !(d->per_file = cJSON_CreateArray()))
            return;
        cJSON *e = cJSON_CreateObject();
        if (!e)
            return;
        cJSON_AddStringToObject(e, "file", d->inputs[input].path);
        cJSON_AddStringToObject(e, "key", sf->kb->key);
        cJSON_AddStringToObject(e, "severity", nt_severity_string(sf->severity));
        cJSON *h = cJSON_AddArrayToObject(e, "hosts");
        for (size_t k = 0; h && k < sf->hosts.n; k++)
            cJSON_AddItemToArray(h, cJSON_CreateString(sf->hosts.keys[k]));
        /* the joint findings that cite this file's lines supersede it */
        cJSON *by = cJSON_AddArrayToObject(e, "superseded_by");
        for (size_t j = 0; by && j < d->nfindings; j++) {
            const nt_finding_t *jf = &d->findings[j];
            int cites = 0;
            for (size_t k = 0; k < jf->ev.n; k++)
                if (jf->ev.ev[k].input == input)
                    cites = 1;
            if (cites)
                cJSON_AddItemToArray(by, cJSON_CreateString(jf->kb->key));
        }
        cJSON_AddItemToArray(d->per_file, e);
    }
}
