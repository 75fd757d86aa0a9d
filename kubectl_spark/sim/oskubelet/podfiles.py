"""What a kubelet hands a container before it starts: its environment and its volumes' files.

Read from the Pod as the API server stored it, so what Spark and the admission plugins put
there is what the process gets:

- ``env`` with ``value`` (``$(VAR)`` expanded as the kubelet does: a defined variable replaced,
  ``$$`` an escaped ``$``, an undefined reference left as it is), ``valueFrom.fieldRef`` (the
  downward API: name, namespace, uid, labels/annotations by key, node name, service account,
  pod and host IP), ``resourceFieldRef`` (limits and requests), ``configMapKeyRef`` and
  ``secretKeyRef``; ``envFrom``; the ``kubernetes`` Service's variables every pod gets;
- volumes: ``configMap``, ``secret``, ``emptyDir``, ``persistentVolumeClaim`` (a folder per
  claim), ``hostPath``, ``downwardAPI`` and ``projected`` — the service account's
  ``kube-api-access-*`` volume that kube-apiserver's ServiceAccount admission adds to every pod:
  a TokenRequest **bound to the pod** (so the API server sees the pod's identity in
  ``userInfo.extra``, what a fence's admission policy matches), ``kube-root-ca.crt``, the
  namespace.

A ConfigMap or Secret that is missing is a :class:`NotReady` (the kubelet keeps the container
in ContainerCreating with a FailedMount event and tries again), unless marked ``optional``.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from kubectl_spark.sim.client import Client, SimApiError

from .network import API_SERVICE_IP
from .runtime import Mount

_REFERENCE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")
_FIELD_KEY = re.compile(r"^metadata\.(labels|annotations)\['(.+)'\]$")


class NotReady(Exception):
    """Something the container needs is not there yet: its message is the FailedMount text."""


def expand(text: str, env: Mapping[str, str]) -> str:
    """The kubelet's $(VAR) expansion (k8s.io/kubernetes/third_party/forked/golang/expansion)."""

    def one(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name = match.group(1)
        return env[name] if name in env else match.group(0)

    return _REFERENCE.sub(one, text)


def _quantity_bytes(text: str) -> int:
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 10**3, "M": 10**6, "G": 10**9}
    for suffix, factor in units.items():
        if text.endswith(suffix):
            return int(float(text[: -len(suffix)]) * factor)
    return int(float(text))


def memory_limit(container: Mapping[str, Any]) -> int | None:
    limit = ((container.get("resources") or {}).get("limits") or {}).get("memory")
    return _quantity_bytes(str(limit)) if limit else None


class PodFiles:
    """Builds one pod's environment and volume folders under ``root``."""

    def __init__(
        self,
        client: Client,
        pod: Mapping[str, Any],
        root: Path,
        pod_ip: str,
        host_ip: str,
        claim_dir: Callable[[str, str], Path],
        api_service_ip: str = API_SERVICE_IP,
    ) -> None:
        self.client = client
        self.pod = pod
        self.root = root
        self.pod_ip = pod_ip
        self.host_ip = host_ip
        self.claim_dir = claim_dir
        self.api_service_ip = api_service_ip
        meta = pod["metadata"]
        self.namespace: str = meta["namespace"]
        self.name: str = meta["name"]
        self._objects: dict[tuple[str, str], dict[str, Any] | None] = {}

    # ----------------------------------------------------------------------- lookups
    def _object(self, kind: str, name: str) -> dict[str, Any] | None:
        key = (kind, name)
        if key not in self._objects:
            self._objects[key] = self.client.get(
                f"/api/v1/namespaces/{self.namespace}/{kind}/{name}"
            )
        return self._objects[key]

    def _data(self, kind: str, name: str, optional: bool) -> dict[str, str] | None:
        found = self._object(kind, name)
        if found is None:
            if optional:
                return None
            singular = "configmap" if kind == "configmaps" else "secret"
            raise NotReady(f'{singular} "{name}" not found')
        if kind == "secrets":
            return {
                k: base64.b64decode(v).decode("utf-8", "replace")
                for k, v in (found.get("data") or {}).items()
            }
        return dict(found.get("data") or {})

    def field(self, path: str) -> str:
        meta = self.pod["metadata"]
        spec = self.pod.get("spec") or {}
        simple = {
            "metadata.name": meta.get("name", ""),
            "metadata.namespace": meta.get("namespace", ""),
            "metadata.uid": meta.get("uid", ""),
            "spec.nodeName": spec.get("nodeName", ""),
            "spec.serviceAccountName": spec.get("serviceAccountName", ""),
            "status.podIP": self.pod_ip,
            "status.podIPs": self.pod_ip,
            "status.hostIP": self.host_ip,
            "status.hostIPs": self.host_ip,
        }
        if path in simple:
            return str(simple[path])
        keyed = _FIELD_KEY.match(path)
        if keyed:
            return str((meta.get(keyed.group(1)) or {}).get(keyed.group(2), ""))
        return ""

    def _resource(self, container: Mapping[str, Any], ref: Mapping[str, Any]) -> str:
        kind, _, name = str(ref.get("resource", "")).partition(".")
        value = ((container.get("resources") or {}).get(kind) or {}).get(name)
        if value is None:
            return ""
        if name == "memory":
            divisor = _quantity_bytes(str(ref.get("divisor") or "1"))
            return str(-(-_quantity_bytes(str(value)) // divisor))
        return str(value)

    # --------------------------------------------------------------------- environment
    def environment(self, container: Mapping[str, Any], base: Mapping[str, str]) -> dict[str, str]:
        env: dict[str, str] = dict(base)
        env.update(
            {
                "HOSTNAME": self.name,
                "KUBERNETES_SERVICE_HOST": self.api_service_ip,
                "KUBERNETES_SERVICE_PORT": "443",
                "KUBERNETES_SERVICE_PORT_HTTPS": "443",
                "KUBERNETES_PORT": f"tcp://{self.api_service_ip}:443",
            }
        )
        for source in container.get("envFrom") or []:
            prefix = source.get("prefix", "")
            for kind, key in (("configmaps", "configMapRef"), ("secrets", "secretRef")):
                if key in source:
                    ref = source[key]
                    data = self._data(kind, ref["name"], bool(ref.get("optional")))
                    env.update({prefix + k: v for k, v in (data or {}).items()})
        for item in container.get("env") or []:
            name = item["name"]
            if "value" in item:
                env[name] = expand(str(item.get("value") or ""), env)
                continue
            source = item.get("valueFrom") or {}
            if "fieldRef" in source:
                env[name] = self.field(source["fieldRef"].get("fieldPath", ""))
            elif "resourceFieldRef" in source:
                env[name] = self._resource(container, source["resourceFieldRef"])
            else:
                for kind, key in (("configmaps", "configMapKeyRef"), ("secrets", "secretKeyRef")):
                    if key in source:
                        ref = source[key]
                        data = self._data(kind, ref["name"], bool(ref.get("optional")))
                        if data is not None and ref["key"] in data:
                            env[name] = data[ref["key"]]
                        elif not ref.get("optional"):
                            raise NotReady(
                                f"couldn't find key {ref['key']} in {key[:-6]} {ref['name']}"
                            )
        return env

    # -------------------------------------------------------------------------- volumes
    def _write(self, folder: Path, files: Mapping[str, str], items: Any) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        chosen = {i["key"]: i.get("path", i["key"]) for i in items} if items else None
        for key, value in files.items():
            if chosen is not None and key not in chosen:
                continue
            target = folder / (chosen[key] if chosen else key)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(value)

    def _projected(self, folder: Path, sources: list[dict[str, Any]]) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for source in sources:
            if "serviceAccountToken" in source:
                spec = source["serviceAccountToken"]
                (folder / spec.get("path", "token")).write_text(self._token(spec))
            elif "configMap" in source:
                ref = source["configMap"]
                data = self._data("configmaps", ref["name"], bool(ref.get("optional")))
                self._write(folder, data or {}, ref.get("items"))
            elif "secret" in source:
                ref = source["secret"]
                data = self._data("secrets", ref["name"], bool(ref.get("optional")))
                self._write(folder, data or {}, ref.get("items"))
            elif "downwardAPI" in source:
                self._downward(folder, source["downwardAPI"].get("items") or [])

    def _downward(self, folder: Path, items: list[dict[str, Any]]) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for item in items:
            path = (item.get("fieldRef") or {}).get("fieldPath", "")
            (folder / item["path"]).write_text(self.field(path))

    def _token(self, spec: Mapping[str, Any]) -> str:
        """A TokenRequest for the pod's service account, bound to this pod (as the kubelet asks)."""
        meta = self.pod["metadata"]
        account = (self.pod.get("spec") or {}).get("serviceAccountName") or "default"
        body: dict[str, Any] = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {
                "expirationSeconds": int(spec.get("expirationSeconds") or 3607),
                "boundObjectRef": {
                    "kind": "Pod",
                    "apiVersion": "v1",
                    "name": meta["name"],
                    "uid": meta["uid"],
                },
            },
        }
        if spec.get("audience"):
            body["spec"]["audiences"] = [spec["audience"]]
        try:
            answer = self.client.create(
                f"/api/v1/namespaces/{self.namespace}/serviceaccounts/{account}/token", body
            )
        except SimApiError as err:
            raise NotReady(f"failed to fetch token: {err}") from err
        return str(answer["status"]["token"])

    def volumes(self) -> dict[str, Path]:
        """Each volume's folder (or file, for a hostPath file), by volume name."""
        made: dict[str, Path] = {}
        for volume in (self.pod.get("spec") or {}).get("volumes") or []:
            name = volume["name"]
            folder = self.root / "volumes" / name
            if "configMap" in volume:
                ref = volume["configMap"]
                data = self._data("configmaps", ref["name"], bool(ref.get("optional")))
                self._write(folder, data or {}, ref.get("items"))
            elif "secret" in volume:
                ref = volume["secret"]
                data = self._data("secrets", ref["secretName"], bool(ref.get("optional")))
                self._write(folder, data or {}, ref.get("items"))
            elif "projected" in volume:
                self._projected(folder, volume["projected"].get("sources") or [])
            elif "downwardAPI" in volume:
                self._downward(folder, volume["downwardAPI"].get("items") or [])
            elif "persistentVolumeClaim" in volume:
                folder = self.claim_dir(
                    self.namespace, volume["persistentVolumeClaim"]["claimName"]
                )
                folder.mkdir(parents=True, exist_ok=True)
            elif "hostPath" in volume:
                folder = Path(volume["hostPath"]["path"])
            else:  # emptyDir, and anything else a folder stands for
                folder.mkdir(parents=True, exist_ok=True)
            made[name] = folder
        return made

    def mounts(self, container: Mapping[str, Any], volumes: Mapping[str, Path]) -> list[Mount]:
        found: list[Mount] = []
        for mount in container.get("volumeMounts") or []:
            source = volumes.get(mount["name"])
            if source is None:
                continue
            if mount.get("subPath"):
                source = source / mount["subPath"]
            found.append(Mount(source, mount["mountPath"], bool(mount.get("readOnly"))))
        return found
