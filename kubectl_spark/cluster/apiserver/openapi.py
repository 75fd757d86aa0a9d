"""The OpenAPI v3 documents kubectl reads before it creates or applies from a file.

kubectl's default ``--validate=strict`` first asks whether the server validates fields itself:
it looks in ``/openapi/v3`` for the group-version, then for the PATCH operation tagged with the
object's ``x-kubernetes-group-version-kind``, and for a ``fieldValidation`` query parameter on
it. When it finds one it sends ``fieldValidation=Strict`` and leaves the checking to the
server; without any OpenAPI it refuses ("failed to download openapi"). These documents say just
that, for every kind served; they carry no schemas, so ``kubectl explain`` has nothing to show.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from .resources import Registry, ResourceType

FIELD_VALIDATION = {
    "name": "fieldValidation",
    "in": "query",
    "description": "fieldValidation instructs the server on how to handle objects in the request "
    "containing unknown or duplicate fields.",
    "schema": {"type": "string", "uniqueItems": True},
}


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _item_path(rt: ResourceType) -> str:
    base = "/" + _gv_path(rt.group, rt.version)
    scope = "/namespaces/{namespace}" if rt.namespaced else ""
    return f"{base}{scope}/{rt.plural}/{{name}}"


def document(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    """The OpenAPI v3 document of one group-version, or None if it is not served."""
    paths: dict[str, Any] = {}
    for rt in registry.types:
        if rt.group != group or rt.version != version or "patch" not in rt.verbs:
            continue
        gvk = {"group": rt.group, "version": rt.version, "kind": rt.kind}
        paths[_item_path(rt)] = {
            "patch": {
                "operationId": f"patch{rt.kind}",
                "parameters": [FIELD_VALIDATION],
                "responses": {"200": {"description": "OK"}},
                "x-kubernetes-action": "patch",
                "x-kubernetes-group-version-kind": gvk,
            }
        }
    if not paths:
        return None
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": paths,
        "components": {"schemas": {}},
    }


def root(registry: Registry) -> dict[str, Any]:
    """``/openapi/v3``: each group-version's document, with a hash of its content."""
    served = {(rt.group, rt.version) for rt in registry.types}
    paths = {}
    for group, version in sorted(served):
        doc = document(registry, group, version)
        if doc is None:
            continue
        digest = hashlib.sha512(orjson.dumps(doc)).hexdigest()[:32].upper()
        path = _gv_path(group, version)
        paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
    return {"paths": paths}


def at(registry: Registry, rest: list[str]) -> dict[str, Any] | None:
    """The document at ``/openapi/v3/<rest>``: the root, ``api/v1`` or ``apis/<group>/<version>``."""
    if not rest:
        return root(registry)
    if rest[0] == "api" and len(rest) == 2:
        return document(registry, "", rest[1])
    if rest[0] == "apis" and len(rest) == 3:
        return document(registry, rest[1], rest[2])
    return None
