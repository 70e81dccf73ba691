/*
 * ntc-delay: the test cluster's stand-in for `netem delay` (this kernel has no sch_netem).
 *
 *   ntc-delay IF_A IF_B US_A_TO_B US_B_TO_A
 *
 * Forwards every Ethernet frame received on IF_A to IF_B after US_A_TO_B microseconds, and
 * every frame received on IF_B to IF_A after US_B_TO_A. tests/cluster/lib.sh splices it into
 * one host's link: IF_A is the host's bridge-side veth (out of the bridge), IF_B one end of a
 * new veth pair whose other end is in the bridge. Frames are read and written with AF_PACKET
 * sockets and PACKET_VNET_HDR, so GSO super-packets and checksum offload pass unchanged
 * (linux include/uapi/linux/if_packet.h PACKET_VNET_HDR, include/uapi/linux/virtio_net.h).
 * Frames wait in a byte ring per direction (64 MiB: 50 ms at 10 Gb/s); a full ring drops and
 * counts. Prints "ready" once both sockets are bound; on SIGTERM/SIGINT prints its counters
 * and exits 0. Its own cost (two copies and a wake-up per frame) comes on top of the delay.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RING_BYTES (64u << 20)
#define FRAME_MAX (65536 + 1024)

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

/* One frame in a ring: header, then len bytes, padded to 8. */
struct slot {
    uint64_t due_ns;
    uint32_t len;
    uint32_t pad;
};

struct way {
    int rx, tx;
    uint64_t delay_ns;
    unsigned char *ring;
    uint64_t head, tail; /* byte offsets, tail - head = bytes queued */
    unsigned long long forwarded, dropped, errors;
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int open_port(const char *ifname)
{
    int one = 1, buf = 32 << 20;
    unsigned idx = if_nametoindex(ifname);
    if (!idx) {
        fprintf(stderr, "ntc-delay: no interface '%s'\n", ifname);
        return -1;
    }
    int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(ETH_P_ALL));
    if (fd < 0 || setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof one) < 0) {
        fprintf(stderr, "ntc-delay: AF_PACKET socket on %s: %s\n", ifname, strerror(errno));
        return -1;
    }
    /* Our own transmissions on this port must not come back as receptions. */
    setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof buf);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof buf);
    struct sockaddr_ll sll = {
        .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = (int)idx};
    if (bind(fd, (struct sockaddr *)&sll, sizeof sll) < 0) {
        fprintf(stderr, "ntc-delay: bind to %s: %s\n", ifname, strerror(errno));
        return -1;
    }
    struct packet_mreq mr = {.mr_ifindex = (int)idx, .mr_type = PACKET_MR_PROMISC};
    setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof mr);
    return fd;
}

static size_t slot_size(uint32_t len)
{
    return (sizeof(struct slot) + len + 7u) & ~(size_t)7u;
}

/* Reads every frame waiting on w->rx into the ring, stamped with its due time. */
static void take_in(struct way *w, unsigned char *buf)
{
    for (;;) {
        ssize_t n = recv(w->rx, buf, FRAME_MAX, 0);
        if (n <= 0)
            return;
        size_t need = slot_size((uint32_t)n);
        uint64_t off = w->tail % RING_BYTES;
        /* A frame never wraps: skip to the ring's start (a zero-length slot marks the gap). */
        size_t gap = off + need > RING_BYTES ? RING_BYTES - off : 0;
        if (w->tail - w->head + gap + need > RING_BYTES) {
            w->dropped++;
            continue;
        }
        if (gap) {
            if (gap >= sizeof(struct slot))
                ((struct slot *)(w->ring + off))->len = UINT32_MAX;
            w->tail += gap;
            off = 0;
        }
        struct slot *s = (struct slot *)(w->ring + off);
        s->due_ns = now_ns() + w->delay_ns;
        s->len = (uint32_t)n;
        memcpy(s + 1, buf, (size_t)n);
        w->tail += need;
    }
}

/* Sends the frames that are due; returns ns until the next one is due, or -1 if none waits. */
static int64_t give_out(struct way *w)
{
    uint64_t t = now_ns();
    while (w->head != w->tail) {
        uint64_t off = w->head % RING_BYTES;
        if (RING_BYTES - off < sizeof(struct slot) ||
            ((struct slot *)(w->ring + off))->len == UINT32_MAX) {
            w->head += RING_BYTES - off;
            continue;
        }
        struct slot *s = (struct slot *)(w->ring + off);
        if (s->due_ns > t)
            return (int64_t)(s->due_ns - t);
        if (send(w->tx, s + 1, s->len, 0) < 0) {
            if (errno == EAGAIN || errno == ENOBUFS)
                return 20000;
            w->errors++;
        } else {
            w->forwarded++;
        }
        w->head += slot_size(s->len);
    }
    return -1;
}

static int parse_us(const char *s, uint64_t *ns)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end || v > 10000000ull)
        return -1;
    *ns = v * 1000u;
    return 0;
}

int main(int argc, char **argv)
{
    static struct way ab, ba;
    if (argc != 5 || parse_us(argv[3], &ab.delay_ns) || parse_us(argv[4], &ba.delay_ns)) {
        fprintf(stderr, "usage: ntc-delay IF_A IF_B US_A_TO_B US_B_TO_A (microseconds, <= 10 s)\n");
        return 2;
    }
    prctl(PR_SET_TIMERSLACK, 1ul);
    int a = open_port(argv[1]), b = open_port(argv[2]);
    if (a < 0 || b < 0)
        return 1;
    ab.rx = ba.tx = a;
    ab.tx = ba.rx = b;
    ab.ring = mmap(NULL, RING_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ba.ring = mmap(NULL, RING_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned char *buf = malloc(FRAME_MAX);
    if (ab.ring == MAP_FAILED || ba.ring == MAP_FAILED || !buf) {
        fprintf(stderr, "ntc-delay: out of memory\n");
        return 1;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    printf("ready %s->%s %llu us, %s->%s %llu us\n", argv[1], argv[2],
           (unsigned long long)(ab.delay_ns / 1000), argv[2], argv[1],
           (unsigned long long)(ba.delay_ns / 1000));
    fflush(stdout);
    while (!stop_requested) {
        int64_t w1 = give_out(&ab), w2 = give_out(&ba);
        int64_t wait = w1 < 0 ? w2 : (w2 < 0 || w1 < w2 ? w1 : w2);
        struct pollfd p[2] = {{.fd = a, .events = POLLIN}, {.fd = b, .events = POLLIN}};
        struct timespec ts = {.tv_sec = wait / 1000000000, .tv_nsec = wait % 1000000000};
        if (ppoll(p, 2, wait < 0 ? NULL : &ts, NULL) < 0 && errno != EINTR) {
            perror("ntc-delay: ppoll");
            return 1;
        }
        if (p[0].revents & POLLIN)
            take_in(&ab, buf);
        if (p[1].revents & POLLIN)
            take_in(&ba, buf);
    }
    printf("stopped: %s->%s forwarded %llu dropped %llu errors %llu; %s->%s forwarded %llu "
           "dropped %llu errors %llu\n",
           argv[1], argv[2], ab.forwarded, ab.dropped, ab.errors, argv[2], argv[1], ba.forwarded,
           ba.dropped, ba.errors);
    return 0;
}
