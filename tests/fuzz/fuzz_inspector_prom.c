/* libFuzzer target for the NCCL Inspector Prometheus textfile reader (lib/nccl/inspector.c):
 * every line of the input goes to nt_inspector_prom_parse, and the whole input through
 * nt_jobreader as a textfile would. Any crash, leak or UB is a bug. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_jobreader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    nt_jobrec_t rec;
    for (char *line = text, *nl; line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        (void)nt_inspector_prom_parse(line, &rec);
    }
    free(text);
    (void)nt_fuzz_jobreader_drain(data, size);
    return 0;
}
