#!/bin/sh
# Compares the tuner model with NCCL's own tuning.cc, tag by tag (a developer check, not part of
# `make test`: it needs an NVIDIA/nccl git checkout and compiles NCCL's file, which is never
# copied into this repository). Usage (from the repository root, after `make`):
#   tests/tuner/nccl-diff/run.sh /path/to/nccl.git [N]
set -e
git_dir=$1
n=${2:-20000}
here=$(dirname "$0")
# The model library and the libraries it calls (make tuner-model-diff passes them).
libs=${NT_MODEL_LIBS:-build/lib/libnttuner_model.a build/lib/libntnccl.a build/lib/libntcore.a -lcjson -lz -lm}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for spec in v2.14.3-1:21403 v2.24.3-1:22403 v2.25.1-1:22501 v2.26.6-1:22606 v2.27.3-1:22703 v2.27.7-1:22707 v2.28.3-1:22803 v2.28.7-1:22807 v2.28.9-1:22809 \
            v2.29.3-1:22903 v2.29.7-1:22907; do
    tag=${spec%%:*}
    code=${spec##*:}
    git --git-dir="$git_dir" show "$tag:src/graph/tuning.cc" > "$tmp/tuning.cc"
    defs=""
    case $tag in
    v2.14*) defs="-DSHIM_NUM_ALGORITHMS=4 -DSHIM_LOG2I_ZERO_IS_ZERO" ;;
    v2.24* | v2.25* | v2.26* | v2.27*) ;;
    *) defs="-DSHIM_TUNER_CONSTANTS" ;;
    esac
    g++ -O1 -w -std=c++17 $defs -I"$here/shim" -Iinclude -I. -o "$tmp/harness" "$here/harness.cc" "$tmp/tuning.cc" \
        $libs
    for arch in other power; do
        printf '%s: ' "$tag"
        "$tmp/harness" "$code" "$n" 12345 $arch || fail=1
    done
    # the job's NCCL_ALGO / NCCL_PROTO (per-function syntax from 2.24)
    case $tag in
    v2.14*) algo="Tree,Ring,bogus" proto="^LL" ;;
    *) algo="ring,nvls;allreduce:tree,collnetchain,nvlstree" proto="^LL;allgather:LL128,Simple" ;;
    esac
    printf '%s: ' "$tag"
    NCCL_ALGO=$algo NCCL_PROTO=$proto "$tmp/harness" "$code" "$n" 777 other || fail=1
done
# NCCL built with CUDA 11.8: the LL128 exception (v2.28.9-1 tuning.cc:493)
git --git-dir="$git_dir" show "v2.28.9-1:src/graph/tuning.cc" > "$tmp/tuning.cc"
g++ -O1 -w -std=c++17 -DSHIM_TUNER_CONSTANTS -DCUDART_VERSION=11080 -I"$here/shim" -Iinclude -I. -o "$tmp/harness" \
    "$here/harness.cc" "$tmp/tuning.cc" $libs
printf 'v2.28.9-1 CUDA 11.8: '
"$tmp/harness" 22809 "$n" 99 other || fail=1
exit $fail
