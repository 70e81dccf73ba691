/* The judge's indexes: sets of link ids, string and rank-pair maps, the links of a report by id.
 * A report of 1,000 nodes --full has 499,500 links, so nothing in the judge looks a link (or a
 * node) up by scanning them all. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "judge_int.h"
#include "nettune/gpu.h"
#include "nettune/log.h"
#include "nettune/software.h"

void nt_idset_free(nt_idset_t *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->id[i]);
    free(s->id);
    s->id = NULL;
    s->n = 0;
}

/* Add a copy of id; 0, or -1 out of memory (the set is left as it was). */
int nt_idset_add(nt_idset_t *s, const char *id)
{
    char **grown = realloc(s->id, sizeof(*grown) * (size_t)(s->n + 1));
    if (!grown)
        return -1;
    s->id = grown;
    if (!(s->id[s->n] = strdup(id)))
        return -1;
    s->n++;
    return 0;
}

int nt_cmp_strp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort the ids and drop repeats (nt_idset_has searches them). */
void nt_idset_seal(nt_idset_t *s)
{
    int m = 0;
    if (s->n > 1)
        qsort(s->id, (size_t)s->n, sizeof(*s->id), nt_cmp_strp);
    for (int i = 0; i < s->n; i++) {
        if (m > 0 && strcmp(s->id[m - 1], s->id[i]) == 0)
            free(s->id[i]);
        else
            s->id[m++] = s->id[i];
    }
    s->n = m;
}

int nt_idset_has(const nt_idset_t *s, const char *id)
{
    return s->n > 0 && bsearch(&id, s->id, (size_t)s->n, sizeof(*s->id), nt_cmp_strp);
}



/* ---- indexes: a report of 1,000 nodes --full has 499,500 links, so nothing below looks a
 * link (or a node) up by scanning them all; string and rank-pair keys go through these
 * open-addressing tables (sized once, for a known number of keys). ---- */


static uint64_t nt_hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static uint64_t nt_hash_u64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL; /* splitmix64's finaliser */
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Room for n keys (a load of at most one half). NT_ERR_NOMEM. */
nt_status_t nt_strmap_init(nt_strmap_t *m, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n + 2)
        cap *= 2;
    m->keys = calloc(cap, sizeof(*m->keys));
    m->vals = calloc(cap, sizeof(*m->vals));
    m->mask = cap - 1;
    return m->keys && m->vals ? NT_OK : NT_ERR_NOMEM;
}

void nt_strmap_free(nt_strmap_t *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof(*m));
}

/* The value of key, or SIZE_MAX. */
size_t nt_strmap_get(const nt_strmap_t *m, const char *key)
{
    if (!m->keys)
        return SIZE_MAX;
    for (size_t i = nt_hash_str(key) & m->mask; m->keys[i]; i = (i + 1) & m->mask)
        if (strcmp(m->keys[i], key) == 0)
            return m->vals[i];
    return SIZE_MAX;
}

/* Set key to val unless key is there already (the first value stays). */
void nt_strmap_add(nt_strmap_t *m, const char *key, size_t val)
{
    size_t i = nt_hash_str(key) & m->mask;
    for (; m->keys[i]; i = (i + 1) & m->mask)
        if (strcmp(m->keys[i], key) == 0)
            return;
    m->keys[i] = key;
    m->vals[i] = val;
}


nt_status_t nt_u64map_init(nt_u64map_t *m, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n + 2)
        cap *= 2;
    m->keys = calloc(cap, sizeof(*m->keys));
    m->vals = malloc(cap * sizeof(*m->vals));
    m->mask = cap - 1;
    if (!m->keys || !m->vals)
        return NT_ERR_NOMEM;
    memset(m->vals, 0xff, cap * sizeof(*m->vals));
    return NT_OK;
}

void nt_u64map_free(nt_u64map_t *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof(*m));
}

/* The slot of key: its value (SIZE_MAX when absent: the caller may set it). */
size_t *nt_u64map_slot(nt_u64map_t *m, uint64_t key)
{
    size_t i = nt_hash_u64(key) & m->mask;
    for (; m->vals[i] != SIZE_MAX; i = (i + 1) & m->mask)
        if (m->keys[i] == key)
            return &m->vals[i];
    m->keys[i] = key;
    return &m->vals[i];
}

/* The key of an unordered pair of ranks (both >= 0). */
uint64_t nt_rank_pair_key(int a, int b)
{
    unsigned lo = (unsigned)(a < b ? a : b), hi = (unsigned)(a < b ? b : a);
    return ((uint64_t)lo << 32) | hi;
}


void nt_link_ix_free(nt_link_ix_t *ix)
{
    free(ix->item);
    free(ix->next);
    free(ix->ids);
    nt_strmap_free(&ix->first);
    memset(ix, 0, sizeof(*ix));
}

nt_status_t nt_link_ix_build(nt_link_ix_t *ix, cJSON *links)
{
    size_t *last, *off, used = 0, cap = 4096;
    cJSON *item;

    memset(ix, 0, sizeof(*ix));
    ix->n = (size_t)cJSON_GetArraySize(links);
    ix->item = calloc(ix->n + 1, sizeof(*ix->item));
    ix->next = calloc(ix->n + 1, sizeof(*ix->next));
    ix->ids = malloc(cap);
    last = calloc(ix->n + 1, sizeof(*last));
    off = calloc(ix->n + 1, sizeof(*off));
    if (!ix->item || !ix->next || !ix->ids || !last || !off ||
        nt_strmap_init(&ix->first, ix->n) != NT_OK)
        goto nomem;
    ix->n = 0;
    cJSON_ArrayForEach (item, links) {
        cJSON *l = nt_json_thaw(item);
        const char *id = nt_json_get_str(l, "id", "");
        size_t len = strlen(id) + 1;
        if (used + len > cap) {
            char *grown;
            while (used + len > cap)
                cap *= 2;
            if (!(grown = realloc(ix->ids, cap))) {
                nt_json_thaw_end(item, l, 0);
                goto nomem;
            }
            ix->ids = grown;
        }
        memcpy(ix->ids + used, id, len);
        nt_json_thaw_end(item, l, 0);
        off[ix->n] = used;
        used += len;
        ix->item[ix->n++] = item;
    }
    for (size_t i = 0; i < ix->n; i++) {
        const char *id = ix->ids + off[i];
        size_t f = nt_strmap_get(&ix->first, id);
        ix->next[i] = SIZE_MAX;
        if (f == SIZE_MAX) {
            nt_strmap_add(&ix->first, id, i);
            last[i] = i;
        } else {
            ix->next[last[f]] = i;
            last[f] = i;
        }
    }
    free(last);
    free(off);
    return NT_OK;
nomem:
    free(last);
    free(off);
    nt_link_ix_free(ix);
    return NT_ERR_NOMEM;
}

/* The first link of id, or SIZE_MAX; then ix->next[] through the others. */
size_t nt_link_ix_find(const nt_link_ix_t *ix, const char *id)
{
    return nt_strmap_get(&ix->first, id);
}

