#!/usr/bin/env python3
"""Runs the test overlay's workloads with plain `docker run`, to show that the
images built here honour the manifests, before any cluster is involved.

It reads the rendered overlay (infra/kind-test/overlay) and plays the part of
a kubelet, roughly: every container of every Deployment and StatefulSet runs
with its pod's image, command, args, env (envFrom, $(VAR) references,
ConfigMap and Secret keys), user and group, read-only root, dropped
capabilities, memory and CPU limits, and its volumes (ConfigMaps as files,
emptyDirs as tmpfs, volume claims as fresh directories); init containers run
first and must succeed. All share one network namespace, like one pod, with
every Service name resolving to 127.0.0.1 there: the lab's ports are distinct
(infra/local/ports.env), as on the local runtime. Each container must pass
its startup or readiness probe (exec, httpGet, tcpSocket) in time.

Then a request through the lab (catalog, orders, ingest) must leave traces in
Jaeger. Containers are named tlk-try-*, and removed at the end (--keep
leaves them). Prints each workload's time to ready and memory.

Needs Docker (DOCKER_HOST), kubectl and python3-yaml.
"""
import argparse
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DOCKER = os.environ.get("DOCKER", "docker")
PREFIX = "tlk-try-"
NET = PREFIX + "pod"
# The order of a cold start: what the services need first.
ORDER = ["postgres", "kafka", "toxiproxy", "otelcol", "jaeger", "prometheus"]


def say(msg):
    print(f"\033[1m==>\033[0m {msg}", file=sys.stderr, flush=True)


def die(msg):
    print(f"try-images: {msg}", file=sys.stderr)
    sys.exit(1)


def docker(*args, check=True, capture=True):
    r = subprocess.run([DOCKER, *args], capture_output=capture, text=True)
    if check and r.returncode != 0:
        die(f"docker {' '.join(args[:3])} ...: {(r.stderr or '').strip()}")
    return r


def render():
    subprocess.run([os.path.join(ROOT, "k8s", "gen-secrets.sh")], check=True, capture_output=True)
    out = subprocess.run(["kubectl", "kustomize", "--load-restrictor", "LoadRestrictionsNone",
                          os.path.join(HERE, "overlay")], check=True, capture_output=True, text=True).stdout
    return [d for d in yaml.safe_load_all(out) if d]


VAR = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


def expand(s, env):
    # Kubernetes' $(VAR): known variables are replaced, others left as they are.
    return VAR.sub(lambda m: env.get(m.group(1), m.group(0)), s)


class Lab:
    def __init__(self, objs, work):
        self.objs = objs
        self.work = work
        self.cms = {o["metadata"]["name"]: o.get("data", {}) for o in objs if o["kind"] == "ConfigMap"}
        self.secrets = {o["metadata"]["name"]: {k: base64.b64decode(v).decode() for k, v in o.get("data", {}).items()}
                        for o in objs if o["kind"] == "Secret"}
        self.services = sorted(o["metadata"]["name"] for o in objs if o["kind"] == "Service")
        self.workloads = {o["metadata"]["name"]: o for o in objs if o["kind"] in ("Deployment", "StatefulSet")}

    def env(self, c):
        env = {}
        for src in c.get("envFrom", []):
            if "configMapRef" in src:
                env.update(self.cms[src["configMapRef"]["name"]])
        for e in c.get("env", []):
            if "value" in e:
                env[e["name"]] = expand(str(e["value"]), env)
            elif "secretKeyRef" in e.get("valueFrom", {}):
                ref = e["valueFrom"]["secretKeyRef"]
                env[e["name"]] = self.secrets[ref["name"]][ref["key"]]
            elif "configMapKeyRef" in e.get("valueFrom", {}):
                ref = e["valueFrom"]["configMapKeyRef"]
                env[e["name"]] = self.cms[ref["name"]][ref["key"]]
        return env

    def volume_args(self, name, spec, c, uid, gid):
        vols = {v["name"]: v for v in spec.get("volumes", [])}
        claims = {t["metadata"]["name"] for t in self.workloads[name]["spec"].get("volumeClaimTemplates", [])}
        args = []
        for m in c.get("volumeMounts", []):
            ro = ":ro" if m.get("readOnly") else ""
            v = vols.get(m["name"])
            if v is not None and "configMap" in v:
                d = os.path.join(self.work, "cm", v["configMap"]["name"])
                if not os.path.isdir(d):
                    os.makedirs(d)
                    for k, val in self.cms[v["configMap"]["name"]].items():
                        with open(os.path.join(d, k), "w") as f:
                            f.write(val)
                    os.chmod(d, 0o755)
                args += ["-v", f"{d}:{m['mountPath']}{ro}"]
            elif v is not None and "emptyDir" in v:
                # Shared by the pod's containers in Kubernetes; one tmpfs per
                # container is enough here (none shares one).
                args += ["--tmpfs", f"{m['mountPath']}:rw,exec,uid={uid},gid={gid},mode=1777"]
            elif m["name"] in claims:
                # A claim of kind's local-path: a fresh directory anyone may write.
                d = os.path.join(self.work, "pv", name, m["name"])
                os.makedirs(d, exist_ok=True)
                os.chmod(d, 0o777)
                args += ["-v", f"{d}:{m['mountPath']}"]
            else:
                die(f"{name}: volume {m['name']} of an unknown kind")
        return args

    def run_args(self, name, spec, c):
        psc = spec.get("securityContext", {})
        csc = c.get("securityContext", {})
        uid = csc.get("runAsUser", psc.get("runAsUser"))
        gid = csc.get("runAsGroup", psc.get("runAsGroup", uid))
        args = ["--network", f"container:{NET}", "--name", f"{PREFIX}{name}-{c['name']}"]
        if uid is not None:
            args += ["--user", f"{uid}:{gid}"]
        if psc.get("fsGroup") is not None:
            args += ["--group-add", str(psc["fsGroup"])]
        if csc.get("readOnlyRootFilesystem"):
            args.append("--read-only")
        if "ALL" in csc.get("capabilities", {}).get("drop", []):
            args += ["--cap-drop", "ALL"]
        if csc.get("allowPrivilegeEscalation") is False:
            args += ["--security-opt", "no-new-privileges"]
        limits = c.get("resources", {}).get("limits", {})
        if "memory" in limits:
            args += ["--memory", limits["memory"].replace("Mi", "m").replace("Gi", "g")]
        if "cpu" in limits:
            cpu = str(limits["cpu"])
            args += ["--cpus", str(int(cpu[:-1]) / 1000 if cpu.endswith("m") else float(cpu))]
        env = self.env(c)
        for k, v in env.items():
            args += ["-e", f"{k}={v}"]
        args += self.volume_args(name, spec, c, uid if uid is not None else 0, gid if gid is not None else 0)
        rest = [expand(a, env) for a in c.get("args", [])]
        if "command" in c:
            cmd = [expand(a, env) for a in c["command"]]
            args += ["--entrypoint", cmd[0], c["image"], *cmd[1:], *rest]
        else:
            args += [c["image"], *rest]
        return args

    def probe_ok(self, name, c, probe):
        cname = f"{PREFIX}{name}-{c['name']}"
        ports = {p["name"]: p["containerPort"] for p in c.get("ports", []) if "name" in p}
        if "exec" in probe:
            r = docker("exec", cname, *probe["exec"]["command"], check=False)
        elif "httpGet" in probe:
            port = ports.get(probe["httpGet"]["port"], probe["httpGet"]["port"])
            r = docker("exec", NET, "curl", "-sf", "-m", "2", "-o", "/dev/null",
                       f"http://127.0.0.1:{port}{probe['httpGet'].get('path', '/')}", check=False)
        elif "tcpSocket" in probe:
            port = ports.get(probe["tcpSocket"]["port"], probe["tcpSocket"]["port"])
            r = docker("exec", NET, "bash", "-c", f"exec 3<>/dev/tcp/127.0.0.1/{port}", check=False)
        else:
            die(f"{name}: a probe of an unknown kind")
        return r.returncode == 0

    def start(self, name):
        spec = self.workloads[name]["spec"]["template"]["spec"]
        for c in spec.get("initContainers", []):
            r = docker("run", *self.run_args(name, spec, c), check=False)
            if r.returncode != 0:
                die(f"{name}: init container {c['name']} failed: {(r.stderr or r.stdout).strip()[-500:]}")
        for c in spec["containers"]:
            docker("run", "-d", *self.run_args(name, spec, c))
        return time.time()

    def wait(self, started, budget):
        """Polls every container of the workloads started ({name: time})
        until each passes its startup (else readiness) probe; returns each
        workload's seconds to ready."""
        pending = {(n, c["name"]): c for n in started for c in self.workloads[n]["spec"]["template"]["spec"]["containers"]
                   if c.get("startupProbe") or c.get("readinessProbe")}
        ready = {n: 0.0 for n in started}
        while pending:
            for (n, cn), c in list(pending.items()):
                cname = f"{PREFIX}{n}-{cn}"
                state = json.loads(docker("inspect", "--format", "{{json .State}}", cname).stdout)
                if not state["Running"]:
                    logs = docker("logs", "--tail", "15", cname, check=False)
                    die(f"{n}/{cn} exited ({state['ExitCode']}{', out of memory' if state['OOMKilled'] else ''}):\n"
                        + (logs.stdout + logs.stderr)[-2000:])
                if self.probe_ok(n, c, c.get("startupProbe") or c["readinessProbe"]):
                    del pending[(n, cn)]
                    ready[n] = max(ready[n], time.time() - started[n])
                    if not any(k[0] == n for k in pending):
                        say(f"{n}: ready in {ready[n]:.0f} s")
                elif time.time() - started[n] > budget:
                    logs = docker("logs", "--tail", "15", cname, check=False)
                    die(f"{n}/{cn}: not ready after {budget} s:\n" + (logs.stdout + logs.stderr)[-2000:])
            if pending:
                time.sleep(1)
        return ready


def cleanup():
    names = docker("ps", "-a", "--filter", f"name=^{PREFIX}", "--format", "{{.Names}}").stdout.split()
    if names:
        docker("rm", "-f", "-v", *names)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keep", action="store_true", help="leave the containers running")
    ap.add_argument("--budget", type=int, default=300, help="seconds each workload may take to be ready")
    opts = ap.parse_args()
    lab = Lab(render(), tempfile.mkdtemp(prefix="tlk-try-"))
    cleanup()
    try:
        hosts = [a for s in lab.services for a in ("--add-host", f"{s}:127.0.0.1")]
        # The pod's network namespace, held by the curl image (toxiproxy's
        # configurer), which also runs the httpGet and tcpSocket probes.
        curl = next(c["image"] for c in lab.workloads["toxiproxy"]["spec"]["template"]["spec"]["containers"] if c["name"] == "configure")
        docker("run", "-d", "--name", NET, *hosts, "--entrypoint", "sleep", curl, "infinity")
        ready = {}
        for name in ORDER:
            say(f"{name}: starting")
            ready.update(lab.wait({name: lab.start(name)}, opts.budget))
        rest = sorted(n for n in lab.workloads if n not in ORDER)
        say(f"starting {', '.join(rest)} at once, as a rollout would")
        ready.update(lab.wait({n: lab.start(n) for n in rest}, opts.budget))
        say("requests through the lab: catalog, orders, ingest; then their traces in Jaeger")
        for url, data in [("http://127.0.0.1:18080/catalog/summary", None),
                          ("http://127.0.0.1:18082/orders", '{"customerId": 1, "lines": [{"productId": 1, "quantity": 2}]}'),
                          ("http://127.0.0.1:18084/api/routes", None),
                          ("http://127.0.0.1:18085/events", '{"type": "search", "source": "web-1", "payload": {"user": "u1"}}')]:
            cmd = ["exec", NET, "curl", "-s", "-m", "120", "-o", "/dev/null", "-w", "%{http_code}", url]
            if data:
                cmd[-1:-1] = ["-H", "Content-Type: application/json", "-d", data]
            say(f"  {url}: HTTP {docker(*cmd, check=False).stdout}")
        time.sleep(5)
        services = json.loads(docker("exec", NET, "curl", "-sf", "http://127.0.0.1:16686/api/services").stdout)["data"] or []
        say(f"Jaeger has traces of: {', '.join(sorted(services))}")
        stats = docker("stats", "--no-stream", "--format", "{{.Name}} {{.MemUsage}}").stdout
        print(f"{'workload':<12} {'ready after':>11}  memory (container: used / limit)")
        for n, t in ready.items():
            mem = "; ".join(l[len(PREFIX) + len(n) + 1:] for l in stats.splitlines() if l.startswith(f"{PREFIX}{n}-"))
            print(f"{n:<12} {t:>9.0f} s  {mem}")
        missing = [n for n in rest if n not in services]
        if missing:
            die(f"no traces in Jaeger from {', '.join(missing)}")
    finally:
        if not opts.keep:
            cleanup()
        shutil.rmtree(lab.work, ignore_errors=True)


if __name__ == "__main__":
    main()
