#!/bin/sh
# Slurm HealthCheckProgram for nettune (docs/slurm.md). Slurm ignores its exit code, kills it
# after 60 s and runs it on all nodes at once, so nettune drains and resumes by itself:
# --drain drains a node failing its local checks with its reason; --resume-passing resumes it
# once it passes again, only if its reason starts with nettune: and names a check this run
# makes (a node the check job drained for its links stays drained; an administrator's drain
# is never touched). --local --checks-only makes no traffic at all (none between nodes, no RDMA
# loopback, no GPU copies) and takes no GPU memory: inventory, link states, counters, software,
# so it is safe beside a running job (HealthCheckNodeState=ANY works; IDLE is still gentler).
# A configuration error (nettune exit 2) is loud as in the prolog (syslog, nettune_config_error
# 1, --on-config-error=pass|drain).
# Settings (environment): NETTUNE_HEALTHCHECK_ARGS (extra probe options),
# NETTUNE_HEALTHCHECK_TIMEOUT (seconds, default 50), and those of nettune-slurm-lib.sh.
# shellcheck source=contrib/slurm/nettune-slurm-lib.sh
. "$(dirname "$0")/nettune-slurm-lib.sh"
nts_options "$@"
mkdir -p "$nts_dir" || exit 0
report=$nts_dir/healthcheck-$nts_node.json
[ -z "$nts_bad_option" ] || { nts_config_error healthcheck "nettune-healthcheck.sh: $nts_bad_option"; exit 0; }
# shellcheck disable=SC2086 # NETTUNE_HEALTHCHECK_ARGS is a list of options
timeout -k 1 "${NETTUNE_HEALTHCHECK_TIMEOUT:-50}" "$NETTUNE" probe --local --checks-only --quiet --drain \
    --resume-passing --output "$report" ${NETTUNE_HEALTHCHECK_ARGS:-} 2> "$report.err"
rc=$?
cat "$report.err" >&2
if [ "$rc" = 2 ]; then
    nts_config_error healthcheck "nettune probe exit 2: $(grep . "$report.err" | tail -1)"
else
    nts_metric 0 healthcheck
fi
exit 0
