#!/usr/bin/env python3
"""What `scripts/k8s.sh check` asserts of the rendered manifests (infra/k8s/rendered/*.yaml) beyond their schema:
the rules of docs/deploy.md that a schema cannot see. Usage: invariants.py <repository root>. Prints one line per
broken rule and exits 1 when there is any."""
import base64
import hashlib
import os
import re
import sys
from urllib.parse import unquote, urlsplit

import yaml

ROOT = sys.argv[1]
RENDERED = os.path.join(ROOT, "infra/k8s/rendered")
RENDERS = ["base", "dev", "prod"]
WORKLOADS = {"Deployment", "StatefulSet", "DaemonSet", "Job"}
# The request paths the prod overlay autoscales; base runs at least two of each.
AUTOSCALED = {"gateway", "identity", "astrology", "content", "gamification", "health-brain"}
errors, notes = [], []


def read_lines(path):
    with open(path) as f:
        return [line.split("#", 1)[0].strip() for line in f if line.split("#", 1)[0].strip()]


SERVICES = [(line.split()[0], int(line.split()[1])) for line in read_lines(os.path.join(ROOT, "Services/services.tsv"))]
EXTERNAL = set(read_lines(os.path.join(ROOT, "infra/k8s/overlays/prod/external-secrets.txt")))
CONFIG_DOC = open(os.path.join(ROOT, "docs/configuration.md")).read()
# Each service's Redis user (RedisAccess, GENERATED): `user <service> <rules> #{sha256:<service>}`, comments aside.
REDIS_USERS = [line.strip() for line in open(os.path.join(ROOT, "infra/redis/users.acl")) if line.startswith("user ")]


def folder(name):
    return "".join(part[:1].upper() + part[1:] for part in name.split("-"))


def pod_spec(doc):
    if doc["kind"] in WORKLOADS:
        return doc["spec"]["template"]["spec"]
    if doc["kind"] == "CronJob":
        return doc["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    return None


def references(spec):
    """(kind, name, key or None, optional) of every ConfigMap, Secret and PVC a pod spec names."""
    for c in spec.get("containers", []) + spec.get("initContainers", []):
        for env in c.get("env", []):
            source = env.get("valueFrom", {})
            for field, kind in (("secretKeyRef", "Secret"), ("configMapKeyRef", "ConfigMap")):
                if field in source:
                    ref = source[field]
                    yield kind, ref["name"], ref["key"], ref.get("optional", False)
        for env in c.get("envFrom", []):
            for field, kind in (("secretRef", "Secret"), ("configMapRef", "ConfigMap")):
                if field in env:
                    yield kind, env[field]["name"], None, env[field].get("optional", False)
    for volume in spec.get("volumes", []):
        if "secret" in volume:
            s = volume["secret"]
            yield "Secret", s["secretName"], None, s.get("optional", False)
            for item in s.get("items", []):
                yield "Secret", s["secretName"], item["key"], s.get("optional", False)
        if "configMap" in volume:
            c = volume["configMap"]
            yield "ConfigMap", c["name"], None, c.get("optional", False)
        if "persistentVolumeClaim" in volume:
            yield "PersistentVolumeClaim", volume["persistentVolumeClaim"]["claimName"], None, False
    for secret in spec.get("imagePullSecrets", []):
        yield "Secret", secret["name"], None, False


def check_container(render, owner, c, pod_security):
    where = f"{render}: {owner}/{c['name']}"
    image = c.get("image", "")
    if "@sha256:" not in image:
        tag = image.rsplit("/", 1)[-1].partition(":")[2]
        if not tag:
            errors.append(f"{where}: image {image} has no tag")
        elif tag == "latest":
            errors.append(f"{where}: image {image} uses :latest")
        elif tag == "unset" and render != "base":
            errors.append(f"{where}: image {image} keeps base's placeholder tag (set it in the overlay's images:)")
    sc = c.get("securityContext", {})
    if sc.get("readOnlyRootFilesystem") is not True:
        errors.append(f"{where}: readOnlyRootFilesystem is not true")
    if sc.get("runAsNonRoot", pod_security.get("runAsNonRoot")) is not True:
        errors.append(f"{where}: runAsNonRoot is not true")
    if sc.get("allowPrivilegeEscalation") is not False:
        errors.append(f"{where}: allowPrivilegeEscalation is not false")
    if "ALL" not in sc.get("capabilities", {}).get("drop", []):
        errors.append(f"{where}: capabilities do not drop ALL")
    seccomp = sc.get("seccompProfile", pod_security.get("seccompProfile", {}))
    if seccomp.get("type") != "RuntimeDefault":
        errors.append(f"{where}: seccompProfile is not RuntimeDefault")
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        if probe not in c:
            errors.append(f"{where}: no {probe}")
    resources = c.get("resources", {})
    if not resources.get("requests") or "memory" not in resources.get("limits", {}):
        errors.append(f"{where}: no resource requests or memory limit")
    if image.startswith("lantern/"):
        for env in c.get("env", []):
            if f"`{env['name']}`" not in CONFIG_DOC:
                errors.append(f"{where}: sets {env['name']}, which docs/configuration.md does not describe")


def secret_value(secret, key):
    if key in (secret.get("stringData") or {}):
        return secret["stringData"][key]
    return base64.b64decode((secret.get("data") or {}).get(key, "")).decode()


def check_redis_users(render, objects):
    """Each service signs in to Redis as its own user: REDIS_URL comes from its own Secret (`lantern-<name>`, key
    `redis-url`), never a shared one. dev: the in-cluster Redis loads an ACL file whose users are
    infra/redis/users.acl's, and each service's URL names its user with the password whose hash the file holds."""
    urls = {}
    for (kind, name), d in objects.items():
        if kind != "Deployment":
            continue
        for c in d["spec"]["template"]["spec"]["containers"]:
            for env in c.get("env", []):
                if env["name"] != "REDIS_URL":
                    continue
                ref = env.get("valueFrom", {}).get("secretKeyRef")
                if ref is None or not re.fullmatch(f"lantern-{name}(-[a-z0-9]{{10}})?", ref["name"]) or ref["key"] != "redis-url":
                    errors.append(f"{render}: {name} must read REDIS_URL from key redis-url of its own Secret lantern-{name}")
                elif ("Secret", ref["name"]) in objects:
                    urls[name] = secret_value(objects[("Secret", ref["name"])], "redis-url")
    if render != "dev":
        return
    redis = objects.get(("StatefulSet", "redis"))
    if redis is None:
        return
    spec = redis["spec"]["template"]["spec"]
    args = spec["containers"][0].get("args", [])
    if "--aclfile" not in args:
        errors.append("dev: the Redis StatefulSet loads no --aclfile (each service's user)")
        return
    acl_path = args[args.index("--aclfile") + 1]
    acl = None
    for mount in spec["containers"][0].get("volumeMounts", []):
        if acl_path.startswith(mount["mountPath"].rstrip("/") + "/"):
            volume = next((v for v in spec.get("volumes", []) if v["name"] == mount["name"]), {})
            secret = objects.get(("Secret", volume.get("secret", {}).get("secretName")))
            if secret is not None:
                acl = secret_value(secret, acl_path[len(mount["mountPath"].rstrip("/")) + 1:])
    if not acl:
        errors.append(f"dev: Redis's {acl_path} is no key of a Secret it mounts")
        return
    hashes, lines = {}, []
    for line in acl.splitlines():
        m = re.fullmatch(r"(user (\S+) .*) #([0-9a-f]{64})", line)
        if m:
            hashes[m.group(2)] = m.group(3)
            line = f"{m.group(1)} #{{sha256:{m.group(2)}}}"
        lines.append(line)
    if lines != REDIS_USERS:
        errors.append("dev: overlays/dev/redis-users.acl is not infra/redis/users.acl's users: run bash scripts/k8s.sh render")
    for name, url in sorted(urls.items()):
        parts = urlsplit(url)
        password = unquote(parts.password or "")
        if unquote(parts.username or "") != name or name not in hashes:
            errors.append(f"dev: {name}'s redis-url does not sign in as its user {name} of the ACL file")
        elif hashlib.sha256(password.encode()).hexdigest() != hashes[name]:
            errors.append(f"dev: {name}'s redis-url password is not the one of overlays/dev/redis-users.acl "
                          f"(lantern-dev-only-redis-{name}; bash scripts/k8s.sh render)")


def check_render(render):
    path = os.path.join(RENDERED, f"{render}.yaml")
    text = open(path).read()
    docs = [d for d in yaml.safe_load_all(text) if d]
    objects = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    if "TRUST_FORWARDED_FOR" in text:
        errors.append(f"{render}: TRUST_FORWARDED_FOR appears (it stops the gateway's start-up; use TRUSTED_PROXIES)")
    if ("Namespace", "lantern") not in objects:
        errors.append(f"{render}: no Namespace lantern")
    for (kind, name), d in objects.items():
        if kind != "Namespace" and d["metadata"].get("namespace") != "lantern":
            errors.append(f"{render}: {kind}/{name} is not in namespace lantern")
        if kind == "Service" and d["spec"].get("type", "ClusterIP") in ("LoadBalancer", "NodePort"):
            errors.append(f"{render}: Service/{name} is of type {d['spec']['type']} (the Ingress is the entry)")
    if ("NetworkPolicy", "default-deny-ingress") not in objects:
        errors.append(f"{render}: no NetworkPolicy default-deny-ingress")

    required, optional_absent = set(), set()
    for (kind, name), d in objects.items():
        spec = pod_spec(d)
        if spec is None:
            continue
        owner = f"{kind}/{name}"
        if spec.get("automountServiceAccountToken") is not False:
            errors.append(f"{render}: {owner}: automountServiceAccountToken is not false")
        pod_security = spec.get("securityContext", {})
        for c in spec.get("containers", []) + spec.get("initContainers", []):
            check_container(render, owner, c, pod_security)
        for ref_kind, ref_name, key, optional in references(spec):
            target = objects.get((ref_kind, ref_name))
            if target is None:
                (optional_absent if optional else required).add((ref_kind, ref_name))
            elif key is not None and not optional:
                keys = set(target.get("data") or {}) | set(target.get("stringData") or {}) | set(target.get("binaryData") or {})
                if key not in keys:
                    errors.append(f"{render}: {owner} needs key {key} of {ref_kind}/{ref_name}, which it lacks")
    for d in objects.values():
        if d["kind"] == "Ingress":
            for tls in d["spec"].get("tls", []):
                if ("Secret", tls["secretName"]) not in objects:
                    required.add(("Secret", tls["secretName"]))

    # Every executable of the list: its Deployment, ports, probes on the ops port, Service and PDB.
    for name, port in SERVICES:
        deployment = objects.get(("Deployment", name))
        if deployment is None:
            errors.append(f"{render}: no Deployment {name} (Services/services.tsv)")
            continue
        containers = {c["name"]: c for c in deployment["spec"]["template"]["spec"]["containers"]}
        c = containers.get(name)
        if c is None:
            errors.append(f"{render}: Deployment/{name} has no container {name}")
            continue
        ports = {p.get("name"): p["containerPort"] for p in c.get("ports", [])}
        if ports != {"http": port, "ops": port + 1000}:
            errors.append(f"{render}: {name} ports {ports}, expected http {port} and ops {port + 1000}")
        env = {e["name"]: e.get("value") for e in c.get("env", [])}
        expected = {"HTTP_HOST": "0.0.0.0", "HTTP_PORT": str(port), "OPS_PORT": str(port + 1000)}
        if {k: env.get(k) for k in expected} != expected:
            errors.append(f"{render}: {name} must set HTTP_HOST=0.0.0.0, HTTP_PORT={port}, OPS_PORT={port + 1000}")
        for probe, path in (("startupProbe", "/health/ready"), ("readinessProbe", "/health/ready"), ("livenessProbe", "/health/live")):
            get = c.get(probe, {}).get("httpGet", {})
            if get.get("port") != "ops" or get.get("path") != path:
                errors.append(f"{render}: {name} {probe} must be GET {path} on the ops port")
        if not c.get("image", "").startswith(f"lantern/{name}:") and f"lantern/{name}@" not in c.get("image", ""):
            errors.append(f"{render}: {name} image {c.get('image')} is not lantern/{name}")
        service = objects.get(("Service", name))
        if service is None or service["spec"].get("type", "ClusterIP") != "ClusterIP":
            errors.append(f"{render}: no ClusterIP Service {name}")
        pdb = objects.get(("PodDisruptionBudget", name))
        if pdb is None or pdb["spec"].get("maxUnavailable") != 1:
            errors.append(f"{render}: no PodDisruptionBudget {name} with maxUnavailable 1")
        autoscaled = render == "prod" and name in AUTOSCALED
        replicas = deployment["spec"].get("replicas", 1)
        if autoscaled:
            hpa = objects.get(("HorizontalPodAutoscaler", name))
            if hpa is None or hpa["spec"]["scaleTargetRef"]["name"] != name or hpa["spec"].get("minReplicas", 1) < 2:
                errors.append(f"{render}: no HorizontalPodAutoscaler {name} with minReplicas >= 2")
            if "replicas" in deployment["spec"]:
                errors.append(f"{render}: Deployment/{name} sets replicas, which its HorizontalPodAutoscaler owns")
        elif render == "base" and name in AUTOSCALED and replicas < 2:
            errors.append(f"base: {name} runs {replicas} replica(s); at least 2")
    media = objects.get(("Deployment", "media"))
    media_env = {e["name"]: e.get("value") for c in (media or {}).get("spec", {}).get("template", {}).get("spec", {}).get("containers", [])
                 for e in c.get("env", [])}
    claims = [v for v in (media or {}).get("spec", {}).get("template", {}).get("spec", {}).get("volumes", []) if "persistentVolumeClaim" in v]
    if media and media_env.get("MEDIA_STORAGE") == "s3":
        # Photos in a bucket: stateless, so no volume, and rolling like the others.
        if claims or ("PersistentVolumeClaim", "lantern-media-photos") in objects:
            errors.append(f"{render}: media keeps photos in S3 but still claims a volume")
        if media["spec"].get("strategy", {}).get("type") == "Recreate":
            errors.append(f"{render}: media keeps photos in S3 but is replaced with Recreate (downtime for nothing)")
    elif media:
        if media["spec"].get("replicas", 1) != 1 or media["spec"].get("strategy", {}).get("type") != "Recreate":
            errors.append(f"{render}: media must run one replica with strategy Recreate (ReadWriteOnce photo volume)")
        if ("PersistentVolumeClaim", "lantern-media-photos") not in objects:
            errors.append(f"{render}: no PersistentVolumeClaim lantern-media-photos")

    check_redis_users(render, objects)

    missing = {name for _, name in required}
    if render == "dev":
        if required:
            errors.append(f"dev: references objects it does not define: {sorted(f'{k}/{n}' for k, n in required)}")
    elif render == "prod":
        if any(kind != "Secret" for kind, _ in required):
            errors.append(f"prod: references non-Secret objects it does not define: {sorted(required)}")
        if missing != EXTERNAL:
            errors.append(f"prod: Secrets referenced but not defined {sorted(missing)} differ from "
                          f"overlays/prod/external-secrets.txt {sorted(EXTERNAL)}")
    elif not missing <= EXTERNAL:
        errors.append(f"base: references {sorted(missing - EXTERNAL)}, which neither base nor external-secrets.txt has")
    for kind, name in sorted(optional_absent - required):
        if render != "base":
            notes.append(f"{render}: optional {kind}/{name} absent (its users start without it)")


def check_sources():
    base = open(os.path.join(ROOT, "infra/k8s/base/kustomization.yaml")).read()
    listed = re.findall(r"^\s*-\s*\.\./\.\./\.\./Services/([A-Za-z]+)/deploy\s*$", base, re.M)
    if listed != [folder(name) for name, _ in SERVICES]:
        errors.append(f"infra/k8s/base/kustomization.yaml lists {listed}, not Services/services.tsv's order")
    for top in ("infra/k8s", "Services"):
        for directory, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if f.endswith((".yaml", ".yml", ".env")) and (top == "infra/k8s" or directory.endswith("/deploy")):
                    if "TRUST_FORWARDED_FOR" in open(os.path.join(directory, f)).read():
                        errors.append(f"{os.path.relpath(os.path.join(directory, f), ROOT)}: TRUST_FORWARDED_FOR")


for render in RENDERS:
    check_render(render)
check_sources()
for note in notes:
    print(f"note: {note}")
for error in errors:
    print(f"error: {error}", file=sys.stderr)
if errors:
    sys.exit(1)
print(f"invariants hold for {', '.join(RENDERS)} ({len(SERVICES)} executables of Services/services.tsv)")
