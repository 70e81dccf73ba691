#!/usr/bin/python3
"""make test-kubernetes: what can be checked of the Kubernetes manifests in contrib/kubernetes
without a cluster (Debian 12 packages no Kubernetes schema validator: no kubeconform, no
kubeval). For every pod template (a Pod's spec, each MPIJob replica's template):

- every volumeMount names a volume the pod declares;
- a container that runs `nettune probe` requests a GPU and an RDMA device resource
  (limits: nvidia.com/gpu, rdma/...) and adds the IPC_LOCK capability (RDMA pins memory);
- its report survives the pod: `--output -` (the container's log; under mpirun, the
  launcher's), or a path under the mountPath of a declared volume that is not an emptyDir;
- an MPIJob's nettune report is written by rank 0, which runs in a worker: it must be `-`.

Then the same checks on broken copies (an undeclared volume, no IPC_LOCK, no RDMA resource, a
report in a worker's own filesystem), which must each be found. Prints "N passed, N failed"."""
import copy
import glob
import os
import sys

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def pod_specs(doc):
    """(label, pod spec, role) for each pod template of a manifest."""
    kind = doc.get("kind")
    if kind == "Pod":
        yield doc["metadata"]["name"], doc["spec"], "pod"
    elif kind == "MPIJob":
        for role, rs in doc["spec"]["mpiReplicaSpecs"].items():
            yield "%s/%s" % (doc["metadata"]["name"], role), rs["template"]["spec"], role.lower()
    else:
        raise ValueError("unknown kind %r" % kind)


def nettune_args(c):
    cmd = list(c.get("command", [])) + list(c.get("args", []))
    if "nettune" in cmd and "probe" in cmd[cmd.index("nettune"):]:
        return cmd[cmd.index("nettune"):]
    return None


def problems(doc):
    out = []
    mpijob = doc.get("kind") == "MPIJob"
    for label, spec, role in pod_specs(doc):
        vols = {v["name"]: v for v in spec.get("volumes", [])}
        for c in spec.get("initContainers", []) + spec.get("containers", []):
            where = "%s container %s" % (label, c["name"])
            mounts = c.get("volumeMounts", [])
            for m in mounts:
                if m["name"] not in vols:
                    out.append("%s mounts volume %r, which the pod does not declare" % (where, m["name"]))
            args = nettune_args(c)
            runs_here = args is not None and not (mpijob and role == "launcher")
            if runs_here or (mpijob and role == "worker"):
                lim = c.get("resources", {}).get("limits", {})
                if "nvidia.com/gpu" not in lim:
                    out.append("%s requests no GPU (limits nvidia.com/gpu)" % where)
                if not any(k.startswith("rdma/") for k in lim):
                    out.append("%s requests no RDMA device (limits rdma/...)" % where)
                caps = c.get("securityContext", {}).get("capabilities", {}).get("add", [])
                if "IPC_LOCK" not in caps:
                    out.append("%s does not add IPC_LOCK (RDMA memory registration)" % where)
            if args is None:
                continue
            if "--output" not in args:
                out.append("%s: nettune probe without --output writes nettune-report.json into "
                           "the container's working folder, lost with the pod" % where)
                continue
            path = args[args.index("--output") + 1]
            if path == "-":
                continue
            if mpijob:
                out.append("%s: rank 0 runs in a worker, whose pod is deleted: --output %s is "
                           "lost (use --output -)" % (where, path))
                continue
            keep = [m for m in mounts if path.startswith(m["mountPath"].rstrip("/") + "/")
                    and m["name"] in vols and "emptyDir" not in vols[m["name"]]]
            if not keep:
                out.append("%s: --output %s is not on a declared volume that outlives the pod"
                           % (where, path))
    return out


def main():
    npass = nfail = 0

    def check(ok, what):
        nonlocal npass, nfail
        if ok:
            npass += 1
            print("ok   " + what)
        else:
            nfail += 1
            print("FAIL " + what)

    files = sorted(glob.glob(os.path.join(ROOT, "contrib", "kubernetes", "*.yaml")))
    check(len(files) == 2, "contrib/kubernetes has the init container and the MPIJob (%d files)" % len(files))
    docs = {}
    for f in files:
        with open(f) as fh:
            docs[os.path.basename(f)] = d = yaml.safe_load(fh)
        p = problems(d)
        check(not p, "%s: %s" % (os.path.basename(f), "; ".join(p) or "volumes declared, GPU, RDMA and IPC_LOCK requested, report kept"))
    init, job = docs.get("nettune-init.yaml"), docs.get("nettune-mpijob.yaml")
    if not init or not job:
        print("kubernetes manifests: %d passed, %d failed" % (npass, nfail + 1))
        return 1
    # Broken copies: each defect found, by its line.
    cases = []
    d = copy.deepcopy(init)
    del d["spec"]["volumes"]
    cases.append(("undeclared volume", d, "mounts volume 'reports', which the pod does not declare"))
    d = copy.deepcopy(init)
    del d["spec"]["initContainers"][0]["securityContext"]
    cases.append(("no IPC_LOCK", d, "does not add IPC_LOCK"))
    d = copy.deepcopy(job)
    del d["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resources"]["limits"]["rdma/rdma_shared_device_a"]
    cases.append(("worker without RDMA", d, "requests no RDMA device"))
    d = copy.deepcopy(job)
    cmd = d["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"]
    cmd[cmd.index("--output") + 1] = "/reports/check.json"
    cases.append(("MPIJob report in a worker", d, "rank 0 runs in a worker"))
    d = copy.deepcopy(init)
    d["spec"]["volumes"][0] = {"name": "reports", "emptyDir": {}}
    cases.append(("report on an emptyDir", d, "is not on a declared volume that outlives the pod"))
    for name, d, want in cases:
        p = problems(d)
        check(any(want in x for x in p), "broken copy (%s) found: %s" % (name, p))
    print("kubernetes manifests: %d passed, %d failed" % (npass, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
