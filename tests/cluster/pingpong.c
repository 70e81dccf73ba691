/*
 * ntc-pingpong: raw TCP ping-pong, the latency reference of the test cluster.
 *
 *   ntc-pingpong serve PORT                  echo one connection's messages back, then exit
 *   ntc-pingpong ping ADDR PORT BYTES ITERS  time ITERS round trips of BYTES each
 *
 * `ping` prints one JSON line: {"bytes": B, "iterations": N, "lat_us": {"min", "p50", "p99",
 * "max"}} with one-way latency = round trip / 2 (as osu_latency and the probe count it),
 * after 100 untimed round trips. Plain blocking sockets with TCP_NODELAY: the kernel's own
 * TCP path between two network namespaces, no MPI. Every wait is bounded: both ends give up
 * after 30 s (SO_RCVTIMEO / SO_SNDTIMEO, and 30 s for the connection to come).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define WARMUP 100
#define MAX_BYTES (1 << 20)
#define WAIT_S 30

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void set_socket(int fd)
{
    int one = 1;
    struct timeval tv = {.tv_sec = WAIT_S};
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/* Moves exactly n bytes (send when out != 0); 0 on success, -1 on error or end of stream. */
static int move_all(int fd, char *buf, size_t n, int out)
{
    while (n) {
        ssize_t k = out ? send(fd, buf, n, MSG_NOSIGNAL) : recv(fd, buf, n, 0);
        if (k <= 0) {
            if (k < 0 && errno == EINTR)
                continue;
            return -1;
        }
        buf += k;
        n -= (size_t)k;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int serve(int port)
{
    int one = 1, ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct timeval tv = {.tv_sec = WAIT_S};
    setsockopt(ls, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (bind(ls, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(ls, 1) < 0) {
        fprintf(stderr, "ntc-pingpong: listen on port %d: %s\n", port, strerror(errno));
        return 1;
    }
    printf("listening %d\n", port);
    fflush(stdout);
    int fd = accept(ls, NULL, NULL);
    if (fd < 0) {
        fprintf(stderr, "ntc-pingpong: no connection within %d s: %s\n", WAIT_S, strerror(errno));
        return 1;
    }
    set_socket(fd);
    uint32_t len;
    char *buf = malloc(MAX_BYTES);
    /* The client sends the message size once, first. */
    if (!buf || move_all(fd, (char *)&len, sizeof len, 0) || len == 0 || len > MAX_BYTES)
        return 1;
    while (move_all(fd, buf, len, 0) == 0)
        if (move_all(fd, buf, len, 1))
            break;
    return 0;
}

static int ping(const char *addr, int port, long bytes, long iters)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1 || bytes < 1 || bytes > MAX_BYTES ||
        iters < 1 || iters > 10000000) {
        fprintf(stderr, "ntc-pingpong: bad address, size (1..1M) or iteration count\n");
        return 2;
    }
    int fd = -1;
    double give_up = now_us() + WAIT_S * 1e6;
    for (;;) { /* the server may still be starting */
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
            break;
        close(fd);
        if (now_us() > give_up) {
            fprintf(stderr, "ntc-pingpong: cannot connect to %s:%d\n", addr, port);
            return 1;
        }
        usleep(20000);
    }
    set_socket(fd);
    uint32_t len = (uint32_t)bytes;
    char *buf = calloc(1, (size_t)bytes);
    double *t = malloc(sizeof(double) * (size_t)iters);
    if (!buf || !t || move_all(fd, (char *)&len, sizeof len, 1))
        return 1;
    for (long i = -WARMUP; i < iters; i++) {
        double t0 = now_us();
        if (move_all(fd, buf, len, 1) || move_all(fd, buf, len, 0)) {
            fprintf(stderr, "ntc-pingpong: connection lost after %ld round trips\n", i + WARMUP);
            return 1;
        }
        if (i >= 0)
            t[i] = (now_us() - t0) / 2;
    }
    qsort(t, (size_t)iters, sizeof *t, cmp_double);
    /* Nearest-rank percentiles: every figure is a measured one. */
    long p50 = (iters * 50 + 99) / 100 - 1, p99 = (iters * 99 + 99) / 100 - 1;
    printf("{\"bytes\": %ld, \"iterations\": %ld, \"lat_us\": {\"min\": %.2f, \"p50\": %.2f, "
           "\"p99\": %.2f, \"max\": %.2f}}\n",
           bytes, iters, t[0], t[p50], t[p99], t[iters - 1]);
    close(fd);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "serve"))
        return serve(atoi(argv[2]));
    if (argc == 6 && !strcmp(argv[1], "ping"))
        return ping(argv[2], atoi(argv[3]), atol(argv[4]), atol(argv[5]));
    fprintf(stderr, "usage: ntc-pingpong serve PORT | ping ADDR PORT BYTES ITERS\n");
    return 2;
}
