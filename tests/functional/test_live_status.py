"""What the live view says of its connection is true: an outage shows while it lasts and clears
when it ends; a server that came back without its state is listed again, not resumed; an
unknown context is an error on screen, not a "connecting" for ever; a namespace that is not a
name is refused before it reaches a request path."""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_spark.cluster.apiserver.embedded import (
    ADMIN_USER,
    EmbeddedApiServer,
    EmulatorOptions,
)
from kubectl_spark.kube.client import Connection, connect
from kubectl_spark.kube.live import LiveCluster
from kubectl_spark.tui.app import SparkTUI
from kubectl_spark.tui.sources import LiveSource
from kubectl_spark.tui.widgets.status import StatusBar
from tests.faultproxy import FaultProxy, through
from tests.helpers import create_pods, spark_pod
from tests.tui_pilot import SIZE, until
from tests.waiting import wait_until


@pytest.fixture
def direct(emulator: EmbeddedApiServer, tmp_path: Path) -> Iterator[Any]:
    with connect(Connection(kubeconfig=str(emulator.write_kubeconfig(tmp_path / "direct")))) as api:
        yield api


def names(live: LiveCluster) -> set[str]:
    return {p.metadata.name for p in live.snapshot().pods}


def test_an_outage_shows_while_it_lasts_and_clears_when_it_ends(
    emulator: EmbeddedApiServer, direct: Any, tmp_path: Path
) -> None:
    create_pods(direct, spark_pod("a-driver", "driver"))
    with FaultProxy(emulator.url) as proxy:
        kubeconfig = through(proxy, emulator.token, tmp_path / "proxied")
        live = LiveCluster(lambda: connect(Connection(kubeconfig=str(kubeconfig))), "default")
        live.start()
        try:
            assert live.ready.wait(20) and live.state == "live"
            proxy.cut()  # every connection dropped, new ones refused
            wait_until(
                lambda: live.state == "reconnecting" and live.error,
                lambda: f"the outage never showed: {live.state} {live.error!r}",
            )
            time.sleep(1.5)
            proxy.restore()
            create_pods(direct, spark_pod("a-exec-1"))
            # Within seconds, not when the next 300 s watch ends: each watch's latest outcome.
            wait_until(
                lambda: live.state == "live" and not live.error and "a-exec-1" in names(live),
                lambda: f"still {live.state} {live.error!r} with {sorted(names(live))}",
            )
        finally:
            live.stop()


def test_a_server_back_without_its_state_is_listed_again_not_resumed(
    emulator: EmbeddedApiServer, direct: Any, tmp_path: Path
) -> None:
    create_pods(direct, spark_pod("a-driver", "driver"), spark_pod("a-exec-1"))
    with (
        EmbeddedApiServer(EmulatorOptions()) as restarted,
        FaultProxy(emulator.url) as proxy,
    ):
        restarted.config.tokens[emulator.token] = ADMIN_USER  # the same credentials work there
        kubeconfig = through(proxy, emulator.token, tmp_path / "proxied")
        live = LiveCluster(
            lambda: connect(Connection(kubeconfig=str(kubeconfig))), "default", max_tombstones=0
        )
        live.start()
        try:
            assert live.ready.wait(20)
            wait_until(lambda: names(live) == {"a-driver", "a-exec-1"}, lambda: names(live))
            # The server comes back empty, its resourceVersions starting again from low.
            proxy.upstream = restarted.url
            proxy.cut()
            time.sleep(0.5)
            proxy.restore()
            wait_until(
                lambda: names(live) == set() and live.state == "live",
                lambda: f"kept {sorted(names(live))} ({live.state} {live.error!r})",
            )
        finally:
            live.stop()


def live_tui(kubeconfig: Path) -> SparkTUI:
    """The TUI on a live cluster; ``:ns`` and ``:ctx`` make a new source with what they name."""

    def make(namespace: str | None, context: str | None, all_namespaces: bool) -> LiveSource:
        return LiveSource(
            Connection(kubeconfig=str(kubeconfig), context=context, namespace=namespace),
            all_namespaces=all_namespaces,
        )

    return SparkTUI(make)


async def status_after(kubeconfig: Path, command: str, said: str) -> str:
    """The status bar of a live TUI, once ``:command`` made it say ``said``."""
    app = live_tui(kubeconfig)
    async with app.run_test(size=SIZE) as pilot:
        status = app.query_one(StatusBar)
        await until(pilot, lambda: "● live" in str(status.render()), what="live first")
        await pilot.press("colon", *command, "enter")
        await until(pilot, lambda: said in str(status.render()), what=f"{said} on the status bar")
        return str(status.render())


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("ctx nonexistent", 'context "nonexistent" does not exist'),
        ("ns nope", 'namespace "nope" not found'),  # as the CLI says it
    ],
)
async def test_an_unknown_context_or_namespace_leaves_the_view_with_the_error_on_screen(
    emulator: EmbeddedApiServer, tmp_path: Path, command: str, said: str
) -> None:
    """Issue 48: the view stays as it was (still live, the same context and namespace) and
    the status bar says why the switch did not happen."""
    shown = await status_after(emulator.write_kubeconfig(tmp_path / "kubeconfig"), command, said)
    assert "● live" in shown and "● failed" not in shown, shown
    assert f":{command}: " in shown
    assert "context kubectl-spark-emulator  namespace default" in shown  # as it was


async def test_a_known_namespace_is_switched_to(
    emulator: EmbeddedApiServer, tmp_path: Path
) -> None:
    shown = await status_after(
        emulator.write_kubeconfig(tmp_path / "kubeconfig"),
        "ns kube-system",
        "namespace kube-system",
    )
    assert "● failed" not in shown


async def test_a_namespace_that_is_not_a_name_is_refused(
    emulator: EmbeddedApiServer, tmp_path: Path
) -> None:
    kubeconfig = emulator.write_kubeconfig(tmp_path / "kubeconfig")
    made: list[str | None] = []

    def make(namespace: str | None, context: str | None, all_namespaces: bool) -> LiveSource:
        made.append(namespace)
        return LiveSource(
            Connection(kubeconfig=str(kubeconfig), context=context, namespace=namespace),
            all_namespaces=all_namespaces,
        )

    app = SparkTUI(make)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.5)
        await pilot.press("colon", *"ns ../../apis/x", "enter")
        await pilot.pause(0.5)
        assert "../../apis/x" not in made, made


def test_a_stop_that_waits_cuts_the_watches_and_leaves_no_thread_reading(
    emulator: EmbeddedApiServer, tmp_path: Path
) -> None:
    """``record`` exits only once no watch thread still reads TLS: OpenSSL's cleanup under a
    reading thread aborted the process once ("double free or corruption")."""
    conn = Connection(kubeconfig=str(emulator.write_kubeconfig(tmp_path / "kc")))
    live = LiveCluster(lambda: connect(conn), None, watch_timeout=300)
    live.start()
    wait_until(live.ready.is_set, lambda: "the watches never started")
    time.sleep(0.5)  # each watch now blocked in its read, its server answering nothing
    started = time.monotonic()
    live.stop(wait=5.0)
    assert [t.name for t in live.threads if t.is_alive()] == []
    assert time.monotonic() - started < 3.0  # cut, not waited out


async def test_the_status_bar_counts_as_prose_does() -> None:
    """ "1 app, 1 alert", not "1 apps, 1 alerts" (issue 48); large counts grouped."""
    from textual.app import App, ComposeResult

    class Bar(App[None]):
        def compose(self) -> ComposeResult:
            yield StatusBar()

    async with Bar().run_test(size=SIZE) as pilot:
        bar = pilot.app.query_one(StatusBar)
        for apps, alerts, said in ((1, 1, "1 app, 1 alert"), (1204, 0, "1,204 apps, 0 alerts")):
            bar.show(context="c", namespace="ns", state="live", last_event=None,
                     apps=apps, alerts=alerts)  # fmt: skip
            await pilot.pause()
            assert said in str(bar.render())


def _bad_source(
    kubeconfig: Path, namespace: str | None, context: str | None, _: bool, *, everywhere: bool
) -> LiveSource:
    return LiveSource(
        Connection(kubeconfig=str(kubeconfig), context=context, namespace=namespace),
        all_namespaces=everywhere,
    )


async def test_rejected_credentials_are_named_by_the_first_required_read(
    emulator: EmbeddedApiServer, tmp_path: Path
) -> None:
    """Issue 48, point 4: with a token the API server rejects, the status bar says that listing
    pods was refused (401), not that an optional lookup (the history scope, the in-cluster
    recorder's Service) failed."""
    doc = yaml.safe_load(emulator.write_kubeconfig(tmp_path / "kubeconfig").read_text())
    doc["users"][0]["user"] = {"token": "not-a-token-the-server-knows"}
    bad = tmp_path / "bad-kubeconfig"
    bad.write_text(yaml.safe_dump(doc))
    for everywhere, where in ((False, "default"), (True, "all namespaces")):
        app = SparkTUI(functools.partial(_bad_source, bad, everywhere=everywhere))
        async with app.run_test(size=SIZE) as pilot:
            status = app.query_one(StatusBar)
            await until(pilot, lambda bar=status: "● failed" in str(bar.render()), what="failed")
            shown = str(status.render())
        assert f"list pods in {where}: the server rejected the credentials" in shown, shown
        assert "401 Unauthorized" in shown, shown
