/* make bench-history's reference: read and parse each file given with cJSON alone (what any
 * reader of the reports must do at least), then free it. Prints the seconds it took. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cjson/cJSON.h>

int main(int argc, char **argv)
{
    struct timespec t0, t1;
    size_t bytes = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            perror(argv[i]);
            return 2;
        }
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        rewind(f);
        char *buf = malloc((size_t)n + 1);
        if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
            fprintf(stderr, "bench_history: cannot read '%s'\n", argv[i]);
            return 2;
        }
        buf[n] = '\0';
        fclose(f);
        cJSON *doc = cJSON_Parse(buf);
        if (!doc) {
            fprintf(stderr, "bench_history: '%s' is not JSON\n", argv[i]);
            return 2;
        }
        cJSON_Delete(doc);
        free(buf);
        bytes += (size_t)n;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%.3f %zu\n", (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9, bytes);
    return 0;
}
