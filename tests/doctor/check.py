#!/usr/bin/python3
"""Golden tests for nettune doctor: runs every case of golden.tsv, checks the exit code, the
expected findings and severities, the forbidden ones and the numbers, and validates every JSON
document against reports/schema/diagnosis.schema.json with python3-jsonschema.
Usage: check.py DOCTOR_BINARY GOLDEN_TSV SCHEMA OUTDIR"""
import json
import os
import subprocess
import sys

import jsonschema

NETWORK = ("socket_fallback libibverbs_missing rdma_device_unusable no_rdma_device ib_disabled_by_env "
           "rdma_hidden_from_job gdr_asymmetric gdr_not_used gdr_disabled_distance nic_shared "
           "ib_retry_exceeded ib_local_protection_error ib_completion_error ib_wrong_hca "
           "ib_gid_index_wrong socket_ifname_loopback busbw_below_expected").split()

passed = failed = 0


def result(ok, name, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"not ok - {name}: {what}")


def finding(doc, key):
    for f in doc["findings"]:
        if f["key"] == key:
            return f
    return None


def run_case(binary, schema, outdir, cols):
    name, args, want_exit, expected, forbidden = cols[:5]
    checks = cols[5].split() if len(cols) > 5 else []
    argv = args.split()
    out_json = os.path.join(outdir, name + ".json")
    p = subprocess.run([binary, "--output", out_json] + argv, capture_output=True, text=True, timeout=60)
    text = p.stdout
    result(p.returncode == int(want_exit), name, f"exit {p.returncode}, want {want_exit}; stderr: {p.stderr.strip()}")
    try:
        with open(out_json) as fh:
            doc = json.load(fh)
    except (OSError, ValueError) as e:
        result(False, name, f"no JSON document: {e}")
        return
    try:
        jsonschema.validate(doc, schema)
        result(True, name, "")
    except jsonschema.ValidationError as e:
        result(False, name, f"schema: {e.message} at {list(e.absolute_path)}")
    result(doc["summary"]["exit_code"] == p.returncode, name, "summary.exit_code differs from the exit status")
    keys = {f["key"]: f["severity"] for f in doc["findings"]}
    if expected != "-":
        for item in expected.split():
            key, sev = item.split(":")
            result(key in keys, name, f"expected finding {key} missing (got {sorted(keys)})")
            if key in keys:
                result(keys[key] in sev.split("|"), name, f"{key} is {keys[key]}, want {sev}")
            result(f"{key}" in text, name, f"text output does not name {key}")
    if forbidden != "-":
        for key in forbidden.split():
            if key == "ANYWARN":
                bad = [k for k, s in keys.items() if s in ("warn", "error")]
                result(not bad, name, f"findings of severity warn/error: {bad}")
            elif key == "NETWORK":
                bad = [k for k in keys if k in NETWORK]
                result(not bad, name, f"network findings: {bad}")
            else:
                result(key not in keys, name, f"must not say {key}")
    bench = doc["benchmarks"][0] if doc["benchmarks"] else None
    for c in checks:
        k, _, v = c.partition("=")
        if k == "plateau":
            result(bench is not None and abs(bench["plateau_busbw_GBps"] - float(v)) <= 1.0, name,
                   f"plateau {bench and bench['plateau_busbw_GBps']}, want ~{v}")
        elif k == "expected":
            result(bench is not None and bench["expected_busbw_GBps"] is not None
                   and abs(bench["expected_busbw_GBps"] - float(v)) <= 1.0, name,
                   f"expected busbw {bench and bench['expected_busbw_GBps']}, want {v}")
        elif k == "verdict":
            result(bench is not None and bench["verdict"] == v, name, f"verdict {bench and bench['verdict']}, want {v}")
        elif k in ("collective", "collective_source"):
            got = bench and bench.get(k)
            result(bench is not None and (got if got is not None else "null") == v, name, f"{k} {got}, want {v}")
        elif k.startswith("ev:"):
            f = finding(doc, k[3:])
            lines = [e["line"] for e in f["evidence"]] if f else []
            result(int(v) in lines, name, f"{k[3:]} evidence lines {lines} lack {v}")
        elif k.startswith("caused_by:"):
            f = finding(doc, k[10:])
            result(f is not None and v in f["caused_by"], name, f"{k[10:]} not caused by {v}")
            c2 = finding(doc, v)
            result(c2 is not None and k[10:] in c2["causes"], name, f"{v} does not list {k[10:]} in causes")
        elif k.startswith("hosts:"):
            f = finding(doc, k[6:])
            result(f is not None and sorted(f["hosts"]) == sorted(v.split(",")), name,
                   f"{k[6:]} hosts {f and f['hosts']}, want {v}")
        elif k.startswith("ranks:"):
            f = finding(doc, k[6:])
            result(f is not None and sorted(f["ranks"]) == sorted(int(x) for x in v.split(",")), name,
                   f"{k[6:]} ranks {f and f['ranks']}, want {v}")
        elif k.startswith("fix:"):
            f = finding(doc, k[4:])
            result(f is not None and v in f["fix"], name, f"{k[4:]} fix lacks '{v}'")
        elif k.startswith("value:"):
            key, _, vname = k[6:].partition(".")
            f = finding(doc, key)
            got = f and f.get("values", {}).get(vname)
            result(got is not None and abs(got - float(v)) <= 0.5, name, f"{key}.{vname} = {got}, want {v}")
        elif k == "text" or k.startswith("text:"):
            word = c[5:].replace("~", " ")
            result(word in text, name, f"text output lacks '{word}'")
        elif k.startswith("notext:"):
            word = c[7:].replace("~", " ")
            result(word not in text, name, f"text output says '{word}'")
        else:
            result(False, name, f"unknown check {c}")


def main():
    binary, golden, schema_path, outdir = sys.argv[1:5]
    with open(schema_path) as fh:
        schema = json.load(fh)
    jsonschema.Draft202012Validator.check_schema(schema)
    os.makedirs(outdir, exist_ok=True)
    cases = 0
    with open(golden) as fh:
        for line in fh:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) < 5:
                result(False, cols[0], "malformed golden line")
                continue
            cases += 1
            before = failed
            run_case(binary, schema, outdir, cols)
            if failed == before:
                print(f"ok - {cols[0]}")
    print(f"golden: {cases} cases, {passed} checks passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
