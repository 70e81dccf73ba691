#!/bin/sh
# make test-report: runs tests/report/test_report.py with Debian's python3 (/usr/bin/python3,
# which has python3-jsonschema; a pyenv python3 on PATH may not). Options go to the script.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
exec "$py" "$here/test_report.py" "$@"
