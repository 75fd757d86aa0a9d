"""Resubmitting a SparkApplication of the Apache Spark Kubernetes Operator.

Read from its sources and documentation (apache/spark-kubernetes-operator):

- It has no suspend and no re-run switch. While an application is not terminated it restarts it
  itself, by ``spec.applicationTolerations.restartConfig`` (docs/spark_custom_resources.md,
  "Restart"); the spec is read when an attempt starts (AppInitStep builds the driver from it).
- A terminated one (ResourceReleased, TerminatedWithoutReleaseResources) is no longer reconciled
  (AppCleanUpStep.checkEarlyExitForTerminatedApp finishes without requeue): editing its spec does
  nothing.
- Deleting it and creating it again under the same name starts over at attempt id 0, and so with
  the app id ``<name>-0`` of its first run (SparkAppSubmissionWorker.generateSparkAppId), which
  that run's event log and the Spark History Server already hold.

So the way to run it again is a new SparkApplication with the same spec under a new name, the
old one kept with its history (``ttlAfterStopMillis`` or a delete removes it when wanted).
``ls`` shows the copy as the same application (its RESUBMITTED_FROM label).
"""

from __future__ import annotations

import copy
import dataclasses
import re

from kubectl_spark.core import apache, raw
from kubectl_spark.core.model import App
from kubectl_spark.core.raw import RawObject
from kubectl_spark.knowledge.labels import RESUBMITTED_FROM

from .base import Operation, Plan, event_on

NAME_MAX = 40  # its pods are <name>-<attemptId>-driver and <name>-<attemptId>-exec-<n>


def apache_resubmit(
    base: Plan, app: App, sparkapp: RawObject, *, suffix: str, now: str, actor: str,
    stamp: dict[str, str],
) -> Plan:  # fmt: skip
    name = raw.name(sparkapp)
    state = apache.summary(sparkapp)
    if state not in apache.TERMINATED:
        budget = apache.budget(sparkapp)
        return dataclasses.replace(
            base,
            refusal=(
                f"the Apache operator still runs SparkApplication {name} ({state or 'no state yet'}): "
                f"it restarts it itself by its restartConfig ({budget.text()}) and has no suspend "
                "or re-run switch. Force-kill the current attempt to let that policy act, or "
                "resubmit once it is ResourceReleased"
            ),
        )
    copy_name = f"{re.sub(r'-r[a-z0-9]{5,}$', '', name)}-r{suffix}"[:NAME_MAX].rstrip("-")
    api_version = raw.text(sparkapp, "apiVersion") or f"{apache.API_GROUP}/v1"
    body = {
        "apiVersion": api_version,
        "kind": "SparkApplication",
        "metadata": {
            "name": copy_name,
            "namespace": app.namespace,
            "labels": {**raw.labels(sparkapp), RESUBMITTED_FROM: name},
            "annotations": stamp,
        },
        "spec": copy.deepcopy(raw.mapping(sparkapp, "spec")),
    }
    create = Operation(
        "create",
        api_version,
        "sparkapplications",
        app.namespace,
        copy_name,
        f"a new SparkApplication with {name}'s spec: its attempts get app ids {copy_name}-0, "
        f"{copy_name}-1…, none of {name}'s",
        body,
    )
    event = event_on(
        app.namespace, "SparkApplication", api_version, name, raw.uid(sparkapp), "Resubmitted",
        f"{app.name} resubmitted by {actor} as SparkApplication {copy_name}", now, actor,
    )  # fmt: skip
    return dataclasses.replace(
        base,
        operations=(create, event),
        created=(body,),
        notes=(
            (
                f"a new SparkApplication, not a spec edit: the operator no longer reconciles "
                f"{name} ({state}), so a changed spec would do nothing; and not a delete and "
                f"re-create under the same name, which starts over at attempt id 0 with app id "
                f"{name}-0, the id its first run's event log and the History Server already hold"
            ),
            f"{name} is kept with its state history; ls shows both as one application",
        ),
    )
