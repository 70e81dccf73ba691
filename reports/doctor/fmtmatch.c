/* Matching a log line against the printf format string NCCL printed it with, so that the
 * knowledge base can hold NCCL's own format strings (reports/doctor/knowledge.json "messages",
 * extracted from the source by reports/doctor/tools/nccl-formats.py) instead of hand-made
 * substrings. */
#include <ctype.h>
#include <string.h>

#include "doctor.h"

/* One conversion of a format: its kind and the format text after it. */
typedef enum { CONV_INT, CONV_HEX, CONV_FLOAT, CONV_PTR, CONV_CHAR, CONV_STR } conv_t;

/* Parses the conversion at fmt ("%..."); returns the text after it and sets the kind; NULL for
 * "%%" (*kind untouched) . */
static const char *nt_conv_parse(const char *fmt, conv_t *kind, int *pct)
{
    const char *p = fmt + 1;
    *pct = 0;
    if (*p == '%') {
        *pct = 1;
        return p + 1;
    }
    while (*p && strchr("-+ #0", *p))
        p++;
    while (*p == '*' || isdigit((unsigned char)*p))
        p++;
    if (*p == '.') {
        p++;
        while (*p == '*' || isdigit((unsigned char)*p))
            p++;
    }
    while (*p && strchr("hlzjtLq", *p))
        p++;
    switch (*p) {
    case 'd':
    case 'i':
    case 'u':
    case 'o':
        *kind = CONV_INT;
        break;
    case 'x':
    case 'X':
        *kind = CONV_HEX;
        break;
    case 'f':
    case 'F':
    case 'g':
    case 'G':
    case 'e':
    case 'E':
        *kind = CONV_FLOAT;
        break;
    case 'p':
        *kind = CONV_PTR;
        break;
    case 'c':
        *kind = CONV_CHAR;
        break;
    default:
        *kind = CONV_STR;
        break; /* 's' and anything unknown: any text */
    }
    return *p ? p + 1 : p;
}

/* Longest run of text a conversion of this kind can take at s (its maximum); STR: all. */
static size_t nt_conv_span(conv_t k, const char *s, size_t n)
{
    size_t i = 0;
    switch (k) {
    case CONV_INT:
        if (i < n && (s[i] == '-' || s[i] == '+'))
            i++;
        while (i < n && (isdigit((unsigned char)s[i]) || s[i] == ' '))
            i++;
        return i;
    case CONV_HEX:
        while (i < n && isxdigit((unsigned char)s[i]))
            i++;
        return i;
    case CONV_FLOAT:
        while (i < n && (isdigit((unsigned char)s[i]) || strchr("+-.eEinfaINFA", s[i])))
            i++;
        return i;
    case CONV_PTR:
        if (n >= 5 && memcmp(s, "(nil)", 5) == 0)
            return 5;
        if (n >= 2 && s[0] == '0' && s[1] == 'x') {
            i = 2;
            while (i < n && isxdigit((unsigned char)s[i]))
                i++;
            return i;
        }
        return 0;
    case CONV_CHAR:
        return n ? 1 : 0;
    case CONV_STR:
        return n;
    }
    return 0;
}

typedef struct {
    nt_fmt_cap_t *caps;
    int maxcaps, ncaps;
    long budget; /* steps left: the match gives up (no match) rather than take long */
} mstate_t;

static int nt_match_at(mstate_t *st, const char *f, const char *fend, const char *s,
                       const char *send, int capi)
{
    while (f < fend) {
        if (--st->budget < 0)
            return 0;
        if (*f != '%') {
            if (s >= send || *s != *f)
                return 0;
            f++, s++;
            continue;
        }
        conv_t k = CONV_STR;
        int pct;
        const char *fn = nt_conv_parse(f, &k, &pct);
        if (pct) {
            if (s >= send || *s != '%')
                return 0;
            f = fn, s++;
            continue;
        }
        size_t max = nt_conv_span(k, s, (size_t)(send - s));
        size_t min = k == CONV_STR ? 0 : 1;
        if (max < min)
            return 0;
        /* integers, hex, floats and pointers take the longest run first; strings the shortest */
        for (size_t t = 0; t <= max - min; t++) {
            size_t len = k == CONV_STR ? min + t : max - t;
            if (k == CONV_INT && len && s[len - 1] == ' ')
                continue; /* width padding is leading only */
            if (nt_match_at(st, fn, fend, s + len, send, capi + 1)) {
                if (capi < st->maxcaps) {
                    st->caps[capi].s = s;
                    st->caps[capi].len = len;
                }
                if (capi + 1 > st->ncaps)
                    st->ncaps = capi + 1;
                return 1;
            }
            if (st->budget < 0)
                return 0;
        }
        return 0;
    }
    return s == send;
}

int nt_fmt_match(const char *fmt, const char *s, nt_fmt_cap_t *caps, int maxcaps)
{
    size_t fl = strcspn(fmt, "\n"); /* formats with a line break: the first line is matched */
    while (fl && fmt[fl - 1] == ' ')
        fl--;
    size_t sl = strlen(s);
    while (sl && (s[sl - 1] == ' ' || s[sl - 1] == '\n'))
        sl--;
    mstate_t st = {caps, maxcaps, 0, 200000};
    if (!nt_match_at(&st, fmt, fmt + fl, s, s + sl, 0))
        return -1;
    return st.ncaps;
}

size_t nt_fmt_anchor(const char *fmt, const char **anchor)
{
    size_t best = 0;
    const char *bp = fmt;
    const char *p = fmt;
    while (*p && *p != '\n') {
        if (*p == '%') {
            conv_t k;
            int pct;
            p = nt_conv_parse(p, &k, &pct);
            continue;
        }
        const char *q = p;
        while (*q && *q != '%' && *q != '\n')
            q++;
        if ((size_t)(q - p) > best)
            best = (size_t)(q - p), bp = p;
        p = q;
    }
    *anchor = bp;
    return best;
}
