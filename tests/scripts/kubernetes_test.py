#!/usr/bin/env python3
"""deploy/kubernetes against the real binaries and the daemon's health service:
- kustomization.yaml lists every manifest and a Namespace, and images carry a pinned tag (the
  binaries' version), never `latest`;
- every cutuned and cutune command line in every container uses only options and subcommands the
  binaries' --help pages list (also the keys of the --config TOML), a non-loopback listen needs
  tokens (docs/api.md, "Exposure"), and its files lie in volumes of the right kind;
- every gRPC probe asks a health service name a started cutuned answers SERVING for: one with a
  GPU (the fake worker) for pods that request one, a table server for the others;
- ports of listen flags, probes, Services and Prometheus annotations are container ports;
- the GPU DaemonSet requests nvidia.com/gpu, selects GPU nodes and keeps its store on the node;
- the Job's shape files are the image's, and each line is a shape of its family;
- Secrets and ConfigMaps the manifests use but do not define are ones docs/deploy.md says how to
  create, and no Secret is committed.
  kubernetes_test.py --root SRC --cutuned BIN --cutune BIN --fake-worker BIN"""
import argparse
import glob
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import tomllib

import grpc
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_help import CommandLine  # noqa: E402

WORKLOADS = {"DaemonSet", "Deployment", "StatefulSet", "Job", "CronJob", "Pod"}
# Directories of the image that come from the source tree (the Dockerfile's `cp -r tables ...`).
IMAGE_DIRS = {"/opt/cutune/tables": "tables"}
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
SHAPE_DIMS = {"transpose": 2, "matmul": 3}

failures = []
passed = []


def fail(message):
    failures.append(message)


def check(name, condition, message):
    if condition:
        return True
    fail(f"{name}: {message}")
    return False


# --- the daemon's health service, asked over grpcio without generated code: the two messages
# have one field each (HealthCheckRequest.service = 1, HealthCheckResponse.status = 1).
def encode_request(service):
    data = service.encode()
    length, out = len(data), bytearray()
    while True:
        byte, length = length & 0x7F, length >> 7
        out.append(byte | (0x80 if length else 0))
        if not length:
            break
    return (b"\x0a" + bytes(out) + data) if data else b""


def decode_status(reply):
    status, i = 0, 0
    while i < len(reply):
        tag = reply[i]
        i += 1
        value, shift = 0, 0
        while True:
            byte = reply[i]
            i += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        if tag == 0x08:
            status = value
    return {0: "UNKNOWN", 1: "SERVING", 2: "NOT_SERVING", 3: "SERVICE_UNKNOWN"}.get(status, status)


class Daemon:
    """A cutuned on a unix socket in a scratch directory."""

    def __init__(self, cutuned, tmp, name, worker, env, tables=None):
        self.socket = os.path.join(tmp, f"{name}.sock")
        self.log_path = os.path.join(tmp, f"{name}.log")
        # Tokens required, as in the manifests: kubelet's probes send none, and need none.
        tokens = os.path.join(tmp, f"{name}-tokens")
        with open(tokens, "w") as f:
            f.write("probe-test-token\n")
        os.chmod(tokens, 0o600)
        argv = [cutuned, "--listen", f"unix:{self.socket}", "--db", os.path.join(tmp, f"{name}.db"),
                "--cache-dir", os.path.join(tmp, f"{name}-cache"), "--worker", worker,
                "--admin-tokens", tokens, "--read-tokens", tokens]
        if tables:
            argv += ["--tables", tables]
        self.log = open(self.log_path, "w+")
        self.process = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT,
                                        env={**os.environ, **env})
        self.channel = grpc.insecure_channel(f"unix:{self.socket}")
        grpc.channel_ready_future(self.channel).result(timeout=30)
        self.check = self.channel.unary_unary("/grpc.health.v1.Health/Check",
                                              request_serializer=encode_request,
                                              response_deserializer=decode_status)

    def health(self, service):
        try:
            return self.check(service, timeout=10)
        except grpc.RpcError as e:
            return e.code().name

    def stop(self):
        self.channel.close()
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=20)
        self.log.seek(0)
        if code != 0:
            fail(f"cutuned exited {code}:\n{self.log.read()}")
        self.log.close()


# --- manifests
def load(root):
    kustomization = yaml.safe_load(open(os.path.join(root, "kustomization.yaml")))
    objects = []
    for resource in kustomization.get("resources", []):
        path = os.path.join(root, resource)
        if not check("kustomization.yaml", os.path.isfile(path), f"resource {resource} missing"):
            continue
        for doc in yaml.safe_load_all(open(path)):
            if doc:
                doc["_file"] = resource
                objects.append(doc)
    listed = set(kustomization.get("resources", []))
    for path in sorted(glob.glob(os.path.join(root, "*.yaml"))):
        name = os.path.basename(path)
        check("kustomization.yaml", name == "kustomization.yaml" or name in listed,
              f"{name} is not among its resources")
    return kustomization, objects


def pod_spec(obj):
    spec = obj.get("spec", {})
    if obj["kind"] == "Pod":
        return spec, obj.get("metadata", {})
    if obj["kind"] == "CronJob":
        spec = spec["jobTemplate"]["spec"]
    template = spec.get("template", {})
    return template.get("spec", {}), template.get("metadata", {})


def effective_image(image, kustomization):
    """(name, tag) of `image` once kustomization.yaml's `images` are applied."""
    slash, colon = image.rfind("/"), image.rfind(":")
    name, tag = (image[:colon], image[colon + 1:]) if colon > slash else (image, "")
    for entry in kustomization.get("images", []):
        if entry["name"] == name:
            name, tag = entry.get("newName", name), entry.get("newTag", tag)
    return name, tag


def port_numbers(container):
    by_name, numbers = {}, set()
    for p in container.get("ports", []):
        numbers.add(p["containerPort"])
        if "name" in p:
            by_name[p["name"]] = p["containerPort"]
    return by_name, numbers


def resolve_port(port, container):
    by_name, numbers = port_numbers(container)
    if isinstance(port, str) and not port.isdigit():
        return by_name.get(port)
    return int(port) if int(port) in numbers else None


def mount_of(path, container, volumes):
    """(volumeMount, volume) holding `path`, the deepest mount first."""
    best = None
    for m in container.get("volumeMounts", []):
        mount = m["mountPath"].rstrip("/")
        if path == mount or path.startswith(mount + "/"):
            if best is None or len(mount) > len(best[0]["mountPath"].rstrip("/")):
                best = (m, volumes.get(m["name"]))
    return best


def main():
    parser = argparse.ArgumentParser()
    for flag in ("--root", "--cutuned", "--cutune", "--fake-worker"):
        parser.add_argument(flag, required=True)
    args = parser.parse_args()
    manifests = os.path.join(args.root, "deploy/kubernetes")
    kustomization, objects = load(manifests)
    version = subprocess.run([args.cutuned, "--version"], capture_output=True, text=True,
                             check=True).stdout.split()[-1]
    dockerfile = open(os.path.join(args.root, "Dockerfile")).read()
    image_user = re.findall(r"^USER\s+(\d+)", dockerfile, re.M)
    deploy_doc = open(os.path.join(args.root, "docs/deploy.md")).read()
    for image_dir, source in IMAGE_DIRS.items():
        check("Dockerfile", f"cp -r {source} {image_dir}" in dockerfile,
              f"no longer copies {source}/ to {image_dir}, which the manifests use")

    namespace = kustomization.get("namespace")
    check("kustomization.yaml", namespace, "sets no namespace")
    check("kustomization.yaml",
          any(o["kind"] == "Namespace" and o["metadata"]["name"] == namespace for o in objects),
          f"has no Namespace {namespace}")
    for o in objects:
        ns = o.get("metadata", {}).get("namespace")
        check(o["_file"], ns in (None, namespace), f"{o['kind']} {o['metadata']['name']} is in {ns}")
        check(o["_file"], o["kind"] != "Secret", "commits a Secret: tokens never go into the repo")
    for key, value in kustomization.get("labels", [{}])[0].get("pairs", {}).items():
        if key == "app.kubernetes.io/version":
            check("kustomization.yaml", value == version, f"labels version {value}, cutuned is {version}")

    config_maps = {o["metadata"]["name"]: o for o in objects if o["kind"] == "ConfigMap"}
    claims = {o["metadata"]["name"] for o in objects if o["kind"] == "PersistentVolumeClaim"}
    services = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Service"}
    workloads = [o for o in objects if o["kind"] in WORKLOADS]
    probes = {"gpu": set(), "table": set()}  # health names to ask each kind of daemon
    cutuned_lines = cutune_lines = 0
    kinds_seen = set()

    for w in workloads:
        spec, template_meta = pod_spec(w)
        name = f"{w['_file']}: {w['kind']} {w['metadata']['name']}"
        kinds_seen.add(w["kind"])
        volumes = {v["name"]: v for v in spec.get("volumes", [])}
        labels = template_meta.get("labels", {})
        pod_security = spec.get("securityContext", {})
        containers = spec.get("containers", []) + spec.get("initContainers", [])
        wants_gpu = any("nvidia.com/gpu" in c.get("resources", {}).get("limits", {})
                        for c in containers)

        for ref in sorted({v["secret"]["secretName"] for v in volumes.values() if "secret" in v} | {
                e["valueFrom"]["secretKeyRef"]["name"] for c in containers for e in c.get("env", [])
                if "secretKeyRef" in e.get("valueFrom", {})}):
            check(name, f"`{ref}`" in deploy_doc, f"Secret {ref}: docs/deploy.md does not say how to make it")
        for v in volumes.values():
            if "configMap" in v and v["configMap"]["name"] not in config_maps:
                ref = v["configMap"]["name"]
                check(name, f"`{ref}`" in deploy_doc,
                      f"ConfigMap {ref} is neither in the manifests nor made as docs/deploy.md says")
            if "persistentVolumeClaim" in v:
                check(name, v["persistentVolumeClaim"]["claimName"] in claims,
                      f"claim {v['persistentVolumeClaim']['claimName']} is not in the manifests")

        # Prometheus: the annotated port is a container port, and the one --http-listen (or its old
        # name --metrics-listen) uses.
        annotations = template_meta.get("annotations", {})
        metrics_ports = set()

        for c in containers:
            cname = f"{name} container {c['name']}"
            image, tag = effective_image(c.get("image", ""), kustomization)
            check(cname, tag and tag != "latest", f"image {image}:{tag} has no pinned tag")
            check(cname, tag == version, f"image tag {tag} is not cutuned's version {version}")
            argv = c.get("command", []) + c.get("args", [])
            program = os.path.basename(argv[0]) if argv else ""
            security = {**pod_security, **c.get("securityContext", {})}
            if program in ("cutuned", "cutune"):
                check(cname, security.get("runAsNonRoot") is True, "may run as root")
                check(cname, not image_user or str(security.get("runAsUser")) == image_user[-1],
                      f"runAsUser {security.get('runAsUser')} is not the image's USER {image_user}")
                check(cname, security.get("readOnlyRootFilesystem") is True, "root filesystem writable")
                check(cname, security.get("allowPrivilegeEscalation") is False,
                      "allows privilege escalation")

            def in_volume(path, kinds, writable, what):
                found = mount_of(path, c, volumes)
                if found is None:
                    for image_dir, source in IMAGE_DIRS.items():
                        if (path == image_dir or path.startswith(image_dir + "/")) and not writable:
                            local = os.path.join(args.root, source, os.path.relpath(path, image_dir))
                            return check(cname, os.path.exists(local),
                                         f"{what} {path}: the image has no such file ({local})") and local
                    return check(cname, False, f"{what} {path} is in no volume")
                mount, volume = found
                kind = next((k for k in kinds if volume and k in volume), None)
                check(cname, kind is not None, f"{what} {path} is on volume {mount['name']}, not "
                                               f"{' or '.join(kinds)}")
                check(cname, not (writable and mount.get("readOnly")), f"{what} {path} is read-only")
                return found

            if program == "cutuned":
                cutuned_lines += 1
                line = CommandLine(args.cutuned, argv[1:])
                for problem in line.problems:
                    fail(f"{cname}: {problem}")
                tokens = line.value("--admin-tokens") or line.value("--read-tokens") or line.value(
                    "--tls-client-ca")
                for flag in ("--listen", "--http-listen", "--metrics-listen"):
                    value = line.value(flag)
                    if value is None:
                        check(cname, flag != "--listen", "has no --listen")
                        continue
                    host, _, port = value.rpartition(":")
                    if host not in LOOPBACK and not value.startswith("unix"):
                        check(cname, tokens, f"{flag} {value} without tokens or client certificates")
                        check(cname, not line.given("--allow-unauthenticated"),
                              "serves unauthenticated callers")
                        check(cname, line.value("--tls-cert") or line.given("--allow-insecure-remote"),
                              f"{flag} {value}: neither TLS nor --allow-insecure-remote")
                    check(cname, port.isdigit() and int(port) in port_numbers(c)[1],
                          f"{flag} {value}: port {port} is no container port")
                    if flag != "--listen" and port.isdigit():
                        metrics_ports.add(int(port))
                for flag in ("--admin-tokens", "--read-tokens"):
                    if line.value(flag):
                        in_volume(line.value(flag), ["secret"], False, flag)
                if line.value("--config"):
                    found = in_volume(line.value("--config"), ["configMap"], False, "--config")
                    if isinstance(found, tuple) and found[1]:
                        mount, volume = found
                        cm = config_maps.get(volume["configMap"]["name"])
                        key = os.path.relpath(line.value("--config"), mount["mountPath"])
                        if check(cname, cm and key in cm.get("data", {}),
                                 f"--config {line.value('--config')}: no key {key} in the ConfigMap"):
                            for option in tomllib.loads(cm["data"][key]):
                                line_of_key = CommandLine(args.cutuned, [f"--{option}"])
                                check(cname, not line_of_key.problems,
                                      f"--config key {option}: `cutuned --help` has no --{option}")
                db = line.value("--db") or ""
                in_volume(db, ["hostPath", "emptyDir", "persistentVolumeClaim"], True, "--db")
                if line.value("--cache-dir"):
                    in_volume(line.value("--cache-dir"), ["hostPath", "emptyDir",
                                                          "persistentVolumeClaim"], True, "--cache-dir")
                if line.value("--tables"):
                    in_volume(line.value("--tables"), ["configMap", "persistentVolumeClaim"], False,
                              "--tables")
                if w["kind"] == "DaemonSet":
                    found = mount_of(db, c, volumes)
                    host_path = (found[1] or {}).get("hostPath", {}).get("path", "") if found else ""
                    check(cname, host_path.startswith("/var/lib/cutune"),
                          f"--db {db} is not on a hostPath under /var/lib/cutune (a restarted pod "
                          "must find its sweeps)")

                # Probes: gRPC health on the --listen port, liveness and readiness both.
                listen_port = (line.value("--listen") or "").rpartition(":")[2]
                for kind in ("livenessProbe", "readinessProbe"):
                    check(cname, "grpc" in c.get(kind, {}), f"has no gRPC {kind}")
                for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
                    probe = c.get(kind)
                    if not probe or "grpc" not in probe:
                        continue
                    check(cname, str(probe["grpc"]["port"]) == listen_port,
                          f"{kind} asks port {probe['grpc']['port']}, cutuned listens on {listen_port}")
                    service = probe["grpc"].get("service", "")
                    probes["gpu" if wants_gpu else "table"].add((service, f"{cname} {kind}"))

            elif program == "cutune":
                cutune_lines += 1
                line = CommandLine(args.cutune, argv[1:])
                for problem in line.problems:
                    fail(f"{cname}: {problem}")
                env = {e["name"]: e for e in c.get("env", [])}
                server = line.value("--server") or env.get("CUTUNE_SERVER", {}).get("value")
                if check(cname, server, "names no daemon (--server or CUTUNE_SERVER)"):
                    host, _, port = server.rpartition(":")
                    svc_name, _, rest = host.partition(".")
                    svc = services.get(svc_name)
                    check(cname, svc and rest.split(".")[:2] == [namespace, "svc"],
                          f"server {server} is not a Service of namespace {namespace}")
                    check(cname, svc and any(str(p["port"]) == port for p in svc["spec"]["ports"]),
                          f"server {server}: the Service has no port {port}")
                check(cname, line.value("--token") is None, "gives its token on the command line")
                check(cname, "secretKeyRef" in env.get("CUTUNE_TOKEN", {}).get("valueFrom", {}),
                      "takes no token from a Secret (CUTUNE_TOKEN)")
                if line.path == ["sweep"] and line.value("--shapes"):
                    local = in_volume(line.value("--shapes"), ["configMap"], False, "--shapes")
                    family = line.positionals[0] if line.positionals else ""
                    if isinstance(local, str) and check(cname, family in SHAPE_DIMS,
                                                        f"sweep of unknown family {family}"):
                        shapes = [s.strip() for s in open(local) if s.strip() and
                                  not s.lstrip().startswith("#")]
                        check(cname, shapes, f"{local} lists no shape")
                        bad = [s for s in shapes if not re.fullmatch(
                            r"[1-9]\d*(x[1-9]\d*){%d}" % (SHAPE_DIMS[family] - 1), s)]
                        check(cname, not bad, f"{local}: {len(bad)} lines are no {family} shape, "
                                              f"e.g. {bad[:3]}")
                if line.value("-o"):
                    in_volume(line.value("-o"), ["persistentVolumeClaim", "hostPath"], True, "-o")

            # Every other probe's port is one of the container's.
            for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
                for action in ("httpGet", "tcpSocket", "grpc"):
                    port = c.get(kind, {}).get(action, {}).get("port")
                    if port is not None:
                        check(cname, resolve_port(port, c), f"{kind} port {port} is no container port")

        if annotations.get("prometheus.io/scrape") == "true":
            port = annotations.get("prometheus.io/port", "")
            check(name, port.isdigit() and any(resolve_port(port, c) for c in containers),
                  f"prometheus.io/port {port} is no container port")
            check(name, port.isdigit() and int(port) in metrics_ports,
                  f"prometheus.io/port {port} is not where --http-listen serves ({metrics_ports})")
            check(name, annotations.get("prometheus.io/path") == "/metrics",
                  "prometheus.io/path is not /metrics")
        elif any(os.path.basename((c.get("command") or [""])[0]) == "cutuned" for c in containers):
            fail(f"{name}: cutuned pods are not annotated for Prometheus (prometheus.io/scrape)")

        if w["kind"] == "DaemonSet":
            gpu = [c for c in spec.get("containers", []) if c.get("command", [""])[0] == "cutuned"]
            for c in gpu:
                limit = c.get("resources", {}).get("limits", {}).get("nvidia.com/gpu")
                check(name, limit is not None and int(limit) >= 1, "requests no nvidia.com/gpu")
            selects = str(spec.get("nodeSelector", {})) + str(spec.get("affinity", {}))
            check(name, "nvidia.com/gpu" in selects, "selects no GPU nodes (nodeSelector/affinity)")
            check(name, gpu, "runs no cutuned")

        # Services select these pods: their target ports must be the pods' container ports.
        for svc in services.values():
            selector = svc["spec"].get("selector", {})
            if selector and all(labels.get(k) == v for k, v in selector.items()):
                for p in svc["spec"]["ports"]:
                    target = p.get("targetPort", p["port"])
                    check(f"{svc['_file']}: Service {svc['metadata']['name']}",
                          any(resolve_port(target, c) for c in spec.get("containers", [])),
                          f"targetPort {target} is no container port of {name}")

    for svc in services.values():
        selector = svc["spec"].get("selector", {})
        check(f"Service {svc['metadata']['name']}", any(
            all(pod_spec(w)[1].get("labels", {}).get(k) == v for k, v in selector.items())
            for w in workloads), "selects no pods")
    for kind in ("DaemonSet", "Deployment", "Job"):
        check("deploy/kubernetes", kind in kinds_seen, f"has no {kind}")
    check("deploy/kubernetes", cutuned_lines >= 2 and cutune_lines >= 3,
          f"only {cutuned_lines} cutuned and {cutune_lines} cutune command lines found")

    # Health names: asked of a daemon with a (fake) GPU and of a table server.
    with tempfile.TemporaryDirectory(prefix="cutune-k8s-") as tmp:
        no_gpu = os.path.join(tmp, "no-gpu-worker")
        with open(no_gpu, "w") as f:
            f.write(f'#!/bin/sh\nexec {args.fake_worker} "$@" --fail-start\n')
        os.chmod(no_gpu, 0o755)
        daemons = {"gpu": Daemon(args.cutuned, tmp, "gpu", args.fake_worker,
                                 {"FAKE_WORKER_DEVICES": "1"}),
                   "table": Daemon(args.cutuned, tmp, "table", no_gpu, {},
                                   tables=os.path.join(args.root, "tables"))}
        try:
            for kind, asked in probes.items():
                for service, where in sorted(asked):
                    status = daemons[kind].health(service)
                    check(where, status == "SERVING",
                          f"health service '{service}' answers {status} on a "
                          f"{'GPU daemon' if kind == 'gpu' else 'table server'}"
                          + (" (not a name cutuned registers)" if status == "NOT_FOUND" else ""))
        finally:
            for d in daemons.values():
                d.stop()
    check("deploy/kubernetes", probes["gpu"] and probes["table"],
          "no gRPC probes of the GPU daemon or of the table server")
    passed.append(f"{len(objects)} objects, {cutuned_lines} cutuned and {cutune_lines} cutune "
                  f"command lines, {sum(len(p) for p in probes.values())} gRPC probes")


if __name__ == "__main__":
    main()
    for message in dict.fromkeys(failures):  # once each, in order
        print(f"kubernetes: {message}", file=sys.stderr)
    if not failures:
        print(f"kubernetes: ok ({passed[-1]})")
    sys.exit(1 if failures else 0)
