"""A front end's way in to a cluster: the connection, the kubeconfig's names, the local store.

The CLI and the TUI open clusters only through this module (an import contract keeps them off
``kube`` and ``history``): a connection described by flags or by ``:ctx``/``:ns`` (``Connection``),
opened as one client (``Api``); the contexts a kubeconfig names and the namespaces a cluster
has, for ``--all-contexts``, the pickers and completion; and where the local history store lives.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from kubectl_spark.errors import ConfigError
from kubectl_spark.kube import config
from kubectl_spark.kube.client import Api, Connection, connect, get_json, history_scope
from kubectl_spark.localstore import Scope, default_path

__all__ = [
    "Api",
    "Connection",
    "Scope",
    "connect",
    "context_names",
    "default_history_path",
    "get_json",
    "history_scope",
    "kubeconfig_namespace",
    "namespace_names",
]


def context_names(kubeconfig: str | None) -> list[str]:
    """Every context the kubeconfig (the flag's, else ``$KUBECONFIG``'s, else ~/.kube/config) names."""
    return config.context_names(config.Selection(kubeconfig=kubeconfig))


def kubeconfig_namespace(connection: Connection) -> str:
    """``-n``, else the context's namespace, else default: what kubectl would use, no request made."""
    if connection.namespace:
        return connection.namespace
    try:
        return config.load(connection.selection()).namespace or "default"
    except ConfigError:
        return "default"


def namespace_names(connection: Connection) -> list[str]:
    """The cluster's namespaces, sorted (one list request, names only)."""
    with connect(dataclasses.replace(connection, namespace=None)) as api:
        found, _ = api.list(
            "/api/v1/namespaces",
            what="list namespaces",
            keep=lambda item: (item.get("metadata") or {}).get("name") or "",
        )
    return sorted(str(n) for n in found if n)


def default_history_path() -> Path:
    """Where the local history store is when ``--history-db`` does not say."""
    return default_path()
