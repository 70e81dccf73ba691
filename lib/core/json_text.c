/* The JSON text writer (nt_json_fill, include/nettune/report.h): a document streamed to a file
 * descriptor member by member. It sits below both its users, the atomic output files
 * (lib/core/output.c: the signal-time stash) and the JSON helpers (lib/core/report.c:
 * nt_json_write_atomic), so that neither calls the other back. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nettune/report.h"

/* A small write buffer for nt_json_fill. */
typedef struct nt_jw {
    int fd, err;
    size_t n;
    char buf[1 << 16];
} nt_jw_t;

static void nt_jw_flush(nt_jw_t *w)
{
    const char *p = w->buf;
    while (!w->err && w->n) {
        ssize_t k = write(w->fd, p, w->n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            w->err = k == 0 ? EIO : errno;
            break;
        }
        p += k;
        w->n -= (size_t)k;
    }
    w->n = 0;
}

static void nt_jw_put(nt_jw_t *w, const char *s, size_t len)
{
    while (!w->err && len) {
        size_t room = sizeof(w->buf) - w->n, k = len < room ? len : room;
        memcpy(w->buf + w->n, s, k);
        w->n += k;
        s += k;
        len -= k;
        if (w->n == sizeof(w->buf))
            nt_jw_flush(w);
    }
}

static void nt_jw_str(nt_jw_t *w, const char *s)
{
    nt_jw_put(w, s, strlen(s));
}

/* Print item (unformatted, or formatted) into w; 0, or -1 out of memory. */
static int nt_jw_item(nt_jw_t *w, const cJSON *item, int formatted)
{
    char *txt;
    if (cJSON_IsRaw(item) && item->valuestring) {
        nt_jw_str(w, item->valuestring);
        return 0;
    }
    txt = formatted ? cJSON_Print(item) : cJSON_PrintUnformatted(item);
    if (!txt)
        return -1;
    nt_jw_str(w, txt);
    free(txt);
    return 0;
}

int nt_json_fill(int fd, void *ctx)
{
    const cJSON *doc = ctx, *c;
    nt_jw_t *w = malloc(sizeof(*w));
    int rc = 0;

    if (!w) {
        errno = ENOMEM;
        return -1;
    }
    w->fd = fd;
    w->err = 0;
    w->n = 0;
    if (!cJSON_IsObject(doc) || !doc->child) {
        rc = nt_jw_item(w, doc, 1);
        nt_jw_put(w, "\n", 1);
    } else {
        nt_jw_put(w, "{\n", 2);
        for (c = doc->child; c && rc == 0; c = c->next) {
            cJSON *key = cJSON_CreateString(c->string ? c->string : "");
            char *k = key ? cJSON_PrintUnformatted(key) : NULL;
            cJSON_Delete(key);
            if (!k) {
                rc = -1;
                break;
            }
            nt_jw_put(w, "\t", 1);
            nt_jw_str(w, k);
            nt_jw_put(w, ":\t", 2);
            free(k);
            if (cJSON_IsArray(c) && c->child) {
                /* an array of documents (nodes, links, checks): one element per line, so
                 * that no text of the whole (hundreds of MB at 1,000 nodes) is ever held */
                nt_jw_put(w, "[", 1);
                for (const cJSON *e = c->child; e && rc == 0; e = e->next) {
                    nt_jw_put(w, e == c->child ? "\n\t\t" : ",\n\t\t", e == c->child ? 3 : 4);
                    rc = nt_jw_item(w, e, 0);
                }
                nt_jw_put(w, "\n\t]", 3);
            } else {
                rc = nt_jw_item(w, c, 1);
            }
            nt_jw_put(w, c->next ? ",\n" : "\n}\n", c->next ? 2 : 3);
        }
    }
    if (rc == 0)
        nt_jw_flush(w);
    if (rc != 0)
        errno = ENOMEM;
    else if (w->err)
        errno = w->err, rc = -1;
    free(w);
    return rc;
}
