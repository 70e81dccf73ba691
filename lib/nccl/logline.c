/* Line prefixes. NCCL's own prefix comes from src/debug.cc: "%s:%d:%d [%d] NCCL INFO " (host,
 * pid, tid, cuda device), and WARN lines add "file.cc:line" before "NCCL WARN". Launchers,
 * loggers and log collectors put their own labels in front: one table of them (nt_prefixes
 * below), each row with its source. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/logline.h"

static int nt_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Parses digits at *p; returns the value and advances, or -1 without advancing. */
static long nt_digits(const char **p)
{
    const char *s = *p;
    long v = 0;
    if (!nt_is_digit(*s))
        return -1;
    while (nt_is_digit(*s)) {
        if (v < 100000000L)
            v = v * 10 + (*s - '0');
        s++;
    }
    *p = s;
    return v;
}

/* ---- the prefix table ----------------------------------------------------------------------
 * Each row strips one label that a launcher, a logger or a log collector puts in front of the
 * program's own line, and may give the line's launcher task (rank) and host. nt_line_parse
 * applies the rows until none matches (kubectl's time, then torchrun's label, then srun's, for
 * instance), so order matters only between rows that could match the same text. A new wrapper
 * is a row (its matcher, an example and its source); tests/doctor/test_unit.c parses every
 * row's example. */

typedef struct {
    long task;
    const char *host; /* the launcher's host for the line, or NULL */
    size_t host_len;
} nt_prefix_out_t;

/* Returns the text after the label when `s` starts with the row's label, else NULL. */
typedef const char *(*nt_prefix_match_fn)(const char *s, nt_prefix_out_t *o);

typedef struct {
    const char *name;
    const char *example; /* a line start the row strips */
    const char *source;  /* where the launcher prints it */
    nt_prefix_match_fn match;
} nt_prefix_row_t;

static const char *nt_blank(const char *s)
{
    return *s == ' ' ? s + 1 : s;
}

static int nt_is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Open MPI: [jobid,rank]<stdout>: (also <stderr>, <stddiag>). */
static const char *nt_m_openmpi(const char *s, nt_prefix_out_t *o)
{
    const char *q = s + 1;
    if (*s != '[' || nt_digits(&q) < 0 || *q != ',')
        return NULL;
    q++;
    long r = nt_digits(&q);
    if (r < 0 || q[0] != ']' || q[1] != '<')
        return NULL;
    const char *e = strchr(q, '>');
    if (!e || e[1] != ':')
        return NULL;
    o->task = r;
    return nt_blank(e + 2);
}

/* torchrun / torch.distributed.elastic: [${role_name}${local_rank}]: by default ("[default0]:",
 * "[trainer3]:"), "[rank3]:" or "[3]:" with a template that names the global rank. A role name
 * is letters, digits, '_' and '-' and starts with a letter; the number is its trailing digits. */
static const char *nt_m_elastic(const char *s, nt_prefix_out_t *o)
{
    if (*s != '[')
        return NULL;
    const char *q = s + 1;
    while (nt_is_alpha(*q) || nt_is_digit(*q) || *q == '_' || *q == '-')
        q++;
    const char *end = q; /* "[trainer0|3]:": the local rank, then '|' and the global rank */
    long global = -1;
    if (*q == '|') {
        const char *g = q + 1;
        global = nt_digits(&g);
        if (global < 0)
            return NULL;
        q = g;
    }
    if (q - s > 64 || q[0] != ']' || q[1] != ':' || !nt_is_digit(end[-1]))
        return NULL;
    const char *d = end;
    while (d > s + 1 && nt_is_digit(d[-1]))
        d--;
    if (d > s + 1 && !nt_is_alpha(s[1]))
        return NULL;
    o->task = global >= 0 ? global : nt_digits(&d);
    return nt_blank(q + 2);
}

/* Lightning's rank_prefixed_message: "[rank: 1] ". */
static const char *nt_m_lightning(const char *s, nt_prefix_out_t *o)
{
    if (s[0] != '[' || strncmp(s, "[rank: ", 7) != 0)
        return NULL;
    const char *q = s + 7;
    long r = nt_digits(&q);
    if (r < 0 || *q != ']')
        return NULL;
    o->task = r;
    return nt_blank(q + 1);
}

/* Ray's worker lines on the driver: "(MyActor pid=480956) ", "(pid=45601, ip=10.0.0.2) ". */
static const char *nt_m_ray(const char *s, nt_prefix_out_t *o)
{
    if (*s != '(')
        return NULL;
    const char *e = strchr(s, ')');
    if (!e || e - s > 200 || e[1] != ' ')
        return NULL;
    const char *pid = strstr(s, "pid=");
    if (!pid || pid > e || (pid[-1] != ' ' && pid[-1] != '('))
        return NULL;
    const char *ip = strstr(s, "ip=");
    if (ip && ip < e) {
        const char *h = ip + 3, *he = h;
        while (he < e && *he != ',' && *he != ' ')
            he++;
        if (he > h)
            o->host = h, o->host_len = (size_t)(he - h);
    }
    return e + 2;
}

/* srun --label: optional blanks, the task number, ':' then a blank or the end. */
static const char *nt_m_srun(const char *s, nt_prefix_out_t *o)
{
    const char *p = s;
    while (*p == ' ')
        p++;
    if (!nt_is_digit(*p))
        return NULL;
    const char *q = p;
    long r = nt_digits(&q);
    if (r < 0 || q[0] != ':' || (q[1] != ' ' && q[1] != '\0' && q[1] != '\t'))
        return NULL;
    o->task = r;
    return nt_blank(q + 1);
}

/* pdsh / clush / DeepSpeed's pdsh runner: "host: ". A host name here is lowercase letters,
 * digits, '.', '-' and '_' with at least one digit or '-', so that "error: " or "note: " from a
 * compiler or a shell is not taken for a host (and an exception's name, "RuntimeError: ", has
 * capitals). NCCL's own "10.0.0.1:12:13 [0]" has no blank after the colon. */
static const char *nt_m_pdsh(const char *s, nt_prefix_out_t *o)
{
    const char *p = s;
    int marks = 0;
    if (!((*p >= 'a' && *p <= 'z') || nt_is_digit(*p)))
        return NULL;
    while ((*p >= 'a' && *p <= 'z') || nt_is_digit(*p) || *p == '.' || *p == '-' || *p == '_') {
        marks += nt_is_digit(*p) || *p == '-';
        p++;
    }
    if (p - s > 64 || !marks || p[0] != ':' || p[1] != ' ')
        return NULL;
    o->host = s;
    o->host_len = (size_t)(p - s);
    return p + 2;
}

/* kubectl logs --timestamps: RFC 3339 with nanoseconds, "2024-05-01T10:00:00.123456789Z ";
 * journalctl -o short-iso adds "host ident[pid]: " after such a time. */
static const char *nt_m_kubectl(const char *s, nt_prefix_out_t *o)
{
    for (int i = 0; i < 4; i++)
        if (!nt_is_digit(s[i]))
            return NULL;
    if (s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':')
        return NULL;
    const char *p = s + 19;
    if (*p == '.' || *p == ',')
        for (p++; nt_is_digit(*p); p++)
            ;
    if (*p == 'Z')
        p++;
    else if ((*p == '+' || *p == '-') && nt_is_digit(p[1]))
        for (p++; nt_is_digit(*p) || *p == ':'; p++)
            ;
    if (*p != ' ')
        return NULL;
    const char *h = p + 1, *he = h;
    while (*he && *he != ' ')
        he++;
    if (*he == ' ' && he > h) {
        const char *id = he + 1;
        while (*id && *id != ' ' && *id != '[' && *id != ':')
            id++;
        if (*id == '[') {
            const char *q = id + 1;
            if (nt_digits(&q) >= 0 && q[0] == ']' && q[1] == ':') {
                o->host = h, o->host_len = (size_t)(he - h);
                return nt_blank(q + 2);
            }
        }
    }
    return p + 1;
}

/* journalctl -o short (syslog's format): "Dec 02 00:29:06 host ident[pid]: " or "ident: ". */
static const char *nt_m_journal(const char *s, nt_prefix_out_t *o)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    int month = 0;
    if (s[0] < 'A' || s[0] > 'S' || s[3] != ' ')
        return NULL; /* the quick test: month names start with A-S */
    for (int i = 0; i < 12; i++)
        if (strncmp(s, months + 3 * i, 3) == 0)
            month = 1;
    if (!month || s[3] != ' ' || !(nt_is_digit(s[4]) || s[4] == ' ') || !nt_is_digit(s[5]) ||
        s[6] != ' ' || !nt_is_digit(s[7]) || s[9] != ':' || s[12] != ':' || s[15] != ' ')
        return NULL;
    const char *h = s + 16, *he = h;
    while (*he && *he != ' ')
        he++;
    if (*he != ' ' || he == h)
        return NULL;
    const char *id = he + 1;
    while (*id && *id != ' ' && *id != ':')
        id++;
    if (id[0] != ':' || id[1] != ' ')
        return NULL;
    o->host = h, o->host_len = (size_t)(he - h);
    return id + 2;
}

/* vLLM's logger: "ERROR 06-13 07:35:59 [core.py:517] " (level, month-day time, [file:line]). */
static const char *nt_m_vllm(const char *s, nt_prefix_out_t *o)
{
    (void)o;
    static const char *const levels[] = {"DEBUG ", "INFO ", "WARNING ", "ERROR ", "CRITICAL "};
    const char *p = NULL;
    if (!strchr("DIWEC", *s) || !*s)
        return NULL; /* the quick test: the level's first letter */
    for (size_t i = 0; !p && i < sizeof(levels) / sizeof(levels[0]); i++)
        if (strncmp(s, levels[i], strlen(levels[i])) == 0)
            p = s + strlen(levels[i]);
    if (!p || !nt_is_digit(p[0]) || !nt_is_digit(p[1]) || p[2] != '-' || p[5] != ' ' ||
        p[8] != ':' || p[11] != ':' || p[14] != ' ' || p[15] != '[')
        return NULL;
    const char *e = strchr(p + 15, ']');
    if (!e || e - p > 100 || !memchr(p + 15, ':', (size_t)(e - p - 15)))
        return NULL;
    return nt_blank(e + 1);
}

/* "[2026-03-03 12:11:38] " or "[2026-03-03 12:11:38,123] ": a bracketed asctime. */
static const char *nt_m_bracket_time(const char *s, nt_prefix_out_t *o)
{
    (void)o;
    if (!(s[0] == '[' && nt_is_digit(s[1]) && nt_is_digit(s[2]) && nt_is_digit(s[3]) &&
          nt_is_digit(s[4]) && s[5] == '-'))
        return NULL;
    const char *e = strchr(s, ']');
    if (!e || e - s >= 40)
        return NULL;
    e++;
    while (*e == ' ')
        e++;
    return e;
}

static const nt_prefix_row_t nt_prefixes[] = {
    {"openmpi", "[1,2]<stdout>:", "Open MPI mpirun(1) --tag-output: \"[jobid,MCW_rank]<stdxxx>\"",
     nt_m_openmpi},
    {"lightning", "[rank: 1] ",
     "Lightning: lightning_utilities/core/rank_zero.py rank_prefixed_message, \"[rank: {rank}] \"",
     nt_m_lightning},
    {"torchrun", "[trainer0|3]:",
     "torch/distributed/elastic/multiprocessing/api.py (start_processes): each line prefixed "
     "\"[${role_name}${local_rank}]:\" by default (\"[default0]:\"), or log_line_prefix_template "
     "(\"[${rank}]:\"); PyTorch's \"[rank3]:\" and Accelerate's launcher (accelerate/commands/"
     "launch.py through torch.distributed.run; accelerate/utils/constants.py "
     "ELASTIC_LOG_LINE_PREFIX_TEMPLATE_PYTORCH_VERSION) print the same shape",
     nt_m_elastic},
    {"ray", "(RayWorkerWrapper pid=3475, ip=10.0.0.2) ",
     "Ray: doc/source/ray-observability/ray-logging.rst, worker lines on the driver start "
     "\"(pid=45601)\" or \"(MyActor pid=480956)\", with \"ip=\" for another node",
     nt_m_ray},
    {"kubectl", "2024-05-01T10:00:00.123456789Z ",
     "kubectl logs --timestamps (kubernetes.io kubectl reference: \"Include timestamps on each "
     "line in the log output\", RFC 3339 with nanoseconds); journalctl -o short-iso",
     nt_m_kubectl},
    {"journald", "Dec 02 00:29:06 gpu-node3 python[4122]: ",
     "journalctl(1) -o short, syslog's \"Mmm dd hh:mm:ss host ident[pid]: \"", nt_m_journal},
    {"timestamp", "[2026-03-03 12:11:38,123] ",
     "DeepSpeed's logger (deepspeed/utils/logging.py, \"[%(asctime)s] [%(levelname)s] ...\") and "
     "wrappers that print a bracketed time",
     nt_m_bracket_time},
    {"vllm", "ERROR 06-13 07:35:59 [core.py:517] ",
     "vLLM: vllm/logger.py, _FORMAT \"%(levelname)s %(asctime)s [%(filename)s:%(lineno)d] "
     "%(message)s\" with _DATE_FORMAT \"%m-%d %H:%M:%S\"",
     nt_m_vllm},
    {"srun", "12: ", "Slurm srun(1) -l, --label: \"Prepend task number to lines of stdout/err\"",
     nt_m_srun},
    {"pdsh", "gpu-node3: ",
     "pdsh(1): output lines are prefixed \"hostname: \"; DeepSpeed's multi-node launcher runs "
     "pdsh by default (deepspeed/launcher/multinode_runner.py, PDSHRunner)",
     nt_m_pdsh},
};

size_t nt_line_pdsh_host(const char *s)
{
    nt_prefix_out_t o = {-1, NULL, 0};
    if (!s || !nt_m_pdsh(s, &o))
        return 0;
    for (size_t i = 0; i < o.host_len; i++)
        if (!nt_is_digit(s[i]))
            return o.host_len;
    return 0; /* digits only: srun's task label ("12: "), not a host */
}

size_t nt_line_prefix_count(void)
{
    return sizeof(nt_prefixes) / sizeof(nt_prefixes[0]);
}

/* prefix_rows holds one bit per row */
_Static_assert(sizeof(nt_prefixes) / sizeof(nt_prefixes[0]) <= 8 * sizeof(unsigned long),
               "nt_logline_t.prefix_rows has a bit per prefix row");

int nt_line_prefix_row(const char *name)
{
    for (size_t i = 0; name && i < nt_line_prefix_count(); i++)
        if (strcmp(name, nt_prefixes[i].name) == 0)
            return (int)i;
    return -1;
}

const char *nt_line_prefix_at(size_t i, const char **example, const char **source)
{
    if (i >= nt_line_prefix_count())
        return NULL;
    if (example)
        *example = nt_prefixes[i].example;
    if (source)
        *source = nt_prefixes[i].source;
    return nt_prefixes[i].name;
}

/* After the NCCL prefix (or anywhere for prefix-less excerpts): finds the level keyword. */
static void nt_find_level(const char *s, nt_logline_t *out)
{
    const char *w = strstr(s, "NCCL WARN ");
    const char *i = strstr(s, "NCCL INFO ");
    if (w && (!i || w < i)) {
        out->level = NT_LVL_WARN;
        out->msg = w + 10;
        return;
    }
    if (i) {
        out->level = NT_LVL_INFO;
        out->msg = i + 10;
        return;
    }
    /* NCCL 2.4-2.8 ibvwrap and some builds print "misc/ibvwrap.cu:61 WARN msg" (no "NCCL"). */
    const char *b = strstr(s, " WARN ");
    if (b) {
        const char *t = b;
        while (t > s && t[-1] != ' ')
            t--;
        const char *colon = memchr(t, ':', (size_t)(b - t));
        if (colon && colon > t && colon[-1] != ' ' && nt_is_digit(colon[1]) &&
            memchr(t, '.', (size_t)(colon - t))) {
            out->level = NT_LVL_WARN;
            out->msg = b + 6;
            return;
        }
    }
    out->level = NT_LVL_NONE;
    out->msg = s;
}

void nt_line_parse(const char *line, nt_logline_t *out)
{
    memset(out, 0, sizeof(*out));
    out->pid = -1;
    out->dev = -1;
    out->task = -1;
    nt_prefix_out_t po = {-1, NULL, 0};
    const char *s = line;
    /* a few labels at most stack up (kubectl's time, torchrun's label, a logger's time) */
    for (int pass = 0; pass < 6; pass++) {
        const char *next = NULL;
        for (size_t i = 0; !next && i < nt_line_prefix_count(); i++) {
            nt_prefix_out_t o = {-1, NULL, 0};
            next = nt_prefixes[i].match(s, &o);
            if (!next)
                continue;
            if (o.task >= 0 && po.task < 0)
                po.task = o.task;
            if (o.host && !po.host)
                po.host = o.host, po.host_len = o.host_len;
            out->prefix_rows |= 1ul << i;
            if (out->nprefix < NT_LINE_PREFIXES)
                out->prefix[out->nprefix++] = nt_prefixes[i].name;
        }
        if (!next && pass == 0 && (*s == ' ' || *s == '\t')) {
            /* a test runner or a CI step that indents what it relays (go test -v, a YAML
             * block) puts blanks before mpirun's label: only that label, whose shape
             * ("[1,2]<stdout>:") no indented text has, is looked for past them */
            const char *t = s;
            while (*t == ' ' || *t == '\t')
                t++;
            nt_prefix_out_t o = {-1, NULL, 0};
            next = nt_prefixes[0].match(t, &o);
            if (next) {
                if (o.task >= 0)
                    po.task = o.task;
                if (o.host)
                    po.host = o.host, po.host_len = o.host_len;
                out->prefix_rows |= 1ul;
                if (out->nprefix < NT_LINE_PREFIXES)
                    out->prefix[out->nprefix++] = nt_prefixes[0].name;
            }
        }
        if (!next)
            break;
        s = next;
    }
    out->task = po.task;
    out->body = s;

    /* host:pid:tid [dev] -- host is everything before the last two ':' of the first token. */
    const char *sp = strchr(s, ' ');
    if (sp && sp > s && sp[1] == '[') {
        const char *c2 = sp - 1; /* tid digits end */
        while (c2 > s && nt_is_digit(*c2))
            c2--;
        if (*c2 == ':' && c2 > s &&
            c2 < sp - 1) { /* c2 == s: no host, and c1 would read before s */
            const char *c1 = c2 - 1;
            while (c1 > s && nt_is_digit(*c1))
                c1--;
            if (*c1 == ':' && c1 < c2 - 1 && c1 > s) {
                const char *d = sp + 2;
                long dev = nt_digits(&d);
                if (dev >= 0 && d[0] == ']') {
                    const char *pp = c1 + 1;
                    out->host = s;
                    out->host_len = (size_t)(c1 - s);
                    out->pid = nt_digits(&pp);
                    out->dev = (int)dev;
                    nt_find_level(d + 1, out);
                    return;
                }
            }
        }
    }
    /* NCCL's line names no host: the launcher's label may */
    out->host = po.host;
    out->host_len = po.host_len;
    nt_find_level(s, out);
}
