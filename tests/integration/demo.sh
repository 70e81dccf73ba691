#!/bin/sh
# make demo: the main job on this machine: mpirun -np 2 nettune probe, writing
# nettune-report.json in the current directory, then a check of the report against the schema.
set -u
cd "$(dirname "$0")/../.."
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
echo "+ mpirun --oversubscribe -np 2 build/bin/nettune probe --output nettune-report.json"
mpirun --oversubscribe -np 2 build/bin/nettune probe --output nettune-report.json
rc=$?
echo "exit code: $rc (0 healthy, 1 a check failed, 2 could not run, 3 stopped early)"
if command -v /usr/bin/python3 >/dev/null && /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
  /usr/bin/python3 tests/integration/check_report.py nettune-report.json --exit $rc &&
    echo "nettune-report.json: valid nettune.report/1 (reports/schema/report.schema.json)"
fi
exit $rc
