"""What force-kill keeps of a bare driver before it deletes it, so that resubmit can copy it.

A spark-submit driver pod is the only place its spec lives (no Job template, no
SparkApplication): once force-kill deletes it, resubmit would find nothing to start again. The
plan lists what to keep (``Plan.keep``); this writes it to the local history store first, and
reads it back for resubmit. The driver is also filed with the pods the store keeps, so the
application stays listed (its attempt reads Gone) and ``resubmit APP`` finds it.
"""

from __future__ import annotations

from typing import Any

from kubectl_spark.core import raw
from kubectl_spark.core.model import App
from kubectl_spark.core.plans import Plan
from kubectl_spark.errors import KubectlSparkError

KIND = "resubmit-source"


def keep(api: Any, plan: Plan, now: str) -> str:
    """Write what the plan keeps; a warning when it could not be (the action goes on)."""
    if not plan.keep:
        return ""
    from kubectl_spark.kube.client import history_scope
    from kubectl_spark.localstore import LocalStore, default_path

    envelopes = [
        (
            {
                "metadata": {
                    "uid": f"{plan.app}/{raw.uid(obj)}",
                    "namespace": raw.namespace(obj) or plan.namespace,
                    "resourceVersion": raw.text(obj, "metadata", "resourceVersion") or "0",
                },
                "role": role,
                "keptAt": now,
                "object": obj,
            },
            False,
        )
        for role, obj in plan.keep
    ]
    drivers = [(obj, True) for role, obj in plan.keep if role == "driver"]
    try:
        with LocalStore(default_path()) as store:
            scope = history_scope(api)
            store.record(scope, KIND, envelopes, seen_at=now)
            store.record(scope, "pods", drivers, seen_at=now)
    except (KubectlSparkError, OSError) as exc:
        return (
            f"could not keep the driver's spec in the history store ({exc}): once the pod is "
            "gone, resubmit will have nothing to copy"
        )
    return ""


def kept_sources(api: Any, app: App, uid: str | None) -> dict[str, Any]:
    """The driver (by uid, else the newest kept) and the ConfigMaps and Services it owned."""
    from kubectl_spark.kube.client import history_scope
    from kubectl_spark.localstore import LocalStore, default_path

    try:
        with LocalStore(default_path(), create=False) as store:
            rows = store.load_under(history_scope(api), KIND, app.namespace, app.name)
    except (KubectlSparkError, OSError):
        return {}
    drivers = sorted(
        (r for r in rows if r.get("role") == "driver"), key=lambda r: str(r.get("keptAt"))
    )
    chosen = next((r for r in drivers if raw.uid(r.get("object")) == uid), None) or (
        drivers[-1] if drivers else None
    )
    if chosen is None:
        return {}
    driver = chosen["object"]

    def owned(role: str) -> list[dict[str, Any]]:
        return [
            r["object"]
            for r in rows
            if r.get("role") == role
            and any(
                ref.get("uid") == raw.uid(driver)
                for ref in raw.items(r.get("object"), "metadata", "ownerReferences")
            )
        ]

    return {
        "driver": driver,
        "configmaps": owned("configmap"),
        "services": owned("service"),
        "kept_at": str(chosen.get("keptAt") or ""),
    }
