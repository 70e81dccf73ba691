/* libFuzzer target for the shared readers of NCCL output in lib/ (used by nettune tune, nettune
 * doctor and nettune report): the input is read as a log through the bounded line reader
 * (lib/core/linereader.c), every line split by nt_line_parse (lib/nccl/logline.c) and given to the NCCL
 * debug-log fact reader (lib/nccl/nccllog.c) and the nccl-tests table reader (lib/nccl/nccltests.c); the
 * whole text also goes to NCCL's tuning-table reader (lib/nccl/nccl_table.c) and, when it is JSON, to
 * the nccl-tests JSON reader. Every table found is asked its collective and best bus bandwidth.
 * Any crash, leak or UB is a bug. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "nettune/logline.h"
#include "nettune/nccl_table.h"
#include "nettune/nccllog.h"
#include "nettune/nccltests.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nt_nccllog_t g;
    nt_nccl_table_t tab;
    nt_ncclt_reader_t *r;
    nt_linereader_t *lr;
    const char *line;
    size_t len;
    FILE *fp;
    char err[256];

    if (size == 0)
        return 0;
    fp = fmemopen((void *)data, size, "r");
    if (!fp)
        return 0;
    r = nt_ncclt_reader_create();
    lr = nt_linereader_open_stream(fp);
    nt_nccllog_init(&g);
    if (r && lr) {
        nt_ncclt_reader_new_input(r, 0);
        while (nt_linereader_next(lr, &line, &len) > 0) {
            nt_logline_t l;
            nt_line_parse(line, &l);
            nt_nccllog_feed(&g, &l, nt_linereader_lineno(lr));
            nt_ncclt_reader_scan_coll(r, l.body);
            nt_ncclt_reader_feed(r, l.body, nt_linereader_lineno(lr));
        }
        (void)nt_nccllog_env_get(&g, "NCCL_ALGO");
    }
    if (lr)
        nt_linereader_close(lr);
    fclose(fp);
    nt_nccl_table_parse((const char *)data, size, &tab, err, sizeof(err));
    if (r) {
        cJSON *doc = cJSON_ParseWithLength((const char *)data, size);
        if (doc) {
            nt_ncclt_reader_add_json(r, doc, 1);
            cJSON_Delete(doc);
        }
        for (size_t i = 0; i < nt_ncclt_reader_ntables(r); i++) {
            const nt_ncclt_table_t *t = nt_ncclt_reader_table(r, i);
            char how[256];
            (void)nt_ncclt_infer_coll(t, 0, how, sizeof(how));
            (void)nt_ncclt_infer_coll(t, 8, how, sizeof(how));
        }
    }
    nt_ncclt_reader_destroy(r);
    nt_nccllog_cleanup(&g);
    return 0;
}
