/* A communicator's calls of one collective and size: the busbw series that the onset test and
 * the --report comparison both judge. */
#include <math.h>
#include <string.h>

#include "watch.h"

int nt_watch_series_take(const nt_jobcomm_t *c, uint64_t s0, char *done, double *bw,
                         uint64_t *seq, double *ts)
{
    size_t w = c->window;
    const nt_jobcall_t *k0 = nt_jobcomm_call(c, s0);
    if (!k0 || done[s0 % w])
        return -1;
    int n = 0;
    for (uint64_t s = s0; s <= c->max_seq; s++) {
        const nt_jobcall_t *k = nt_jobcomm_call(c, s);
        if (!k || done[s % w] || strcmp(k->op, k0->op) != 0 ||
            !(k->bytes == k0->bytes || (isnan(k->bytes) && isnan(k0->bytes))))
            continue;
        done[s % w] = 1;
        double b = nt_jobcall_median_busbw(c, k);
        if (!isfinite(b))
            continue;
        bw[n] = b;
        if (seq)
            seq[n] = s;
        if (ts)
            ts[n] = k->dump_ts_us;
        n++;
    }
    return n;
}
