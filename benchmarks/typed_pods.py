"""Pods held as the API's JSON dicts (``core.slim.pod_page``) beside typed structs (issue 47).

Run: .venv/bin/python benchmarks/typed_pods.py [--pods 10000] [--rounds 7]

The issue's plan is to decode each pod list's page once, at the gateway, into typed structs
holding what the core reads, instead of slim dicts. Before the core moves, this measures the
claim on the same 10,000 generated pods (the demo's generator, listed from the emulator), in
one process, each round alternating the two:

- decoding the 20 pages of 500 (``slim.pod_page`` against a ``msgspec.Struct`` schema of the
  same fields, ``gc=False``), with the cyclic collector paused as ``ls`` pauses it, and on;
- the memory the decoded pods hold (tracemalloc, after the decode);
- a scan that reads each pod's uid, app id label and phase, as grouping's first pass does;
- the whole of what ``ls`` does with each page as it comes (the gateway's path): today, decoded
  slim with what pods repeat shared (``slim.pod_page(page, shared)``) and each pod's facts
  read (``podfacts.facts``); typed, decoded into the structs and the same facts read from
  their fields (``facts_of``, here: checked equal to ``podfacts.facts`` for every pod), nothing
  shared; the time, and the memory both hold after it.

The structs here are the benchmark's own (the product does not use them yet); they name the
fields ``core/slim.py`` keeps, so both hold the same facts. The result is written to
``benchmarks/results/<date>-typed-pods.json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import platform
import statistics
import time
import tracemalloc
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import msgspec
import orjson
from _docs import put_result
from _served import client_for, served

from kubectl_spark.core import podfacts, slim
from kubectl_spark.core.podfacts import PodFacts
from kubectl_spark.knowledge.clock import SystemClock
from kubectl_spark.knowledge.labels import (
    ACTION_ANNOTATION,
    APACHE_APP,
    APP_ID,
    APP_NAME,
    EXEC_ID,
    FENCE_LABEL,
    INACTIVE,
    OPERATOR_APP,
    ROLE,
    SOURCE,
    SPARK_CONTAINERS,
    SUBMISSION,
)
from kubectl_spark.sim.generate import generate

PAGE = 500


class Owner(msgspec.Struct, gc=False, rename="camel"):
    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool = False


class Meta(msgspec.Struct, gc=False, rename="camel"):
    name: str = ""
    namespace: str = ""
    uid: str = ""
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    owner_references: list[Owner] = []
    creation_timestamp: str = ""
    deletion_timestamp: str | None = None
    deletion_grace_period_seconds: int | None = None
    resource_version: str = ""


class Running(msgspec.Struct, gc=False, rename="camel"):
    started_at: str = ""


class Waiting(msgspec.Struct, gc=False, rename="camel"):
    reason: str = ""
    message: str = ""


class Terminated(msgspec.Struct, gc=False, rename="camel"):
    exit_code: int = 0
    signal: int | None = None
    reason: str = ""
    message: str = ""
    started_at: str = ""
    finished_at: str = ""


class State(msgspec.Struct, gc=False, rename="camel"):
    running: Running | None = None
    waiting: Waiting | None = None
    terminated: Terminated | None = None


class ContainerStatus(msgspec.Struct, gc=False, rename="camel"):
    name: str = ""
    state: State | None = None
    last_state: State | None = None
    restart_count: int = 0
    ready: bool = False
    started: bool | None = None


class Condition(msgspec.Struct, gc=False, rename="camel"):
    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""
    last_transition_time: str = ""


class Status(msgspec.Struct, gc=False, rename="camel"):
    phase: str = ""
    reason: str = ""
    message: str = ""
    start_time: str = ""
    pod_ip: str = msgspec.field(default="", name="podIP")
    conditions: list[Condition] = []
    container_statuses: list[ContainerStatus] = []
    init_container_statuses: list[ContainerStatus] = []


class Port(msgspec.Struct, gc=False, rename="camel"):
    name: str = ""
    container_port: int = 0


class Container(msgspec.Struct, gc=False, rename="camel"):
    name: str = ""
    ports: list[Port] = []


class Claim(msgspec.Struct, gc=False, rename="camel"):
    claim_name: str = ""


class Volume(msgspec.Struct, gc=False, rename="camel"):
    name: str = ""
    persistent_volume_claim: Claim | None = None


class Init(msgspec.Struct, gc=False, rename="camel"):
    name: str = ""
    restart_policy: str = ""


class Spec(msgspec.Struct, gc=False, rename="camel"):
    node_name: str = ""
    restart_policy: str = ""
    priority: int | None = None
    priority_class_name: str = ""
    init_containers: list[Init] = []
    containers: list[Container] = []
    volumes: list[Volume] = []


class Pod(msgspec.Struct, gc=False, rename="camel"):
    metadata: Meta = msgspec.field(default_factory=Meta)
    spec: Spec = msgspec.field(default_factory=Spec)
    status: Status = msgspec.field(default_factory=Status)


class PodList(msgspec.Struct, gc=False, rename="camel"):
    items: list[Pod] = []
    kind: str = ""


STRUCTS = msgspec.json.Decoder(PodList)


def pages_of(count: int) -> list[bytes]:
    """``count`` generated pods, listed from the emulator, as pages of 500 the server sends."""
    apps = max(1, count // 100)
    with served() as kubeconfig:
        client = client_for(kubeconfig)
        generate(client, SystemClock(), apps=apps, pods_per_app=count // apps)
        pods = client.list("/api/v1/pods")
        client.close()
    return [
        orjson.dumps({"kind": "PodList", "metadata": {}, "items": pods[i : i + PAGE]})
        for i in range(0, len(pods), PAGE)
    ]


def as_dicts(pages: list[bytes]) -> list[Any]:
    held: list[Any] = []
    for page in pages:
        doc = slim.pod_page(page)
        assert doc is not None
        held.extend(doc["items"])  # type: ignore[arg-type]
    return held


def as_structs(pages: list[bytes]) -> list[Any]:
    held: list[Any] = []
    for page in pages:
        held.extend(STRUCTS.decode(page).items)
    return held


def scan_dicts(pods: list[Any]) -> int:
    found = 0
    for pod in pods:
        meta = pod["metadata"]
        if meta["uid"] and meta["labels"].get("spark-app-selector") and pod["status"]["phase"]:
            found += 1
    return found


def scan_structs(pods: list[Any]) -> int:
    found = 0
    for pod in pods:
        meta = pod.metadata
        if meta.uid and meta.labels.get("spark-app-selector") and pod.status.phase:
            found += 1
    return found


def gateway_dicts(pages: list[bytes]) -> list[PodFacts]:
    """What ``ls`` holds of each page today: slim dicts, what pods repeat shared, their facts."""
    shared: dict[object, object] = {}
    held: list[PodFacts] = []
    for page in pages:
        doc = slim.pod_page(page, shared)
        assert doc is not None
        held.extend(podfacts.facts(pod) for pod in doc["items"])  # type: ignore[attr-defined]
    return held


def gateway_structs(pages: list[bytes]) -> list[PodFacts]:
    held: list[PodFacts] = []
    for page in pages:
        held.extend(facts_of(pod) for pod in STRUCTS.decode(page).items)
    return held


def facts_of(pod: Pod) -> PodFacts:
    """``podfacts.facts`` read from a struct's fields (what the core would read, typed).

    For the generated pods' shapes: a SparkCluster's members, the allocators' ``EXECID`` and
    init containers' restarts, which ``podfacts`` also reads, are left out of this estimate.
    """
    meta, status, labels = pod.metadata, pod.status, pod.metadata.labels
    owner = next(((r.kind, r.uid, r.name) for r in meta.owner_references if r.controller), None)
    restarts, running = 0, True
    statuses = status.container_statuses
    if statuses:
        chosen = next((c for c in statuses if c.name in SPARK_CONTAINERS), None)
        restarts = sum(c.restart_count for c in statuses)
        ended = any(c.state is not None and c.state.terminated is not None for c in statuses)
        looked = [chosen] if chosen is not None else statuses
        running = not ended and all(c.state is None or c.state.running for c in looked)
    notes = meta.annotations
    kept = SOURCE in notes
    source = notes[SOURCE] if notes.get(SOURCE) in podfacts.KEPT else "cluster"
    deleting = bool(meta.deletion_timestamp)
    fenced = labels.get(FENCE_LABEL) == "true"
    return PodFacts(
        pod=pod,  # type: ignore[arg-type]
        name=meta.name,
        uid=meta.uid,
        namespace=meta.namespace,
        created=podfacts.canonical_time(meta.creation_timestamp),
        role=labels.get(ROLE, ""),
        app_id=labels.get(APP_ID, ""),
        exec_id=labels.get(EXEC_ID, ""),
        app_name=labels.get(APP_NAME, ""),
        operator_app=labels.get(OPERATOR_APP, ""),
        apache_app=labels.get(APACHE_APP, ""),
        submission=labels.get(SUBMISSION, ""),
        owner_kind=(owner or ("", "", ""))[0],
        owner_uid=(owner or ("", "", ""))[1],
        owner_name=(owner or ("", "", ""))[2],
        node=pod.spec.node_name or None,
        phase=status.phase or "Unknown",
        restarts=restarts,
        source=source,
        action=notes.get(ACTION_ANNOTATION, ""),
        fenced=fenced,
        deleting=deleting,
        quiet=status.phase == "Running"
        and not deleting
        and not status.reason
        and running
        and not kept
        and not fenced
        and labels.get(INACTIVE) != "true"
        and not any(c.type == "DisruptionTarget" for c in status.conditions),
    )


def same_facts(a: list[PodFacts], b: list[PodFacts]) -> bool:
    """Every field but the pod itself (its shape is what differs)."""
    names = [f.name for f in dataclasses.fields(PodFacts) if f.name != "pod"]
    return all(
        [getattr(x, n) for n in names] == [getattr(y, n) for n in names]
        for x, y in zip(a, b, strict=True)
    )


def timed(work: Callable[[], Any], collector: bool) -> tuple[float, Any]:
    if not collector:
        gc.disable()
    try:
        start = time.perf_counter()
        result = work()
        return time.perf_counter() - start, result
    finally:
        gc.enable()


def held_bytes(decode: Callable[[list[bytes]], list[Any]], pages: list[bytes]) -> int:
    gc.collect()
    tracemalloc.start()
    pods = decode(pages)
    size = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del pods
    return size


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    pages = pages_of(args.pods)
    count = sum(len(orjson.loads(p)["items"]) for p in pages)
    assert scan_dicts(as_dicts(pages)) == scan_structs(as_structs(pages))  # the same facts
    assert same_facts(gateway_dicts(pages), gateway_structs(pages))
    runs: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        for name, decode, scan in (
            ("dicts", as_dicts, scan_dicts),
            ("structs", as_structs, scan_structs),
        ):
            for collector in (False, True):
                seconds, pods = timed(lambda decode=decode: decode(pages), collector)  # type: ignore[misc]
                key = f"{name} decode, collector {'on' if collector else 'paused'}"
                runs.setdefault(key, []).append(seconds)
                seconds, _ = timed(lambda scan=scan, pods=pods: scan(pods), False)  # type: ignore[misc]
                runs.setdefault(f"{name} scan", []).append(seconds)
                del pods
        for name, read in (("dicts", gateway_dicts), ("structs", gateway_structs)):
            seconds, _ = timed(lambda read=read: read(pages), False)  # type: ignore[misc]
            runs.setdefault(f"gateway as ls, {name}", []).append(seconds)
    medians = {k: round(statistics.median(v) * 1000, 1) for k, v in runs.items()}
    memory = {
        "dicts": held_bytes(as_dicts, pages),
        "structs": held_bytes(as_structs, pages),
        "gateway as ls, dicts (texts shared) and facts": held_bytes(gateway_dicts, pages),
        "gateway as ls, structs and facts": held_bytes(gateway_structs, pages),
    }
    result = {
        "date": datetime.now(UTC).date().isoformat(),
        "machine": f"{platform.machine()}, Python {platform.python_version()}",
        "pods": count,
        "rounds": args.rounds,
        "median_ms": medians,
        "held_bytes_per_pod": {k: round(v / count) for k, v in memory.items()},
    }
    print(json.dumps(result, indent=2))
    put_result("typed-pods", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
