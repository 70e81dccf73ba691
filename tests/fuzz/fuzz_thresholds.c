/* libFuzzer target for the thresholds file reader (lib/core/thresholds.c, nettune.thresholds/1):
 * the input is parsed as a thresholds document; one that parses is written back as JSON and
 * asked for the rules of a few hosts (class matching: hostname regex and GPU model) and for
 * the run's peer rules. A document that is rejected must come with a message. Any crash, leak
 * or UB is a bug. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/thresholds.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const hosts[] = {"gpu-a001", "node7", "", "dgx-h100-12.cluster"};
    static const char *const models[] = {"NVIDIA H100 80GB HBM3", NULL, "", "A100"};
    char *text = malloc(size + 1), err[512] = "";
    nt_thresholds_t *t = NULL;
    nt_status_t st;

    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    st = nt_thresholds_parse(text, "fuzz.json", &t, err, sizeof(err));
    free(text);
    if (st != NT_OK) {
        if (t || !err[0])
            abort(); /* rejected as a whole, with a reason */
        return 0;
    }
    {
        cJSON *j = NULL;
        if (nt_thresholds_to_json(t, &j) == NT_OK)
            cJSON_Delete(j);
    }
    for (int i = 0; i < nt_thresholds_nclasses(t) + 1; i++)
        (void)nt_thresholds_class_name(t, i);
    for (size_t h = 0; h < sizeof(hosts) / sizeof(hosts[0]); h++) {
        nt_node_rules_t r;
        if (nt_thresholds_for_host(t, hosts[h], models[h], &r) == NT_OK) {
            for (int k = 0; k < NT_KIND_COUNT; k++) {
                (void)nt_link_expected_bw(&r.links[k], 25.0);
                (void)nt_link_expected_bw(&r.links[k], -1);
                (void)nt_link_expected_lat(&r.links[k]);
            }
        }
    }
    {
        nt_peer_rules_t pr;
        nt_thresholds_peer_for_run(t, hosts, models, 4, &pr);
    }
    nt_thresholds_destroy(t);
    return 0;
}
