#!/bin/sh
# The tests inside the soft-RoCE VM. Output protocol on the serial console, read by run.sh:
#   NT_FILE_BEGIN name / base64 lines / NT_FILE_END name   an artifact for the host
#   NT_RESULT name rc=N                                    exit status of a step
#   NT_INFO text                                           for the log
# NT_TESTS (kernel command line) selects steps: capture, selftest, probe, perftest, faults, gpu,
# fabric.
T=${NT_TESTS:-probe,perftest,loopback,faults,gpu,fabric}
ts() { echo "NT_INFO [T+$(cut -d' ' -f1 /proc/uptime)s] $*"; }
emit() { # name file: send a file to the host
  echo "NT_FILE_BEGIN $1"; base64 < "$2"; echo "NT_FILE_END $1"
}
result() { echo "NT_RESULT $1 rc=$2"; }
want() { case ",$T," in *",$1,"*) return 0;; esac; return 1; }

# cap SRC DST DEPTH: copy a sysfs directory: regular files with their contents, symlinks as
# symlinks (their targets kept as text: they dangle in the copy, which is what readlink needs),
# real directories recursively up to DEPTH. Unreadable attributes (EINVAL, write-only) are left
# out, as they read on the live system.
ZGID=0000:0000:0000:0000:0000:0000:0000:0000
cap() {
  local src=$1 dst=$2 depth=$3 f b
  mkdir -p "$dst"
  for f in "$src"/*; do
    b=${f##*/}
    case $b in power|subsystem|uevent|cm_rx_*|cm_tx_*|'*') continue;; esac
    # a GID table has 1024 entries, nearly all zero: keep the first 8 and every non-zero one
    case $src in */gids) if [ "$b" -ge 8 ] && [ "$(cat "$f")" = "$ZGID" ]; then continue; fi;; esac
    if [ -L "$f" ]; then ln -s "$(readlink "$f")" "$dst/$b"
    elif [ -d "$f" ]; then [ "$depth" -gt 0 ] && cap "$f" "$dst/$b" $((depth - 1))
    else cat "$f" > "$dst/$b" 2>/dev/null || rm -f "$dst/$b"
    fi
  done
}

ts "guest tests: $T"
ibv_devinfo -v 2>&1 | grep -E "hca_id|state|link_layer|active_|GID\[" | sed 's/^/NT_INFO /'

if want capture; then
  # rxe0 on eth0 (up, ACTIVE); rxe1 on dummy0 taken down for the capture (port DOWN)
  ip link set dummy0 down; sleep 1
  C=/tmp/cap/sysfs-rxe
  for d in /sys/class/infiniband/*; do
    n=${d##*/}; cap "$d/" "$C/sys/class/infiniband/$n" 6
  done
  for n in eth0 dummy0 lo; do [ -e /sys/class/net/$n ] && cap "/sys/class/net/$n/" "$C/sys/class/net/$n" 0; done
  mkdir -p "$C/sys/devices/system/node"
  [ -d /sys/devices/system/node/node0 ] && cap /sys/devices/system/node/node0 "$C/sys/devices/system/node/node0" 0
  (cd /tmp/cap && tar czf /tmp/sysfs-rxe.tgz sysfs-rxe)
  emit sysfs-rxe.tgz /tmp/sysfs-rxe.tgz
  ip link set dummy0 up; sleep 1
  result capture 0
fi

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_plm_rsh_agent=/bin/false
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_osc=^ucx OMPI_MCA_coll=^hcoll
TH=/nt/thresholds-softroce.json
COMMON="--probes rdma --rdma-max-size 1M --budget 0.02 --peer-timeout 20 --samples all --thresholds $TH"

# probe NAME [mpirun words] -- [probe args]: two fake nodes on one VM, both ranks on rxe0
probe2() {
  name=$1; shift
  ts "probe $name: $*"
  s=$(cut -d' ' -f1 /proc/uptime)
  timeout 150 mpirun --oversubscribe --bind-to none -x NETTUNE_FAKE_NODES=2 -x NCCL_IB_HCA=rxe0 "$@" > /tmp/$name.out 2>&1
  rc=$?
  e=$(cut -d' ' -f1 /proc/uptime)
  tail -n 25 /tmp/$name.out | sed 's/^/NT_INFO   /'
  echo "NT_RESULT $name rc=$rc wall=$(echo "$e $s" | awk '{print $1-$2}')"
  [ -f /tmp/$name.json ] && emit $name.json /tmp/$name.json
}

# perftest NAME PROG ARGS: server and client on rxe0 in this VM; retry the TCG clock quirk
perf() {
  name=$1; prog=$2; shift 2
  for attempt in 1 2 3; do
    timeout 60 $prog -d rxe0 -x 1 "$@" > /tmp/$name.srv 2>&1 & sp=$!
    sleep 1
    timeout 60 $prog -d rxe0 -x 1 "$@" 10.0.2.15 > /tmp/$name.cli 2>&1; rc=$?
    wait $sp
    grep -q "Can't produce a report" /tmp/$name.cli /tmp/$name.srv || break
  done
  sed 's/^/NT_INFO   /' /tmp/$name.cli | tail -n 6
  echo "NT_RESULT $name rc=$rc"
  emit $name.txt /tmp/$name.cli
}

if want probe; then
  probe2 probe1 -np 2 nettune-probe $COMMON --output /tmp/probe1.json
fi
if want perftest; then
  perf perf_bw1 ib_write_bw -s 1048576 -n 200 --report_gbits
  perf perf_lat1 ib_write_lat -s 8 -n 2000
  for round in 2 3; do
    probe2 probe$round -np 2 nettune-probe $COMMON --output /tmp/probe$round.json
    perf perf_bw$round ib_write_bw -s 1048576 -n 200 --report_gbits
    perf perf_lat$round ib_write_lat -s 8 -n 2000
  done
fi
if want loopback; then
  ts "loopback on every rxe (rxe0 on eth0, rxe1 on dummy0)"
  s=$(cut -d' ' -f1 /proc/uptime)
  timeout 150 nettune-probe --local --rdma-loopback $COMMON --output /tmp/loop.json > /tmp/loop.out 2>&1
  rc=$?
  tail -n 20 /tmp/loop.out | sed 's/^/NT_INFO   /'
  echo "NT_RESULT loop rc=$rc wall=$(echo "$(cut -d' ' -f1 /proc/uptime) $s" | awk '{print $1-$2}')"
  emit loop.json /tmp/loop.json
fi
if want faults; then
  # a GID index that does not exist (entries 3.. of rxe0 are empty)
  probe2 gid_missing -np 2 nettune-probe $COMMON --gid-index 9 --output /tmp/gid_missing.json
  # different GID indices at the two ends: link-local IPv6 (0) against IPv4-mapped (1)
  # (a wrapper, not an MPMD command line: Open MPI 4.1 does not pass -x to a second app context)
  cat > /tmp/by-rank.sh <<'EOS'
#!/bin/sh
if [ "$OMPI_COMM_WORLD_RANK" = 0 ]; then export NCCL_IB_GID_INDEX=0; else export NCCL_IB_GID_INDEX=1; fi
exec nettune-probe "$@"
EOS
  chmod +x /tmp/by-rank.sh
  probe2 gid_mismatch -np 2 /tmp/by-rank.sh $COMMON --output /tmp/gid_mismatch.json
  # the rxe device's network interface down: port not ACTIVE
  ip link set eth0 down; sleep 1
  cat /sys/class/infiniband/rxe0/ports/1/state | sed 's/^/NT_INFO rxe0 state with eth0 down: /'
  probe2 port_down -np 2 nettune-probe $COMMON --output /tmp/port_down.json
  ip link set eth0 up; sleep 1
fi
if want gpu; then
  # GPU-memory links where the nodes "have GPUs" (an hwloc XML with 4 V100, test hook of the
  # RDMA probe; --topology would switch the RDMA probe off) but no CUDA driver: both ends try,
  # fail to register, agree, and skip the /gpu<i> link; host links unchanged
  probe2 gpu_nocuda -x NETTUNE_TEST_RDMA_GPU_TOPOLOGY=/nt/gpu-topo.xml -np 2 nettune-probe $COMMON --output /tmp/gpu_nocuda.json
fi
if want fabric; then
  # the fabric phases over RDMA: two fake nodes on rxe0 (the default route's eth0 carries it):
  # RC QPs and RDMA WRITE for real (3000K: two 1 MiB writes, then the rest WITH_IMM); then
  # --gid-index 9 (an empty entry): the sockets, with the reason
  probe2 fabric -np 2 nettune-probe --fabric --fabric-budget 8 --fabric-bytes 3000K --peer-timeout 20 --output /tmp/fabric.json
  # fake1's QPs never connected (test hook, as a NIC that stopped answering): every flow
  # fails, each wait ends at its deadline, the report is written
  probe2 fabric_mute -x NETTUNE_TEST_FABRIC_MUTE=1 -np 2 nettune-probe --fabric --fabric-budget 6 --fabric-bytes 1M --peer-timeout 3 --output /tmp/fabric_mute.json
  probe2 fabric_nogid -np 2 nettune-probe --fabric --fabric-budget 4 --fabric-bytes 1M --peer-timeout 20 --gid-index 9 --output /tmp/fabric_nogid.json
fi
ts "guest tests done"
