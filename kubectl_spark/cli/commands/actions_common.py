"""Reading what an action's plan needs from the cluster (beyond the snapshot)."""

from __future__ import annotations

import itertools
from typing import Any

from kubectl_spark.core import raw
from kubectl_spark.core.model import App, Attempt
from kubectl_spark.errors import NotFound


def raw_pod(snapshot: Any, uid: str | None) -> dict[str, Any] | None:
    """A pod of the snapshot by uid, a client-mode driver (``Snapshot.owners``) included."""
    pods = itertools.chain(snapshot.pods, snapshot.owners)
    return (
        next((p for p in pods if isinstance(p, dict) and raw.uid(p) == uid), None) if uid else None
    )


def raw_named(items: Any, name: str | None) -> dict[str, Any] | None:
    return (
        next((o for o in items if isinstance(o, dict) and raw.name(o) == name), None)
        if name
        else None
    )


def node_reachable(snapshot: Any, node: str | None) -> bool:
    found = raw_named(snapshot.nodes, node)
    if found is None:
        return not snapshot.nodes  # no node list (no permission): assume reachable
    ready = raw.condition(found, "Ready")
    return raw.text(ready, "status") == "True"


def lease(api: Any, app: App) -> dict[str, Any] | None:
    try:
        found: dict[str, Any] = api.request(
            "GET",
            f"/apis/coordination.k8s.io/v1/namespaces/{app.namespace}/leases/kubectl-spark-{app.name}",
            what="get the fencing Lease",
        )
    except NotFound:
        return None
    return found


def owned_by(api: Any, app: App, attempt: Attempt, plural: str) -> list[dict[str, Any]]:
    items, _ = api.list(f"/api/v1/namespaces/{app.namespace}/{plural}", what=f"list {plural}")
    return [
        i
        for i in items
        if any(r.get("uid") == attempt.uid for r in raw.items(i, "metadata", "ownerReferences"))
    ]


def kill_context(app: App, attempt: Attempt, snapshot: Any) -> Any:
    """What force-kill needs from the cluster (the CLI and the TUI build the same plan)."""
    from kubectl_spark.core.plans import KillContext

    return KillContext(
        driver=raw_pod(snapshot, attempt.uid),
        node=raw_named(snapshot.nodes, attempt.node),
        node_reachable=node_reachable(snapshot, attempt.node),
        job=raw_named(snapshot.jobs, app.owner) if app.source == "job" else None,
        sparkapp=raw_named(snapshot.sparkapplications, app.owner)
        if app.source == "sparkapplication"
        else None,
        volumeattachments=tuple(snapshot.volumeattachments),
        pvcs=tuple(snapshot.pvcs),
    )


def resubmit_inputs(api: Any, app: App, snapshot: Any) -> dict[str, Any]:
    """The objects a resubmit copies (the CLI and the TUI build the same plan)."""
    last = next((a for a in reversed(app.attempts) if a.uid), None)
    bare = app.source == "pod" and last is not None
    return {
        "driver": raw_pod(snapshot, last.uid) if last else None,
        "job": raw_named(snapshot.jobs, app.owner) if app.source == "job" else None,
        "sparkapp": raw_named(snapshot.sparkapplications, app.owner or app.name)
        if app.source == "sparkapplication"
        else None,
        "configmaps": owned_by(api, app, last, "configmaps") if bare and last else [],
        "services": owned_by(api, app, last, "services") if bare and last else [],
    }
