"""Spark's executor lists asked while the pods are listed (``kube.sparkapi.ViewReads``), on
both backends: a driver is asked once its page is kept, the nodes are known and the list has
waited on the server, never before and never when its node is not Ready; the answer is the
one asked after the list (``read_views``), and a driver listed again (another object) is
asked again.

On the real control plane kube-apiserver's pod proxy dials the driver's pod IP, which no
simulated driver listens on: the answer is then the note that says so, still one request.
"""

from __future__ import annotations

import copy
import dataclasses
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from kubectl_spark.core.node import Node, Readiness, nodes_of
from kubectl_spark.core.pod import Pod
from kubectl_spark.kube import snapshot
from kubectl_spark.kube.client import Connection, connect
from kubectl_spark.kube.sparkapi import ViewReads, read_views
from tests.faultproxy import FaultProxy, through

PROXIED = "/proxy/api/v1/applications/"
WAIT = 30.0  # a bound for a hung read, never reached when the test passes


def _running(staged: Any) -> Any:
    stage = staged("s9-deleted-executors")
    stage.do("submit", "vanishing")
    stage.until("the driver running", lambda: len(stage.running(spark_role="driver")) == 1)
    return stage


def _listed(nodes: list[Any]) -> Future[Any]:
    done: Future[Any] = Future()
    done.set_result(nodes)
    return done


def _readers() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "kubectl-spark-read"}


def _asked(proxy: FaultProxy, earlier: set[threading.Thread]) -> int:
    """The executor lists asked for, once every read this test began has ended.

    A read's thread ends when nothing more waits; reads other tests left are not waited for.
    """
    deadline = time.monotonic() + WAIT
    while any(t.is_alive() for t in _readers() - earlier):
        assert time.monotonic() < deadline, "a read did not end"
        time.sleep(0.01)
    return proxy.count("GET", PROXIED)


def _not_ready(node: Node) -> Node:
    return dataclasses.replace(node, ready=Readiness(status="Unknown"))


def test_a_driver_is_asked_once_when_its_node_is_known_and_answers_as_asked_after(
    bed: Any, staged: Any, tmp_path: Path
) -> None:
    earlier = _readers()
    stage = _running(staged)
    server = stage.server or bed  # the emulator stage runs a server of its own
    with (
        FaultProxy(server.url) as proxy,
        connect(
            Connection(kubeconfig=str(through(proxy, server.token, tmp_path / "proxied")))
        ) as api,
    ):
        [found], _ = api.list("/api/v1/pods", label_selector="spark-role=driver")
        driver = Pod.of(found)  # as the gateway types it
        listed, _ = api.list("/api/v1/nodes")
        nodes = list(nodes_of(listed))  # as the gateway reads them
        host = driver.spec.node_name
        assert any(n.name == host for n in nodes)

        early = ViewReads(api)
        early.drivers_listed([driver])
        early.nodes_listed(_listed(nodes))
        assert _asked(proxy, earlier) == 0  # the list has not waited on the server: held
        early.list_waited()
        views = early.views([driver], nodes)
        told = views[driver.metadata.uid]
        assert "executors" in told if stage.kind == "emulator" else "note" in told, told
        assert _asked(proxy, earlier) == 1  # asked when the list waited, not again
        assert views == read_views(api, [driver], nodes)
        assert _asked(proxy, earlier) == 2

        again = copy.deepcopy(driver)  # the list started again: another object, same uid
        assert early.views([again], nodes) == views
        assert _asked(proxy, earlier) == 3

        waited = ViewReads(api)
        waited.list_waited()
        waited.drivers_listed([driver])
        assert _asked(proxy, earlier) == 3  # the nodes not known yet: held
        waited.nodes_listed(_listed(nodes))
        assert _asked(proxy, earlier) == 4  # once waited on, each driver is asked as it can be
        assert waited.views([driver], nodes) == views and _asked(proxy, earlier) == 4

        unready = [_not_ready(n) if n.name == host else n for n in nodes]
        late = ViewReads(api)
        late.list_waited()
        late.nodes_listed(_listed(unready))
        late.drivers_listed([driver])
        assert late.views([driver], unready) == {}  # on a node not Ready: never asked
        assert _asked(proxy, earlier) == 4
        answered = late.views([driver], nodes)  # the node Ready in the end: asked then
        assert answered == views and _asked(proxy, earlier) == 5


class _NodesTold(ViewReads):
    """``ViewReads`` that tells when the list has told it the nodes."""

    def __init__(self, api: Any) -> None:
        super().__init__(api)
        self.known = threading.Event()

    def nodes_listed(self, listed: Future[Any]) -> None:
        super().nodes_listed(listed)
        self.known.set()


class _Clock:
    """The list's clock (``paging.Listing.clock``), driven by the test, not by the machine.

    ``growing``: each step longer than the one before, so every page is waited for longer
    than the one before took to keep (the server is behind); else steps of one second, so
    none is. From its second reading on (the optional lists are asked after the first page),
    it reads on only once ``told`` says the nodes are known: events order the list, not time.
    """

    def __init__(self, growing: bool, told: threading.Event | None = None) -> None:
        self.growing, self.told = growing, told
        self.now, self.step, self.readings = 0.0, 1.0, 0

    def __call__(self) -> float:
        self.readings += 1
        if self.told is not None and self.readings > 1:
            assert self.told.wait(WAIT), "the nodes were never listed"
        self.step += 1.0 if self.growing else 0.0
        self.now += self.step
        return self.now


def test_reading_the_pods_asks_their_running_drivers_while_it_waits_on_the_server(
    bed: Any, staged: Any, tmp_path: Path
) -> None:
    """What ``ls`` does (``app.view.load``): the list tells ``ViewReads`` each page's drivers,
    the nodes, and a page it waited for longer than it took to keep the one before, so the
    driver has been asked by the time the reading returns. Where no page keeps the list
    waiting so (nearby), it is asked after. The list's clock is the test's (``_Clock``)."""
    earlier = _readers()
    stage = _running(staged)
    server = stage.server or bed
    with (
        FaultProxy(server.url) as proxy,
        connect(
            Connection(kubeconfig=str(through(proxy, server.token, tmp_path / "proxied")))
        ) as api,
    ):
        spark = ViewReads(api)
        snap, index = snapshot.read_indexed(
            api, None, slim_pods=True, spark=spark, limit=2, clock=_Clock(growing=False)
        )
        assert index is not None and len(index.drivers) == 1
        assert proxy.count("GET", "/api/v1/pods") >= 3, "one page or two: nothing waited for"
        assert _asked(proxy, earlier) == 0  # never waited on: held until asked after
        assert spark.views(index.drivers, snap.nodes) == read_views(api, index.drivers, snap.nodes)
        assert _asked(proxy, earlier) == 2

        told = _NodesTold(api)
        snap, index = snapshot.read_indexed(
            api, None, slim_pods=True, spark=told, limit=2, clock=_Clock(True, told.known)
        )
        assert index is not None
        assert _asked(proxy, earlier) == 3  # asked while the list waited
        views = told.views(index.drivers, snap.nodes)
        assert _asked(proxy, earlier) == 3
        assert views == read_views(api, index.drivers, snap.nodes)
