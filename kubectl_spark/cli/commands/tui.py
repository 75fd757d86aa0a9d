"""``kubectl spark tui``: the terminal UI (Textual is imported here, lazily, and nowhere else in the CLI)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import typer

from kubectl_spark.cli import globals as cli_globals


def run(
    selector: str = typer.Option(
        "",
        "--selector",
        "-l",
        help="Start filtered to applications whose pods have this label (key=val).",
    ),
    readonly: bool = typer.Option(False, "--readonly", help="Hide fence, force-kill and resubmit."),
) -> None:
    """Open the live terminal UI."""
    from kubectl_spark.app.session import connect
    from kubectl_spark.cli import clusters
    from kubectl_spark.cli.common import connection, history_path, recorder_wanted
    from kubectl_spark.tui.app import SparkTUI
    from kubectl_spark.tui.sources import LiveSource

    g = cli_globals.current()
    contexts = clusters.asked()
    if contexts:  # several: each made as --context NAME alone would make it
        cli_globals.use(dataclasses.replace(g, context=None, all_contexts=False))
    base = connection()
    for name in contexts or (None,):
        with connect(dataclasses.replace(base, context=name or base.context)):
            pass  # fail fast, with the CLI's one-line error, when the kubeconfig is unusable

    SparkTUI(
        source_maker(
            LiveSource,
            base,
            None if g.no_history else history_path(),
            None if g.no_history else recorder_wanted(),
        ),
        namespace=g.namespace,
        context=",".join(contexts) if contexts else g.context,
        all_namespaces=g.all_namespaces,
        readonly=readonly,
        initial_filter=f"-l {selector}" if selector else "",
        names=picker_names(base),
    ).run()


def source_maker(
    source: Callable[..., Any], base: Any, history: Any, recorder: str | None = None
) -> Callable[[str | None, str | None, bool], Any]:
    """What the TUI calls to follow a namespace or context: the CLI's connection with those changed.

    Every other connection flag (--server, --token, --as…, -v) carries over.
    """

    def make(namespace: str | None, context: str | None, all_namespaces: bool) -> Any:
        names = _contexts(base, context)
        if len(names) > 1:
            from kubectl_spark.tui.many import ManySource

            return ManySource({name: one(namespace, name, all_namespaces) for name in names})
        return one(namespace, names[0] if names else None, all_namespaces)

    def one(namespace: str | None, context: str | None, all_namespaces: bool) -> Any:
        conn = dataclasses.replace(
            base,
            context=context or base.context,
            namespace=namespace or base.namespace,
            interactive=False,  # a credential plugin must not write over the screen
        )
        # The TUI records into the history store while it is open (--no-history: it does not),
        # and starts from what the store and an in-cluster recorder kept.
        return source(
            conn, all_namespaces=all_namespaces, history=history, cluster_recorder=recorder
        )

    return make


def picker_names(base: Any) -> Callable[[str, str | None], list[str]]:
    """What a bare ``:ctx`` or ``:ns`` offers to pick from, ``all`` first in each.

    The kubeconfig's contexts, or the namespaces of the context shown (the first, when several
    are shown).
    """

    def names(kind: str, context: str | None) -> list[str]:
        from kubectl_spark.app.session import context_names, namespace_names

        if kind == "ctx":
            return ["all", *context_names(base.kubeconfig)]
        first = (context or "").split(",")[0]
        conn = dataclasses.replace(
            base,
            context=first if first and first != "all" else base.context,
            interactive=False,
        )
        return ["all", *namespace_names(conn)]

    return names


def _contexts(base: Any, context: str | None) -> list[str]:
    """``:ctx a,b`` (or ``--context a,b``) names several; ``all``: every one in the kubeconfig.

    A kubeconfig that cannot be read is said by the source, as for an unknown context.
    """
    if context == "all":
        from kubectl_spark.app.session import context_names
        from kubectl_spark.errors import KubectlSparkError

        try:
            return context_names(base.kubeconfig)
        except KubectlSparkError:
            return [context]  # its source fails: no context "all", said on the status bar
    if context and "," in context:
        return list(dict.fromkeys(n.strip() for n in context.split(",") if n.strip()))
    return [context] if context else []
