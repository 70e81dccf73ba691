#!/bin/sh
# nccl-follow.py on a synthetic NVIDIA/nccl git repository with two tags, made here in a temp
# dir (CI has no NCCL git directory): v2.29.7-1, a tag the model has, and v2.31.0-1, one it does
# not. Between them: a constant of tuning.cc (written the 2.30 way, positionally under a comment),
# a formula, a tuner and a profiler ABI version, a new loader order, a WARN the knowledge base
# knows removed, a WARN and an unclassified INFO added. The report must name each, and the
# differential check at v2.31.0-1 must fail (the model has no such row). Run from the repository
# root after `make` (make test-tuner-model does).
set -u
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
bad=0
check() { # WHAT GREP-PATTERN: the report holds a line matching the fixed string
    n=$((n + 1))
    if grep -qF -- "$2" "$tmp/out"; then echo "ok $n - nccl-follow: $1"; else
        bad=$((bad + 1)); echo "not ok $n - nccl-follow: $1 (no line '$2')"; fi
}
g="$tmp/nccl.git"
w="$tmp/work"
git init -q --bare "$g" && git init -q "$w" || exit 1
put() { mkdir -p "$w/$(dirname "$1")" && cat > "$w/$1"; }
commit_tag() {
    git -C "$w" add -A && git -C "$w" -c user.name=t -c user.email=t@t commit -qm "$1" &&
        git -C "$w" tag "$1" && git -C "$w" push -q "$g" HEAD:refs/heads/master "$1" || exit 1
}
put src/graph/tuning.cc <<'EOF'
static const double perChMaxNVLSTreeBws[4][3] = {
  {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 43.8}};
ncclResult_t ncclTopoTuneModel(struct ncclComm* comm, int minCompCap, int maxCompCap) {
  pEnable &= (minCompCap == maxCompCap);
  return ncclSuccess;
}
EOF
put src/include/plugin/tuner/tuner_v5.h < /dev/null
put src/include/plugin/profiler/profiler_v1.h < /dev/null
put src/plugin/tuner.cc <<'EOF'
  tunerSymbol = getNcclTuner_v5(tunerPluginLib);
EOF
put src/misc/nvml.cc <<'EOF'
void f(int x) {
  WARN("Failed to open libnvidia-ml.so.1");
  INFO(NCCL_INIT, "synthetic info %d", x);
}
EOF
commit_tag v2.29.7-1
put src/graph/tuning.cc <<'EOF'
static const ncclTunerConstants_t ncclTunerConstantsDefaults = {
  // perChMaxNVLSTreeBws
  {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}}};
ncclResult_t ncclTopoTuneModel(struct ncclComm* comm, int minCompCap,
                               int maxCompCap) {
  pEnable &= (minCompCap == maxCompCap || minCompCap >= 90);
  return ncclSuccess;
}
EOF
put src/include/plugin/tuner/tuner_v6.h < /dev/null
put src/include/plugin/profiler/profiler_v2.h < /dev/null
put src/plugin/tuner.cc <<'EOF'
  tunerSymbol = getNcclTuner_v6(tunerPluginLib);
  if (tunerSymbol == NULL) tunerSymbol = getNcclTuner_v5(tunerPluginLib);
EOF
put src/misc/nvml.cc <<'EOF'
void f(int x) {
  WARN("a synthetic warning %s", "x");
  INFO(NCCL_INIT, "synthetic info %d", x);
  INFO(NCCL_NET, "a synthetic unclassified info %d", x);
}
EOF
commit_tag v2.31.0-1

python3 "$here/nccl-follow.py" --git "$g" --tag v2.31.0-1 --diff-n 10 > "$tmp/out" 2>&1
rc=$?
n=$((n + 1))
if [ $rc = 1 ]; then echo "ok $n - nccl-follow: exit 1 while the model lacks the tag"; else
    bad=$((bad + 1)); echo "not ok $n - nccl-follow: exit $rc, expected 1"; fi
check "the base is the newest modelled tag before it" "nccl-follow: v2.31.0-1 against v2.29.7-1"
check "a constant as the model's data" "per_ch_nvls_tree[Blackwell][N4]: 43.8 -> 80 (v2.31.0-1 src/graph/tuning.cc:3)"
check "a formula, wrapping ignored" "+ v2.31.0-1:6  pEnable &= (minCompCap == maxCompCap || minCompCap >= 90)"
check "the removed formula" "- v2.29.7-1:4  pEnable &= (minCompCap == maxCompCap)"
check "only that formula" "formulas: 2 statements changed"
check "a tuner ABI version added" "tuner: v2.29.7-1 v5..v5, v2.31.0-1 v5..v6; added v6"
check "a profiler ABI version added" "profiler: v2.29.7-1 v1..v1, v2.31.0-1 v1..v2; added v2"
check "the symbol NCCL looks for first" "v2.31.0-1 looks for ncclTunerPlugin_v6 first (src/plugin/tuner.cc:1)"
check "format strings counted" "added 2, removed 1"
check "an unclassified INFO" "+ INFO src/misc/nvml.cc:4  a synthetic unclassified info %d"
check "a removed WARN" "- WARN src/misc/nvml.cc:2  Failed to open libnvidia-ml.so.1"
check "the knowledge-base message citing it" "nvml-missing (WARN src/misc/nvmlwrap.cc:75"
check "the differential check fails" "differential check at v2.31.0-1: FAILED"
python3 "$here/nccl-follow.py" --git "$g" --tag v9.9.9-1 > "$tmp/out" 2>&1
rc=$?
n=$((n + 1))
if [ $rc = 2 ]; then echo "ok $n - nccl-follow: an unknown tag exits 2"; else
    bad=$((bad + 1)); echo "not ok $n - nccl-follow: unknown tag: exit $rc"; fi
check "an unknown tag is named with the fix" "nccl-follow: no tag 'v9.9.9-1' in $g (give TAG=vX.Y.Z-1)"
if [ $bad != 0 ]; then sed 's/^/  | /' "$tmp/out" | head -60; fi
echo "nccl-follow tests: $((n - bad)) passed, $bad failed"
[ $bad = 0 ]
