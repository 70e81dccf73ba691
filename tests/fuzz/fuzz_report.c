/* libFuzzer target for nettune-report's reader (reports/doc.c) and everything that walks a
 * document: the input is parsed as JSON, validated against the compiled-in schemas
 * (reports/validate.c), indexed (nt_rdoc_from_json), rendered in every format (text, Markdown,
 * HTML, Prometheus, CSV; the tuning renderer for nettune.tuning/1; a nettune.diagnosis/1 as
 * text and Markdown) and diffed against itself in every diff format. Any crash, leak or UB is a
 * bug. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpt.h"

static void nt_fuzz_render(const nt_rdoc_t *doc)
{
    static const char *const tuning_formats[] = {"text", "md", "html", "csv"};
    static const char *const diff_formats[] = {"text", "md", "json", "csv"};
    nt_render_opts_t o = {.color = 1, .node = NULL, .top = 3};
    nt_buf_t b;

    for (int r = 0; r < 5; r++) {
        nt_buf_init(&b);
        switch (r) {
        case 0:
            nt_render_text(doc, &o, &b);
            break;
        case 1:
            nt_render_md(doc, &o, &b);
            break;
        case 2:
            nt_render_html(doc, &o, &b);
            break;
        case 3:
            nt_render_prom(doc, &o, &b);
            break;
        default:
            nt_render_csv(doc, &o, &b);
            break;
        }
        nt_buf_cleanup(&b);
    }
    /* One host's view, as --node does for prom and csv. */
    if (doc->nnodes > 0) {
        o.node = doc->nodes[0].host;
        nt_buf_init(&b);
        nt_render_prom(doc, &o, &b);
        nt_buf_cleanup(&b);
        nt_buf_init(&b);
        nt_render_csv(doc, &o, &b);
        nt_buf_cleanup(&b);
        o.node = NULL;
    }
    if (doc->kind == NT_DOC_TUNING)
        for (size_t i = 0; i < sizeof(tuning_formats) / sizeof(tuning_formats[0]); i++) {
            nt_buf_init(&b);
            nt_render_tuning(doc, tuning_formats[i], &o, &b);
            nt_buf_cleanup(&b);
        }
    for (size_t i = 0; i < sizeof(diff_formats) / sizeof(diff_formats[0]); i++) {
        nt_diff_opts_t d = {.threshold_pct = 5, .fail_on_vanished = 1, .top = 3, .color = 1};
        int regressed = 0;
        nt_buf_init(&b);
        nt_diff(doc, doc, &d, diff_formats[i], &b, &regressed);
        nt_buf_cleanup(&b);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *root = cJSON_ParseWithLength((const char *)data, size);
    nt_problems_t probs;
    const char *id = NULL;
    nt_rdoc_t doc;

    if (!root)
        return 0;
    memset(&probs, 0, sizeof(probs));
    nt_validate(root, &probs, &id);
    nt_problems_cleanup(&probs);
    /* A diagnosis (nettune doctor's output) is rendered from the JSON itself, as reports/run.c
     * does, in both of its formats. */
    if (id && strcmp(id, NT_DIAGNOSIS_SCHEMA) == 0)
        for (int md = 0; md < 2; md++) {
            nt_buf_t b;
            nt_buf_init(&b);
            nt_render_diagnosis(root, md ? "md" : "text", &b);
            nt_buf_cleanup(&b);
        }
    memset(&doc, 0, sizeof(doc));
    /* The document owns root from here on, also on error. */
    if (nt_rdoc_from_json(root, "fuzz.json", &doc) == NT_OK)
        nt_fuzz_render(&doc);
    nt_rdoc_close(&doc);
    return 0;
}
