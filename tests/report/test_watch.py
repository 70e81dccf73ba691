#!/usr/bin/env python3
"""nettune watch on generated NCCL Inspector logs (tests/report/gen_inspector.py) and on the
verbatim records of NCCL's Inspector README (tests/fixtures/inspector/): a known straggler and a
known hang are named, a healthy job gives no finding, every document is valid against
reports/schema/watch.schema.json (python3-jsonschema), exit codes are the probe's.
Environment: BUILD (default build)."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import gen_inspector  # noqa: E402

BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
BIN = os.path.join(BUILD, "bin", "nettune-watch")
WORK = os.path.join(BUILD, "tests", "watch")
SCHEMA = os.path.join(ROOT, "reports", "schema", "watch.schema.json")
FIX = os.path.join(ROOT, "tests", "fixtures", "inspector")


class Skip(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def watch(*args):
    return subprocess.run([BIN] + list(args), capture_output=True, text=True, timeout=60)


def valid(doc):
    try:
        import jsonschema
    except ImportError:
        return  # the schema test below says so
    errs = sorted(jsonschema.Draft202012Validator(json.load(open(SCHEMA))).iter_errors(doc), key=str)
    check(not errs, "not valid against watch.schema.json: %s" % "; ".join(
        "%s: %s" % ("/".join(map(str, e.absolute_path)), e.message) for e in errs[:5]))


def job(name, **kw):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    gen_inspector.generate(d, **kw)
    return d


def run_json(d, *extra):
    out = os.path.join(WORK, os.path.basename(d) + ".json")
    r = watch(d, "-o", out, *extra)
    doc = json.load(open(out))
    valid(doc)
    return r, doc


def straggler_named_compute_side():
    d = job("straggler", straggler=5, seed=3, calls=100)
    r, doc = run_json(d)
    check(r.returncode == 0, "a straggler is a warning: exit 0 without --strict, got %d %s" % (r.returncode, r.stderr))
    f = doc["findings"]
    check(len(f) == 1, "one finding expected: %s" % f)
    f = f[0]
    check(f["code"] == "NT-JOB-201" and f["check"] == "watch_straggler" and f["category"] == "monitor",
          "straggler row: %s" % f)
    check(f["rank"] == 5 and f["host"] == "gpu02" and f["pid"] == 4005, "rank 5 on gpu02 pid 4005: %s" % f)
    check("compute side" in f["verdict"] and "not the network" in f["verdict"], f["verdict"])
    check(f["calls_fastest"] == 96 and f["calls_judged"] == 96, "96 of the latest 96 calls: %s" % f)
    check("straggler" in r.stdout and "rank 5" in r.stdout, "text summary: " + r.stdout)
    r2 = watch(d, "--strict", "-q")
    check(r2.returncode == 1, "--strict makes the warning fail: %d" % r2.returncode)


def straggler_needs_every_block():
    # Late for the latest 20 calls only, as a healthy rank woken late on a loaded host: the
    # others' wait is all its own (100% share, 20 votes), but the block of calls before holds
    # none: no straggler.
    d = job("straggler-burst", straggler=5, seed=4, calls=100, late_from=81)
    _, doc = run_json(d)
    check(not [f for f in doc["findings"] if f["check"] == "watch_straggler"], doc["findings"])
    check(doc["settings"]["straggler_blocks"] == 3 and doc["settings"]["straggler_block_calls"] == 12,
          doc["settings"])
    # Late from call 65 on: every one of the latest 3 blocks of 12 calls holds its wait.
    d = job("straggler-blocks", straggler=5, seed=4, calls=100, late_from=65)
    _, doc = run_json(d)
    f = [x for x in doc["findings"] if x["check"] == "watch_straggler"]
    check(len(f) == 1 and f[0]["rank"] == 5 and "each of the latest 3 blocks of 12 calls" in f[0]["reason"],
          doc["findings"])


def hang_names_rank_behind():
    d = job("hang", hang=2, hang_at=30, after=6, seed=4, dump_every=2)
    r, doc = run_json(d)
    check(r.returncode == 1, "a hang fails: exit 1, got %d %s" % (r.returncode, r.stderr))
    hangs = [f for f in doc["findings"] if f["check"] == "watch_hang"]
    check(len(hangs) == 1, "one hang: %s" % doc["findings"])
    h = hangs[0]
    check(h["code"] == "NT-JOB-202" and h["rank"] == 2 and h["host"] == "gpu01", "rank 2 on gpu01: %s" % h)
    check(h["last_seq"] == 30 and h["max_seq"] == 36, "stopped at 30, others at 36: %s" % h)
    check(h["status"] == "fail", h)
    check(not [f for f in doc["findings"] if f["check"] == "watch_straggler"], "no straggler in a hang: %s" % doc["findings"])


def behind_by_one_dump_is_not_a_hang():
    # Rank 3's last dump holds call 30; the others dumped calls 31-34 once since (one dump every
    # 5 calls): a live rank whose dump timer fires later looks the same, so nobody is blamed.
    d = job("dump-skew", hang=3, hang_at=30, after=4, dump_every=5, seed=10)
    r, doc = run_json(d)
    check(r.returncode == 0 and not doc["findings"], "one dump behind is no hang: %s" % doc["findings"])
    nj = [n["reason"] for n in doc["not_judged"] if n["check"] == "watch_hang"]
    check(nj and "rank 3 is 4 call(s) behind" in nj[0] and "not yet confirmed" in nj[0], nj)
    # Two more dumps of the others (calls 35-44): now it is confirmed.
    d = job("dump-skew-2", hang=3, hang_at=30, after=14, dump_every=5, seed=10)
    r, doc = run_json(d)
    check(r.returncode == 1 and [f["rank"] for f in doc["findings"]] == [3], doc["findings"])
    # The same with each record stamped as Inspector writes it (a microsecond apart within a
    # dump): one dump, not five, so the rank's dump interval is the dumps' and not 1 us.
    d = job("dump-skew-stamped", hang=3, hang_at=30, after=4, dump_every=5, seed=10, stamp_each=True)
    r, doc = run_json(d)
    check(r.returncode == 0 and not doc["findings"], "one dump behind, stamped per record: %s" % doc["findings"])
    d = job("dump-skew-stamped-2", hang=3, hang_at=30, after=14, dump_every=5, seed=10, stamp_each=True)
    r, doc = run_json(d)
    check(r.returncode == 1 and [f["rank"] for f in doc["findings"]] == [3], doc["findings"])


def whole_job_held_is_not_a_hang():
    # A call held every rank of the job 3 dump intervals (nothing completed, nothing dumped),
    # then rank 0 dumped calls 21-26 and rank 1, whose timer fires a moment later, has not yet:
    # its silence counts from one interval before rank 0's first record past its last call, not
    # from its own last dump, so it is 1 interval silent, not 3, and no hang.
    def held(name, later_ts):
        d = os.path.join(WORK, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        t0 = 1764630000000000
        for r in range(2):
            with open(os.path.join(d, "h%d-pid%d.log" % (r + 1, 7000 + r)), "w") as fp:
                for sn in range(1, 27 if r == 0 else 21):
                    ts = t0 + sn * 100000 if sn <= 20 else later_ts(sn)
                    rec = gen_inspector.record("0xh0", "dp0", r, 2, 2, "h%d" % (r + 1), 7000 + r, sn,
                                               1 << 20, 1000.0, ts)
                    fp.write(json.dumps(rec, separators=(",", ":")) + "\n")
        return run_json(d)
    r, doc = held("held-whole-job", lambda sn: 1764630000000000 + 20 * 100000 + 300000)
    check(not [f for f in doc["findings"] if f["check"] == "watch_hang"], doc["findings"])
    nj = [n["reason"] for n in doc["not_judged"] if n["check"] == "watch_hang"]
    check([x for x in nj if "rank 1 is 6 call(s) behind, but its last dump is 1.0 of its dump" in x], nj)
    # Rank 0 dumping on every interval while rank 1 is silent: 6 intervals, a hang.
    r, doc = held("held-one-rank", lambda sn: 1764630000000000 + sn * 100000)
    check([f["rank"] for f in doc["findings"] if f["check"] == "watch_hang"] == [1], doc["findings"])


def job_stopped_without_final_dump_is_not_a_hang():
    # A job of 4 ranks killed 1 s ago: each rank dumps every 0.1 s on its own timer (25 ms
    # apart), so each stopped where it last dumped, at calls a few apart; every rank silent,
    # the ranks behind the furthest at different calls: the job stopped, no rank is named (was:
    # the one that dumped first, drained with --drain).
    def stopped(name, hung=None):
        d = os.path.join(WORK, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        base = int((time.time() - 3.0) * 1e6)
        kill = base + 2000000
        for r in range(4):
            with open(os.path.join(d, "h%d-pid%d.log" % (r + 1, 7100 + r)), "w") as fp:
                dump, done = base + r * 25000, 0
                while dump <= (base + 1000000 if r == hung else kill):
                    upto = (dump - base) // 10000  # a call every 10 ms
                    for sn in range(done + 1, upto + 1):
                        rec = gen_inspector.record("0xk0", "tp0", r, 4, 4, "h%d" % (r + 1), 7100 + r, sn,
                                                   1 << 20, 1000.0, dump)
                        fp.write(json.dumps(rec, separators=(",", ":")) + "\n")
                    done, dump = max(done, upto), dump + 100000
        out = os.path.join(WORK, name + ".json")
        r = subprocess.run([BIN, d, "--follow", "--polls", "1", "-o", out], capture_output=True, text=True)
        doc = json.load(open(out))
        valid(doc)
        return r, doc
    r, doc = stopped("job-stopped")
    check(r.returncode == 0 and not [f for f in doc["findings"] if f["check"] == "watch_hang"], doc["findings"])
    nj = [n["reason"] for n in doc["not_judged"] if n["check"] == "watch_hang"]
    check([x for x in nj if "the job stopped where each rank last dumped" in x], nj)
    # Rank 1 stopped dumping 1 s before the others were killed: it stopped first, a hang.
    r, doc = stopped("job-stopped-after-a-hang", hung=1)
    check(r.returncode == 1 and [f["rank"] for f in doc["findings"] if f["check"] == "watch_hang"] == [1],
          doc["findings"])


def healthy_job_no_finding():
    for seed in (5, 6, 7):
        d = job("healthy-%d" % seed, seed=seed, half_line=True)
        r, doc = run_json(d)
        check(r.returncode == 0 and not doc["findings"], "healthy seed %d: %s" % (seed, doc["findings"]))
        c = doc["communicators"][0]
        check(c["nranks"] == 8 and c["ranks_seen"] == 8 and c["complete_calls"] == 40, c["nranks"])
        check(doc["summary"]["records"] == 320 and doc["summary"]["partial"] == 1,
              "320 records and the half-written last line counted: %s" % doc["summary"])
        check(len(c["calls"]) == 40 and len(c["calls"][0]["exec_us"]) == 8, "every call, every rank")
        s = c["busbw"]
        check(len(s) == 1 and s[0]["coll"] == "AllReduce" and s[0]["bytes"] == 64 << 20 and len(s[0]["points"]) == 40,
              "busbw over time per size: %s" % [(x["coll"], x["bytes"], len(x["points"])) for x in s])
        bw = s[0]["points"][0]["busbw_GBps"]
        check(50 < bw < 130, "64 MiB in about 1 ms on 8 ranks: busbw %.1f GB/s" % bw)


def standing_still_said_not_blamed():
    # Every rank at call 40 and their dumps a year old by the clock (--follow): the communicator
    # stands still, no rank is behind: said under not_judged, nobody blamed. Without --follow
    # the wall clock is not the job's, and nothing is said.
    d = job("still", seed=5)
    r, doc = run_json(d, "--follow", "--polls", "1")
    check(r.returncode == 0 and not doc["findings"], "no finding: %s" % doc["findings"])
    nj = [n["reason"] for n in doc["not_judged"] if n["check"] == "watch_hang"]
    check(len(nj) == 1 and nj[0].startswith("all 8 rank(s) seen stopped at call 40 and none dumped for ")
          and "cannot tell which one holds the others" in nj[0], nj)
    r, doc = run_json(d)
    check(not [n for n in doc["not_judged"] if n["check"] == "watch_hang"], doc["not_judged"])


def too_few_calls_not_judged():
    d = job("short", calls=5, seed=8, straggler=1)
    r, doc = run_json(d)
    check(r.returncode == 0 and not doc["findings"], "5 calls blame nobody: %s" % doc["findings"])
    nj = [n for n in doc["not_judged"] if n["check"] == "watch_straggler"]
    check(nj and "5 call(s)" in nj[0]["reason"] and "at least 64" in nj[0]["reason"], doc["not_judged"])


def node_job(name, slow_host=None, calls=20, slow_from=11, factor=6.0, seed=21, job_wide=False,
             stalls=(), straggler=None, late_us=800.0, stop=None, dp_dump_lead_us=0, sizes=(1 << 20,),
             step=None):
    """8 hosts, one rank each: tensor-parallel communicators of 4 consecutive ranks, data-parallel
    ones of ranks r and r + 4, so each host is the only one its two communicators share. From
    call `slow_from` on, the communicators holding `slow_host` take `factor` times longer for
    every rank (a slow link: even the rank that arrives last); with `job_wide`, every
    communicator does (the whole job slowed: load on shared cores). `stalls`: (communicator
    name, call) pairs that take 210 ms for every rank (a TCP retransmission timeout: packet
    loss). `straggler`: a rank that computes `late_us` longer before each call: the others of
    both its communicators wait for it, and its data-parallel peer, leaving its data-parallel
    call that much later, arrives last in its own tensor-parallel calls (its wait moved there).
    `stop`: (rank, call), or a list of them: that rank writes nothing after that call (it went
    silent).
    `sizes`: the message sizes the calls cycle through (call sn has sizes[sn % len]): one series
    per size. `step`: (communicator name, call): from that call on every call of it takes
    210 ms (a link that slowed and stayed slow, not stalls).
    `dp_dump_lead_us`: the data-parallel records are dumped that much earlier than the
    tensor-parallel ones (each rank dumps on its own timer: a call's dump time is its earliest
    rank's, so two communicators' spans of the same time differ by up to a dump interval)."""
    import random
    rnd = random.Random(seed)
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    comms = [("0x7e0%d" % i, "tp%d" % i, list(range(4 * i, 4 * i + 4))) for i in range(2)]
    comms += [("0xd0%d" % i, "dp%d" % i, [i, i + 4]) for i in range(4)]
    files = {r: open(os.path.join(d, "h%d-pid%d.log" % (r + 1, 5000 + r)), "w") for r in range(8)}
    peer = None if straggler is None else (straggler + 4) % 8
    for cid, cname, ranks in comms:
        hosts = ["h%d" % (r + 1) for r in ranks]
        for sn in range(1, calls + 1):
            base = 1000.0 * (1 + rnd.uniform(-0.05, 0.05))
            if (job_wide or slow_host in hosts) and sn >= slow_from:
                base *= factor
            if (cname, sn) in stalls or (step and cname == step[0] and sn >= step[1]):
                base = 210000.0
            # Who arrives last: the straggler in both its communicators, its peer in its
            # tensor-parallel one (its data-parallel call ended late, waiting for the straggler).
            last = straggler if straggler in ranks else (peer if cname.startswith("tp") and peer in ranks else None)
            for i, r in enumerate(ranks):
                if any(r == sr and sn > sc for sr, sc in ([stop] if isinstance(stop, tuple) else stop or [])):
                    continue
                us = base * (1 + rnd.uniform(0, 0.05))
                if last is not None and r != last:
                    us += late_us * (1 + rnd.uniform(-0.05, 0.05))
                lead = dp_dump_lead_us if cname.startswith("dp") else 0
                rec = gen_inspector.record(cid, cname, i, len(ranks), len(ranks), hosts[i], 5000 + r, sn,
                                           sizes[sn % len(sizes)], us, 1764630000000000 + sn * 100000 - lead)
                files[r].write(json.dumps(rec, separators=(",", ":")) + "\n")
    for f in files.values():
        f.close()
    return d


def slow_node_named_network_side():
    r, doc = run_json(node_job("slow-node", slow_host="h6"))
    slow = [f for f in doc["findings"] if f["check"] == "watch_slow_node"]
    check(r.returncode == 0 and len(slow) == 1, "one slow node, a warning: %d %s" % (r.returncode, doc["findings"]))
    f = slow[0]
    check(f["code"] == "NT-JOB-205" and f["hosts"] == ["h6"] and f["side"] == "network", f)
    check(5.0 < f["ratio"] < 7.5 and f["observed_us"] > 5000 and f["expected_us"] < 1100, f)
    check("h6's network" in f["verdict"] and "not compute" in f["verdict"], f["verdict"])
    check(not [x for x in doc["findings"] if x["check"] == "watch_straggler"], doc["findings"])
    # The same job before the slowdown reached 5 calls of the median: nobody is named.
    r, doc = run_json(node_job("slow-node-early", slow_host="h6", slow_from=19))
    check(not [f for f in doc["findings"] if f["check"] != "watch_onset"],
          "2 slow calls of 5 are no alarm (the onset may say when): %s" % doc["findings"])
    r, doc = run_json(node_job("slow-node-healthy"))
    check(not doc["findings"], "healthy: %s" % doc["findings"])
    # One communicator holding every node: nothing to compare with, and the reason says so.
    r, doc = run_json(job("one-comm", seed=5))
    nj = [n["reason"] for n in doc["not_judged"] if n["check"] == "watch_slow_node"]
    check(nj and "no communicator without a node" in nj[0], doc["not_judged"])


def stalls_named_network_side():
    # 10% loss on one host's link: now and then a call of one of its communicators waits for a
    # retransmission timeout, for every rank, and the calls between run at their usual time.
    st = (("tp1", 12), ("dp1", 15), ("tp1", 18))
    r, doc = run_json(node_job("stalls", calls=24, stalls=st))
    f = [x for x in doc["findings"] if x["check"] == "watch_slow_node"]
    check(r.returncode == 0 and len(f) == 1, "one host named for its stalls: %s" % doc["findings"])
    f = f[0]
    check(f["code"] == "NT-JOB-205" and f["hosts"] == ["h6"] and f["side"] == "network" and f["stalls"] == 3, f)
    check(200000 < f["observed_us"] < 230000 and 900 < f["expected_us"] < 1200, f)
    check("stalls calls" in f["verdict"] and "not compute" in f["verdict"], f["verdict"])
    check(doc["settings"]["stall_min_us"] == 100000 and doc["settings"]["stall_calls"] == 2
          and doc["settings"]["stall_pair_calls"] == 3, doc["settings"])
    check(not [x for x in doc["findings"] if x["check"] in ("watch_straggler", "watch_hang")], doc["findings"])
    # Two, in its two communicators (h6 alone in both): named.
    r, doc = run_json(node_job("stalls-two", calls=24, stalls=st[:2]))
    f = [x for x in doc["findings"] if x["check"] == "watch_slow_node"]
    check(len(f) == 1 and f[0]["hosts"] == ["h6"] and f[0]["stalls"] == 2, doc["findings"])
    # One stall is no alarm; three in one communicator cannot tell its 4 hosts apart.
    for name, st2 in (("stalls-one", st[:1]), ("stalls-one-comm", (("tp1", 12), ("tp1", 15), ("tp1", 18)))):
        r, doc = run_json(node_job(name, calls=24, stalls=st2))
        check(not [x for x in doc["findings"] if x["check"] != "watch_onset"], "%s: %s" % (name, doc["findings"]))
    nj = [n["reason"] for n in doc["not_judged"] if n["check"] == "watch_slow_node"]
    check([x for x in nj if "3 stall(s)" in x and "hosts in common are 4" in x], nj)
    # One communicator of two hosts that is the whole job (no other to run clean beside it):
    # its stalls are the job's network, no link is named.
    d = os.path.join(WORK, "stalls-world-two-hosts")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for r in range(4):
        with open(os.path.join(d, "h%d-pid%d.log" % (r // 2 + 1, 6000 + r)), "w") as fp:
            for sn in range(1, 25):
                us = (210000.0 if sn in (8, 12, 16) else 1000.0) * (1 + 0.01 * r)
                rec = gen_inspector.record("0xw0", "world", r, 4, 2, "h%d" % (r // 2 + 1), 6000 + r, sn,
                                           1 << 20, us, 1764630000000000 + sn * 100000)
                fp.write(json.dumps(rec, separators=(",", ":")) + "\n")
    r, doc = run_json(d)
    check(not [x for x in doc["findings"] if x["check"] == "watch_slow_node"], doc["findings"])
    # Three in one data-parallel communicator (h2 and h6): the link between them, or one of
    # their NICs; which of the two, only a stall in another of their communicators tells.
    r, doc = run_json(node_job("stalls-one-pair", calls=24, stalls=(("dp1", 12), ("dp1", 15), ("dp1", 18))))
    f = [x for x in doc["findings"] if x["check"] == "watch_slow_node"]
    check(r.returncode == 0 and len(f) == 1 and f[0]["hosts"] == ["h2", "h6"] and f[0]["stalls"] == 3, doc["findings"])
    check(f and "the link between hosts h2, h6" in f[0]["verdict"] and "one communicator" in f[0]["reason"], f)
    check(not [x for x in doc["findings"] if x["check"] in ("watch_straggler", "watch_hang")], doc["findings"])
    # Two of them in that pair: no alarm yet.
    r, doc = run_json(node_job("stalls-one-pair-two", calls=24, stalls=(("dp1", 12), ("dp1", 18))))
    check(not [x for x in doc["findings"] if x["check"] != "watch_onset"], doc["findings"])
    nj = [n["reason"] for n in doc["not_judged"] if n["check"] == "watch_slow_node"]
    check([x for x in nj if "2 stall(s)" in x and "or 3 in one communicator of two hosts" in x
           and "(h2, h6)" in x], nj)
    # A stall in dp1, then a call of tp1 held for h6 and h7 (their ranks silent after call 20
    # while h5 and h8 go on to 24: a transfer between them stalls, a stopped process holds back
    # only itself): the second stall, in a second communicator, and h6 is named, no hang.
    r, doc = run_json(node_job("stalls-held", calls=24, stalls=(("dp1", 12),), stop=[(5, 20), (6, 20)]))
    f = [x for x in doc["findings"] if x["check"] == "watch_slow_node"]
    check(len(f) == 1 and f[0]["hosts"] == ["h6"] and f[0]["stalls"] == 2, doc["findings"])
    check(not [x for x in doc["findings"] if x["check"] == "watch_hang"], doc["findings"])
    check("one of them a call two ranks on two hosts are still held in" in f[0]["reason"]
          and f[0]["expected_us"] > 0 and f[0]["observed_us"] < 300000, f)
    # The same held call without the stalls before it: one stall, nobody named network-side.
    # Each of the two ranks is behind alone in its data-parallel pair too, and waits there for
    # the held transfer (a --long run named the lossy host's neighbour a hang so): a slow
    # network until 10 intervals, then, held as long, two hangs (stopped processes).
    r, doc = run_json(node_job("stalls-held-alone", calls=24, stop=[(5, 20), (6, 20)]))
    check(not [x for x in doc["findings"] if x["check"] in ("watch_slow_node", "watch_hang")], doc["findings"])
    r, doc = run_json(node_job("stalls-held-long", calls=34, stop=[(5, 20), (6, 20)]))
    check(sorted(x["host"] for x in doc["findings"] if x["check"] == "watch_hang") == ["h6", "h7"], doc["findings"])
    # The same two a call apart are not held in one call: one stall, nobody named network-side.
    r, doc = run_json(node_job("stalls-apart-held", calls=24, stalls=(("dp1", 12),),
                               stop=[(5, 20), (6, 19)]))
    check(not [x for x in doc["findings"] if x["check"] == "watch_slow_node"], doc["findings"])
    # Five of the eight 4 MiB calls of h6's two communicators stall (a lossy link's favourite
    # size; the other two sizes run clean): their median is a stall itself, their fastest is
    # not, and h6 is named.
    st5 = tuple((c, n) for c in ("tp1", "dp1") for n in (6, 9, 15, 18, 21))
    r, doc = run_json(node_job("stalls-most-of-a-series", calls=24, stalls=st5, sizes=(1 << 20, 2 << 20, 4 << 20)))
    f = [x for x in doc["findings"] if x["check"] == "watch_slow_node"]
    check(len(f) == 1 and f[0]["hosts"] == ["h6"] and f[0].get("stalls") == 10 and f[0]["expected_us"] < 1200, f)
    # dp1 turns 210 ms at call 12 and stays so: a slowed link, not stalls (no call of it ran
    # fast again), so nothing says "as packet loss does".
    r, doc = run_json(node_job("stalls-step", calls=24, step=("dp1", 12)))
    check(not [x for x in doc["findings"] if x.get("stalls")], doc["findings"])
    # Stalls in communicators with no host in common (tp0 and tp1): nobody.
    r, doc = run_json(node_job("stalls-apart", calls=24, stalls=(("tp0", 12), ("tp1", 15), ("tp0", 18))))
    check(not [x for x in doc["findings"] if x["check"] != "watch_onset"], doc["findings"])
    # The same stalls early in a longer run: over (18 calls since the latest), nobody named.
    r, doc = run_json(node_job("stalls-over", calls=24, stalls=(("tp1", 2), ("dp1", 4), ("tp1", 6))))
    check(not [x for x in doc["findings"] if x["check"] != "watch_onset"], doc["findings"])
    nj = [n["reason"] for n in doc["not_judged"] if n["check"] == "watch_slow_node"]
    check([x for x in nj if "none in the latest 12 calls" in x], nj)
    # Every call of the window 210 ms: a slow link, the median rule's, not a stall.
    r, doc = run_json(node_job("stalls-steady", calls=24, stalls=tuple(("tp1", n) for n in range(1, 25))))
    check(not [x for x in doc["findings"] if x.get("stalls")], doc["findings"])


def stalled_rank_silent_is_not_a_hang():
    # h6's link stalls calls of tp1 and dp1 (12, 15, 18: retransmission timeouts), then its rank
    # goes silent after call 20 while the others go on to 24: 4 dump intervals (0.1 s each) of
    # silence after stalls is a slow network, not yet a hang (a retransmission backoff holds a
    # rank for seconds). Ten more calls of the others: 14 intervals, a hang.
    st = (("tp1", 12), ("dp1", 15), ("tp1", 18))
    r, doc = run_json(node_job("stall-silent", calls=24, stalls=st, stop=(5, 20)))
    check(not [x for x in doc["findings"] if x["check"] == "watch_hang"], doc["findings"])
    nj = [n["reason"] for n in doc["not_judged"] if n["check"] == "watch_hang"]
    check([x for x in nj if x.startswith("rank 1 is 4 call(s) behind and silent for 4.0 of its dump intervals, but 2 of")
           and "not yet a hang" in x], nj)
    check(doc["settings"]["hang_stall_dumps"] == 10, doc["settings"])
    # Stalls in h6's tensor-parallel group only: its silence in the data-parallel pair, which
    # never stalled, is the same slow network (its host's other communicator stalled).
    r, doc = run_json(node_job("stall-silent-other", calls=24, stalls=(("tp1", 12), ("tp1", 15), ("tp1", 18)),
                               stop=(5, 20)))
    check(not [x for x in doc["findings"] if x["check"] == "watch_hang"], doc["findings"])
    nj = [n for n in doc["not_judged"] if n["check"] == "watch_hang" and n["comm_id"] == "0xd01"]
    check(nj and "but 3 of the latest calls of its communicator or of host h6's others stalled" in nj[0]["reason"], nj)
    r, doc = run_json(node_job("stall-silent-long", calls=34, stalls=st, stop=(5, 20)))
    h = [x for x in doc["findings"] if x["check"] == "watch_hang"]
    check(r.returncode == 1 and h and h[0]["host"] == "h6", doc["findings"])
    # Without the stalls the same silence is a hang at once.
    r, doc = run_json(node_job("silent", calls=24, stop=(5, 20)))
    h = [x for x in doc["findings"] if x["check"] == "watch_hang"]
    check(r.returncode == 1 and h and h[0]["host"] == "h6", doc["findings"])


def straggler_peer_not_named():
    # A straggler's data-parallel peer waits for it there and so arrives last in its own
    # tensor-parallel calls: the others wait for it, as for a straggler, but it saves nothing
    # over all its calls. Only the straggler is named, whatever the noise (seeds).
    for seed in range(31, 39):
        _, doc = run_json(node_job("straggler-peer-%d" % seed, calls=100, straggler=5, seed=seed))
        f = [(x["rank"], x["host"]) for x in doc["findings"] if x["check"] == "watch_straggler"]
        check(f == [(1, "h6")], "seed %d: the straggler (rank 1 of tp1, h6) alone: %s" % (seed, doc["findings"]))
    # The data-parallel records dumped 40 calls (one dump interval) earlier: over the tensor
    # groups' span the peer's inside time misses most of its wait there, but what it waited in
    # its pair over that span still explains its lateness (measured so on the namespace cluster).
    for seed in range(31, 35):
        _, doc = run_json(node_job("straggler-peer-lead-%d" % seed, calls=100, straggler=5, seed=seed,
                                   dp_dump_lead_us=4000000))
        f = [(x["rank"], x["host"]) for x in doc["findings"] if x["check"] == "watch_straggler"]
        check(f == [(1, "h6")], "seed %d, dumps apart: the straggler alone: %s" % (seed, doc["findings"]))
        nj = [n["reason"] for n in doc["not_judged"] if n["check"] == "watch_straggler" and "waited" in n["reason"]]
        check(nj and "it arrives late for that wait" in nj[0], doc["not_judged"])
    check(doc["settings"]["straggler_elsewhere_share"] == 0.5, doc["settings"])


def hang_two_behind_not_named():
    # Ranks 2 and 3 both stopped at call 30 while the others went on: a transfer between them
    # that stalls, not a stopped process (which holds back only itself).
    d = job("hang-pair", hang=2, hang_at=30, after=14, dump_every=5, seed=10)
    p3 = os.path.join(d, "gpu01-pid4003.log")
    keep = [l for l in open(p3) if json.loads(l)["coll_perf"]["coll_sn"] <= 30]
    open(p3, "w").writelines(keep)
    r, doc = run_json(d)
    check(r.returncode == 0 and not [f for f in doc["findings"] if f["check"] == "watch_hang"], doc["findings"])
    nj = [n["reason"] for n in doc["not_judged"] if n["check"] == "watch_hang"]
    check([x for x in nj if x.startswith("rank 2 is 14 call(s) behind, and so is rank 3")], nj)


def readme_records_and_prometheus():
    # The fixtures' folder: its files are read by their content, whatever their names; the
    # README and the nccl-tests -J document (JSON, but not Inspector's) are named, not read.
    r, doc = run_json(FIX)
    check(r.returncode == 1, "README fixtures, and RAS's missing rank: %d %s" % (r.returncode, r.stderr))
    fmts = {os.path.basename(i["path"]): i["format"] for i in doc["inputs"]}
    check(fmts == {"readme-v2.30.7-metrics.prom": "inspector_prom", "ras-generated-v2.30.7-layout.json": "ras_json",
                   "readme-v2.30.7-record.json": "inspector_json", "readme-v2.30.7-verbose.json": "inspector_json",
                   "trainer-collective-cpu.json": "inspector_json"}, "a directory's files by content: %s" % fmts)
    check([os.path.basename(x) for x in doc["summary"]["ignored_files"]] == ["README.md", "nccl-tests-generated-per-iter.json"]
          and doc["summary"]["skipped"] == 0, doc["summary"])
    r, doc = run_json(os.path.join(FIX, "readme-v2.30.7-record.json"))
    c = doc["communicators"][0]
    check(c["id"] == "0x7f8c496ae9f661" and c["nranks"] == 8 and c["ranks_seen"] == 1, c)
    check(c["calls"][0]["exec_us"][2] == 61974 and c["calls"][0]["busbw_GBps"] == 485.119099, c["calls"])
    reasons = [n["reason"] for n in doc["not_judged"]]
    check(any("1 of 8 rank(s)" in x for x in reasons), reasons)
    # Its one series of one call is not set aside as short: the communicator is, for the 7 ranks
    # without records, and the slow-node reason says which.
    check(any("(0 series have fewer; 1 communicator(s) have a rank without records" in x for x in reasons), reasons)
    r, doc = run_json(os.path.join(FIX, "readme-v2.30.7-metrics.prom"))
    check(doc["summary"]["prom_records"] == 4 and not doc["communicators"], doc["summary"])
    check(all("inspector_prom.cc:246-249" in n["reason"] for n in doc["not_judged"]) and len(doc["not_judged"]) == 3,
          doc["not_judged"])


def onset_against_peers():
    # Every communicator 6x slower from call 20 on: the job's change, no onset, each series not
    # judged with the peers' figure.
    _, doc = run_json(node_job("onset-job-wide", calls=40, slow_from=20, job_wide=True))
    check(not [f for f in doc["findings"] if f["check"] == "watch_onset"], doc["findings"])
    nj = [n for n in doc["not_judged"] if n["check"] == "watch_onset"]
    check(len(nj) == 6 and all("the job's own change" in n["reason"] for n in nj), nj)
    # Only h6's two communicators: an onset in each, none in the other four.
    _, doc = run_json(node_job("onset-one-host", slow_host="h6", calls=40, slow_from=20))
    f = sorted(x["comm_name"] for x in doc["findings"] if x["check"] == "watch_onset")
    check(f == ["dp1", "tp1"], doc["findings"])
    # Over before the latest onset_persist_calls calls: no onset.
    d = job("onset-burst", calls=120, slow_from=60, seed=11, base_us=10000.0)
    for name in os.listdir(d):
        p = os.path.join(d, name)
        recs = [json.loads(x) for x in open(p).read().splitlines()]
        for rec in recs:
            if rec["coll_perf"]["coll_sn"] > 110:
                rec["coll_perf"]["coll_exec_time_us"] /= 1.6
                rec["coll_perf"]["coll_busbw_gbs"] *= 1.6
        open(p, "w").write("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in recs))
    _, doc = run_json(d)
    check(not [f for f in doc["findings"] if f["check"] == "watch_onset"], doc["findings"])
    # 1.6x of a 1 ms call: 600 us more per call, under onset_min_excess_us: not judged, why.
    _, doc = run_json(job("onset-cheap", calls=120, slow_from=60, seed=11))
    nj = [n for n in doc["not_judged"] if n["check"] == "watch_onset"]
    check(not doc["findings"] and len(nj) == 1 and "under the 2000 us" in nj[0]["reason"], (doc["findings"], nj))


def busbw_drop_onset():
    # A 64 MiB allreduce of 10 ms that takes 1.6x as long from call 60 on.
    d = job("onset", calls=120, slow_from=60, seed=11, base_us=10000.0)
    r, doc = run_json(d)
    f = [x for x in doc["findings"] if x["check"] == "watch_onset"]
    check(len(f) == 1 and f[0]["code"] == "NT-JOB-204" and f[0]["rank"] is None, doc["findings"])
    f = f[0]
    check(60 <= f["onset_seq"] <= 61, "onset at call 60: %s" % f)
    check(abs(f["observed_busbw_GBps"] / f["expected_busbw_GBps"] - 1 / 1.6) < 0.03, f)
    check(r.returncode == 0, "an onset is a warning: %d" % r.returncode)
    # One call 3x slower is no alarm (the confirmation window).
    d = job("one-slow-call", calls=120, slow_from=60, slow_factor=1.0, seed=12)
    path = os.path.join(d, "gpu01-pid4000.log")
    lines = open(path).read().splitlines()
    _, doc = run_json(d)
    check(not doc["findings"], "healthy 120 calls: %s" % doc["findings"])
    for name in os.listdir(d):
        p = os.path.join(d, name)
        recs = [json.loads(x) for x in open(p).read().splitlines()]
        for rec in recs:
            if rec["coll_perf"]["coll_sn"] == 70:
                rec["coll_perf"]["coll_exec_time_us"] *= 3
                rec["coll_perf"]["coll_busbw_gbs"] /= 3
        open(p, "w").write("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in recs))
    _, doc = run_json(d)
    check(not doc["findings"], "one slow call is no onset: %s" % doc["findings"])
    check(len(lines) == 120, "generated 120 calls")


def split_job(src, name, upto):
    """A copy of job folder src in WORK/name holding each rank's calls up to `upto`; returns the
    folder and, per file, the text of the later calls (to append as the job "runs")."""
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    rest = {}
    for f in sorted(os.listdir(src)):
        lines = open(os.path.join(src, f)).read().splitlines(True)
        head = [x for x in lines if json.loads(x)["coll_perf"]["coll_sn"] <= upto]
        rest[f] = "".join(lines[len(head):])
        open(os.path.join(d, f), "w").write("".join(head))
    return d, rest


def follow_reads_on_as_files_grow():
    # The hang job, its files cut after call 30 while the job "runs": --follow reads the first
    # part, then the appended calls (the first appended record arrives in two halves, across a
    # read), and names the rank behind once the others dumped on.
    d, rest = split_job(job("follow-src", hang=2, hang_at=30, after=6, seed=13, dump_every=2), "follow", 30)
    out = os.path.join(WORK, "follow.json")
    proc = subprocess.Popen([BIN, "--follow", "--interval", "1", "-o", out, d],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.3)
    for name, text in rest.items():
        open(os.path.join(d, name), "a").write(text[:len(text) // 2])
    time.sleep(0.4)
    for name, text in rest.items():
        open(os.path.join(d, name), "a").write(text[len(text) // 2:])
    time.sleep(2.0)
    proc.send_signal(signal.SIGTERM)
    so, se = proc.communicate(timeout=30)
    doc = json.load(open(out))
    valid(doc)
    check(proc.returncode == 1, "the hang is found while following: %d %s %s" % (proc.returncode, so, se))
    h = [f for f in doc["findings"] if f["check"] == "watch_hang"]
    check(len(h) == 1 and h[0]["rank"] == 2 and h[0]["last_seq"] == 30 and h[0]["max_seq"] == 36, doc["findings"])
    check(doc["summary"]["records"] == 30 * 8 + 6 * 7 and doc["summary"]["skipped"] == 0
          and doc["summary"]["partial"] == 0, "every record once, none cut: %s" % doc["summary"])
    check("NT-JOB-202" in so, "the summary at the end: " + so)


def follow_woken_by_a_write():
    # --interval 30, and a dump appended 0.5 s in: the write wakes a read (inotify) long before
    # the interval is over, and the document holds the appended calls within a second of it.
    src = job("wake-src", seed=17)
    d, rest = split_job(src, "wake", 10)
    total = sum(len(open(os.path.join(src, n)).read().splitlines()) for n in rest)
    out = os.path.join(WORK, "wake.json")
    if os.path.exists(out):
        os.unlink(out)
    proc = subprocess.Popen([BIN, "--follow", "--interval", "30", "-o", out, d],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        t = time.time() + 5
        while time.time() < t and not os.path.exists(out):
            time.sleep(0.05)
        first = json.load(open(out))["summary"]["records"]
        time.sleep(0.5)
        for name, text in rest.items():
            open(os.path.join(d, name), "a").write(text)
        wrote = time.time()
        got = first
        while time.time() < wrote + 3 and got != total:
            time.sleep(0.05)
            try:
                got = json.load(open(out))["summary"]["records"]
            except ValueError:
                pass
        took = time.time() - wrote
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    check(first < total and got == total and took < 1.5,
          "the appended records read %.2f s after the write: %d of %d (%d before)" % (took, got, total, first))


def follow_due_job(name, ahead):
    """Four ranks dump every 0.2 s; h4 stops after its third dump (call 30), the others dump once
    more, up to call 30 + `ahead`, and then block behind it: nothing is written again. --follow
    --interval 30 is read until h4 is named a hang (at most 4 s after its last dump). Returns
    the seconds from h4's last dump to the document that named it (None: not named), its
    dump interval as written (the shortest gap: a loaded machine may delay a write), and the
    watch_hang reasons under not_judged seen before."""
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    out = os.path.join(WORK, name + ".json")
    if os.path.exists(out):
        os.unlink(out)
    proc = subprocess.Popen([BIN, "--follow", "--interval", "30", "-o", out, d],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    done, h4 = [0, 0, 0, 0], []

    def dump(r, upto):
        with open(os.path.join(d, "h%d-pid%d.log" % (r + 1, 7400 + r)), "a") as fp:
            for sn in range(done[r] + 1, upto + 1):
                fp.write(json.dumps(gen_inspector.record("0xd0e", "tp0", r, 4, 4, "h%d" % (r + 1), 7400 + r,
                                                         sn, 1 << 20, 1000.0, int(time.time() * 1e6)),
                                    separators=(",", ":")) + "\n")
        done[r] = upto
        if r == 3:
            h4.append(time.time())
    named, said = None, set()
    try:
        time.sleep(0.3)
        t0 = time.time()
        for k, at in enumerate((0.0, 0.2, 0.4)):
            time.sleep(max(0.0, t0 + at - time.time()))
            for r in range(4):
                dump(r, 10 * (k + 1))
        time.sleep(max(0.0, t0 + 0.45 - time.time()))
        for r in range(3):
            dump(r, 30 + ahead)
        while time.time() < h4[-1] + 4 and named is None:
            time.sleep(0.05)
            try:
                doc = json.load(open(out))
            except (OSError, ValueError):
                continue
            if [f["rank"] for f in doc["findings"] if f["check"] == "watch_hang"] == [3]:
                named = time.time() - h4[-1]
            said |= {n["reason"] for n in doc["not_judged"] if n["check"] == "watch_hang"}
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    return named, min(b - a for a, b in zip(h4, h4[1:])), said


def follow_reads_when_a_hang_is_due():
    # h4 two calls behind: it completed call 31, since it joined 32, which the others completed,
    # and never dumped it: its dump thread stopped with it. With --interval 30 the watch reads
    # when h4's silence reaches the hang rule's 2.5 of its dump intervals (0.5 s after its last
    # dump), not 30 s after its last read (was: nothing named until the interval was over).
    named, every, said = follow_due_job("due", 2)
    check(named is not None and 2.5 * every - 0.05 <= named < 2.5 * every + 0.8,
          "h4 named a hang %s s after its last dump (due at %.2f s): %s" % (named, 2.5 * every, said))


def follow_one_behind_is_slow_until_ten_intervals():
    # h4 one call behind: it may be held inside call 31, which the others completed, as a
    # transfer held by retransmissions is (the sender's part ends first): not a hang at 2.5
    # intervals of silence (was: named, in a loss case on the namespace cluster), but after 10.
    named, every, said = follow_due_job("due1", 1)
    check(named is not None and 10 * every - 0.05 <= named < 10 * every + 0.8 and
          [x for x in said if "may be held inside call 31" in x],
          "h4 named a hang %s s after its last dump (due at %.2f s): %s" % (named, 10 * every, said))


def live_job(d, seconds, skew_s=0.0, events=None, hung=None, hung_from=None, keep_open=False):
    """Writes a live job of 4 ranks (h1..h4, one communicator) into folder d for `seconds`: a call
    every 10 ms, each rank dumping every 0.2 s (50 ms after the rank before), each record
    stamped with the writer's clock, `skew_s` behind the real one (a number, or a dict of rank
    to seconds). `events` maps a time in s to
    a function called then (with d); rank `hung` writes nothing from `hung_from` s on. Each dump
    opens the file by name, or with `keep_open` the file is opened once and written on, as
    Inspector does (fopen in inspector.cc's jsonInitFileOutput). Returns the records written."""
    os.makedirs(d, exist_ok=True)
    t0, written, done = time.time(), 0, [0, 0, 0, 0]
    kept = {}
    events = dict(events or {})
    tick = 0
    while True:
        now = time.time() - t0
        if now >= seconds:
            return written
        for at in sorted(k for k in events if k <= now):
            events.pop(at)(d)
        r = tick % 4
        tick += 1
        if not (r == hung and now >= hung_from):
            upto = int(now / 0.01)
            lines = []
            for sn in range(done[r] + 1, upto + 1):
                skew = skew_s.get(r, 0.0) if isinstance(skew_s, dict) else skew_s
                ts = int((time.time() - skew) * 1e6) + len(lines)
                lines.append(json.dumps(gen_inspector.record("0xc10c", "tp0", r, 4, 4, "h%d" % (r + 1),
                                                             7300 + r, sn, 1 << 20, 1000.0, ts),
                                        separators=(",", ":")) + "\n")
            path = os.path.join(d, "h%d-pid%d.log" % (r + 1, 7300 + r))
            if keep_open:
                if r not in kept:
                    kept[r] = open(path, "a")
                kept[r].write("".join(lines))
                kept[r].flush()
            else:  # reopened by name at every dump, as a writer that logrotate's "create" suits
                with open(path, "a") as fp:
                    fp.write("".join(lines))
            written += len(lines)
            done[r] = max(done[r], upto)
        time.sleep(0.05)


def follow_live(name, skew_s, events=None, keep_open=False):
    """--follow over live_job(skew_s, events, h4 hung from 2.2 s, keep_open) for 3.2 s; returns
    the exit code, stdout, stderr, the records written, the document at 2.0 s and the last
    one."""
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    out = os.path.join(WORK, name + ".json")
    mid = {}

    def snapshot(d):
        mid["doc"] = json.load(open(out))
    ev = dict(events or {})
    ev[2.0] = snapshot
    proc = subprocess.Popen([BIN, "--follow", "--interval", "1", "-o", out, d],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        written = live_job(d, 3.2, skew_s=skew_s, events=ev, hung=3, hung_from=2.2, keep_open=keep_open)
        time.sleep(0.4)
    finally:
        proc.send_signal(signal.SIGTERM)
        so, se = proc.communicate(timeout=30)
    doc = json.load(open(out))
    valid(doc)
    return proc.returncode, so, se, written, mid.get("doc"), doc


def follow_clocks_rotation_and_a_hang():
    # The writers' clocks read 2 s behind the watch's (10 of their dump intervals); h1's file is
    # truncated (copytruncate, the copy kept outside the folder), h2's renamed in the folder and
    # made again under its name; h4 stops at 2.2 s. The clock difference is measured and taken
    # off each rank's silence: at 2.0 s nothing is said of a hang or of a stopped job (was: the
    # job read as stopped while it ran), and at the end h4 alone is named (was: h2 too, its new
    # file never read). The truncated and replaced files are read again from their start, and
    # h2's old file not twice.
    rot = os.path.join(WORK, "live-clock-rotated")
    os.makedirs(rot, exist_ok=True)

    def copytruncate(d):
        f = os.path.join(d, "h1-pid7300.log")
        shutil.copy(f, os.path.join(rot, "h1-pid7300.log.1"))
        open(f, "r+").truncate(0)

    def rename(d):
        os.rename(os.path.join(d, "h2-pid7301.log"), os.path.join(d, "h2-pid7301.log.1"))
    rc, so, se, written, mid, doc = follow_live("live-clock", 2.0, {1.0: copytruncate, 1.5: rename})
    said = [n["reason"] for n in mid["not_judged"] if n["check"] == "watch_hang"] + \
        [f["reason"] for f in mid["findings"]]
    check(not mid["findings"] and not [x for x in said if "the job stopped" in x],
          "at 2.0 s, before h4 stopped: %s" % said)
    hangs = [(f["rank"], f["reason"]) for f in doc["findings"] if f["check"] == "watch_hang"]
    check(rc == 1 and [h[0] for h in hangs] == [3], "h4 alone named: %d %s" % (rc, hangs))
    check("read 2." in hangs[0][1] and "behind the watch's and the difference taken off" in hangs[0][1], hangs[0][1])
    ahead = doc["summary"]["clock_ahead_us"]
    check(1.9e6 < ahead < 2.4e6, "the writers' clocks measured 2 s behind: %s" % ahead)
    check("truncated while followed" in se and "replaced by another file while followed" in se, se)
    # What h1 gained after the watch's last read before the truncation is in the copy only (a
    # dump of 20 records, or two under a sanitizer): none counted twice.
    check(written - 40 <= doc["summary"]["records"] <= written and doc["summary"]["skipped"] == 0,
          "every record once: %d read, %d written" % (doc["summary"]["records"], written))
    check(sorted(os.path.basename(i["path"]) for i in doc["inputs"]) ==
          ["h%d-pid%d.log" % (r + 1, 7300 + r) for r in range(4)], [i["path"] for i in doc["inputs"]])
    check("clocks: the watch's clock is 2." in so, so)
    # h4's writer clock alone 2 s ahead of the watch's: its silence is 1.4 s by the watch's clock
    # less 2 s, and it was named only once the difference was taken off; the median of the
    # ranks is about 0, so the text names the host that is off.
    rc, so, se, written, mid, doc = follow_live("live-clock-ahead", {3: -2.0})
    hangs = [f["rank"] for f in doc["findings"] if f["check"] == "watch_hang"]
    most = doc["summary"]["clock_most_off"]
    check(rc == 1 and hangs == [3] and abs(doc["summary"]["clock_ahead_us"]) < 0.3e6 and
          most["host"] == "h4" and -2.1e6 < most["ahead_us"] < -1.6e6,
          "h4 named with its clock ahead: %d %s %s" % (rc, hangs, doc["summary"]))
    said = re.search(r"clocks: host h4's writer clock reads (\d+\.\d+) s ahead of the watch's", so)
    check(said and 1.6 <= float(said.group(1)) <= 2.0, so)


def follow_rotated_under_a_writer_that_keeps_its_file():
    # logrotate's "create" (rename, then an empty file under the name) while every rank writes on
    # through the file it opened, as Inspector does: the renamed files are read on through the
    # descriptors held, the new empty ones too; h4 stopping at 2.2 s is named, nobody else (was:
    # the new file alone read, every rank silent, h2 named in a one-file rotation).
    def rotate(d):
        for n in os.listdir(d):
            os.rename(os.path.join(d, n), os.path.join(d, n + ".1"))
            open(os.path.join(d, n), "w").close()
    rc, so, se, written, mid, doc = follow_live("live-create", 0.0, {1.0: rotate}, keep_open=True)
    hangs = [f["rank"] for f in doc["findings"] if f["check"] == "watch_hang"]
    check(rc == 1 and hangs == [3] and not mid["findings"], "h4 alone named: %d %s %s" % (rc, hangs, mid["findings"]))
    check(doc["summary"]["records"] == written and se.count("and the file it replaced read on") == 4,
          "every record once: %d read, %d written; %s" % (doc["summary"]["records"], written, se))


def follow_mirror_refreshed():
    # The watch follows a mirror of the dump folder that a copier refreshes every 0.3 s by
    # writing each file to a temporary name and renaming it over (as rsync does): each file is
    # read on from where it was, not again from its start (was: 16,204 records counted for
    # 2,391 written in a tester's run), and h4 stopping at 2.2 s is named, nobody else.
    import threading
    src, dst = os.path.join(WORK, "mirror-src"), os.path.join(WORK, "mirror-dst")
    for d in (src, dst):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    stop = []

    def refresh():
        for n in os.listdir(src):
            shutil.copy(os.path.join(src, n), os.path.join(dst, "." + n + ".tmp"))
            os.rename(os.path.join(dst, "." + n + ".tmp"), os.path.join(dst, n))

    def copier():
        while not stop:
            refresh()
            time.sleep(0.3)
    out = os.path.join(WORK, "mirror.json")
    proc = subprocess.Popen([BIN, "--follow", "--interval", "1", "-o", out, dst],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    th = threading.Thread(target=copier)
    th.start()
    try:
        written = live_job(src, 3.2, hung=3, hung_from=2.2)
        stop.append(1)
        th.join()
        refresh()
        time.sleep(0.6)
    finally:
        stop.append(1)
        proc.send_signal(signal.SIGTERM)
        so, se = proc.communicate(timeout=30)
    doc = json.load(open(out))
    valid(doc)
    hangs = [f["rank"] for f in doc["findings"] if f["check"] == "watch_hang"]
    check(proc.returncode == 1 and hangs == [3], "h4 alone named: %d %s" % (proc.returncode, doc["findings"]))
    check(doc["summary"]["records"] == written and doc["summary"]["unaligned"] == 0,
          "every record once: %s, %d written" % (doc["summary"], written))
    check(se.count("a mirror's refresh") == 4, se)


def follow_three_reads(name, inputs, after_s, change):
    """--follow --interval 1 --polls 3 over `inputs`, `change()` called after_s in; returns the
    exit code, stderr and the last document (checked against the schema)."""
    out = os.path.join(WORK, name + ".json")
    proc = subprocess.Popen([BIN, "--follow", "--interval", "1", "--polls", "3", "-o", out] + inputs,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(after_s)
    change()
    so, se = proc.communicate(timeout=30)
    doc = json.load(open(out))
    valid(doc)
    return proc.returncode, se, doc


def follow_gzip_still_being_written():
    # A rotated copy compressed while followed: its first half ends inside the gzip stream. It
    # is read again once it grows, not given up (was: exit 2 and no drain for the rest of the
    # run).
    import gzip
    src = job("gzcut-src", seed=31, nranks=2, per_host=1)
    names = sorted(os.listdir(src))
    d = os.path.join(WORK, "gzcut")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    shutil.copy(os.path.join(src, names[0]), os.path.join(d, names[0]))
    blob = gzip.compress(open(os.path.join(src, names[1]), "rb").read())
    gz = os.path.join(d, names[1] + ".1.gz")
    open(gz, "wb").write(blob[:len(blob) // 2])
    rc, se, doc = follow_three_reads("gzcut", [d], 0.5, lambda: open(gz, "ab").write(blob[len(blob) // 2:]))
    check("ends inside its gzip stream" in se, se)
    check(rc == 0 and doc["summary"]["unread_inputs"] == [] and doc["summary"]["records"] == 80,
          "the gzip copy read once whole: %d %s" % (rc, doc["summary"]))


def follow_missing_file_found_later():
    # A FILE given to --follow that does not exist yet is said at the start and read once it
    # appears; it is then no longer an unread input (was: exit 2 to the end).
    d = job("late-src", seed=23, nranks=2, per_host=1)
    names = sorted(os.listdir(d))
    first, late = os.path.join(d, names[0]), os.path.join(WORK, "late-" + names[1])
    if os.path.exists(late):
        os.unlink(late)
    rc, se, doc = follow_three_reads("late", [first, late], 0.3,
                                     lambda: shutil.copy(os.path.join(d, names[1]), late))
    check("does not exist yet: it is read once it appears" in se, se)
    check(rc == 0 and doc["summary"]["unread_inputs"] == [] and doc["summary"]["records"] == 80,
          "read once it appeared: %d %s" % (rc, doc["summary"]))


def follow_stdin_pipe_ends():
    # Standard input that is a pipe ends at its end, also with --follow (was: read forever).
    d = job("pipe-src", seed=29)
    text = "".join(open(os.path.join(d, n)).read() for n in sorted(os.listdir(d)))
    r = subprocess.run([BIN, "--follow", "--format", "json", "-"], input=text, capture_output=True,
                       text=True, timeout=20)
    doc = json.loads(r.stdout)
    check(r.returncode == 0 and doc["summary"]["records"] == 320, "%d %s" % (r.returncode, doc["summary"]))


def ras_missing_rank_named():
    r, doc = run_json(os.path.join(FIX, "ras-generated-v2.30.7-layout.json"))
    check(r.returncode == 1, "a rank RAS cannot reach fails: %d %s" % (r.returncode, r.stderr))
    check(doc["inputs"][0]["format"] == "ras_json" and doc["summary"]["ras_records"] == 6, doc["summary"])
    f = doc["findings"]
    check(len(f) == 1 and f[0]["code"] == "NT-JOB-203" and f[0]["rank"] == 2 and f[0]["host"] == "gpu02"
          and f[0]["pid"] == 102 and f[0]["comm_id"] == "0xa1b2" and "unresponsive" in f[0]["verdict"], f)
    # RAS lists communicators Inspector has no record of: the summary says so, not "0" alone
    s = doc["summary"]
    check(s["communicators"] == 0 and s["ras_only_communicators"] == ["0xa1b2", "0xc3d4"], s)
    check(r.stdout.splitlines()[0] == "nettune watch: 6 record(s) (0 P2P, 0 Prometheus, 6 RAS), 0 "
          "communicator(s) with Inspector records, and 2 that only RAS lists (0xa1b2, 0xc3d4): no "
          "Inspector record of their calls, only RAS's list of missing ranks judged", r.stdout)
    # one of them with Inspector records too: only the other is RAS's alone
    d = job("ras-and-inspector", seed=5)
    _, jd = run_json(d)
    cid = jd["communicators"][0]["id"]
    ras = os.path.join(WORK, "ras-with-inspector.json")
    open(ras, "w").write(open(os.path.join(FIX, "ras-generated-v2.30.7-layout.json")).read()
                         .replace("0xa1b2", cid))
    r, doc = run_json(d, ras)
    s = doc["summary"]
    check(s["communicators"] == 1 and s["ras_only_communicators"] == ["0xc3d4"], s)
    check(" 1 communicator(s) with Inspector records, and 1 that only RAS lists (0xc3d4)"
          in watch(d, ras).stdout.splitlines()[0], "RAS's own communicator")


def garbage_line_counted():
    """A line of no JSON in the middle of a rank's file is skipped and said, with where it is;
    the half-written last line is still only partial."""
    d = job("garbage-mid", seed=5, half_line=True)
    path = os.path.join(d, sorted(os.listdir(d))[1])
    lines = open(path).read().splitlines(True)
    lines.insert(10, "terminate called after throwing an instance of 'std::bad_alloc'\n")
    open(path, "w").writelines(lines)
    r, doc = run_json(d)
    s = doc["summary"]
    check(r.returncode == 0 and s["records"] == 320 and s["skipped"] == 1 and s["partial"] == 1
          and s["first_skipped"] == "%s:11" % path, "one line skipped, at line 11: %s" % s)
    t = watch(d).stdout.splitlines()[0]
    check("1 skipped (not a record: the first at %s:11)" % path in t and "1 cut short at the end" in t, t)
    _, clean = run_json(job("garbage-none", seed=5))
    check(clean["summary"]["skipped"] == 0 and clean["summary"]["first_skipped"] is None, clean["summary"])


def bad_inputs_one_line():
    """Each bad input or flag: one line naming it and the fix, exit 2, nothing written."""
    os.makedirs(WORK, exist_ok=True)
    empty = os.path.join(WORK, "empty-dir")
    os.makedirs(empty, exist_ok=True)
    foreign = os.path.join(WORK, "foreign.log")
    open(foreign, "w").write("NCCL INFO Bootstrap : Using eth0\n")
    missing = os.path.join(WORK, "missing")
    out = os.path.join(WORK, "bad-input.json")
    for args, want in [([empty], "'%s' holds no Inspector dump: give NCCL_INSPECTOR_DUMP_DIR" % empty),
                       ([foreign], "'%s' is not an NCCL Inspector log or textfile (line 1): give" % foreign),
                       ([missing], "cannot read '%s': No such file or directory: give the folder "
                                   "NCCL_INSPECTOR_DUMP_DIR names" % missing),
                       ([missing, empty], "cannot read '%s'" % missing),
                       (["--format", "xml", FIX], "unknown --format 'xml': use text, json or prom"),
                       (["--folow", FIX], "unknown option '--folow': did you mean --follow?"),
                       (["--polls", "2", FIX], "--polls (how many reads --follow makes) means nothing "
                                               "without --follow: add --follow, or leave it out"),
                       (["--interval", "1", FIX], "--interval (the pause between --follow's reads) "
                                                  "means nothing without --follow"),
                       (["--drian=dry-run", FIX], "did you mean --drain?"),
                       (["--bogus", FIX], "unknown option '--bogus': see nettune watch --help"),
                       ([], "no input")]:
        if os.path.exists(out):
            os.unlink(out)
        r = watch(*(args + ["-o", out]))
        lines = r.stderr.strip().splitlines()
        n = 2 if len(args) == 2 and args[0] == missing else 1  # one line per bad input
        check(r.returncode == 2 and len(lines) == n and want in lines[0] and not os.path.exists(out),
              "%s: rc %d, %r" % (args, r.returncode, r.stderr))


def dir_read_by_content():
    """A folder's files are read by their content, whatever their name (a dump copied as
    *.json); the others (the job's own log, notes) are named in one line, not read."""
    d = job("by-content", seed=5)
    names = sorted(os.listdir(d))
    shutil.copy(os.path.join(d, names[0]), os.path.join(d, "rank0-copy.json"))
    os.rename(os.path.join(d, names[1]), os.path.join(d, "rank1.txt"))
    open(os.path.join(d, "train.log"), "w").write("NCCL INFO Bootstrap : Using eth0\n")
    open(os.path.join(d, "notes.md"), "w").write("# run 7\n")
    r, doc = run_json(d)
    s = doc["summary"]
    ign = [os.path.join(d, "notes.md"), os.path.join(d, "train.log")]
    check(r.returncode == 0 and s["records"] == 320 + 40 and s["ignored_files"] == ign
          and s["unread_inputs"] == [], "8 ranks read, the copy too, 2 ignored: %s" % s)
    check(doc["communicators"][0]["ranks_seen"] == 8 and doc["communicators"][0]["duplicate_records"] == 40,
          "rank1.txt read, the copy's records are duplicates: %s" % doc["communicators"][0]["duplicate_records"])
    t = watch(d).stdout
    check("ignored 2 file(s) that are not Inspector dumps: %s, %s\n" % tuple(ign) in t, t)
    # a folder of none: one line names its files
    only = os.path.join(WORK, "no-dumps")
    shutil.rmtree(only, ignore_errors=True)
    os.makedirs(only)
    open(os.path.join(only, "a.json"), "w").write("[1, 2]\n")
    r = watch(only)
    check(r.returncode == 2 and r.stderr.strip().splitlines() == [
        "nettune watch: '%s' holds no Inspector dump (its files are not Inspector's: %s/a.json): "
        "give NCCL_INSPECTOR_DUMP_DIR of a job run with NCCL_INSPECTOR_ENABLE=1" % (only, only)], r.stderr)


def no_record_names_files():
    """Nothing read gave a record: one line names the files (4 by name, the rest counted) and
    what each held, the folder's files not read, and the fix; a cut record is said as such; a
    FILE that is an nccl-tests -J document, or other JSON, is named as what it is."""
    d = os.path.join(WORK, "no-record")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    open(os.path.join(d, "gpu01-pid4000.log"), "w").close()
    open(os.path.join(d, "train.txt"), "w").write("step 1 loss 2.3\n")
    r = watch(d)
    check(r.returncode == 2 and r.stderr.splitlines() == [
        "nettune watch: no Inspector record in 1 file(s): %s/gpu01-pid4000.log (empty); not read, "
        "not Inspector dumps: %s/train.txt: was the job run with NCCL_INSPECTOR_ENABLE=1, and has "
        "it dumped yet (docs/watch.md)?" % (d, d)], r.stderr)
    for i in range(1, 6):
        open(os.path.join(d, "gpu0%d-pid400%d.log" % (i + 1, i)), "w").close()
    r = watch(d)
    check(r.returncode == 2 and "no Inspector record in 6 file(s): " in r.stderr
          and "%s/gpu04-pid4003.log (empty), and 2 more; not read" % d in r.stderr
          and "gpu05" not in r.stderr, r.stderr)
    # one record cut mid-line: the whole file is a dump still being written, or a cut one
    src = job("no-record-src", seed=5)
    rec = open(os.path.join(src, sorted(os.listdir(src))[0])).readline()
    cut = os.path.join(WORK, "one-cut.log")
    open(cut, "w").write(rec[:len(rec) // 2])
    r = watch(cut)
    check(r.returncode == 2 and r.stderr.splitlines() == [
        "nettune watch: no Inspector record in 1 file(s): %s (its last line is a record without "
        "its end: half-written, waiting for its end, or cut): a dump still being written is read "
        "once its line ends: run again when Inspector has finished it, or with --follow (a file "
        "cut short holds no whole record)" % cut], r.stderr)
    ncclt = os.path.join(FIX, "nccl-tests-generated-per-iter.json")
    r = watch(ncclt)
    check(r.returncode == 2 and r.stderr.splitlines() == [
        "nettune watch: '%s' is an nccl-tests -J document, not an NCCL Inspector dump: the watch "
        "reads the files of NCCL_INSPECTOR_DUMP_DIR; nccl-tests results are read by 'nettune "
        "tune --replay %s'" % (ncclt, ncclt)], r.stderr)
    other = os.path.join(WORK, "config.json")
    open(other, "w").write('{\n  "batch": 8\n}\n')
    r = watch(other)
    check(r.returncode == 2 and len(r.stderr.splitlines()) == 1
          and "'%s' is JSON that is not NCCL Inspector's (its first key is neither" % other in r.stderr,
          r.stderr)


def partial_result_written():
    """Some inputs bad, some read: a line for each bad one, the judgement of the rest written and
    shown, exit 2, and no drain from a partial judgement."""
    d = job("hang-partial", hang=2, hang_at=30, after=6, seed=4, dump_every=2)
    missing = os.path.join(WORK, "missing-dir")
    foreign = os.path.join(WORK, "foreign2.log")
    open(foreign, "w").write("NCCL INFO Bootstrap : Using eth0\n")
    out = os.path.join(WORK, "partial.json")
    r = watch(d, missing, foreign, "-o", out, "--drain=dry-run")
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 2 and len(lines) == 2 and "cannot read '%s'" % missing in lines[0]
          and "'%s' is not an NCCL Inspector log" % foreign in lines[1], "rc %d %r" % (r.returncode, r.stderr))
    doc = json.load(open(out))
    valid(doc)
    s = doc["summary"]
    check(s["exit_code"] == 2 and s["exit"] == "usage" and s["records"] == 282
          and s["unread_inputs"] == [missing, foreign] and len(doc["inputs"]) == 8, s)
    check([f["code"] for f in doc["findings"]] == ["NT-JOB-202"], "the hang of what was read: %s" % doc["findings"])
    check("not read 2 input(s) (missing, unreadable or not Inspector's: a partial judgement, exit 2): %s, %s\n"
          % (missing, foreign) in r.stdout and "NT-JOB-202" in r.stdout
          and "drain: nothing drained: an input was not read" in r.stdout and "scontrol" not in r.stdout, r.stdout)


def schema_checked():
    try:
        import jsonschema  # noqa: F401
    except ImportError:
        raise Skip("/usr/bin/python3 has no jsonschema (apt-get install python3-jsonschema)")
    d = job("schema-mutant", straggler=1, seed=9, calls=100)
    _, doc = run_json(d)
    doc["findings"][0]["code"] = "NT-PCIE-001"
    try:
        valid(doc)
    except AssertionError:
        return
    raise AssertionError("a watch finding with a probe code is valid: the schema checks nothing")


def output_never_an_input():
    """--output naming a rank's dump, or any file of the input folder (each is read, whatever its
    name), or an input file by a link: refused before anything is read or written, in one line,
    exit 2, the dump untouched; a missing folder for the output is said before the work too."""
    d = job("out-is-input", seed=5)
    dump = os.path.join(d, sorted(os.listdir(d))[0])
    before = open(dump, "rb").read()
    link = os.path.join(WORK, "link-to-dump.log")
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(dump, link)
    for args, want in [([d, "-o", dump], "--output '%s' is inside the input folder '%s', whose files "
                                         "are read: give a path outside it" % (dump, d)),
                       ([d + "/", "-o", os.path.join(d, "summary.json")], "is inside the input folder"),
                       ([dump, "-o", link], "--output '%s' is also an input (as '%s'): give another path"
                                            % (link, dump)),
                       ([d, "-o", "/nonexistent/dir/w.json"],
                        "cannot write --output '/nonexistent/dir/w.json': the folder '/nonexistent/dir' "
                        "does not exist: create it, or give a path in one that exists")]:
        r = watch(*args)
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 2 and len(lines) == 1 and lines[0].startswith("nettune watch: ")
              and want in lines[0] and r.stdout == "", "%s: rc %d, %r" % (args, r.returncode, r.stderr))
    check(open(dump, "rb").read() == before, "the rank's dump was changed")
    check(not os.path.exists(os.path.join(d, "summary.json")), "an output was written into the input folder")
    # a dot file in the folder is not read: it may be the output
    r = watch(d, "-q", "-o", os.path.join(d, ".summary.json"))
    check(r.returncode == 0 and json.load(open(os.path.join(d, ".summary.json")))["schema"] == "nettune.watch/1",
          "dot file output: rc %d %r" % (r.returncode, r.stderr))


TESTS = [straggler_named_compute_side, straggler_needs_every_block, onset_against_peers,
         hang_names_rank_behind, behind_by_one_dump_is_not_a_hang, whole_job_held_is_not_a_hang,
         job_stopped_without_final_dump_is_not_a_hang,
         healthy_job_no_finding,
    standing_still_said_not_blamed,
         too_few_calls_not_judged, slow_node_named_network_side, stalls_named_network_side,
         stalled_rank_silent_is_not_a_hang,
    straggler_peer_not_named, hang_two_behind_not_named, readme_records_and_prometheus, busbw_drop_onset,
         follow_reads_on_as_files_grow, follow_woken_by_a_write, follow_reads_when_a_hang_is_due,
         follow_one_behind_is_slow_until_ten_intervals,
         follow_clocks_rotation_and_a_hang,
         follow_rotated_under_a_writer_that_keeps_its_file, follow_gzip_still_being_written,
         follow_mirror_refreshed,
         follow_missing_file_found_later, follow_stdin_pipe_ends, ras_missing_rank_named, garbage_line_counted, bad_inputs_one_line,
         dir_read_by_content, no_record_names_files, partial_result_written, schema_checked,
         output_never_an_input]


def main():
    if not os.access(BIN, os.X_OK):
        print("watch tests: %s is not built" % BIN)
        return 2
    os.makedirs(WORK, exist_ok=True)
    npass = nfail = nskip = 0
    t_all = time.time()
    for i, fn in enumerate(TESTS, 1):
        try:
            fn()
            npass += 1
            print("ok %d - %s" % (i, fn.__name__), flush=True)
        except Skip as e:
            nskip += 1
            print("skip %d - %s: %s" % (i, fn.__name__, e), flush=True)
        except Exception as e:  # noqa: BLE001 - report every failure and go on
            nfail += 1
            print("not ok %d - %s: %s" % (i, fn.__name__, str(e)[:2000]), flush=True)
    print("watch tests: %d passed, %d failed, %d skipped (%.1f s)" % (npass, nfail, nskip, time.time() - t_all))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
