/* Column-aligned text tables and Markdown tables from the same rows. */
#include <stdlib.h>
#include <string.h>

#include "rpt.h"

const char nt_ansi_reset[] = "\033[0m";

const char *nt_ansi_verdict(nt_verdict_t v)
{
    switch (v) {
    case NT_FAIL: return "\033[1;31m";
    case NT_WARN: return "\033[33m";
    case NT_PASS: return "\033[32m";
    default: return "\033[2m";
    }
}

void nt_table_init(nt_table_t *t, size_t ncols, const char *align, const char *const *headers)
{
    memset(t, 0, sizeof(*t));
    t->ncols = ncols;
    t->align = align;
    for (size_t c = 0; c < ncols; c++)
        nt_table_cell(t, 0, "%s", headers[c]);
}

void nt_table_cell(nt_table_t *t, int tone, const char *fmt, ...)
{
    size_t i = t->ncells;
    va_list ap;
    char *s = NULL;

    if (t->oom)
        return;
    if (i == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64 * t->ncols;
        char **cells = realloc(t->cells, cap * sizeof(*cells));
        unsigned char *tone_v;
        if (!cells) {
            t->oom = 1;
            return;
        }
        t->cells = cells;
        tone_v = realloc(t->tone, cap);
        if (!tone_v) {
            t->oom = 1;
            return;
        }
        t->tone = tone_v;
        memset(t->cells + t->cap, 0, (cap - t->cap) * sizeof(*cells));
        memset(t->tone + t->cap, 0, cap - t->cap);
        t->cap = cap;
    }
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    if (!s) {
        t->oom = 1;
        return;
    }
    /* Line breaks would break the table, and escape sequences from a hostile file must not
     * reach a terminal: every control character becomes a space. */
    for (char *c = s; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = ' ';
    t->cells[i] = s;
    t->tone[i] = (unsigned char)tone;
    t->ncells++;
    /* A row in progress counts as a row: emit pads its missing cells. */
    t->nrows = (t->ncells + t->ncols - 1) / t->ncols;
}

/* Display width: code points, so UTF-8 host names line up. */
static size_t nt_width(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

void nt_table_emit(const nt_table_t *t, nt_buf_t *out, nt_table_style_t style, int color,
                   int indent)
{
    size_t *w;

    if (t->oom) {
        out->oom = 1;
        return;
    }
    if (style == NT_TABLE_MD) {
        for (size_t r = 0; r < t->nrows; r++) {
            nt_buf_puts(out, "|");
            for (size_t c = 0; c < t->ncols; c++) {
                const char *cell = t->cells[r * t->ncols + c];
                nt_buf_puts(out, " ");
                nt_buf_put_md(out, cell ? cell : "");
                nt_buf_puts(out, " |");
            }
            nt_buf_puts(out, "\n");
            if (r == 0) {
                nt_buf_puts(out, "|");
                for (size_t c = 0; c < t->ncols; c++)
                    nt_buf_puts(out, t->align && t->align[c] == 'r' ? " ---: |" : " --- |");
                nt_buf_puts(out, "\n");
            }
        }
        return;
    }
    w = calloc(t->ncols, sizeof(*w));
    if (!w) {
        out->oom = 1;
        return;
    }
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c < t->ncols; c++) {
            const char *cell = t->cells[r * t->ncols + c];
            size_t n = cell ? nt_width(cell) : 0;
            if (n > w[c])
                w[c] = n;
        }
    for (size_t r = 0; r < t->nrows; r++) {
        nt_buf_printf(out, "%*s", indent, "");
        for (size_t c = 0; c < t->ncols; c++) {
            size_t i = r * t->ncols + c;
            const char *cell = t->cells[i] ? t->cells[i] : "";
            size_t pad = w[c] - nt_width(cell);
            int right = t->align && t->align[c] == 'r';
            int last = c + 1 == t->ncols;
            if (right)
                nt_buf_printf(out, "%*s", (int)pad, "");
            if (color && t->tone[i])
                nt_buf_puts(out, nt_ansi_verdict((nt_verdict_t)(t->tone[i] - 1)));
            else if (color && r == 0)
                nt_buf_puts(out, "\033[1m");
            nt_buf_puts(out, cell);
            if (color && (t->tone[i] || r == 0))
                nt_buf_puts(out, nt_ansi_reset);
            if (!right && !last)
                nt_buf_printf(out, "%*s", (int)pad, "");
            if (!last)
                nt_buf_puts(out, "  ");
        }
        nt_buf_puts(out, "\n");
    }
    free(w);
}

void nt_table_cleanup(nt_table_t *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->cells[i]);
    free(t->cells);
    free(t->tone);
    memset(t, 0, sizeof(*t));
}
