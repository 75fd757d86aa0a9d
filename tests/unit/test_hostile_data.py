"""Hostile cluster data (hypothesis): arbitrary names, labels, messages, annotations and Event
texts — Rich markup, ANSI/OSC sequences, bidi controls, very long strings — never crash the core
or a renderer, and never reach the terminal unescaped."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from kubectl_spark.app import present
from kubectl_spark.app.describe import text as describe_text
from kubectl_spark.app.events import app_events
from kubectl_spark.cli import render
from kubectl_spark.cli.commands import history
from kubectl_spark.core.analyze import analyze
from kubectl_spark.core.inputs import Snapshot
from tests.hostile import NOW, RAW, clusters


@settings(
    max_examples=600, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(clusters())
def test_hostile_text_never_crashes_and_never_reaches_the_terminal_raw(snapshot: Snapshot) -> None:
    analysis = analyze(snapshot)
    out = [
        render.table(
            present.headers(all_namespaces=True, wide=True),
            [present.row(a, NOW, all_namespaces=True, wide=True) for a in analysis.apps],
        )
    ]
    for app in analysis.apps:
        out.append(describe_text(app, NOW, app_events(snapshot, app, NOW)))
        out.append(
            render.table(("TIME", "KIND", "ATTEMPT", "EXECUTOR", "MESSAGE"), history.rows(app))
        )
        out.append(render.document(app.to_json(), "json"))
        out.append(render.document(history.document(app), "yaml"))
    for text in out:
        assert not RAW.search(text), repr(RAW.search(text))
    for text in out[:1] + [t for i, t in enumerate(out[1:]) if i % 4 in (0, 1)]:  # not JSON/YAML
        forged = [line for line in text.splitlines() if line.lstrip().startswith("forged")]
        assert not forged, forged  # "line\r\nforged: yes" never passes for a line of ours
