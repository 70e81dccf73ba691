/*
 * ntc-flow: one-way TCP bulk flows, the test cluster's own traffic for sizing and checking the
 * two-level fabric (the probe's fabric phases are checked against what this tool sees).
 *
 *   ntc-flow serve PORT                       sink every connection's bytes (one child each)
 *   ntc-flow send ADDR PORT BYTES [AT [SRC]]  send BYTES to ADDR:PORT, starting at AT
 *                                             (CLOCK_REALTIME seconds, so that flows started
 *                                             by several processes run at once), from source
 *                                             address SRC (the rail to use)
 *
 * `send` prints one JSON line: {"dst": ADDR, "bytes": B, "time_us": T, "bw_GBps": G}; T runs
 * from connect() to the receiver's 8-byte acknowledgement of the last byte (after shutdown of
 * the sending side), so nothing the receiver has not taken counts. GB/s = 1e9 B/s. Plain
 * blocking sockets: the kernel's own TCP between network namespaces, no MPI. Every wait is
 * bounded: both ends give up after 60 s (SO_RCVTIMEO / SO_SNDTIMEO).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (1 << 20)
#define WAIT_S 60

static double now_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void set_timeouts(int fd)
{
    struct timeval tv = {.tv_sec = WAIT_S};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/* Drains one connection, then answers with the byte count (8 bytes, host order). */
static int sink(int fd)
{
    static char buf[CHUNK];
    uint64_t got = 0;
    ssize_t k;
    set_timeouts(fd);
    while ((k = recv(fd, buf, sizeof buf, 0)) != 0) {
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return 1;
        }
        got += (uint64_t)k;
    }
    return send(fd, &got, sizeof got, MSG_NOSIGNAL) == (ssize_t)sizeof got ? 0 : 1;
}

static int serve(int port)
{
    int one = 1, ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    signal(SIGCHLD, SIG_IGN); /* children are reaped by the kernel */
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(ls, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(ls, 64) < 0) {
        fprintf(stderr, "ntc-flow: cannot listen on port %d: %s\n", port, strerror(errno));
        return 1;
    }
    printf("listening %d\n", port);
    fflush(stdout);
    for (;;) {
        int fd = accept(ls, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "ntc-flow: accept: %s\n", strerror(errno));
            return 1;
        }
        pid_t p = fork();
        if (p == 0) {
            close(ls);
            _exit(sink(fd));
        }
        close(fd);
    }
}

static int flow(const char *addr, int port, long long bytes, double at, const char *src)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    struct sockaddr_in me = {.sin_family = AF_INET};
    if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1 || bytes < 1 ||
        (src && inet_pton(AF_INET, src, &me.sin_addr) != 1)) {
        fprintf(stderr, "ntc-flow: bad address '%s', source '%s' or byte count %lld\n", addr,
                src ? src : "", bytes);
        return 2;
    }
    static char buf[CHUNK];
    double wait = at - now_s(CLOCK_REALTIME);
    if (wait > 0) {
        struct timespec ts = {.tv_sec = (time_t)wait, .tv_nsec = (long)((wait - (time_t)wait) * 1e9)};
        nanosleep(&ts, NULL);
    }
    double t0 = now_s(CLOCK_MONOTONIC), give_up = t0 + WAIT_S;
    int fd;
    for (;;) { /* the server may still be starting */
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (src && bind(fd, (struct sockaddr *)&me, sizeof me) < 0) {
            fprintf(stderr, "ntc-flow: cannot bind source '%s': %s\n", src, strerror(errno));
            return 1;
        }
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
            break;
        close(fd);
        if (now_s(CLOCK_MONOTONIC) > give_up) {
            fprintf(stderr, "ntc-flow: cannot connect to '%s:%d': %s\n", addr, port, strerror(errno));
            return 1;
        }
        usleep(20000);
    }
    set_timeouts(fd);
    long long left = bytes;
    while (left > 0) {
        ssize_t k = send(fd, buf, left < CHUNK ? (size_t)left : CHUNK, MSG_NOSIGNAL);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "ntc-flow: send to '%s' failed after %lld bytes: %s\n", addr,
                    bytes - left, strerror(errno));
            return 1;
        }
        left -= k;
    }
    shutdown(fd, SHUT_WR);
    uint64_t got = 0;
    if (recv(fd, &got, sizeof got, MSG_WAITALL) != (ssize_t)sizeof got || got != (uint64_t)bytes) {
        fprintf(stderr, "ntc-flow: '%s' acknowledged %llu of %lld bytes\n", addr,
                (unsigned long long)got, bytes);
        return 1;
    }
    double t = now_s(CLOCK_MONOTONIC) - t0;
    printf("{\"dst\": \"%s\", \"bytes\": %lld, \"time_us\": %.1f, \"bw_GBps\": %.4f}\n", addr, bytes,
           t * 1e6, bytes / t / 1e9);
    close(fd);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "serve"))
        return serve(atoi(argv[2]));
    if (argc >= 5 && argc <= 7 && !strcmp(argv[1], "send"))
        return flow(argv[2], atoi(argv[3]), atoll(argv[4]), argc > 5 ? atof(argv[5]) : 0,
                    argc > 6 ? argv[6] : NULL);
    fprintf(stderr, "usage: ntc-flow serve PORT | send ADDR PORT BYTES [AT [SRC]]\n");
    return 2;
}
