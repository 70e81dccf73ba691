/* Growable text buffer, escaping for each output format, atomic file writes. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nettune/log.h"
#include "rpt.h"

void nt_buf_init(nt_buf_t *b) { memset(b, 0, sizeof(*b)); }

void nt_buf_cleanup(nt_buf_t *b)
{
    free(b->data);
    nt_buf_init(b);
}

/* Grow to hold extra more bytes plus the NUL; doubling keeps appends amortised O(1). */
static int nt_buf_reserve(nt_buf_t *b, size_t extra)
{
    size_t need, cap;
    char *p;

    if (b->oom)
        return -1;
    need = b->len + extra + 1;
    if (need <= b->cap)
        return 0;
    cap = b->cap ? b->cap : 4096;
    while (cap < need)
        cap *= 2;
    p = realloc(b->data, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

void nt_buf_put(nt_buf_t *b, const char *s, size_t len)
{
    if (nt_buf_reserve(b, len) != 0)
        return;
    memcpy(b->data + b->len, s, len);
    b->len += len;
    b->data[b->len] = '\0';
}

void nt_buf_puts(nt_buf_t *b, const char *s)
{
    if (s)
        nt_buf_put(b, s, strlen(s));
}

void nt_buf_printf(nt_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || nt_buf_reserve(b, (size_t)n) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void nt_buf_put_plain(nt_buf_t *b, const char *s)
{
    if (!s)
        return;
    for (; *s; s++)
        nt_buf_put(b, (unsigned char)*s < 0x20 || *s == 0x7f ? " " : s, 1);
}

void nt_buf_put_html(nt_buf_t *b, const char *s)
{
    if (!s)
        return;
    for (; *s; s++) {
        switch (*s) {
        case '&': nt_buf_puts(b, "&amp;"); break;
        case '<': nt_buf_puts(b, "&lt;"); break;
        case '>': nt_buf_puts(b, "&gt;"); break;
        case '"': nt_buf_puts(b, "&quot;"); break;
        case '\'': nt_buf_puts(b, "&#39;"); break;
        default: nt_buf_put(b, s, 1);
        }
    }
}

void nt_buf_put_md(nt_buf_t *b, const char *s)
{
    if (!s)
        return;
    for (; *s; s++) {
        if (*s == '\n' || *s == '\r')
            nt_buf_put(b, " ", 1);
        else if (strchr("|\\`*_<>[]", *s)) {
            nt_buf_put(b, "\\", 1);
            nt_buf_put(b, s, 1);
        } else
            nt_buf_put(b, s, 1);
    }
}

void nt_buf_put_csv(nt_buf_t *b, const char *s)
{
    size_t len;

    if (!s)
        return;
    len = strlen(s);
    if (!strpbrk(s, ",\"\r\n") && !(len && (s[0] == ' ' || s[len - 1] == ' '))) {
        nt_buf_put(b, s, len);
        return;
    }
    nt_buf_put(b, "\"", 1);
    for (; *s; s++) {
        if (*s == '"')
            nt_buf_put(b, "\"", 1);
        nt_buf_put(b, s, 1);
    }
    nt_buf_put(b, "\"", 1);
}

void nt_buf_put_prom_label(nt_buf_t *b, const char *s)
{
    if (!s)
        return;
    for (; *s; s++) {
        if (*s == '\\')
            nt_buf_puts(b, "\\\\");
        else if (*s == '"')
            nt_buf_puts(b, "\\\"");
        else if (*s == '\n')
            nt_buf_puts(b, "\\n");
        else
            nt_buf_put(b, s, 1);
    }
}

/* The Prometheus text format's pieces: render_prom.c and render_fabric.c write with them. */
/* A verdict gauge's value (rpt.h): `> 0` alerts on anything worse than pass. */
int nt_prom_verdict(nt_verdict_t v)
{
    switch (v) {
    case NT_PASS: return 0;
    case NT_WARN: return 1;
    case NT_FAIL: return 2;
    case NT_NOT_JUDGED: return -2;
    default: return -1;
    }
}

/* A sample value: integers exactly, others with 15 significant digits so that GB/s x 1e9
 * prints 15520000000 rather than 15519999999.999998. */
void nt_prom_value(nt_buf_t *out, double v)
{
    if (fabs(v) < 1e15 && v == floor(v))
        nt_buf_printf(out, " %.0f\n", v);
    else
        nt_buf_printf(out, " %.15g\n", v);
}

void nt_prom_family(nt_buf_t *out, const char *name, const char *help)
{
    nt_buf_printf(out, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

void nt_prom_label(nt_buf_t *out, int first, const char *name, const char *value)
{
    nt_buf_printf(out, "%s%s=\"", first ? "{" : ",", name);
    nt_buf_put_prom_label(out, value ? value : "");
    nt_buf_puts(out, "\"");
}

nt_status_t nt_buf_write(const nt_buf_t *b, const char *path)
{
    if (b->oom) {
        NT_ERROR(REPORT, "out of memory while rendering");
        return NT_ERR_NOMEM;
    }
    /* The project's one output writer (lib/core/output.c): stdout, atomic replace, links, devices. */
    return nt_output_write(path ? path : "-", b->data ? b->data : "", b->len);
}

const char *nt_fmt_num(char *buf, size_t len, double v, int digits)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else if (fabs(v) < 1e15 && v == floor(v))
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%.*g", digits, v);
    return buf;
}

const char *nt_fmt_bw(char *buf, size_t len, double gbps)
{
    if (isnan(gbps))
        snprintf(buf, len, "-");
    else if (gbps >= 100)
        snprintf(buf, len, "%.0f", gbps);
    else if (gbps >= 10)
        snprintf(buf, len, "%.1f", gbps);
    else if (gbps >= 1)
        snprintf(buf, len, "%.2f", gbps);
    else
        snprintf(buf, len, "%.3f", gbps);
    return buf;
}
