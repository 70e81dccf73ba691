#!/bin/sh
# Slurm Prolog for nettune (docs/slurm.md): this node's local checks before a job starts.
# slurm.conf: Prolog=/usr/local/lib/nettune/nettune-prolog.sh (or a wrapper that sets the
# environment and options, docs/slurm.md), PrologFlags=Alloc (else it runs only at a node's
# first step), PrologEpilogTimeout=... (bounds it; 22.05 expects a prolog to end within
# MessageTimeout, 10 s by default).
# A node that fails its checks is drained by nettune itself with its reason (nettune:<check>
# <observed>/<expected><unit> <detail>), before the prolog exits 1: Slurm's own "Prolog error"
# drain is then skipped and nettune's reason stays; the job is requeued, held unless
# SchedulerParameters=nohold_on_prolog_fail. "drained" is said only when sinfo shows it; a
# drain that failed is said with scontrol's exit code and message (Slurm then drains the node
# as "Prolog error").
# Without --thresholds or --expect in NETTUNE_PROLOG_ARGS the installed defaults apply: the GPU
# count of the node's Slurm GRES, the RDMA ports of its sysfs topology, the PCIe widths.
# A configuration error (nettune exit 2: bad thresholds or options; a bad option of this
# script) is an error line in syslog, nettune_config_error 1 in the textfile folder, and
# --on-config-error=pass (default: the job goes ahead) or =drain (the node is drained).
# Stopped early (3) or over NETTUNE_PROLOG_TIMEOUT: the job goes ahead, one line on stderr.
# Settings (environment): NETTUNE_PROLOG_ARGS (extra probe options, e.g. --thresholds FILE),
# NETTUNE_PROLOG_TIMEOUT (seconds, default 8), and those of nettune-slurm-lib.sh.
# shellcheck source=contrib/slurm/nettune-slurm-lib.sh
. "$(dirname "$0")/nettune-slurm-lib.sh"
nts_options "$@"
mkdir -p "$nts_dir" || exit 0
report=$nts_dir/prolog-$nts_node.json
[ -z "$nts_bad_option" ] || { nts_config_error prolog "nettune-prolog.sh: $nts_bad_option"; exit $?; }
args=${NETTUNE_PROLOG_ARGS:-}
case " $args " in
*" --thresholds"* | *" --expect"*) ;;
*) args="$args $(nts_expect_defaults)" ;;
esac
# shellcheck disable=SC2086 # args is a list of options
timeout -k 1 "${NETTUNE_PROLOG_TIMEOUT:-8}" "$NETTUNE" probe --local --quiet --drain \
    --output "$report" $args 2> "$report.err"
rc=$?
cat "$report.err" >&2
case $rc in
0)
    nts_metric 0 prolog
    exit 0
    ;;
1)
    nts_metric 0 prolog
    if nts_drained; then
        echo "nettune prolog: $nts_node failed its checks (drained: $(sinfo -h -N -n "$nts_node" -o %E | head -1); report $report)" >&2
    else
        why=$(grep -- '--drain: ' "$report.err" | tail -1)
        echo "nettune prolog: $nts_node failed its checks, but it is not drained (sinfo: $(sinfo -h -N -n "$nts_node" -o '%T' 2>&1 | head -1)): ${why:-nettune drained nothing}; report $report" >&2
    fi
    exit 1
    ;;
2)
    nts_config_error prolog "nettune probe exit 2: $(grep . "$report.err" | tail -1)"
    exit $?
    ;;
*)
    nts_metric 0 prolog
    echo "nettune prolog: nettune probe exit $rc on $nts_node (3: stopped early," \
        "124/137: timed out): job not held, node left as it was" >&2
    exit 0
    ;;
esac
