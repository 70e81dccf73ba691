/* Line prefixes. NCCL's own prefix comes from src/debug.cc: "%s:%d:%d [%d] NCCL INFO " (host,
 * pid, tid, cuda device), and WARN lines add "file.cc:line" before "NCCL WARN". Launchers put
 * their own label in front: srun --label " 0: ", Open MPI --tag-output "[1,0]<stdout>:",
 * torchrun "[rank0]:" or "[default0]:". */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/logline.h"

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Parses digits at *p; returns the value and advances, or -1 without advancing. */
static long digits(const char **p)
{
    const char *s = *p;
    long v = 0;
    if (!is_digit(*s))
        return -1;
    while (is_digit(*s)) {
        if (v < 100000000L)
            v = v * 10 + (*s - '0');
        s++;
    }
    *p = s;
    return v;
}

/* Strips one launcher label; returns the rest of the line, setting *task. */
static const char *strip_launcher(const char *s, long *task)
{
    const char *p = s;
    /* Open MPI: [jobid,rank]<stdout>: */
    if (*p == '[') {
        const char *q = p + 1;
        if (digits(&q) >= 0 && *q == ',') {
            q++;
            long r = digits(&q);
            if (r >= 0 && q[0] == ']' && q[1] == '<') {
                const char *e = strchr(q, '>');
                if (e && e[1] == ':') {
                    *task = r;
                    e += 2;
                    if (*e == ' ')
                        e++;
                    return e;
                }
            }
        }
        /* torchrun: [rank3]: or [default3]: */
        const char *t = NULL;
        if (strncmp(p, "[rank", 5) == 0)
            t = p + 5;
        else if (strncmp(p, "[default", 8) == 0)
            t = p + 8;
        if (t) {
            long r = digits(&t);
            if (r >= 0 && t[0] == ']' && t[1] == ':') {
                *task = r;
                t += 2;
                if (*t == ' ')
                    t++;
                return t;
            }
        }
        return s;
    }
    /* srun --label: optional blanks, the task number, ':' then a blank or the end. */
    while (*p == ' ')
        p++;
    if (is_digit(*p)) {
        const char *q = p;
        long r = digits(&q);
        if (r >= 0 && q[0] == ':' && (q[1] == ' ' || q[1] == '\0' || q[1] == '\t')) {
            *task = r;
            q++;
            if (*q == ' ')
                q++;
            return q;
        }
    }
    return s;
}

/* "[2026-03-03 12:11:38] " as some wrappers print it. */
static const char *strip_timestamp(const char *s)
{
    if (s[0] == '[' && is_digit(s[1]) && is_digit(s[2]) && is_digit(s[3]) && is_digit(s[4]) &&
        s[5] == '-') {
        const char *e = strchr(s, ']');
        if (e && e - s < 40) {
            e++;
            while (*e == ' ')
                e++;
            return e;
        }
    }
    return s;
}

/* After the NCCL prefix (or anywhere for prefix-less excerpts): finds the level keyword. */
static void find_level(const char *s, nt_logline_t *out)
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
        if (colon && colon > t && colon[-1] != ' ' && is_digit(colon[1]) &&
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
    const char *s = strip_timestamp(line);
    s = strip_launcher(s, &out->task);
    s = strip_timestamp(s);
    out->body = s;

    /* host:pid:tid [dev] -- host is everything before the last two ':' of the first token. */
    const char *sp = strchr(s, ' ');
    if (sp && sp > s && sp[1] == '[') {
        const char *c2 = sp - 1; /* tid digits end */
        while (c2 > s && is_digit(*c2))
            c2--;
        if (*c2 == ':' && c2 > s &&
            c2 < sp - 1) { /* c2 == s: no host, and c1 would read before s */
            const char *c1 = c2 - 1;
            while (c1 > s && is_digit(*c1))
                c1--;
            if (*c1 == ':' && c1 < c2 - 1 && c1 > s) {
                const char *d = sp + 2;
                long dev = digits(&d);
                if (dev >= 0 && d[0] == ']') {
                    const char *pp = c1 + 1;
                    out->host = s;
                    out->host_len = (size_t)(c1 - s);
                    out->pid = digits(&pp);
                    out->dev = (int)dev;
                    find_level(d + 1, out);
                    return;
                }
            }
        }
    }
    find_level(s, out);
}
