#!/usr/bin/env python3
"""Writes a job's NCCL Inspector JSON logs as the plugin writes them: one file per process,
<host>-pid<pid>.log (NCCL v2.30.7-1 plugins/profiler/inspector/inspector.cc:652), one compact
record per line (inspector_json.cc:308-320) with the keys of inspector_json.cc:26-258.

The timing model: each call takes `base_us` of transfer, with multiplicative noise. A rank that
arrives `late_us` late (a straggler) makes every other rank wait inside the call: their exec time
is base + late, its own is base. A hung rank's records stop at `hang_at`; the others go on for
`after` more calls (what they dumped before they blocked). Each rank dumps every `dump_every`
calls (100 ms a call): the calls since its last dump share the next dump's timestamp. From call
`slow_from` every call takes `slow_factor` times as long (a link or NIC of the ring got slow).
The straggler is late in calls `late_from` to `late_to` (all calls by default): a rank woken
late for a few calls on a loaded host, not one that computes longer every step."""
import argparse
import json
import os
import random


def record(comm, name, rank, nranks, nnodes, host, pid, sn, size, us, ts):
    algbw = size / us / 1e3  # GB/s: bytes / (us * 1e-6) / 1e9
    busbw = algbw * 2 * (nranks - 1) / nranks  # AllReduce, as nccl-tests defines it
    return {"header": {"id": comm, "comm_name": name, "rank": rank, "n_ranks": nranks, "nnodes": nnodes},
            "metadata": {"inspector_output_format_version": "v4.0", "git_rev": "", "rec_mechanism":
                         "nccl_profiler_interface", "dump_timestamp_us": ts, "hostname": host, "pid": pid},
            "coll_perf": {"coll": "AllReduce", "coll_sn": sn, "coll_msg_size_bytes": size,
                          "coll_exec_time_us": int(round(us)), "coll_timing_source": "kernel_gpu",
                          "coll_algobw_gbs": round(algbw, 6), "coll_busbw_gbs": round(busbw, 6)}}


def generate(out, nranks=8, per_host=4, calls=40, straggler=None, late_us=800.0, hang=None,
             hang_at=30, after=6, noise=0.03, seed=1, base_us=1000.0, half_line=False, dump_every=1,
             slow_from=None, slow_factor=1.6, late_from=1, late_to=None, stamp_each=False):
    """stamp_each: each record of a dump a microsecond after the one before, as Inspector
    stamps every record as it writes it (v2.30.7-1 inspector_json.cc:64, :314); else one time
    per dump."""
    rnd = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    comm, nnodes = "0x5eed%010x" % seed, (nranks + per_host - 1) // per_host
    files = {}
    for r in range(nranks):
        host = "gpu%02d" % (r // per_host + 1)
        files[r] = (open(os.path.join(out, "%s-pid%d.log" % (host, 4000 + r)), "w"), host, 4000 + r)
    last = calls if hang is None else hang_at + after
    for sn in range(1, last + 1):
        base = base_us * (1 + rnd.uniform(-noise, noise))
        if slow_from is not None and sn >= slow_from:
            base *= slow_factor  # the network of the whole communicator got slower
        for r in range(nranks):
            if hang is not None and r == hang and sn > hang_at:
                continue
            us = base * (1 + rnd.uniform(-noise, noise))
            if straggler is not None and r != straggler and late_from <= sn <= (late_to or last):
                us += late_us * (1 + rnd.uniform(-noise, noise))
            f, host, pid = files[r]
            ts = 1764630000000000 + -(-sn // dump_every) * dump_every * 100000
            rec = record(comm, "DP Group 0", r, nranks, nnodes, host, pid, sn, 64 << 20, us,
                         ts + ((sn - 1) % dump_every if stamp_each else 0))
            f.write(json.dumps(rec, separators=(",", ":")) + "\n")
    if half_line:
        f, host, pid = files[0]
        f.write('{"header":{"id":"%s","comm_name":"DP Group 0","rank":0,"n_ra' % comm)
    for f, _, _ in files.values():
        f.close()
    return comm


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--straggler", type=int)
    ap.add_argument("--hang", type=int)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    generate(a.out, nranks=a.ranks, calls=a.calls, straggler=a.straggler, hang=a.hang, seed=a.seed)
