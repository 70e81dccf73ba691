#!/bin/sh
# make bench-doctor: the doctor's throughput on a generated NCCL_DEBUG=INFO log of a 512-rank job
# (64 hosts x 8 GPUs; per rank its banner, the bootstrap and network lines, ring and tree
# connections over IB with GDR, Init COMPLETE, then an nccl-tests all_reduce sweep; the whole
# repeated until the file is about 200 MB), beside a reference measured in the same run on the
# same file: `wc -l`. Prints MB/s of CPU time of each (fastest of 5) and their ratio (doctor / wc -l); the
# ratio is what is compared across changes, since both share the machine's load. Env: BUILD.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
DOCTOR=${DOCTOR:-$BUILD/bin/nettune-doctor}
T=$BUILD/bench/doctor
mkdir -p "$T"
LOG=$T/job-512.log
if [ ! -s "$LOG" ]; then
  awk 'BEGIN {
    for (rep = 0; rep < 40; rep++) {
      for (r = 0; r < 512; r++) {
        h = sprintf("gpu-node%03d", int(r / 8)); d = r % 8; p = 40000 + r; id = h ":" p ":" (p + 7) " [" d "] NCCL INFO"
        print id " NCCL version 2.28.9+cuda13.0"
        print id " Bootstrap: Using ib0:10.0." int(r / 8) ".1<0>"
        print id " NET/Plugin: Could not find: libnccl-net.so. Using internal net plugin."
        print id " NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [4]mlx5_4:1/IB [5]mlx5_5:1/IB [6]mlx5_6:1/IB [7]mlx5_7:1/IB [RO]; OOB ib0:10.0." int(r / 8) ".1<0>"
        print id " Using network IB"
        print id " ncclCommInitRank comm 0x5601c0d0 rank " r " nranks 512 cudaDev " d " nvmlDev " d " busId " (d + 1) "8000 commId 0x7b2c3f1e9a - Init START"
        print id " NCCL_IB_HCA set to mlx5"
        print id " comm 0x5601c0d0 rank " r " nRanks 512 nNodes 64 localRanks 8 localRank " d " MNNVL 0"
        for (c = 0; c < 16; c++) {
          print id " Channel " sprintf("%02d", c) "/0 : " r "[" d "] -> " ((r + 1) % 512) "[" ((d + 1) % 8) "] [send] via NET/IB/" d "/GDRDMA"
          print id " Channel " sprintf("%02d", c) "/0 : " ((r + 511) % 512) "[" ((d + 7) % 8) "] -> " r "[" d "] [receive] via NET/IB/" d "/GDRDMA"
        }
        print id " Connected all rings, use ring PXN 0 GDR 1"
        print id " ncclCommInitRank comm 0x5601c0d0 rank " r " nranks 512 cudaDev " d " nvmlDev " d " busId " (d + 1) "8000 commId 0x7b2c3f1e9a localSize 280 used 1084 bytes - Init COMPLETE"
      }
      print "#                                                              out-of-place                       in-place"
      print "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"
      print "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)"
      for (s = 8; s <= 8589934592; s *= 2)
        printf "%12d  %12d     float     sum      -1  %8.1f  %6.2f  %6.2f      0  %8.1f  %6.2f  %6.2f      0\n", s, s / 4, 20 + s / 4.5e4, s / (20 + s / 4.5e4) / 1e3, s / (20 + s / 4.5e4) / 1e3 * 1.996, 20 + s / 4.5e4, s / (20 + s / 4.5e4) / 1e3, s / (20 + s / 4.5e4) / 1e3 * 1.996
      print "# Out of bounds values : 0 OK"
      print "# Avg bus bandwidth    : 120.5"
    }
  }' > "$LOG.tmp" && mv "$LOG.tmp" "$LOG"
fi
bytes=$(wc -c < "$LOG")
fastest() { sort -n | head -n 1; }
# the CPU seconds (user + system) of one run: on a shared machine the wall time mostly measures
# the other jobs, the CPU time what the program did (bash's `times` of the child)
run() {
  bash -c '"$@" >/dev/null 2>&1; times' _ "$@" | awk 'NR == 2 {
    split($1, u, /[ms]/); split($2, s, /[ms]/); print u[1] * 60 + u[2] + s[1] * 60 + s[2] }'
}
doc=$(for i in 1 2 3 4 5; do run "$DOCTOR" -q "$LOG"; done | fastest)
wcl=$(for i in 1 2 3 4 5; do run wc -l "$LOG"; done | fastest)
awk -v b="$bytes" -v d="$doc" -v w="$wcl" 'BEGIN {
  printf "bench-doctor: %.0f MB log of a 512-rank job: doctor %.1f MB/s (%.3f CPU s, fastest of 5); wc -l %.1f MB/s (%.3f CPU s); ratio %.4f\n", b / 1e6, b / 1e6 / d, d, b / 1e6 / w, w, w / d }'
