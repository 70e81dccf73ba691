#!/usr/bin/env python3
"""The assertions of tests/gpu/measure.sh on its outputs, apart so that they are tested without a
GPU (tests/tuner/measure/run-cli.sh runs them on fixtures). Prints what it checked; exit 0 when
the check holds, 1 when not.
  measure-check.py model MODEL.json    `nettune tune --print-model --format json` on the captured
      log: every cell of NCCL's table compared, none differs, verdict verified
  measure-check.py forced M.json       nettune.measured/1 of the forced sweep: at one size two
      different (algo, proto) ran as forced, and NCCL's own per-call TUNING lines (nccl.calls)
      show both at that size
  measure-check.py verify V.json       nettune.verify/1: the sizes, and NCCL's logs confirm
      plugin + file on the tuned side and neither on the defaults side"""
import json
import sys


def model(d):
    cells = d.get('cells', [])
    shown = [c for c in cells if c['nccl']['lat_us'] or c['nccl']['bw_GBps']]
    diff = [c for c in cells if not c['match']]
    print('model %s vs NCCL %s: %s; %d cells compared (%d printed non-zero), %d fitted, '
          '%d verified, %d differ; assumed: %s' % (
              d.get('modelled_from'), d.get('nccl_version'), d.get('verdict'),
              d.get('compared_cells', 0), len(shown), d.get('fitted_cells', 0),
              d.get('verified_cells', 0), len(diff), ', '.join(d.get('assumed', [])) or 'nothing'))
    for c in diff[:40]:
        m, n = c['model'], c['nccl']
        print('  differs: %-14s %-14s %-7s model %7.1f us %7.1f GB/s  NCCL %7.1f us %7.1f GB/s%s'
              % (c['coll'], c['algo'], c['proto'], m['lat_us'], m['bw_GBps'], n['lat_us'],
                 n['bw_GBps'], '  (' + m['why'] + ')' if m.get('why') else ''))
    return (d.get('compared_cells', 0) > 0 and len(shown) > 0 and not diff and
            d.get('verdict', '').startswith('verified'))


def forced(d):
    ran = {}
    for p in d['points']:
        if not p['default']:
            ran.setdefault(p['bytes'], set()).add((p['algo'].upper(), p['proto'].upper()))
    calls = {}
    for c in d.get('nccl', {}).get('calls', []):
        calls.setdefault(c['bytes'], set()).add((c['algo'].upper(), c['proto'].upper()))
    print('not applied:', [(q['bytes'], q['forced_algo'], q['forced_proto'], q['why'])
                           for q in d['not_applied']][:10])
    good = [b for b, s in sorted(ran.items()) if len(s) >= 2 and s <= calls.get(b, set())]
    for b, s in sorted(ran.items()):
        print('%10d B forced and ran (plugin): %s; NCCL logged: %s' % (
            b, sorted(s), sorted(calls.get(b, set()))))
    print('sizes where two forced choices ran and NCCL logged both:', good)
    return bool(good)


def verify(d):
    for e in d['sizes']:
        print('%-10s %10d B  default %9.2f us  tuned %9.2f us  x%.3f [%.3f..%.3f] %s' % (
            e['coll'], e['bytes'], e['default_us'], e['tuned_us'], e['speedup'],
            e['speedup_min'], e['speedup_max'], e['verdict']))
    print('summary', d['summary'], 'completed', d['completed'], d.get('error', ''))
    ok = bool(d['sizes'])
    for side in ('tuned', 'defaults'):
        s = d['sides'][side]
        n = s.get('nccl_log', {})
        print('%-8s NCCL_TUNER_PLUGIN=%s NETTUNE_TUNING_FILE=%s plugin in the process on %d '
              'ranks; NCCL log: echo %s, loaded %s, file %s -> confirmed %s (%s)' % (
                  side, s['NCCL_TUNER_PLUGIN'], s['NETTUNE_TUNING_FILE'],
                  s['plugin_loaded_ranks'], n.get('NCCL_TUNER_PLUGIN'), n.get('tuner_loaded'),
                  n.get('tuning_file'), n.get('confirmed'), n.get('why')))
        ok &= bool(n.get('confirmed'))
    return ok


if __name__ == '__main__':
    if len(sys.argv) != 3 or sys.argv[1] not in ('model', 'forced', 'verify'):
        sys.exit(__doc__)
    sys.exit(0 if globals()[sys.argv[1]](json.load(open(sys.argv[2]))) else 1)
