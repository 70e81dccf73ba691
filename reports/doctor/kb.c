/* The knowledge base: reports/doctor/knowledge.json, embedded at build time (the generated
 * kb_data.c holds its bytes) so that the binary never depends on finding a data file, and
 * replaceable at run time with --kb FILE. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "nettune/nccllog.h"
#include "nettune/report.h"
#include "nettune/status.h"

/* Generated from knowledge.json by module.mk (od), NUL-terminated. */
extern const unsigned char nt_doctor_kb_data[];
extern const size_t nt_doctor_kb_size;

int nt_severity_parse(const char *s)
{
    if (!s)
        return -1;
    if (strcmp(s, "error") == 0)
        return NT_SEV_ERROR;
    if (strcmp(s, "warn") == 0)
        return NT_SEV_WARN;
    if (strcmp(s, "info") == 0)
        return NT_SEV_INFO;
    return -1;
}

const char *nt_severity_string(nt_severity_t s)
{
    return s == NT_SEV_ERROR ? "error" : s == NT_SEV_WARN ? "warn" : "info";
}

static char *nt_dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static const char *nt_get_str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static char **nt_str_array(const cJSON *a, int *n)
{
    *n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
    char **out = calloc((size_t)(*n ? *n : 1), sizeof(char *));
    if (!out)
        return NULL;
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach (it, a)
        out[i++] = cJSON_IsString(it) ? strdup(it->valuestring) : NULL;
    return out;
}

/* A cause the probe checks before the job (include/nettune/checks_same.def) says so in its fix:
 * one rule, two sides. */
static int nt_kb_fix_probe(nt_kb_finding_t *f, char *err, size_t errlen)
{
    char codes[128], *fix;
    size_t n = nt_check_probe_codes(f->check->code, codes, sizeof(codes));
    if (!n || !f->fix)
        return 0;
    if (asprintf(&fix, "%s nettune probe checks this before the job: code%s %s.", f->fix,
                 n > 1 ? "s" : "", codes) < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    free(f->fix);
    f->fix = fix;
    return 0;
}

/* $.messages (NCCL format strings) and $.path_types; both optional. */
/* A finding takes its code and category from the check table: its "code" must name a row whose
 * check is the finding's key. */
static int nt_check_code(nt_kb_finding_t *f, const char *code, const char *name, const char *where,
                      char *err, size_t errlen)
{
    const nt_check_row_t *row = nt_check_by_code(code);
    if (!row || strcmp(row->check, f->key) != 0) {
        snprintf(err, errlen,
                 "knowledge base '%s': $.%s.%s.code '%s' is not a row of the check table for "
                 "'%s' (include/nettune/checks.def)",
                 name, where, f->key, code ? code : "", f->key);
        return -1;
    }
    f->check = row;
    return nt_kb_fix_probe(f, err, errlen);
}

static int nt_parse_messages(const cJSON *root, nt_kb_t *kb, const char *name, char *err,
                          size_t errlen)
{
    const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(root, "messages");
    const cJSON *it;
    size_t i = 0;
    if (cJSON_IsArray(msgs)) {
        size_t n = (size_t)cJSON_GetArraySize(msgs);
        kb->msgs = calloc(n ? n : 1, sizeof(*kb->msgs));
        if (!kb->msgs)
            goto oom;
        cJSON_ArrayForEach (it, msgs) {
            nt_kb_message_t *m = &kb->msgs[i];
            const char *id = nt_get_str(it, "id"), *lvl = nt_get_str(it, "level"),
                       *fmt = nt_get_str(it, "format");
            const char *sg = nt_get_str(it, "signature"), *fi = nt_get_str(it, "finding");
            m->sig = -1;
            m->when_index = -1;
            kb->nmsgs = ++i;
            if (!id || !lvl || !fmt || (strcmp(lvl, "INFO") != 0 && strcmp(lvl, "WARN") != 0) ||
                (!sg == !fi)) {
                snprintf(err, errlen,
                         "knowledge base '%s': $.messages[%zu] needs id, level (INFO|WARN), format "
                         "and one of signature or finding",
                         name, i - 1);
                return -1;
            }
            m->id = strdup(id);
            m->format = strdup(fmt);
            m->at = nt_dup_or_null(nt_get_str(it, "at"));
            m->first = nt_dup_or_null(nt_get_str(it, "first"));
            m->last = nt_dup_or_null(nt_get_str(it, "last"));
            m->level = lvl[0] == 'I' ? NT_LVL_INFO : NT_LVL_WARN;
            if (!m->id || !m->format)
                goto oom;
            m->anchor_len = nt_fmt_anchor(m->format, &m->anchor);
            m->prefix_len = strcspn(m->format, "%\n");
            if (m->anchor_len < 6) {
                snprintf(err, errlen,
                         "knowledge base '%s': $.messages[%zu].format has no literal text of 6 "
                         "characters or more",
                         name, i - 1);
                return -1;
            }
            if (sg && (m->sig = nt_kb_signature_index(kb, sg)) < 0) {
                snprintf(
                    err, errlen,
                    "knowledge base '%s': $.messages[%zu].signature names unknown signature '%s'",
                    name, i - 1, sg);
                return -1;
            }
            if (fi && !(m->finding = nt_kb_finding(kb, fi))) {
                snprintf(err, errlen,
                         "knowledge base '%s': $.messages[%zu].finding names unknown finding '%s'",
                         name, i - 1, fi);
                return -1;
            }
            const cJSON *w = cJSON_GetObjectItemCaseSensitive(it, "when");
            if (w) {
                const cJSON *wi = cJSON_GetObjectItemCaseSensitive(w, "index");
                const char *we = nt_get_str(w, "equals");
                if (!cJSON_IsNumber(wi) || !we) {
                    snprintf(err, errlen,
                             "knowledge base '%s': $.messages[%zu].when needs index and equals",
                             name, i - 1);
                    return -1;
                }
                m->when_index = wi->valueint;
                if (!(m->when_equals = strdup(we)))
                    goto oom;
            }
            if (!(m->values =
                      nt_str_array(cJSON_GetObjectItemCaseSensitive(it, "values"), &m->nvalues)))
                goto oom;
            if (!(m->path_values = nt_str_array(cJSON_GetObjectItemCaseSensitive(it, "path_values"),
                                             &m->npath_values)))
                goto oom;
        }
    }
    const cJSON *paths = cJSON_GetObjectItemCaseSensitive(root, "path_types");
    if (cJSON_IsArray(paths)) {
        size_t n = (size_t)cJSON_GetArraySize(paths);
        kb->paths = calloc(n ? n : 1, sizeof(*kb->paths));
        if (!kb->paths)
            goto oom;
        i = 0;
        cJSON_ArrayForEach (it, paths) {
            nt_kb_pathtypes_t *p = &kb->paths[i];
            kb->npaths = ++i;
            const char *f = nt_get_str(it, "first"), *l = nt_get_str(it, "last");
            const cJSON *nm = cJSON_GetObjectItemCaseSensitive(it, "names");
            if (!f || !l || !cJSON_IsArray(nm)) {
                snprintf(err, errlen,
                         "knowledge base '%s': $.path_types[%zu] needs first, last and names", name,
                         i - 1);
                return -1;
            }
            p->first = strdup(f);
            p->last = strdup(l);
            p->at = nt_dup_or_null(nt_get_str(it, "at"));
            if (!p->first || !p->last || !(p->names = nt_str_array(nm, &p->nnames)))
                goto oom;
        }
    }
    return 0;
oom:
    snprintf(err, errlen, "knowledge base '%s': out of memory", name);
    return -1;
}

/* "v2.28.9-1" (a tag) or "2.28.9" -> NCCL_VERSION_CODE (22809), by the one NCCL version parser
 * (nt_nccllog_version_parse, lib/nccl/nccllog.c); -1 when it is not a version. */
long nt_kb_version_code(const char *v)
{
    if (!v)
        return -1;
    if (*v == 'v')
        v++;
    return nt_nccllog_version_parse(v);
}

const char *nt_kb_path_type(const nt_kb_t *kb, const char *version, long value)
{
    long v = nt_kb_version_code(version);
    if (v < 0 || value < 0)
        return NULL;
    const nt_kb_pathtypes_t *best = NULL;
    for (size_t i = 0; i < kb->npaths; i++) {
        const nt_kb_pathtypes_t *p = &kb->paths[i];
        long f = nt_kb_version_code(p->first);
        if (f >= 0 && f <= v && (!best || f > nt_kb_version_code(best->first)))
            best = p;
    }
    /* older than the first release the table knows, or newer than the last by a minor version:
     * not covered (the numbering may have changed) */
    if (!best || (best == &kb->paths[kb->npaths - 1] && v / 100 > nt_kb_version_code(best->last) / 100))
        return NULL;
    if (value >= best->nnames)
        return NULL;
    return best->names[value];
}

/* A signature from a catalogue entry's list `a` of line substrings, named `id`; -1 with a message
 * when the list is missing or holds anything but non-empty strings, else its index (or -2 when the
 * list is absent and optional). */
static int nt_cat_sig(nt_kb_t *kb, const cJSON *a, const char *id, int optional, const char *name,
                   const char *where, char *err, size_t errlen)
{
    if (!a && optional)
        return -2;
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) == 0) {
        snprintf(err, errlen, "knowledge base '%s': %s needs a non-empty array of line substrings",
                 name, where);
        return -1;
    }
    nt_kb_signature_t *s = &kb->sigs[kb->nsigs];
    s->id = strdup(id);
    s->nmatch = (size_t)cJSON_GetArraySize(a);
    s->match = calloc(s->nmatch, sizeof(char *));
    /* the entry's lines prove an NCCL job's log (PyTorch's NCCL errors too); its "also" and
     * "unless" lines only qualify them */
    s->counts_as_nccl = !optional;
    s->qualifier = optional;
    if (!s->id || !s->match) {
        snprintf(err, errlen, "knowledge base '%s': out of memory", name);
        return -1;
    }
    size_t j = 0;
    const cJSON *m;
    cJSON_ArrayForEach (m, a) {
        if (!cJSON_IsString(m) || !m->valuestring[0] || !(s->match[j++] = strdup(m->valuestring))) {
            snprintf(err, errlen, "knowledge base '%s': %s[%zu] is not a non-empty string", name,
                     where, j ? j - 1 : 0);
            s->nmatch = j ? j - 1 : 0;
            kb->nsigs++;
            return -1;
        }
        /* "a&&b&&c": the line must hold every part; the first part is the quick test */
        char *first = s->match[j - 1], *amp = strstr(first, "&&");
        if (!amp)
            continue;
        if (!s->and && !(s->and = calloc(s->nmatch, sizeof(*s->and))))
            goto oom;
        size_t parts = 0;
        for (char *p = amp; p; p = strstr(p + 2, "&&"))
            parts++;
        char **list = s->and[j - 1] = calloc(parts + 1, sizeof(char *));
        if (!list)
            goto oom;
        for (size_t q = 0; amp; q++) {
            *amp = '\0'; /* ends the previous part */
            char *part = amp + 2;
            amp = strstr(part, "&&");
            size_t n = amp ? (size_t)(amp - part) : strlen(part);
            if (!n || !*first) {
                snprintf(err, errlen, "knowledge base '%s': %s[%zu] has an empty part around '&&'",
                         name, where, j - 1);
                kb->nsigs++;
                return -1;
            }
            if (!(list[q] = strndup(part, n)))
                goto oom;
        }
    }
    return (int)kb->nsigs++;
oom:
    snprintf(err, errlen, "knowledge base '%s': out of memory", name);
    kb->nsigs++;
    return -1;
}

/* An entry's "nccl_versions": [first, last] as version codes into c->first/last (-1 both when
 * absent); -1 with a message when it is not two NCCL versions. */
static int nt_cat_versions(const cJSON *it, nt_kb_cause_t *c, const char *name, size_t i,
                           char *err, size_t errlen)
{
    const cJSON *vr = cJSON_GetObjectItemCaseSensitive(it, "nccl_versions");
    c->first = c->last = -1;
    if (!vr)
        return 0;
    c->first = nt_kb_version_code(cJSON_GetStringValue(cJSON_GetArrayItem(vr, 0)));
    c->last = nt_kb_version_code(cJSON_GetStringValue(cJSON_GetArrayItem(vr, 1)));
    if (!cJSON_IsArray(vr) || cJSON_GetArraySize(vr) != 2 || c->first < 0 || c->last < 0) {
        snprintf(err, errlen,
                 "knowledge base '%s': $.catalogue[%zu].nccl_versions is not [first, last] NCCL "
                 "versions",
                 name, i);
        return -1;
    }
    return 0;
}

/* An entry's "also" and "unless" lines (-2 each when absent), for entry i of finding key.
 * Returns 0, -1 with err set. */
static int nt_cat_qualifiers(nt_kb_t *kb, const cJSON *it, nt_kb_cause_t *c, const char *key,
                             size_t i, const char *name, char *err, size_t errlen)
{
    char where[96], id[160];
    snprintf(where, sizeof(where), "$.catalogue[%zu].also", i);
    snprintf(id, sizeof(id), "%s/also", key);
    if ((c->also = nt_cat_sig(kb, cJSON_GetObjectItemCaseSensitive(it, "also"), id, 1, name,
                              where, err, errlen)) == -1)
        return -1;
    snprintf(where, sizeof(where), "$.catalogue[%zu].unless", i);
    snprintf(id, sizeof(id), "%s/unless", key);
    if ((c->unless = nt_cat_sig(kb, cJSON_GetObjectItemCaseSensitive(it, "unless"), id, 1, name,
                                where, err, errlen)) == -1)
        return -1;
    /* "launcher": how the job was started, read from the labels its lines carry (pdsh's
     * "host: "), where no line's text says it */
    c->launcher = -1;
    const cJSON *la = cJSON_GetObjectItemCaseSensitive(it, "launcher");
    if (!la)
        return 0;
    if ((c->launcher = nt_line_prefix_row(cJSON_GetStringValue(la))) < 0) {
        snprintf(err, errlen,
                 "knowledge base '%s': $.catalogue[%zu].launcher is not a launcher label's name "
                 "(lib/nccl/logline.c, nt_prefixes)",
                 name, i);
        return -1;
    }
    return 0;
}

/* $.catalogue: the causes from the field, one entry each (docs/doctor-catalogue.md). An entry is a
 * finding (key, code, severity, title, cause, fix, confirm, thread) and the lines that show it:
 * "lines" (any of them), "also" (and one of these in the same input), "unless" (and none of
 * these), "explains" (findings it is the cause of: they are listed under it). */
static int nt_parse_catalogue(const cJSON *cat, nt_kb_t *kb, const char *name, char *err,
                           size_t errlen)
{
    size_t i = 0;
    const cJSON *it;
    cJSON_ArrayForEach (it, cat) {
        const char *key = nt_get_str(it, "key"), *t = nt_get_str(it, "title"),
                   *w = nt_get_str(it, "cause"), *x = nt_get_str(it, "fix"),
                   *th = nt_get_str(it, "thread");
        int sev = nt_severity_parse(nt_get_str(it, "severity"));
        if (!key) {
            snprintf(err, errlen, "knowledge base '%s': $.catalogue[%zu] needs a key", name, i);
            return -1;
        }
        /* "extends": more lines for a finding the base already has (its text stays the base's),
         * with an "nccl_versions" range of their own where they hold for some releases only */
        const cJSON *ext = cJSON_GetObjectItemCaseSensitive(it, "extends");
        if (cJSON_IsTrue(ext)) {
            nt_kb_cause_t *c = &kb->causes[i];
            char where[96];
            if (!(c->finding = nt_kb_finding(kb, key))) {
                snprintf(err, errlen,
                         "knowledge base '%s': $.catalogue[%zu] extends unknown finding '%s'", name,
                         i, key);
                return -1;
            }
            snprintf(where, sizeof(where), "$.catalogue[%zu].lines", i);
            if ((c->sig = nt_cat_sig(kb, cJSON_GetObjectItemCaseSensitive(it, "lines"), key, 0,
                                     name, where, err, errlen)) < 0)
                return -1;
            if (nt_cat_qualifiers(kb, it, c, key, i, name, err, errlen) < 0)
                return -1;
            /* more lines of a finding may hold for some NCCL releases only */
            if (nt_cat_versions(it, c, name, i, err, errlen) < 0)
                return -1;
            if (!(c->explains = nt_str_array(NULL, &c->nexplains)))
                goto oom_cat;
            kb->ncauses = ++i;
            continue;
        }
        if (!key || !t || !w || !x || !th || sev < 0) {
            snprintf(err, errlen,
                     "knowledge base '%s': $.catalogue[%zu] needs key, code, severity "
                     "(error|warn|info), title, cause, fix and thread",
                     name, i);
            return -1;
        }
        if (nt_kb_finding(kb, key)) {
            snprintf(err, errlen, "knowledge base '%s': $.catalogue[%zu]: key '%s' is there twice",
                     name, i, key);
            return -1;
        }
        nt_kb_finding_t *f = &kb->findings[kb->nfindings];
        f->key = strdup(key);
        f->severity = (nt_severity_t)sev;
        f->title = strdup(t);
        f->why = strdup(w);
        f->fix = strdup(x);
        /* the reference names the thread, then NCCL's format where there is one */
        const char *nccl = nt_get_str(it, "nccl");
        size_t rl = strlen(th) + (nccl ? strlen(nccl) : 0) + 16;
        f->reference = malloc(rl);
        if (f->reference)
            snprintf(f->reference, rl, "%s%s%s", th, nccl ? "; NCCL: " : "", nccl ? nccl : "");
        f->confirm = nt_dup_or_null(nt_get_str(it, "confirm"));
        kb->nfindings++;
        if (!f->key || !f->title || !f->why || !f->fix || !f->reference) {
            snprintf(err, errlen, "knowledge base '%s': out of memory", name);
            return -1;
        }
        if (nt_check_code(f, nt_get_str(it, "code"), name, "catalogue", err, errlen) < 0)
            return -1;
        nt_kb_cause_t *c = &kb->causes[i];
        c->finding = f;
        char where[96];
        snprintf(where, sizeof(where), "$.catalogue[%zu].lines", i);
        if ((c->sig = nt_cat_sig(kb, cJSON_GetObjectItemCaseSensitive(it, "lines"), key, 0, name,
                              where, err, errlen)) < 0)
            return -1;
        if (nt_cat_qualifiers(kb, it, c, key, i, name, err, errlen) < 0)
            return -1;
        if (nt_cat_versions(it, c, name, i, err, errlen) < 0)
            return -1;
        c->by_rule = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "by_rule"));
        c->explains = nt_str_array(cJSON_GetObjectItemCaseSensitive(it, "explains"), &c->nexplains);
        if (!c->explains) {
            snprintf(err, errlen, "knowledge base '%s': out of memory", name);
            return -1;
        }
        kb->ncauses = ++i;
    }
    goto check;
oom_cat:
    snprintf(err, errlen, "knowledge base '%s': out of memory", name);
    return -1;
check:
    /* what an entry explains must be a finding (of the base or of the catalogue) */
    for (size_t n = 0; n < kb->ncauses; n++)
        for (int e = 0; e < kb->causes[n].nexplains; e++)
            if (!kb->causes[n].explains[e] || !nt_kb_finding(kb, kb->causes[n].explains[e])) {
                snprintf(err, errlen,
                         "knowledge base '%s': $.catalogue[%zu].explains names unknown finding "
                         "'%s'",
                         name, n, kb->causes[n].explains[e] ? kb->causes[n].explains[e] : "");
                return -1;
            }
    return 0;
}

/* Builds kb->index over every signature's match strings (their first part for "a&&b"). */
static int nt_build_index(nt_kb_t *kb)
{
    /* the text every NCCL line holds: a pattern indexed by bytes of it would be compared on
     * every line */
    static const char common[] = " NCCL INFO NCCL WARN ";
    nt_kb_index_t *x = calloc(1, sizeof(*x));
    size_t total = 0, n = 0;
    if (!x)
        return -1;
    for (size_t i = 0; i < kb->nsigs; i++)
        total += kb->sigs[i].nmatch;
    x->pats = calloc(total + 1, sizeof(*x->pats));
    x->shorts = calloc(total + 1, sizeof(*x->shorts));
    nt_kb_pat_t *all = calloc(total + 1, sizeof(*all));
    uint32_t *count = calloc(1u << NT_KB_HASH_BITS, sizeof(*count));
    if (!x->pats || !x->shorts || !all || !count) {
        free(x->pats);
        free(x->shorts);
        free(all);
        free(count);
        free(x);
        return -1;
    }
    for (size_t i = 0; i < kb->nsigs; i++)
        for (size_t j = 0; j < kb->sigs[i].nmatch; j++) {
            const unsigned char *m = (const unsigned char *)kb->sigs[i].match[j];
            uint32_t len = (uint32_t)strlen((const char *)m);
            nt_kb_pat_t p = {(uint32_t)i, (uint32_t)j, len, 0};
            if (len < 4) {
                x->shorts[x->nshorts++] = p;
                continue;
            }
            /* the offset: not common text, then the emptiest bucket */
            uint32_t best = 0, best_cost = UINT32_MAX;
            for (uint32_t o = 0; o + 4 <= len; o++) {
                char g[5];
                memcpy(g, m + o, 4);
                g[4] = '\0';
                uint32_t cost = count[nt_kb_hash4(m + o)] + (strstr(common, g) ? 1000u : 0u);
                if (cost < best_cost)
                    best_cost = cost, best = o;
            }
            p.off = best;
            count[nt_kb_hash4(m + best)]++;
            all[n++] = p;
        }
    /* counting sort by bucket */
    for (size_t e = 0; e < n; e++)
        x->start[nt_kb_hash4((const unsigned char *)kb->sigs[all[e].sig].match[all[e].match] +
                             all[e].off) +
                 1]++;
    for (size_t b = 0; b < (1u << NT_KB_HASH_BITS); b++)
        x->start[b + 1] += x->start[b];
    memcpy(count, x->start, (1u << NT_KB_HASH_BITS) * sizeof(*count));
    for (size_t e = 0; e < n; e++) {
        uint32_t b = nt_kb_hash4(
            (const unsigned char *)kb->sigs[all[e].sig].match[all[e].match] + all[e].off);
        x->pats[count[b]++] = all[e];
        x->bits[b / 64] |= 1ull << (b % 64);
        const unsigned char *q =
            (const unsigned char *)kb->sigs[all[e].sig].match[all[e].match] + all[e].off;
        uint32_t pr = (uint32_t)q[0] | (uint32_t)q[1] << 8;
        x->pairs[pr / 64] |= 1ull << (pr % 64);
    }
    free(all);
    free(count);
    kb->index = x;
    return 0;
}

static int nt_parse_kb(const cJSON *root, nt_kb_t *kb, const char *name, char *err, size_t errlen)
{
    const char *schema = nt_get_str(root, "schema");
    if (!schema || strcmp(schema, NT_DOCTOR_KB_SCHEMA) != 0) {
        snprintf(err, errlen, "knowledge base '%s': $.schema is not \"%s\"", name,
                 NT_DOCTOR_KB_SCHEMA);
        return -1;
    }
    kb->version = nt_dup_or_null(nt_get_str(root, "version"));

    const cJSON *sigs = cJSON_GetObjectItemCaseSensitive(root, "signatures");
    const cJSON *finds = cJSON_GetObjectItemCaseSensitive(root, "findings");
    if (!cJSON_IsArray(sigs) || !cJSON_IsObject(finds)) {
        snprintf(err, errlen,
                 "knowledge base '%s': $.signatures (array) and $.findings (object) are required",
                 name);
        return -1;
    }
    size_t ns = (size_t)cJSON_GetArraySize(sigs), nf = (size_t)cJSON_GetArraySize(finds);
    /* each catalogue entry adds a finding and up to three signatures (lines, also, unless) */
    const cJSON *cat = cJSON_GetObjectItemCaseSensitive(root, "catalogue");
    size_t nc = cJSON_IsArray(cat) ? (size_t)cJSON_GetArraySize(cat) : 0;
    kb->sigs = calloc(ns + 3 * nc + 1, sizeof(*kb->sigs));
    kb->findings = calloc(nf + nc + 1, sizeof(*kb->findings));
    kb->causes = calloc(nc + 1, sizeof(*kb->causes));
    if (!kb->sigs || !kb->findings || !kb->causes)
        goto oom;

    size_t i = 0;
    const cJSON *it;
    cJSON_ArrayForEach (it, sigs) {
        nt_kb_signature_t *s = &kb->sigs[i];
        const char *id = nt_get_str(it, "id");
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(it, "match");
        if (!id || !cJSON_IsArray(m) || cJSON_GetArraySize(m) == 0) {
            snprintf(
                err, errlen,
                "knowledge base '%s': $.signatures[%zu] needs \"id\" and a non-empty \"match\"",
                name, i);
            return -1;
        }
        s->id = strdup(id);
        s->nmatch = (size_t)cJSON_GetArraySize(m);
        s->match = calloc(s->nmatch, sizeof(char *));
        if (!s->id || !s->match)
            goto oom;
        size_t j = 0;
        const cJSON *mm;
        cJSON_ArrayForEach (mm, m) {
            if (!cJSON_IsString(mm) || !mm->valuestring[0]) {
                snprintf(
                    err, errlen,
                    "knowledge base '%s': $.signatures[%zu].match[%zu] is not a non-empty string",
                    name, i, j);
                return -1;
            }
            if (!(s->match[j++] = strdup(mm->valuestring)))
                goto oom;
        }
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(it, "counts_as_nccl");
        s->counts_as_nccl = cJSON_IsBool(c) ? cJSON_IsTrue(c) : 1;
        kb->nsigs = ++i;
    }

    i = 0;
    cJSON_ArrayForEach (it, finds) {
        nt_kb_finding_t *f = &kb->findings[i];
        int sev = nt_severity_parse(nt_get_str(it, "severity"));
        const char *t = nt_get_str(it, "title"), *w = nt_get_str(it, "why"),
                   *x = nt_get_str(it, "fix");
        if (sev < 0 || !t || !w || !x) {
            snprintf(err, errlen,
                     "knowledge base '%s': $.findings.%s needs severity (error|warn|info), title, "
                     "why and fix",
                     name, it->string);
            return -1;
        }
        f->key = strdup(it->string);
        f->severity = (nt_severity_t)sev;
        f->title = strdup(t);
        f->why = strdup(w);
        f->fix = strdup(x);
        f->reference = nt_dup_or_null(nt_get_str(it, "reference"));
        f->confirm = nt_dup_or_null(nt_get_str(it, "confirm"));
        kb->nfindings = ++i;
        if (nt_check_code(f, nt_get_str(it, "code"), name, "findings", err, errlen) < 0)
            return -1;
        if (!f->key || !f->title || !f->why || !f->fix)
            goto oom;
    }

    const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(root, "gpus");
    if (cJSON_IsArray(gpus)) {
        size_t n = (size_t)cJSON_GetArraySize(gpus);
        kb->gpus = calloc(n ? n : 1, sizeof(*kb->gpus));
        if (!kb->gpus)
            goto oom;
        i = 0;
        cJSON_ArrayForEach (it, gpus) {
            const char *m = nt_get_str(it, "match");
            const cJSON *g = cJSON_GetObjectItemCaseSensitive(it, "gpus_per_node");
            const cJSON *b = cJSON_GetObjectItemCaseSensitive(it, "busbw_GBps");
            if (!m || !cJSON_IsNumber(g) || !cJSON_IsNumber(b)) {
                snprintf(
                    err, errlen,
                    "knowledge base '%s': $.gpus[%zu] needs match, gpus_per_node and busbw_GBps",
                    name, i);
                return -1;
            }
            kb->gpus[i].match = strdup(m);
            kb->gpus[i].gpus_per_node = g->valueint;
            kb->gpus[i].busbw_GBps = b->valuedouble;
            kb->gpus[i].note = nt_dup_or_null(nt_get_str(it, "note"));
            kb->ngpus = ++i;
            if (!kb->gpus[i - 1].match)
                goto oom;
        }
    }

    const cJSON *wcs = cJSON_GetObjectItemCaseSensitive(root, "wc_status");
    if (cJSON_IsArray(wcs)) {
        size_t n = (size_t)cJSON_GetArraySize(wcs);
        kb->wcs = calloc(n ? n : 1, sizeof(*kb->wcs));
        if (!kb->wcs)
            goto oom;
        i = 0;
        cJSON_ArrayForEach (it, wcs) {
            const cJSON *st = cJSON_GetObjectItemCaseSensitive(it, "status");
            const char *nm = nt_get_str(it, "name"), *me = nt_get_str(it, "meaning"),
                       *fi = nt_get_str(it, "finding");
            if (!cJSON_IsNumber(st) || !nm || !me || !fi) {
                snprintf(
                    err, errlen,
                    "knowledge base '%s': $.wc_status[%zu] needs status, name, meaning and finding",
                    name, i);
                return -1;
            }
            kb->wcs[i].status = st->valueint;
            kb->wcs[i].name = strdup(nm);
            kb->wcs[i].meaning = strdup(me);
            kb->wcs[i].finding = strdup(fi);
            kb->nwcs = ++i;
            if (!nt_kb_finding(kb, fi)) {
                snprintf(err, errlen,
                         "knowledge base '%s': $.wc_status[%zu].finding names unknown finding '%s'",
                         name, i - 1, fi);
                return -1;
            }
        }
    }
    if (nt_parse_catalogue(cat, kb, name, err, errlen) != 0)
        return -1;
    if (nt_parse_messages(root, kb, name, err, errlen) != 0)
        return -1;
    if (nt_build_index(kb) != 0)
        goto oom;
    return 0;
oom:
    snprintf(err, errlen, "knowledge base '%s': out of memory", name);
    return -1;
}

int nt_kb_load(const char *path, nt_kb_t **out, char *err, size_t errlen)
{
    const char *name = path ? path : "embedded";
    cJSON *root = NULL;
    err[0] = '\0';
    *out = NULL;
    if (path) { /* the one JSON file reader (lib/core/report.c); a knowledge base is tens of KB */
        char why[160];
        if (nt_json_read_file_why(path, 4u << 20, &root, why, sizeof(why)) != NT_OK) {
            /* one line naming the option, the file and the fix */
            snprintf(err, errlen,
                     "--kb '%s': %s: give a knowledge base file (nettune-doctor --print-kb "
                     "writes the built-in one)",
                     path, why);
            return -1;
        }
    } else {
        root = cJSON_Parse((const char *)nt_doctor_kb_data);
    }
    if (!root) {
        snprintf(err, errlen, "knowledge base '%s' is not valid JSON", name);
        return -1;
    }
    nt_kb_t *kb = calloc(1, sizeof(*kb));
    int rc = -1;
    if (!kb) {
        snprintf(err, errlen, "knowledge base '%s': out of memory", name);
    } else if (nt_parse_kb(root, kb, name, err, errlen) == 0 && (kb->source = strdup(name))) {
        rc = 0;
    } else if (!err[0]) {
        snprintf(err, errlen, "knowledge base '%s': out of memory", name);
    }
    cJSON_Delete(root);
    if (rc != 0) {
        nt_kb_destroy(kb);
        return -1;
    }
    *out = kb;
    return 0;
}

void nt_kb_destroy(nt_kb_t *kb)
{
    if (!kb)
        return;
    for (size_t i = 0; i < kb->nsigs; i++) {
        for (size_t j = 0; j < kb->sigs[i].nmatch; j++)
            free(kb->sigs[i].match[j]);
        for (size_t j = 0; kb->sigs[i].and && j < kb->sigs[i].nmatch; j++) {
            for (size_t q = 0; kb->sigs[i].and[j] && kb->sigs[i].and[j][q]; q++)
                free(kb->sigs[i].and[j][q]);
            free(kb->sigs[i].and[j]);
        }
        free(kb->sigs[i].and);
        free(kb->sigs[i].match);
        free(kb->sigs[i].id);
    }
    for (size_t i = 0; i < kb->nfindings; i++) {
        nt_kb_finding_t *f = &kb->findings[i];
        free(f->key);
        free(f->title);
        free(f->why);
        free(f->fix);
        free(f->reference);
        free(f->confirm);
    }
    for (size_t i = 0; i < kb->ngpus; i++) {
        free(kb->gpus[i].match);
        free(kb->gpus[i].note);
    }
    for (size_t i = 0; i < kb->nwcs; i++) {
        free(kb->wcs[i].name);
        free(kb->wcs[i].meaning);
        free(kb->wcs[i].finding);
    }
    for (size_t i = 0; i < kb->nmsgs; i++) {
        nt_kb_message_t *m = &kb->msgs[i];
        free(m->id);
        free(m->format);
        free(m->at);
        free(m->first);
        free(m->last);
        free(m->when_equals);
        for (int j = 0; m->values && j < m->nvalues; j++)
            free(m->values[j]);
        for (int j = 0; m->path_values && j < m->npath_values; j++)
            free(m->path_values[j]);
        free(m->values);
        free(m->path_values);
    }
    for (size_t i = 0; i < kb->npaths; i++) {
        for (int j = 0; kb->paths[i].names && j < kb->paths[i].nnames; j++)
            free(kb->paths[i].names[j]);
        free(kb->paths[i].names);
        free(kb->paths[i].first);
        free(kb->paths[i].last);
        free(kb->paths[i].at);
    }
    free(kb->msgs);
    free(kb->paths);
    free(kb->sigs);
    free(kb->findings);
    for (size_t i = 0; i < kb->ncauses; i++) {
        for (int j = 0; j < kb->causes[i].nexplains; j++)
            free(kb->causes[i].explains[j]);
        free(kb->causes[i].explains);
    }
    free(kb->causes);
    if (kb->index) {
        free(kb->index->pats);
        free(kb->index->shorts);
        free(kb->index);
    }
    free(kb->gpus);
    free(kb->wcs);
    free(kb->source);
    free(kb->version);
    free(kb);
}

const nt_kb_finding_t *nt_kb_finding(const nt_kb_t *kb, const char *key)
{
    for (size_t i = 0; i < kb->nfindings; i++)
        if (strcmp(kb->findings[i].key, key) == 0)
            return &kb->findings[i];
    return NULL;
}

int nt_kb_signature_index(const nt_kb_t *kb, const char *id)
{
    for (size_t i = 0; i < kb->nsigs; i++)
        if (strcmp(kb->sigs[i].id, id) == 0)
            return (int)i;
    return -1;
}


int nt_kb_check_json(const cJSON *root, const char *name, char *err, size_t errlen)
{
    nt_kb_t *kb = calloc(1, sizeof(*kb));
    err[0] = '\0';
    if (!kb) {
        snprintf(err, errlen, "knowledge base '%s': out of memory", name);
        return -1;
    }
    int rc = nt_parse_kb(root, kb, name, err, errlen);
    nt_kb_destroy(kb);
    return rc;
}
