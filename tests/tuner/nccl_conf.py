#!/usr/bin/python3
"""The environment advice read by the real NCCL, from NCCL_CONF_FILE (make test-tune).

NCCL reads NCCL_CONF_FILE (else ~/.nccl.conf), then /etc/nccl.conf, line by line: '#' lines are
skipped, NAME=VALUE lines are applied with setenv(NAME, VALUE, 0), so the job's environment wins
(NVIDIA/nccl v2.28.9-1 src/misc/param.cc:27-69). ncclGetUniqueId runs without a GPU and reads
NCCL_SOCKET_IFNAME on the way (its INFO line names the value and the interface it binds).

Usage: nccl_conf.py CONF   (the file nettune tune --env-out wrote, plus the site's own line
NCCL_SOCKET_IFNAME=lo). Prints ok/not ok/SKIP lines; exit 1 on a failure. Each check runs in a
child process: NCCL reads the file once per process (std::call_once in initEnv)."""
import ctypes
import os
import subprocess
import sys

LIB = os.environ.get("NETTUNE_NCCL_LIB", "/usr/local/cuda/lib64/libnccl.so.2")

CHILD = r"""
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
uid = ctypes.create_string_buffer(128)
rc = lib.ncclGetUniqueId(uid)
libc = ctypes.CDLL(None)
libc.getenv.restype = ctypes.c_char_p
for name in sys.argv[2:]:
    v = libc.getenv(name.encode())
    print("GETENV %s=%s" % (name, v.decode() if v is not None else "<unset>"))
print("RC %d" % rc)
"""


def run(conf, extra_env, names):
    env = {k: v for k, v in os.environ.items() if not k.startswith("NCCL_")}
    env.update({"NCCL_CONF_FILE": conf, "NCCL_DEBUG": "INFO"})
    env.update(extra_env)
    p = subprocess.run([sys.executable, "-c", CHILD, LIB] + names, env=env, capture_output=True,
                       text=True, timeout=60)
    return p.stdout + p.stderr


def main():
    conf = sys.argv[1]
    try:
        ctypes.CDLL(LIB)
    except OSError as e:
        print("ok - # SKIP the conf-file test needs NCCL's libnccl.so.2 (%s: %s)" % (LIB, e))
        return 0
    fails = 0

    def check(name, cond, out):
        nonlocal fails
        print(("ok - " if cond else "not ok - ") + name)
        if not cond:
            fails += 1
            sys.stdout.write(out)

    settings = [l.split("=", 1) for l in open(conf).read().splitlines()
                if l and not l.startswith("#")]
    names = [n for n, _ in settings] + ["NCCL_IB_HCA"]
    out = run(conf, {}, names)
    check("NCCL reads NCCL_SOCKET_IFNAME from the written file (its INFO line names lo)",
          "NCCL_SOCKET_IFNAME set by environment to lo" in out and "Using lo:" in out
          and "RC 0" in out, out)
    for n, v in settings:
        check("every NAME=VALUE line reaches NCCL's environment: %s=%s" % (n, v),
              "GETENV %s=%s\n" % (n, v) in out, out)
    check("a reason or site-setting comment line sets nothing (NCCL_IB_HCA stays unset)",
          "GETENV NCCL_IB_HCA=<unset>" in out, out)
    out = run(conf, {"NCCL_SOCKET_IFNAME": "=lo", "NCCL_IB_QPS_PER_CONNECTION": "4"},
              ["NCCL_IB_QPS_PER_CONNECTION"])
    check("the job's own environment wins over the file (NCCL_SOCKET_IFNAME==lo, QPS 4)",
          "NCCL_SOCKET_IFNAME set by environment to =lo" in out
          and "GETENV NCCL_IB_QPS_PER_CONNECTION=4" in out, out)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
