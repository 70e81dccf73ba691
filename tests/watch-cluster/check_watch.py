#!/usr/bin/python3
"""What one nettune.watch/1 document says about one scenario (tests/watch-cluster/run.sh).

  check_watch.py DOC healthy                 any finding is an alarm
  check_watch.py DOC network HOST            NT-JOB-205 naming HOST alone, side network
  check_watch.py DOC straggler PID           NT-JOB-201 naming PID, side compute
  check_watch.py DOC hang PID                NT-JOB-202 naming PID

Prints one line: "match", "wrong" (a finding that blames someone else, or the wrong side),
"pair" (network: NT-JOB-205 naming HOST and one other host, the link between them: right but
not yet told apart), "alarm" (healthy: a finding that names a host or rank), "onset" (healthy:
only an onset finding, which names neither) or "none", then a tab and the finding's code,
verdict and reason.
The onset finding (NT-JOB-204) says when, not who: it is listed but neither matches nor is
wrong in a fault case. A document not yet written or cut mid-write is "none".
"""
import json
import sys


def line(f):
    return "%s %s | %s" % (f["code"], f["verdict"], f["reason"])


def main():
    path, kind = sys.argv[1], sys.argv[2]
    want = sys.argv[3] if len(sys.argv) > 3 else None
    try:
        with open(path) as fp:
            doc = json.load(fp)
    except (OSError, ValueError):
        print("none\t")
        return 0
    fs = doc.get("findings", [])
    if kind == "healthy":
        who = [f for f in fs if f["code"] != "NT-JOB-204"]
        if who:
            print("alarm\t" + line(who[0]))
        else:
            print(("onset\t" + line(fs[0])) if fs else "none\t")
        return 0
    match = wrong = pair = None
    for f in fs:
        code = f["code"]
        if code == "NT-JOB-204":
            continue
        if (kind == "network" and code == "NT-JOB-205" and f.get("side") == "network"
                and len(f.get("hosts", [])) == 2 and want in f["hosts"]):
            pair = pair or f
            continue
        if kind == "network":
            ok = code == "NT-JOB-205" and f.get("hosts") == [want] and f.get("side") == "network"
        elif kind == "straggler":
            ok = code == "NT-JOB-201" and str(f.get("pid")) == want and f.get("side") == "compute"
        else:
            ok = code == "NT-JOB-202" and str(f.get("pid")) == want
        if ok:
            match = match or f
        elif kind == "hang" and code == "NT-JOB-202" and str(f.get("pid")) != want:
            wrong = wrong or f
        elif kind != "hang" or code != "NT-JOB-202":
            # A straggler finding in a hang would be wrong too; a second hang finding of the
            # same pid (its other communicator) is not.
            wrong = wrong or f
    if wrong:
        print("wrong\t" + line(wrong))
    elif match:
        print("match\t" + line(match))
    elif pair:
        print("pair\t" + line(pair))
    else:
        print("none\t")
    return 0


if __name__ == "__main__":
    sys.exit(main())
