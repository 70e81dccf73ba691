# Shared by nettune-prolog.sh and nettune-healthcheck.sh (docs/slurm.md), sourced from their
# folder: options, the installed defaults' expectations, configuration errors made loud, and
# a drain that is believed only once sinfo shows it.
# Settings (environment): NETTUNE (the nettune program, default nettune in PATH),
# NETTUNE_REPORT_DIR (reports, default /var/tmp/nettune), NETTUNE_TEXTFILE_DIR (node
# exporter's textfile collector folder, default /var/lib/prometheus/node-exporter, Debian's;
# written when it exists or is set), NETTUNE_SYSFS_ROOT (read sysfs under this root, as
# nettune does: captured trees in tests).
PATH=$PATH:/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin
NETTUNE=${NETTUNE:-nettune}
nts_dir=${NETTUNE_REPORT_DIR:-/var/tmp/nettune}
nts_node=${SLURMD_NODENAME:-$(hostname)}
nts_on_config_error=pass
nts_bad_option=

# nts_options ARGS: the scripts' own options (Slurm gives a Prolog none: a wrapper does).
nts_options()
{
    for a in "$@"; do
        case $a in
        --on-config-error=pass | --on-config-error=drain) nts_on_config_error=${a#*=} ;;
        *) nts_bad_option="unknown option '$a' (valid: --on-config-error=pass|drain)" ;;
        esac
    done
}

# nts_expect_defaults: "--expect gpus=G,nics=N" for the installed defaults, G from the Slurm
# node's GRES (gpu entries of scontrol show node, summed: gpu:8, gpu:h100:4(S:0-1)), N the RDMA
# ports the sysfs topology lists (/sys/class/infiniband/*/ports/*) plus the InfiniBand
# controllers (PCI class 0x0207) that have no RDMA device (a driver that did not load). Empty
# parts are left out (no GRES: not a GPU node; nothing found: no NIC expectation). The PCIe
# widths need no option: nettune checks every GPU's and NIC's link against its capability.
nts_expect_defaults()
{
    local gres gpus nics root=${NETTUNE_SYSFS_ROOT:-} spec=
    gres=$(scontrol show node "$nts_node" -o 2>/dev/null | tr ' ' '\n' | sed -n 's/^Gres=//p')
    gpus=$(echo "$gres" | tr ',' '\n' | sed -n 's/(.*//; s/^gpu\(:[^:]*\)\{0,1\}:\([0-9][0-9]*\)$/\2/p' |
        awk '{ n += $1 } END { if (NR) print n }')
    nics=$(
        n=0
        for p in "$root"/sys/class/infiniband/*/ports/*; do [ -e "$p" ] && n=$((n + 1)); done
        for d in "$root"/sys/bus/pci/devices/*; do
            [ -r "$d/class" ] || continue
            case $(cat "$d/class") in 0x0207*) [ -d "$d/infiniband" ] || n=$((n + 1)) ;; esac
        done
        echo "$n"
    )
    [ -n "$gpus" ] && spec=gpus=$gpus
    [ "$nics" -gt 0 ] && spec=${spec:+$spec,}nics=$nics
    echo "${spec:+--expect $spec}"
}

# nts_metric VALUE SOURCE: nettune_config_error{node,source} VALUE into the textfile folder
# (written whole, then renamed: the exporter never reads half a file).
nts_metric()
{
    local tdir=${NETTUNE_TEXTFILE_DIR:-/var/lib/prometheus/node-exporter} f
    [ -n "${NETTUNE_TEXTFILE_DIR:-}" ] && mkdir -p "$tdir" 2>/dev/null
    [ -d "$tdir" ] || return 0
    f=$tdir/nettune_$2.prom
    {
        echo "# HELP nettune_config_error 1 when nettune's $2 could not run for its configuration (bad thresholds or options), else 0"
        echo "# TYPE nettune_config_error gauge"
        echo "nettune_config_error{node=\"$nts_node\",source=\"$2\"} $1"
    } > "$f.tmp.$$" && mv -f "$f.tmp.$$" "$f"
}

# nts_drained: true when sinfo shows this node draining or drained with a nettune: reason.
nts_drained()
{
    local s
    s=$(sinfo -h -N -n "$nts_node" -o '%T|%E' 2>/dev/null | head -1)
    case $s in drain*\|nettune:* | draining*\|nettune:* | drained*\|nettune:*) return 0 ;; esac
    return 1
}

# nts_config_error SOURCE MESSAGE: one error line in syslog (logger) and on stderr, the metric
# at 1; with --on-config-error=drain the node is drained with the message as its reason.
# Returns 1 when the node was drained (the caller exits 1), 0 to let the job go ahead.
nts_config_error()
{
    local src=$1 msg=$2 out rc
    logger -t "nettune-$src" -p user.err "$nts_node: configuration error: $msg" 2>/dev/null
    nts_metric 1 "$src"
    if [ "$nts_on_config_error" != drain ]; then
        echo "nettune $src: $nts_node: configuration error: $msg (--on-config-error=pass: job not held, node left as it was)" >&2
        return 0
    fi
    out=$(scontrol update NodeName="$nts_node" State=DRAIN Reason="nettune:config_error $msg" 2>&1)
    rc=$?
    if [ "$rc" != 0 ]; then
        echo "nettune $src: $nts_node: configuration error: $msg; draining it failed (scontrol exit $rc: $out)" >&2
    elif nts_drained; then
        echo "nettune $src: $nts_node: configuration error: $msg (drained: --on-config-error=drain)" >&2
    else
        echo "nettune $src: $nts_node: configuration error: $msg; scontrol drained it but sinfo does not show it drained" >&2
    fi
    return 1
}
