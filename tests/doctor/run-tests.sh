#!/bin/sh
# nettune doctor tests (make test-doctor): golden cases on every fixture log (check.py), then the
# command-line contract, robustness on bad inputs, streaming memory bound and link dependencies.
# Env: DOCTOR (binary), BUILD (build dir). Prints "ok"/"not ok" lines and a summary; exit 1 on failure.
set -u
cd "$(dirname "$0")/../.."
DOCTOR=${DOCTOR:-build/bin/nettune-doctor}
BUILD=${BUILD:-build}
T=$BUILD/tests/doctor
PY=/usr/bin/python3
mkdir -p "$T"
# The sanitized lane (make SANITIZE=1 test-doctor, build-san/: ASan + UBSan, mk/sanitize.mk) feeds
# the same code the same lines in fewer processes and bytes, where only the count and the size
# cost (a sanitized process costs ~60 ms to start and end, and streams ~5x slower): the generic
# WARN formats go 100 to a process (test_formats.py --batch), the streaming log is 20 MB instead
# of 200 MB with the same lines and shape. The plain lane keeps one process per line and 200 MB
# (the memory and time bounds are the plain build's).
sanitized=0
ldd "$DOCTOR" 2>/dev/null | grep -q libasan && sanitized=1
pass=0; fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "not ok - $1"; }
check() { name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
# expect_exit NAME CODE CMD...: runs CMD, stdout/stderr to $T/NAME.out/.err
expect_exit() {
  name=$1; code=$2; shift 2
  "$@" >"$T/$name.out" 2>"$T/$name.err"; rc=$?
  if [ "$rc" = "$code" ]; then ok "$name (exit $rc)"; else bad "$name: exit $rc, want $code"; cat "$T/$name.err"; fi
}
has() { grep -q -- "$2" "$1"; }

# 1. golden cases
if $PY -c 'import jsonschema' 2>/dev/null; then
  if $PY tests/doctor/check.py "$DOCTOR" tests/doctor/golden.tsv reports/schema/diagnosis.schema.json "$T/golden" >"$T/golden.log" 2>&1; then
    ok "golden: $(tail -n 1 "$T/golden.log")"
  else
    grep -v '^ok' "$T/golden.log"; bad "golden cases"
  fi
else
  bad "python3-jsonschema missing for $PY (apt-get install python3-jsonschema)"
fi

# 1.1 the corpus of real logs (tests/doctor/corpus): the figures reached must not be lost
if $PY tests/doctor/corpus.py "$DOCTOR" "$T/corpus" --causes 73 --expect A=53/61 --expect B=49/51 --expect C=17/18 --expect C-healthy=12/12 --expect D=14/16 --expect D-healthy=6/6 --expect E=7/15 --expect E-healthy=3/5 --expect F=7/10 --expect F-healthy=3/3 --expect G=3/9 --expect G-healthy=2/2 --expect H=4/9 --expect H-healthy=2/3 --expect I=6/7 --expect I-healthy=3/3 --expect J=4/5 --expect J-healthy=0/1 --expect K=2/4 --expect K-healthy=1/1 --expect L=3/6 --expect L-healthy=1/2 --expect healthy=22/22 >"$T/corpus.log" 2>&1; then
  ok "corpus: $(tail -n 1 "$T/corpus.log")"
else
  grep -v '^ok' "$T/corpus.log"; bad "corpus figures"
fi

# keys_check DESC NAME... -- ASSERTS: the doctor on each $T/NAME.log (into $T/NAME.json), then
# the Python ASSERTS, where k('NAME') is the list of that document's finding keys, in order.
keys_check()
{
  local desc=$1
  shift
  while [ "$1" != -- ]; do "$DOCTOR" -q -o "$T/$1.json" "$T/$1.log"; shift; done
  shift
  check "$desc" $PY -c "
import json
k = lambda n: [f['key'] for f in json.load(open('$T/%s.json' % n))['findings']]
$1"
}

# 1.1a nccl-tests' footers: two that follow each other with nothing begun between are processes
# that each ran their own job (built without MPI); two runs one after the other in one file are not
f=tests/fixtures/nccl-tests-logs/allreduce-8xA100-sxm4-single-node-nvswitch-c0.log
cat "$f" "$f" > "$T/two-runs.log"
printf '# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 3.94145\n#\n# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 3.94156\n' > "$T/two-footers.log"
keys_check "footers: together = built without MPI; runs one after another = not" two-runs two-footers -- "
assert k('two-footers') == ['nccl_tests_built_without_mpi'], k('two-footers')
assert 'nccl_tests_built_without_mpi' not in k('two-runs'), k('two-runs')"

# 1.1a' libfabric's missing symbol version is aws-ofi-nccl's only when NCCL's net plugin needs it
# (another library's, here Open MPI's OFI MTL, leaves the plugin loaded and in use)
fabric_ver() { printf '%s: version `FABRIC_1.7'"'"' not found (required by %s)\n' /opt/amazon/efa/lib/libfabric.so.1 "$1"; }
fabric_ver /opt/aws-ofi-nccl/lib/libnccl-net.so > "$T/fabric-plugin.log"
{ fabric_ver /opt/amazon/openmpi/lib/openmpi/mca_mtl_ofi.so
  printf 'h1:1:1 [0] NCCL INFO NET/OFI Using aws-ofi-nccl 1.9.1\nh1:1:1 [0] NCCL INFO Using network AWS Libfabric\n'; } > "$T/fabric-mpi.log"
keys_check "FABRIC_ symbol version: required by libnccl-net = efa_libfabric_too_old; by Open MPI's MTL = not" fabric-plugin fabric-mpi -- "
assert 'efa_libfabric_too_old' in k('fabric-plugin'), k('fabric-plugin')
assert 'efa_libfabric_too_old' not in k('fabric-mpi'), k('fabric-mpi')"

# 1.1a''' CUDA's 'initialization error' is the launcher's only when the lines carry pdsh's "host: "
# labels (a catalogue entry's "launcher"): alone it has other causes
printf "node01:100:100 [0] misc/cudawrap.cc:33 NCCL WARN Cuda failure 'initialization error'\n" > "$T/cuinit-plain.log"
printf "gpu-node1: node01:100:100 [0] misc/cudawrap.cc:33 NCCL WARN Cuda failure 'initialization error'\n" > "$T/cuinit-pdsh.log"
keys_check "Cuda failure 'initialization error': under pdsh labels = launcher_env_not_propagated; without = not" cuinit-plain cuinit-pdsh -- "
assert 'launcher_env_not_propagated' in k('cuinit-pdsh'), k('cuinit-pdsh')
assert 'launcher_env_not_propagated' not in k('cuinit-plain'), k('cuinit-plain')"

# 1.1a'''' /dev/shm full (NCCL's ENOSPC on its segment) is shm_too_small; with an ls -l of leftover nccl-*
# segments beside it, shm_stale_segments above it; libfabric EFA's failed registration of a CUDA
# buffer is efa_p2p_unsupported_driver
printf 'h1:5:5 [0] misc/shmutils.cc:87 NCCL WARN Error: failed to extend /dev/shm/nccl-AbC123 to 33030144 bytes, error: No space left on device (28)\n' > "$T/shm-full.log"
{ cat "$T/shm-full.log"; printf -- '-rw------- 1 root root 33030144 Oct 13 08:01 nccl-x1Y2z3\n'; } > "$T/shm-stale.log"
printf 'libfabric:1:1::efa:core:efa_hmem_info_check_p2p_support_cuda():180<warn> Failed to register CUDA buffer with the EFA device, FI_HMEM transfers that require peer to peer support will fail.\n' > "$T/efa-p2p.log"
keys_check "ENOSPC on /dev/shm: shm_too_small; beside leftover nccl-* segments: shm_stale_segments first; EFA: efa_p2p_unsupported_driver" shm-full shm-stale efa-p2p -- "
assert 'shm_too_small' in k('shm-full') and 'shm_stale_segments' not in k('shm-full'), k('shm-full')
assert k('shm-stale')[0] == 'shm_stale_segments', k('shm-stale')
assert k('efa-p2p')[0] == 'efa_p2p_unsupported_driver', k('efa-p2p')"

# 1.1a'' a job that fails with an error that is not NCCL's (a CUDA error the framework raised,
# torchrun's ChildFailedError) after a clean NCCL init: never a pass; the catch-all job_error
{ printf 'node01:100:100 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\nNCCL version 2.21.5+cuda12.4\n'
  printf 'node01:100:120 [0] NCCL INFO comm 0x5555 rank 0 nranks 1 cudaDev 0 nvmlDev 0 busId 18000 commId 0x1 - Init COMPLETE\n'
  printf 'RuntimeError: CUDA error: an illegal memory access was encountered\n'
  printf 'torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n'; } > "$T/job-crash.log"
expect_exit job-crash 1 "$DOCTOR" -o "$T/job-crash.json" "$T/job-crash.log"
check "a CUDA error and ChildFailedError after a clean init: job_error citing the RuntimeError line" $PY -c "
import json
f = json.load(open('$T/job-crash.json'))['findings']
assert [x['key'] for x in f] == ['job_error'], f
assert f[0]['evidence'][0]['line'] == 4, f[0]['evidence']"

# 1.1b systemctl status of nvidia-fabricmanager: a unit not active is fabric_manager_not_ready on
# the prompt's host; a running one is read and no finding
fm_status() { printf 'root@gpu07:~# systemctl status nvidia-fabricmanager\n\342\227\217 nvidia-fabricmanager.service - NVIDIA fabric manager service\n     Loaded: loaded (/lib/systemd/system/nvidia-fabricmanager.service; enabled)\n     Active: %s since Mon 2024-07-01 14:43:57 UTC; 5s ago\n' "$1"; }
fm_status 'inactive (dead)' > "$T/fm-dead.txt"
fm_status 'active (running)' > "$T/fm-running.txt"
expect_exit fm-dead 1 "$DOCTOR" -o "$T/fm-dead.json" "$T/fm-dead.txt"
expect_exit fm-running 0 "$DOCTOR" "$T/fm-running.txt"
check "systemctl status: inactive on gpu07 = fabric_manager_not_ready; running = read, no finding" sh -c "
$PY -c \"import json; f=json.load(open('$T/fm-dead.json'))['findings']; assert [x['key'] for x in f] == ['fabric_manager_not_ready'] and f[0]['hosts'] == ['gpu07'] and f[0]['evidence'][0]['line'] == 4, f\" &&
grep -q 'systemctl status nvidia-fabricmanager (gpu07): active (running)' '$T/fm-running.out'"

# 1.2 a catalogue entry's extra lines with an NCCL version range of their own ("extends" with
# "nccl_versions"): 2.18's "internal error" is the release's mislabel, another release's is not
for v in 2.18.3 2.21.5; do
  printf 'node1:1:1 [0] NCCL INFO NCCL version %s+cuda12.2\nRuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1275, internal error - please report this issue to the NCCL developers, NCCL version %s\n' "$v" "$v" > "$T/internal-$v.log"
  "$DOCTOR" -q -o "$T/internal-$v.json" "$T/internal-$v.log"
done
check "2.18 internal error: nccl_bug_fixed_by_upgrade; 2.21.5: not" $PY -c "
import json
k = lambda v: [f['key'] for f in json.load(open('$T/internal-%s.json' % v))['findings']]
assert 'nccl_bug_fixed_by_upgrade' in k('2.18.3'), k('2.18.3')
assert 'nccl_bug_fixed_by_upgrade' not in k('2.21.5'), k('2.21.5')"

# 1.2a an entry's own "nccl_versions": p2p.cc:298 is the legacy CUDA IPC import (cudaIpcOpenMemHandle,
# taken with cuMem off) from 2.24.3 to 2.26.6 only; in 2.21.5 that line is no call at all
for v in 2.26.2 2.21.5; do
  printf 'node1:1:1 [0] NCCL INFO NCCL version %s+cuda12.2\nnode1:1:9 [0] transport/p2p.cc:298 NCCL WARN Cuda failure '"'"'invalid argument'"'"'\n' "$v" > "$T/legacy-ipc-$v.log"
  "$DOCTOR" -q -o "$T/legacy-ipc-$v.json" "$T/legacy-ipc-$v.log"
done
check "p2p.cc:298 Cuda failure: cumem_disabled_legacy_ipc under 2.26.2; 2.21.5: not" $PY -c "
import json
k = lambda v: [f['key'] for f in json.load(open('$T/legacy-ipc-%s.json' % v))['findings']]
assert k('2.26.2')[0] == 'cumem_disabled_legacy_ipc', k('2.26.2')
assert 'cumem_disabled_legacy_ipc' not in k('2.21.5'), k('2.21.5')"

# 1.3 PyTorch's flight recorder lines as facts of a watchdog timeout (ProcessGroupNCCL.cpp's own
# lines: the environments line, printTraceback, broadcastDumpSignal, the heartbeat monitor's,
# DebugInfoWriter's): who signalled the dump, who only observed it, and whether a dump exists
fr_log() { # fr_log BUFFER DUMP: a two-rank timeout as PyTorch 2.4 prints it
  cat <<EOF
[rank0]:[I813 12:15:29.000000000 ProcessGroupNCCL.cpp:914] [PG ID 0 PG GUID 0 Rank 0] ProcessGroupNCCL environments: NCCL version: 2.20.5, TORCH_NCCL_ASYNC_ERROR_HANDLING: 1, TORCH_NCCL_DUMP_ON_TIMEOUT: $2, TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC: 60000, TORCH_NCCL_DESYNC_DEBUG: 0, TORCH_NCCL_TRACE_BUFFER_SIZE: $1, TORCH_NCCL_COORD_CHECK_MILSEC: 1000
[rank0]:[E813 12:25:30.947799196 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=57, OpType=ALLGATHER, NumelIn=1, NumelOut=4, Timeout(ms)=600000) ran for 600096 milliseconds before timing out.
EOF
  [ "$1" = 0 ] && echo '[rank0]:[E813 12:25:30.948386260 ProcessGroupNCCL.cpp:670] Stack trace of the failed collective not found, potentially because FlightRecorder is disabled. You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value.'
  cat <<'EOF'
[rank0]:[E813 12:25:30.948459379 ProcessGroupNCCL.cpp:2106] [PG ID 1 PG GUID 1 Rank 0] First PG on this rank to signal dumping.
[rank1]:[E813 12:25:31.062447118 ProcessGroupNCCL.cpp:1794] [PG ID 0 PG GUID 0(default_pg) Rank 1] Observed flight recorder dump signal from another rank via TCPStore.
[rank1]:[E813 12:25:31.062692551 ProcessGroupNCCL.cpp:1858] [PG ID 0 PG GUID 0(default_pg) Rank 1] Received a dump signal due to a collective timeout from  rank 0 and we will try our best to dump the debug info. Last enqueued NCCL work: 56, last completed NCCL work: 56.
EOF
  [ "$2" = 1 ] && echo '[rank0]:[I813 12:25:31.500000000 NCCLUtils.cpp:347] Finished writing NCCLPG debug info to /tmp/nccl_trace_rank_0'
  return 0
}
for c in "0 0" "2000 0" "2000 1"; do
  fr_log $c | "$DOCTOR" -q -o "$T/fr-${c% *}-${c#* }.json" -
done
check "flight recorder: first and observing ranks, the signal's rank, off / not dumped / on" $PY -c "
import json
def f(n):
    d = json.load(open('$T/fr-%s.json' % n))
    t = [x for x in d['findings'] if x['key'] == 'rank_skipped_collective'][0]
    return ' '.join(t['detail']) if isinstance(t['detail'], list) else t['detail'], t['values'], len(t['evidence'])
t, v, n = f('0-0')
assert 'Rank(s) 0 signalled the flight recorder\\'s dump first' in t and 'Rank(s) 1 only observed' in t, t
assert 'came from rank 0' in t and 'was off (TORCH_NCCL_TRACE_BUFFER_SIZE: 0)' in t, t
assert v['fr_buffer'] == 0 and v['fr_first_ranks'] == 1 and v['fr_observed_ranks'] == 1 and n == 5, (v, n)
t, v, n = f('2000-0')
assert 'did not dump (TORCH_NCCL_DUMP_ON_TIMEOUT: 0)' in t and v['fr_buffer'] == 2000, t
t, v, n = f('2000-1')
assert 'was on (TORCH_NCCL_TRACE_BUFFER_SIZE: 2000)' in t and n == 5, (t, n)"

# 1a. claims only from evidence: the golden documents walked, doctor A B against A and B
if $PY tests/doctor/test_claims.py "$DOCTOR" "$T/golden" "$T/claims" >"$T/claims.log" 2>&1; then
  ok "claims: $(tail -n 1 "$T/claims.log")"
else
  grep -v '^ok' "$T/claims.log" | head -40; bad "claims only from evidence"
fi

# 1b. NCCL format coverage: docs/nccl-<version>-formats.tsv (2.28.9, 2.29.7, 2.30.7) against the knowledge base and the doctor
fmt_batch=""; [ $sanitized = 1 ] && fmt_batch="--batch 100"
if $PY tests/doctor/test_formats.py "$DOCTOR" "$T/formats" $fmt_batch >"$T/formats.log" 2>&1; then
  ok "formats: $(tail -n 1 "$T/formats.log")"
else
  grep -v '^ok' "$T/formats.log" | head -40; bad "NCCL format coverage"
fi

# 1c. "not judged" is never silent
expect_exit not-judged 0 "$DOCTOR" tests/fixtures/nccl-tests-logs/allreduce-8node-8xH100-ib-default.log
check "not judged: the first line says so" sh -c "head -n 1 '$T/not-judged.out' | grep -qx 'nettune doctor: NOT JUDGED: busbw (NIC rate unknown: give --expect nic_rate_Gbps=N or --report)'"
expect_exit require-busbw 1 "$DOCTOR" --require busbw tests/fixtures/nccl-tests-logs/allreduce-8node-8xH100-ib-default.log
expect_exit require-busbw-judged 1 "$DOCTOR" --require busbw --expect gpus_per_node=8,nics_per_node=8,nic_rate_Gbps=400 tests/fixtures/nccl-tests-logs/allreduce-8node-8xH100-ib-default.log
check "--require busbw when judged: no NOT JUDGED line" sh -c "! grep -q 'NOT JUDGED' '$T/require-busbw-judged.out'"
expect_exit require-busbw-short-sweep 1 "$DOCTOR" --require busbw --expect nic_rate_Gbps=400,nics_per_node=8 tests/fixtures/tester-found/allreduce-sweep-ends-at-4M.log
check "--require busbw on a sweep ending at 4 MiB: NOT JUDGED names the size" sh -c "head -n 1 '$T/require-busbw-short-sweep.out' | grep -q 'NOT JUDGED: busbw (the sweep ends at 4 MiB'"
expect_exit require-bad 2 "$DOCTOR" --require speed tests/fixtures/nccl-tests-logs/allreduce-8node-8xH100-ib-default.log
expect_exit not-judged-json 0 "$DOCTOR" --format json tests/fixtures/nccl-tests-logs/allreduce-8node-8xH100-ib-default.log
check "not judged: summary.not_judged" $PY -c "import json; d=json.load(open('$T/not-judged-json.out')); assert d['summary']['not_judged'] == ['busbw (NIC rate unknown: give --expect nic_rate_Gbps=N or --report)'], d['summary']"

# 1d. nettune report renders a diagnosis (also from stdin); --validate knows the knowledge base
REPORT=$BUILD/bin/nettune-report
if [ -x "$REPORT" ]; then
  "$DOCTOR" -q -o "$T/diag.json" tests/fixtures/nccl-debug-logs/gdr-missing-on-one-node.log
  expect_exit report-diagnosis 1 "$REPORT" "$T/diag.json"
  check "nettune report renders the diagnosis" has "$T/report-diagnosis.out" "gdr_asymmetric: GPUDirect RDMA is used on some"
  check "nettune report: the evidence line" has "$T/report-diagnosis.out" "gdr-missing-on-one-node.log:4:"
  expect_exit report-diagnosis-stdin 1 sh -c "cat '$T/diag.json' | '$REPORT' -"
  check "nettune report - reads stdin" cmp -s "$T/report-diagnosis.out" "$T/report-diagnosis-stdin.out"
  expect_exit report-diagnosis-md 1 "$REPORT" --format md "$T/diag.json"
  check "nettune report --format md" has "$T/report-diagnosis-md.out" "## \[warn\] gdr_asymmetric"
  "$DOCTOR" -q -o "$T/diag-nj.json" tests/fixtures/nccl-tests-logs/allreduce-8node-8xH100-ib-default.log
  expect_exit report-not-judged 0 "$REPORT" "$T/diag-nj.json"
  check "nettune report: NOT JUDGED first" sh -c "head -n 1 '$T/report-not-judged.out' | grep -q '^nettune doctor: NOT JUDGED: busbw'"
  expect_exit report-validate-kb 0 "$REPORT" --validate reports/doctor/knowledge.json "$T/diag.json"
  $PY -c "import json; d=json.load(open('reports/doctor/knowledge.json')); d['messages'][0]['finding']='nope'; json.dump(d, open('$T/bad-kb.json','w'))"
  expect_exit report-validate-bad-kb 1 "$REPORT" --validate "$T/bad-kb.json"
  check "--validate names the knowledge base's problem" has "$T/report-validate-bad-kb.out" "unknown finding 'nope'"
  $PY -c "import json; d=json.load(open('reports/doctor/knowledge.json')); d['findings']['socket_fallback']['code']='NT-NET-999'; json.dump(d, open('$T/bad-code-kb.json','w'))"
  expect_exit kb-bad-code 2 "$DOCTOR" --kb "$T/bad-code-kb.json" tests/fixtures/nccl-debug-logs/gdr-missing-on-one-node.log
  check "--kb: a finding's code must be a row of the check table" has "$T/kb-bad-code.err" "code 'NT-NET-999' is not a row of the check table"
  check "every golden finding carries its check-table code and category" $PY -c "
import glob, json, re
n = 0
for p in glob.glob('$T/golden/*.json'):
    for f in json.load(open(p)).get('findings', []):
        assert re.match(r'^NT-[A-Z]+-1[0-9][0-9]$', f['code']) and f['category'] in ('drain', 'reset', 'config', 'monitor', 'info'), (p, f['key'])
        n += 1
assert n > 50, n
"
  expect_exit report-validate-thresholds 1 "$REPORT" --validate tests/fixtures/thresholds/good.json tests/fixtures/thresholds/bad-regex.json
  check "--validate checks a thresholds file" has "$T/report-validate-thresholds.out" "bad regex"
else
  bad "nettune-report not built ($REPORT)"
fi

# 2. command line
expect_exit help 0 "$DOCTOR" --help
check "help names every option" sh -c "for o in --output --format --quiet --expect --report --kb --print-kb --color --version; do grep -q -- \"\$o\" '$T/help.out' || exit 1; done"
expect_exit no-input 2 "$DOCTOR"
expect_exit bad-option 2 "$DOCTOR" --frobnicate x.log
expect_exit bad-format 2 "$DOCTOR" --format xml tests/fixtures/nccl-debug-logs/shm-posix-fallocate-ci-container.log
expect_exit bad-expect-key 2 "$DOCTOR" --expect gpus_per_nod=8 tests/fixtures/nccl-debug-logs/shm-posix-fallocate-ci-container.log
expect_exit bad-expect-value 2 "$DOCTOR" --expect nic_rate_Gbps=fast tests/fixtures/nccl-debug-logs/shm-posix-fallocate-ci-container.log
# one --expect grammar (lib/core/thresholds.c nt_expect_parse): probe spellings, _per_node aliases, any case
expect_exit expect-probe-keys 1 "$DOCTOR" --format json --expect GPUS=8,nics_per_node=8,NIC_RATE_GBPS=400 tests/fixtures/nccl-tests-logs/allreduce-8node-8xH100-ib-default.log
# a key only the probe judges (pcie, nvlinks) is refused, not silently ignored
expect_exit expect-probe-only-key 2 "$DOCTOR" --expect gpus=8,pcie=gen5x16 tests/fixtures/nccl-tests-logs/allreduce-8node-8xH100-ib-default.log
check "--expect: a probe-only key is named" has "$T/expect-probe-only-key.err" "'pcie' is a key of nettune probe"
check "--help says pcie and nvlinks are refused" sh -c "grep -q 'pcie and' '$T/help.out' && grep -q 'nvlinks are refused' '$T/help.out'"
check "--expect probe keys: the same verdict as the doctor's spellings" $PY -c "
import json; d=json.load(open('$T/expect-probe-keys.out')); b=d['benchmarks'][0]
assert b['expected_busbw_GBps'] == 400 and b['verdict'] == 'warn', b"
expect_exit expect-bad-collective 2 "$DOCTOR" --expect collective=allreduce tests/fixtures/nccl-tests-logs/allreduce-8node-8xH100-ib-default.log
check "--expect: unknown collective named" has "$T/expect-bad-collective.err" "unknown collective 'allreduce'"
expect_exit version 0 "$DOCTOR" --version
expect_exit quiet 1 "$DOCTOR" --quiet tests/fixtures/nccl-debug-logs/shm-posix-fallocate-ci-container.log
# the check table's category is the action class, not the severity: an error with nothing to do
# on the node says "category info", never a bare "(info)" under [ERROR]
expect_exit cut-short-category 1 "$DOCTOR" --color never tests/fixtures/tester-found/allreduce-sweep-cut-mid-row.log
check "[ERROR] run_cut_short: code NT-RUN-102 (category info)" sh -c "grep -q '^\[ERROR\] run_cut_short' '$T/cut-short-category.out' && grep -qx '  code: NT-RUN-102 (category info)' '$T/cut-short-category.out'"
check "quiet prints nothing" test ! -s "$T/quiet.out"
expect_exit format-json 1 "$DOCTOR" --format json tests/fixtures/nccl-debug-logs/shm-posix-fallocate-ci-container.log
check "--format json is the diagnosis document" $PY -c "import json,sys; d=json.load(open('$T/format-json.out')); sys.exit(d['schema']!='nettune.diagnosis/1')"
expect_exit output-stdout 1 "$DOCTOR" --output - tests/fixtures/nccl-debug-logs/shm-posix-fallocate-ci-container.log
check "--output - writes only JSON to stdout" $PY -c "import json; json.load(open('$T/output-stdout.out'))"
expect_exit stdin 1 sh -c "cat tests/fixtures/nccl-debug-logs/socket-fallback-libibverbs-missing.log | '$DOCTOR' -"
check "stdin input is analysed" has "$T/stdin.out" socket_fallback
expect_exit print-kb 0 "$DOCTOR" --print-kb
check "--print-kb is the embedded knowledge base" cmp -s "$T/print-kb.out" reports/doctor/knowledge.json
expect_exit kb-file 1 "$DOCTOR" --kb reports/doctor/knowledge.json tests/fixtures/nccl-debug-logs/shm-posix-fallocate-ci-container.log
expect_exit kb-missing 2 "$DOCTOR" --kb /nonexistent/kb.json tests/fixtures/nccl-debug-logs/shm-posix-fallocate-ci-container.log
check "missing kb names the file" has "$T/kb-missing.err" "/nonexistent/kb.json"
: > "$T/empty-kb.json"
expect_exit kb-empty 2 "$DOCTOR" --kb "$T/empty-kb.json" tests/fixtures/nccl-debug-logs/shm-posix-fallocate-ci-container.log
check "empty kb: one line naming --kb, the file and the fix" sh -c "test \$(wc -l < '$T/kb-empty.err') = 1 && grep -q \"^nettune-doctor: --kb '$T/empty-kb.json': empty (0 bytes), not JSON: give a knowledge base file\" '$T/kb-empty.err'"
$PY -c "import json; d=json.load(open('reports/doctor/knowledge.json')); del d['findings']['shm_too_small']; json.dump(d, open('$T/kb-incomplete.json','w'))"
expect_exit kb-incomplete 2 "$DOCTOR" --kb "$T/kb-incomplete.json" tests/fixtures/nccl-debug-logs/shm-posix-fallocate-ci-container.log
check "incomplete kb names the missing finding" has "$T/kb-incomplete.err" shm_too_small
# the knowledge base is data: a changed text shows up without rebuilding
sed 's/"title": "\/dev\/shm is too small/"title": "SHM-TEST-TITLE \/dev\/shm is too small/' reports/doctor/knowledge.json > "$T/kb-edited.json"
expect_exit kb-edited 1 "$DOCTOR" --kb "$T/kb-edited.json" tests/fixtures/nccl-debug-logs/shm-posix-fallocate-ci-container.log
check "--kb text is used" has "$T/kb-edited.out" SHM-TEST-TITLE
expect_exit report-missing 2 "$DOCTOR" --report /nonexistent.json tests/fixtures/nccl-debug-logs/shm-posix-fallocate-ci-container.log
expect_exit report-not-report 2 "$DOCTOR" --report reports/schema/diagnosis.schema.json tests/fixtures/nccl-debug-logs/shm-posix-fallocate-ci-container.log
check "a non-report names the file" has "$T/report-not-report.err" "diagnosis.schema.json"
check "--report missing: one line naming the file and the fix" sh -c "test \$(wc -l < '$T/report-missing.err') = 1 && grep -q \"^nettune-doctor: --report '/nonexistent.json': cannot open: No such file or directory; give the nettune.report/1 JSON that nettune probe --output wrote\" '$T/report-missing.err'"
expect_exit report-dir 2 "$DOCTOR" --report "$T" tests/fixtures/nccl-debug-logs/shm-posix-fallocate-ci-container.log
check "--report DIR: one line, a directory" sh -c "test \$(wc -l < '$T/report-dir.err') = 1 && grep -q \"cannot read: Is a directory; give\" '$T/report-dir.err'"
check "--report not a report: one line" sh -c "test \$(wc -l < '$T/report-not-report.err') = 1"
# a nettune document of another kind: the line says what the file is and what it is not, then
# the fix (the reader takes reports and tuning files, the doctor wants a report)
printf '{"schema": "nettune.watch/1"}\n' > "$T/watch-doc.json"
printf '{"schema": "nettune.diagnosis/1"}\n' > "$T/diag-doc.json"
expect_exit report-other-schema 2 "$DOCTOR" --report "$T/watch-doc.json" tests/fixtures/nccl-debug-logs/shm-posix-fallocate-ci-container.log
expect_exit report-diagnosis 2 "$DOCTOR" --report "$T/diag-doc.json" tests/fixtures/nccl-debug-logs/shm-posix-fallocate-ci-container.log
check "--report of another schema: one line naming it, what it is not, and the fix" sh -c "grep -qx \"nettune-doctor: --report '$T/watch-doc.json' has the schema 'nettune.watch/1': not a nettune report (nettune.report/1) or tuning file (nettune.tuning/1); give the nettune.report/1 JSON that nettune probe --output wrote\" '$T/report-other-schema.err' && grep -qx \"nettune-doctor: --report '$T/diag-doc.json' is a nettune doctor diagnosis (nettune report FILE renders it), not a nettune report (nettune.report/1) or tuning file (nettune.tuning/1); give the nettune.report/1 JSON that nettune probe --output wrote\" '$T/report-diagnosis.err' && test \$(cat '$T/report-other-schema.err' '$T/report-diagnosis.err' | wc -l) = 2"
expect_exit healthy 0 "$DOCTOR" tests/doctor/data/tuner-all-srun.log
check "no operator files: no 'operator files:' heading" sh -c "! grep -q 'operator files:' '$T/healthy.out'"
expect_exit output-file 1 "$DOCTOR" -q -o "$T/out.json" tests/fixtures/nccl-debug-logs/shm-posix-fallocate-ci-container.log
check "--output FILE written, no temporary left" sh -c "test -s '$T/out.json' && ! ls '$T'/out.json.tmp* >/dev/null 2>&1"
expect_exit output-unwritable 2 "$DOCTOR" -q -o /nonexistent/dir/out.json tests/fixtures/nccl-debug-logs/shm-posix-fallocate-ci-container.log
check "--output in a missing folder: one line naming it and the fix, tagged nettune-doctor" sh -c "test \$(wc -l < '$T/output-unwritable.err') = 1 && grep -q \"^nettune-doctor: cannot write --output '/nonexistent/dir/out.json': the folder '/nonexistent/dir' does not exist: create it, or give a path in one that exists\$\" '$T/output-unwritable.err'"
# --output naming an input (itself, by a link, as ./, as stdin, as --report): refused before
# anything is read, one line, exit 2, the input untouched
cp tests/fixtures/nccl-debug-logs/ib-completion-error12-roce-gid.log "$T/self.log"
ln -sf self.log "$T/self-link.log"
cp tests/fixtures/reports/fake-full-4n-healthy-a.json "$T/self-report.json"
expect_exit output-is-input 2 "$DOCTOR" -q -o "$T/self.log" "$T/self.log"
expect_exit output-is-input-link 2 "$DOCTOR" -q -o "$T/self-link.log" "$T/self.log"
expect_exit output-is-input-dot 2 "$DOCTOR" -q -o "$T/./self.log" "$T/self.log"
expect_exit output-is-stdin 2 sh -c "'$DOCTOR' -q -o '$T/self.log' - < '$T/self.log'"
expect_exit output-is-report 2 "$DOCTOR" -q -o "$T/self-report.json" --report "$T/self-report.json" "$T/self.log"
check "--output is an input: the inputs untouched" sh -c "cmp -s '$T/self.log' tests/fixtures/nccl-debug-logs/ib-completion-error12-roce-gid.log && cmp -s '$T/self-report.json' tests/fixtures/reports/fake-full-4n-healthy-a.json"
check "--output is an input: one line naming it" sh -c "for n in output-is-input output-is-input-link output-is-input-dot output-is-stdin output-is-report; do test \$(wc -l < '$T/'\$n.err) = 1 && grep -q \"^nettune-doctor: --output '.*' is also an input.*: give another path\$\" '$T/'\$n.err || exit 1; done"
check "--output is an input: it names the input it is" grep -q "is also an input (as '$T/self.log')" "$T/output-is-input-link.err"

# 3. robustness: each bad input gets a one-line message naming it and exit 2
head -c 4096 /dev/urandom > "$T/random.bin"; printf '\0' >> "$T/random.bin"
expect_exit binary 2 "$DOCTOR" "$T/random.bin"
check "binary: one line naming the file" sh -c "test \$(wc -l < '$T/binary.err') = 1 && grep -q 'random.bin.*binary' '$T/binary.err'"
expect_exit elf 2 "$DOCTOR" "$DOCTOR"
: > "$T/empty.log"
expect_exit empty 2 "$DOCTOR" "$T/empty.log"
check "empty: named" has "$T/empty.err" "empty.log' is empty"
expect_exit not-nccl 2 "$DOCTOR" tests/doctor/data/syslog-not-nccl.log
check "not-nccl: named" has "$T/not-nccl.err" "no NCCL, nccl-tests or operator-file lines found in 'tests/doctor/data/syslog-not-nccl.log'"
expect_exit unreadable 2 "$DOCTOR" /nonexistent/nccl.log
expect_exit directory 2 "$DOCTOR" tests/fixtures
check "directory: one line saying so (not a gzip error)" sh -c "test \$(wc -l < '$T/directory.err') = 1 && grep -q \"'tests/fixtures' is a directory: give the files in it (e.g. tests/fixtures/\\*.log)\\$\" '$T/directory.err'"
# NUL padding (a log cut by a node crash or copied from a filesystem that lost its tail) is not binary
{ cat tests/fixtures/nccl-debug-logs/shm-posix-fallocate-ci-container.log; head -c 4096 /dev/zero; } > "$T/nul-tail.log"
expect_exit nul-tail 1 "$DOCTOR" -o "$T/nul-tail.json" "$T/nul-tail.log"
check "nul-tail: diagnosed, note '4096 NUL bytes skipped'" sh -c "grep -q shm_too_small '$T/nul-tail.out' && grep -q 'note: .*4096 NUL bytes skipped' '$T/nul-tail.out'"
check "nul-tail: nul_bytes in the document" $PY -c "import json,sys; d=json.load(open('$T/nul-tail.json')); sys.exit(d['inputs'][0]['nul_bytes'] != 4096 or d['inputs'][0]['status'] != 'ok')"
# NULs first (more than one read block), then NUL runs in place of the first 4 line breaks:
# lines 1-5 become line 1 (as grep -n counts), line 6 line 2
{ head -c 70000 /dev/zero; head -n 4 tests/fixtures/nccl-debug-logs/shm-posix-fallocate-ci-container.log | tr '\n' '\0'; tail -n +5 tests/fixtures/nccl-debug-logs/shm-posix-fallocate-ci-container.log; } > "$T/nul-inside.log"
expect_exit nul-inside 1 "$DOCTOR" "$T/nul-inside.log"
check "nul-inside: evidence after NUL runs, numbered like grep -n" sh -c "grep -q 'nul-inside.log:1: node01.*posix_fallocate' '$T/nul-inside.out' && grep -q 'nul-inside.log:2: node01.*posix_fallocate' '$T/nul-inside.out'"
head -c 8192 /dev/zero > "$T/only-nul.log"
expect_exit only-nul 2 "$DOCTOR" "$T/only-nul.log"
check "only-nul: named as empty" has "$T/only-nul.err" "only-nul.log' is empty (nothing but NUL bytes)"
gzip -c tests/fixtures/nccl-debug-logs/shm-posix-fallocate-ci-container.log > "$T/gzipped.log"
# gzip inputs are read through zlib, whatever their name; the findings are those of the plain file
expect_exit gzipped 1 "$DOCTOR" --format json "$T/gzipped.log"
check "gzipped: same findings as the plain file, input marked gzip" $PY -c "
import json; d=json.load(open('$T/gzipped.out')); k=[f['key'] for f in d['findings']]
assert k == ['shm_too_small'], k; assert d['inputs'][0].get('gzip') is True; assert d['findings'][0]['evidence'][0]['line'] == 3"
gzip -c tests/fixtures/ibv-devinfo/ibv_devinfo-2hca-cx3-mlx4-two-ports-down.txt > "$T/ibv.txt.gz"
expect_exit gzipped-operator 1 "$DOCTOR" "$T/ibv.txt.gz"
check "gzipped operator file: port_down" has "$T/gzipped-operator.out" "port_down"
head -c 300 "$T/gzipped.log" > "$T/cut.log.gz"
expect_exit gzip-cut 2 "$DOCTOR" "$T/cut.log.gz"
check "cut gzip: one line naming the file" sh -c "test \$(wc -l < '$T/gzip-cut.err') = 1 && grep -q 'cut.log.gz.*cut short' '$T/gzip-cut.err'"
check "cut gzip: says how far it was read" has "$T/gzip-cut.err" "after line 2"
gzip -c "$T/random.bin" > "$T/random.bin.gz"
expect_exit gzip-binary 2 "$DOCTOR" "$T/random.bin.gz"
check "gzip of a binary file: binary" has "$T/gzip-binary.err" "random.bin.gz' is a binary file"
printf '<system version="1">\n  <cpu numaid="0">\n    <pci busid="0000:01:00.0" class="0x030200"\n' > "$T/bad.xml"
expect_exit bad-xml 2 "$DOCTOR" "$T/bad.xml"
check "bad XML: one line naming the file and the line" sh -c "test \$(wc -l < '$T/bad-xml.err') = 1 && grep -q 'bad.xml.* line' '$T/bad-xml.err'"
printf '<html><body>not a topology</body></html>\n' > "$T/other.xml"
expect_exit other-xml 2 "$DOCTOR" "$T/other.xml"
check "other XML: says what it is not" has "$T/other-xml.err" "neither an NCCL topology"
expect_exit host-without-file 2 "$DOCTOR" --host node01
expect_exit host-twice 2 "$DOCTOR" --host node7 --host node8 tests/fixtures/nccl-tests-logs/allreduce-8xA100-sxm4-single-node-nvswitch-c0.log
check "--host twice before one FILE: one line naming the first" sh -c "test \$(wc -l < '$T/host-twice.err') = 1 && grep -q -- '--host node7 is followed by --host node8' '$T/host-twice.err'"
expect_exit print-kb-extra 2 "$DOCTOR" --print-kb extra
check "--print-kb with a FILE: one line naming it, nothing on stdout" sh -c "test \$(wc -l < '$T/print-kb-extra.err') = 1 && grep -q \"takes no FILE ('extra' given)\" '$T/print-kb-extra.err' && test ! -s '$T/print-kb-extra.out'"
check "--host without a FILE after it" has "$T/host-without-file.err" "names the host of the FILE after it"
if command -v iconv >/dev/null 2>&1; then
  iconv -f UTF-8 -t UTF-16 tests/fixtures/nccl-debug-logs/shm-posix-fallocate-ci-container.log > "$T/utf16.log"
  expect_exit utf16 2 "$DOCTOR" "$T/utf16.log"
  check "utf16: says convert it" has "$T/utf16.err" "UTF-16 text: convert it to UTF-8"
fi
# a bad input among good ones: the good ones are still diagnosed, the exit is 2
expect_exit mixed 2 "$DOCTOR" tests/fixtures/nccl-debug-logs/shm-posix-fallocate-ci-container.log "$T/random.bin"
check "mixed: findings of the good input shown" has "$T/mixed.out" shm_too_small
check "mixed: skipped input listed" has "$T/mixed.out" "skipped:"
check "mixed text: the reason on stderr once, stdout's skipped: line names the file only" sh -c "test \$(grep -c 'random.bin.*binary' '$T/mixed.err') = 1 && test \$(cat '$T/mixed.out' '$T/mixed.err' | grep -c 'random.bin.*binary') = 1 && grep -q 'skipped: .*random.bin (why: on stderr)' '$T/mixed.out'"
expect_exit mixed-json 2 "$DOCTOR" --format json tests/fixtures/nccl-debug-logs/shm-posix-fallocate-ci-container.log "$T/random.bin"
check "mixed --format json: the skipped input on stderr once" sh -c "test \$(grep -c 'random.bin.*binary' '$T/mixed-json.err') = 1"
mkdir -p "$T/adir"
expect_exit directory-slash 2 "$DOCTOR" "$T/adir/"
check "directory given with a slash: no double slash" has "$T/directory-slash.err" "(e.g. $T/adir/\\*.log)"
# a line with no newline at the end of the file, and lines of any length
expect_exit no-final-newline 1 sh -c "printf 'node01:1:1 [0] NCCL INFO Using network Socket' | '$DOCTOR' -"
check "no-final-newline: last line read" has "$T/no-final-newline.out" socket_fallback
expect_exit one-huge-line 1 sh -c "{ yes a | tr -d '\\n' | head -c 20000000; echo; echo 'node01:1:1 [0] NCCL INFO Using network Socket'; } | '$DOCTOR' -"
check "one-huge-line: cut, and the next line still read" sh -c "grep -q 'over-long' '$T/one-huge-line.out' && grep -q socket_fallback '$T/one-huge-line.out'"
# CRLF line ends (logs copied from Windows)
sed 's/$/\r/' tests/fixtures/nccl-debug-logs/ib-modify-qp-no-such-device-wrong-hca.log > "$T/crlf.log"
expect_exit crlf 1 "$DOCTOR" "$T/crlf.log"
check "crlf: HCA name without CR in the fix" has "$T/crlf.out" "NCCL_IB_HCA=^mlx5_3 "

# 4. streaming: a 200 MB synthetic log (64 ranks, interleaved, srun prefixes) in bounded memory
# (20 MB in the sanitized lane, its completion errors 10 times as often: the same count of them)
big_mb=200; big_every=100000
[ $sanitized = 1 ] && big_mb=20 big_every=10000
gen_big() {
  awk -v total=$((big_mb * 1000000)) -v every=$big_every 'BEGIN {
    for (r = 0; r < 64; r++) printf "%d: node%02d:%d:%d [%d] NCCL INFO comm 0x%x rank %d nRanks 64 nNodes 8 localRanks 8 localRank %d MNNVL 0\n", r, int(r/8)+1, 1000+r, 2000+r, r%8, r, r, r%8;
    line = 0;
    while (bytes < total) {
      r = line % 64;
      s = sprintf("%d: node%02d:%d:%d [%d] NCCL INFO Channel %02d/0 : %d[%d] -> %d[%d] [send] via NET/IB/%d/GDRDMA", r, int(r/8)+1, 1000+r, 2000+r, r%8, line%32, r, r%8, (r+8)%64, r%8, r%8);
      print s; bytes += length(s) + 1; line++;
      if (line % every == 0) { w = sprintf("%d: node03:1017:2017 [1] transport/net_ib.cc:1296 NCCL WARN NET/IB : Got completion from peer 10.0.0.5<33092> with error 12, opcode 0, len 0, vendor err 129 (Recv)", r); print w; bytes += length(w) + 1 }
    }
  }'
}
start=$(date +%s)
if [ -x /usr/bin/time ]; then
  gen_big | /usr/bin/time -v "$DOCTOR" -q -o "$T/big.json" - 2>"$T/big.time"; rc=$?
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$T/big.time")
else
  gen_big | "$DOCTOR" -q -o "$T/big.json" -; rc=$?; rss=0
fi
secs=$(( $(date +%s) - start ))
check "big: $big_mb MB streamed, exit 1 (error 12 found) [$secs s]" test "$rc" = 1
check "big: max RSS ${rss} KiB < 32 MiB" test "${rss:-0}" -lt 32768
check "big: under 60 s ($secs s)" test "$secs" -lt 60
check "big: completion errors counted" $PY -c "
import json,sys; d=json.load(open('$T/big.json')); f=[x for x in d['findings'] if x['key']=='ib_retry_exceeded']
sys.exit(not f or f[0]['evidence_total'] < 10 or d['inputs'][0]['bytes'] < $big_mb * 1000000 or d['job']['nranks'] != 64)"

# 5. links only libc and cJSON (no MPI, CUDA, ibverbs, hwloc)
if command -v ldd >/dev/null 2>&1; then
  ldd "$DOCTOR" > "$T/ldd.out" 2>&1
  check "ldd: no MPI/CUDA/ibverbs/hwloc/NCCL" sh -c "! grep -Eiq 'libmpi|libcuda|libcudart|libibverbs|librdmacm|libhwloc|libnccl|libnvidia' '$T/ldd.out'"
  # libxml2 (NCCL topology XML, lib/nccl/ncclxml.c) brings its own: ICU, liblzma, libstdc++, libgcc_s.
  # A SANITIZE=1 build (build-san/) also needs the sanitizer runtimes, and links libpciaccess into
  # every binary so that leak checks see hwloc's PCI plugin's table freed (mk/sanitize.mk).
  san=""; grep -q libasan "$T/ldd.out" && san='|libasan|libubsan|libpciaccess'
  check "ldd: only libc, libm, cJSON, libxml2 (and its own libraries), zlib and the loader" sh -c "! grep -Ev 'linux-vdso|ld-linux|libc\\.so|libm\\.so|libcjson|libxml2|libz\\.so|libicu|liblzma|libstdc\\+\\+|libgcc_s$san' '$T/ldd.out' | grep -q ."
else
  bad "ldd not found"
fi

echo "doctor script tests: $pass passed, $fail failed"
[ "$fail" = 0 ]
