"""A pod list's pages decoded slim in one pass (``core.slim.pod_page``) hold what parsing them
whole and slimming each pod holds, on both backends, page after page; a page with an item
that cannot be used is read the careful way, which sets that item aside by name."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from kubectl_spark.cli.main import main
from kubectl_spark.core import slim
from kubectl_spark.kube import paging
from kubectl_spark.kube.client import Connection, connect
from kubectl_spark.kube.lazy_kubernetes import EAGER
from tests.faultproxy import Fault, FaultProxy, through


def _two_a_page(kubeconfig: Path, **kept: Any) -> list[Any]:
    """Spark's pods listed two a page; ``kept``: how ``Api.list`` keeps pages and items."""
    with connect(Connection(kubeconfig=str(kubeconfig))) as api:
        items, _ = api.list("/api/v1/pods", label_selector="spark-role", limit=2, **kept)
    return items


def _listed(kubeconfig: Path, *, fast: bool) -> tuple[list[Any], int, int]:
    """Spark's pods, two a page; how many pages the fast path read, and how many pods were
    typed one by one after a whole parse (the path a page takes when its decode is refused)."""
    decoded = 0
    one_by_one = 0

    def counted(data: bytes) -> dict[str, Any] | None:
        nonlocal decoded
        page = slim.pod_page(data)
        decoded += page is not None
        return page

    def each(obj: dict[str, Any]) -> Any:
        nonlocal one_by_one
        one_by_one += 1
        return slim.pod(obj)

    saved = os.environ.pop(EAGER, None)
    if not fast:
        os.environ[EAGER] = "1"
    try:
        items = _two_a_page(kubeconfig, keep=each, keep_page=counted)
    finally:
        os.environ.pop(EAGER, None)
        if saved is not None:
            os.environ[EAGER] = saved
    return items, decoded, one_by_one


def _running(staged: Any) -> Any:
    """The scenario's driver and executors running (pods of several shapes: a page's worth)."""
    stage = staged("s9-deleted-executors")
    stage.do("submit", "vanishing")
    stage.until("executors running", lambda: len(stage.running(spark_role="executor")) >= 3)
    return stage


def test_pages_decoded_slim_hold_what_the_whole_parse_holds(staged: Any) -> None:
    stage = _running(staged)
    fast, pages, fell_back = _listed(stage.kubeconfig, fast=True)
    careful, none, typed_each = _listed(stage.kubeconfig, fast=False)
    assert len(fast) >= 4 and pages >= 2, "too few pages: the test proves nothing"
    # Each decoded page was kept as decoded: none parsed again whole (the fast path had been
    # silently off for typed pods, which the answers' equality alone does not show).
    assert fell_back == 0
    assert none == 0 and typed_each == len(careful)  # the fast paths off: never asked
    assert fast == careful


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ("uidless-item", "no-uid: it has no metadata.uid"),  # decoded, then found unusable
        ("scalar-item", "set aside an item: not an object"),  # not decoded at all
    ],
)
def test_a_page_with_an_unusable_item_is_read_the_careful_way(
    bed: Any,
    staged: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fault: str,
    said: str,
) -> None:
    stage = _running(staged)
    server = stage.server or bed  # the emulator stage runs a server of its own
    with FaultProxy(server.url) as proxy:
        kubeconfig = through(proxy, server.token, tmp_path / "proxied")
        proxy.faults = [Fault(fault, "GET", "/pods")]
        outputs = []
        for extra in ({}, {EAGER: "1"}):
            os.environ.update(extra)
            try:
                code = main(["--kubeconfig", str(kubeconfig), "ls", "-A", "-o", "json"])
            finally:
                os.environ.pop(EAGER, None)
            out, err = capsys.readouterr()
            assert code == 0, err
            assert said in err, err
            outputs.append(out)
        assert outputs[0] == outputs[1]
        assert json.loads(outputs[0])["items"], "no application read: the test proves nothing"


def test_the_next_page_is_asked_for_while_this_one_is_kept(
    bed: Any, staged: Any, tmp_path: Path
) -> None:
    """The request for page two is sent before page one is handed over (``Listing.read``):
    the server makes it while the client decodes and reads the first."""
    stage = _running(staged)
    server = stage.server or bed
    # The scenario moves only when the test ticks it: the pages are as many as now.
    pages = -(-len(_two_a_page(stage.kubeconfig)) // 2)
    with FaultProxy(server.url) as proxy:
        kubeconfig = through(proxy, server.token, tmp_path / "proxied")
        seen: list[int] = []

        def each_page(page: list[Any]) -> None:
            # Sent on a thread of its own: wait for it (a client that asks only after the
            # page is kept never sends it while this runs, and the count stays at 1). The
            # last page has no next one to wait for.
            deadline = time.monotonic() + 30
            while (
                len(seen) + 1 < pages
                and proxy.count("GET", "/pods") <= len(seen) + 1
                and time.monotonic() < deadline
            ):
                time.sleep(0.01)
            seen.append(proxy.count("GET", "/pods"))

        items = _two_a_page(kubeconfig, keep_page=slim.pod_page, each_page=each_page)
    assert len(seen) == pages >= 2, "one page: the test proves nothing"
    # Each page but the last: the next one already asked for; no page asked twice.
    assert seen[:-1] == list(range(2, len(seen) + 1))
    assert proxy.count("GET", "/pods") == len(seen)
    assert len({p.metadata.uid for p in items}) == len(items)


def test_a_pages_continue_token_is_read_from_its_head(staged: Any) -> None:
    """Both backends write a list's metadata before its items (kube-apiserver as Go's
    encoding/json orders ``metav1.ListMeta`` before ``Items``), so ``_continue_of`` reads the
    token from the few hundred bytes before them, not by skipping the whole page."""
    stage = _running(staged)
    with connect(Connection(kubeconfig=str(stage.kubeconfig))) as api:
        answer = api.request(
            "GET",
            "/api/v1/pods",
            query=[("labelSelector", "spark-role"), ("limit", 2)],
            decode=paging._Bytes,
        )
    data = answer.data
    token = json.loads(data)["metadata"]["continue"]
    assert token, "one page: the test proves nothing"
    head = data[: data.find(b'"items"')].rstrip()
    assert len(head) < 1024 and head.endswith(b",")
    assert paging._metadata_of(head[:-1] + b"}") == json.loads(data)["metadata"]
    assert paging._continue_of(data) == token
