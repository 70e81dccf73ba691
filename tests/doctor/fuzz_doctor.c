/* libFuzzer target for the doctor's log reader: the input is read as a log file (through the
 * bounded line reader, the prefix parser, the signature matcher and the nccl-tests table
 * reader), then diagnosed and rendered as text and JSON. Any crash, leak or UB is a bug. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "doctor.h"

static nt_kb_t *kb;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char msg[512];
    if (!kb && nt_kb_load(NULL, &kb, msg, sizeof(msg)) != 0)
        abort();
    if (size == 0)
        return 0;
    FILE *fp = fmemopen((void *)data, size, "r");
    if (!fp)
        return 0;
    nt_doctor_t *d = nt_doctor_create(kb);
    nt_doctor_read_stream(d, "fuzz", fp, msg, sizeof(msg));
    fclose(fp);
    nt_hw_t hw;
    nt_hw_init(&hw);
    hw.nic_rate_Gbps = 400; /* so that the busbw verdict code runs too */
    nt_doctor_diagnose(d, &hw);
    FILE *null = fopen("/dev/null", "w");
    if (null) {
        nt_doctor_write_text(d, null, 0);
        fclose(null);
    }
    cJSON *doc = nt_doctor_to_json(d, 0);
    char *s = doc ? cJSON_PrintUnformatted(doc) : NULL;
    free(s);
    cJSON_Delete(doc);
    nt_doctor_destroy(d);
    return 0;
}
