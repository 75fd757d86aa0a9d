"""The protobuf request bodies kubectl's typed clients send, for the kinds a demo user creates.

They are SelfSubjectAccessReview (``kubectl auth can-i``), Eviction (``kubectl drain``),
Namespace (``kubectl create namespace``), ConfigMap (``kubectl create configmap``) and Job
(``kubectl create job``, through ``protoschema``'s table of field numbers):
client-go's typed clientsets post ``application/vnd.kubernetes.protobuf`` for built-in kinds;
the emulator answers in JSON (which the same requests accept) and decodes only these messages,
by field number from ``k8s.io/api``'s ``generated.proto``. Any other protobuf body is refused
with 415. A schema-less wire reader is enough: no generated code is needed.
"""

from __future__ import annotations

import base64
from typing import Any

from . import protoschema
from .errors import ApiError
from .protowire import Fields, fields

MAGIC = b"k8s\x00"
PROTOBUF = "application/vnd.kubernetes.protobuf"


def _str(f: Fields, n: int) -> str:
    return bytes(f[n][0]).decode() if n in f else ""


def _msg(f: Fields, n: int) -> Fields:
    return fields(bytes(f[n][0])) if n in f else {}


def _map(f: Fields, n: int, *, binary: bool = False) -> dict[str, str]:
    """A map<string, string> (or map<string, bytes>, as JSON's base64) field: entries key=1, value=2."""
    out = {}
    for entry in f.get(n, []):
        kv = fields(bytes(entry))
        value = bytes(kv[2][0]) if 2 in kv else b""
        out[_str(kv, 1)] = base64.b64encode(value).decode() if binary else value.decode()
    return out


def _object_meta(f: Fields) -> dict[str, Any]:
    """The ObjectMeta fields a create sets (name, generateName, namespace, labels, finalizers…)."""
    meta: dict[str, Any] = {}
    for n, key in ((1, "name"), (2, "generateName"), (3, "namespace")):
        if n in f:
            meta[key] = _str(f, n)
    for n, key in ((11, "labels"), (12, "annotations")):
        if n in f:
            meta[key] = _map(f, n)
    if 14 in f:
        meta["finalizers"] = [bytes(v).decode() for v in f[14]]
    return meta


def decode(body: bytes) -> dict[str, Any]:
    """Turn a protobuf-encoded SelfSubjectAccessReview or Eviction into its JSON form."""
    if not body.startswith(MAGIC):
        raise ApiError(400, "BadRequest", "unable to decode protobuf body: missing k8s magic")
    try:
        unknown = fields(body[len(MAGIC) :])
        type_meta = _msg(unknown, 1)
        kind = _str(type_meta, 2)
        if kind in protoschema.KINDS:
            return protoschema.decode_object(kind, bytes(unknown[2][0]) if 2 in unknown else b"")
        raw = fields(bytes(unknown[2][0])) if 2 in unknown else {}
        meta = _msg(raw, 1)
        metadata = {"name": _str(meta, 1), "namespace": _str(meta, 3)}
        if kind == "SelfSubjectAccessReview":
            spec = _msg(raw, 2)
            ra = _msg(spec, 1)
            attrs = {
                k: _str(ra, n)
                for n, k in enumerate(
                    ("namespace", "verb", "group", "version", "resource", "subresource", "name"),
                    start=1,
                )
            }
            return {
                "apiVersion": "authorization.k8s.io/v1",
                "kind": kind,
                "metadata": {},
                "spec": {"resourceAttributes": attrs} if 1 in spec else {},
            }
        if kind == "Namespace":
            spec = _msg(raw, 2)
            finalizers = [bytes(v).decode() for v in spec.get(1, [])]
            return {
                "apiVersion": "v1",
                "kind": kind,
                "metadata": _object_meta(meta),
                **({"spec": {"finalizers": finalizers}} if finalizers else {}),
            }
        if kind == "ConfigMap":
            doc: dict[str, Any] = {"apiVersion": "v1", "kind": kind, "metadata": _object_meta(meta)}
            if 2 in raw:
                doc["data"] = _map(raw, 2)
            if 3 in raw:
                doc["binaryData"] = _map(raw, 3, binary=True)
            if 4 in raw:
                doc["immutable"] = bool(raw[4][0])
            return doc
        if kind == "Eviction":
            opts = _msg(raw, 2)
            delete_options: dict[str, Any] = {}
            if 1 in opts:
                grace = int(opts[1][0])
                delete_options["gracePeriodSeconds"] = (
                    grace - (1 << 64) if grace >= 1 << 63 else grace
                )
            if 2 in opts:
                pre = _msg(opts, 2)
                delete_options["preconditions"] = {
                    "uid": _str(pre, 1) or None,
                    "resourceVersion": _str(pre, 2) or None,
                }
            if 4 in opts:
                delete_options["propagationPolicy"] = _str(opts, 4)
            if 5 in opts:
                delete_options["dryRun"] = [bytes(v).decode() for v in opts[5]]
            return {
                "apiVersion": "policy/v1",
                "kind": kind,
                "metadata": metadata,
                "deleteOptions": delete_options,
            }
    except (ValueError, IndexError, UnicodeDecodeError) as exc:
        raise ApiError(400, "BadRequest", f"unable to decode protobuf body: {exc}") from exc
    raise ApiError(
        415,
        "UnsupportedMediaType",
        "the emulator decodes protobuf only for SelfSubjectAccessReview, Eviction, Namespace, "
        f"ConfigMap and Job, not {kind or 'this kind'}; "
        "send application/json",
    )
