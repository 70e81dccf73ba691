/* tc cls_bpf classifier (direct-action) of the test cluster: drops NTC_LOSS_PPM parts per
 * million of the packets that pass its hook, at random; the stand-in for `netem loss` on a
 * kernel without sch_netem. Built by tests/cluster/lib.sh:
 *   clang -O2 -target bpf -DNTC_LOSS_PPM=50000 -c loss.c -o loss_50000.o
 * and attached with `tc qdisc add dev D clsact; tc filter add dev D egress bpf da obj O sec tc`.
 * A packet here is one skb: with GSO it can carry up to 64 KiB, so a drop can remove several
 * wire frames at once (burstier than netem; TCP sees the same loss rate per skb).
 * Facts: the helper number and return codes come from the kernel's UAPI
 * (include/uapi/linux/bpf.h BPF_FUNC_get_prandom_u32, include/uapi/linux/pkt_cls.h TC_ACT_*). */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#ifndef NTC_LOSS_PPM
#error "build with -DNTC_LOSS_PPM=<parts per million>"
#endif

static __u32 (*ntc_prandom_u32)(void) = (void *)BPF_FUNC_get_prandom_u32;

__attribute__((section("tc"), used)) int ntc_loss(struct __sk_buff *skb)
{
    (void)skb;
    return ntc_prandom_u32() % 1000000u < (__u32)NTC_LOSS_PPM ? TC_ACT_SHOT : TC_ACT_OK;
}

char ntc_license[] __attribute__((section("license"), used)) = "GPL";
