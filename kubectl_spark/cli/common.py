"""What every read command does first: the global flags into a cluster view (``app.view``)."""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from kubectl_spark import memory
from kubectl_spark.app.find import find_app, find_attempt, find_executor
from kubectl_spark.app.session import Api, Connection
from kubectl_spark.app.view import ClusterView, Wanted
from kubectl_spark.cli import globals as cli_globals
from kubectl_spark.core.model import App
from kubectl_spark.errors import UsageError
from kubectl_spark.knowledge.names import shown

__all__ = ["Loaded", "find_app", "find_attempt", "find_executor", "load", "one_app", "session"]

Loaded = ClusterView  # the name the commands know it by


def connection() -> Connection:
    """The connection the global flags describe: each Connection field is the flag of its name."""
    g = cli_globals.current()
    if g.all_contexts or g.contexts():
        raise UsageError(
            "several contexts (--context a,b or --all-contexts) are read by ls and tui only: "
            "give this command one context"
        )
    return Connection(
        **{f.name: getattr(g, f.name) for f in dataclasses.fields(Connection) if hasattr(g, f.name)}
    )


def connect() -> Api:
    """A connection for one command.

    Its reads share one --request-timeout (``Api.deadline``); what was set aside while reading
    is said on stderr, as kubectl says a server's warnings.
    """
    from kubectl_spark.app.session import connect as open_connection

    api = open_connection(connection())
    api.start_deadline()
    api.on_note = warn
    return api


def warn(text: str) -> None:
    from kubectl_spark.app.text import escape

    sys.stderr.write(escape(f"Warning: {text}") + "\n")


def history_path() -> Path:
    from kubectl_spark.app.session import default_history_path

    g = cli_globals.current()
    return Path(g.history_db).expanduser() if g.history_db else default_history_path()


def recorder_wanted() -> str:
    """``--recorder``, else ``$KUBECTL_SPARK_RECORDER``, else auto (checked like the flag)."""
    return _flag_or_env(
        cli_globals.current().recorder, "KUBECTL_SPARK_RECORDER", cli_globals.check_recorder
    )


def history_server_wanted() -> str:
    """``--history-server``, else ``$KUBECTL_SPARK_HISTORY_SERVER``, else auto (checked)."""
    return _flag_or_env(
        cli_globals.current().history_server,
        "KUBECTL_SPARK_HISTORY_SERVER",
        cli_globals.check_history_server,
    )


def _flag_or_env(flag: str | None, variable: str, check: Callable[[str, str], None]) -> str:
    """The flag (checked as it was parsed), else the variable, checked here, else auto."""
    if flag:
        return flag
    env = os.environ.get(variable) or ""
    if env:
        check(env, f"${variable}")
    return env or "auto"


def load(
    *,
    selector: str | None = None,
    group_by: str | None = None,
    all_namespaces: bool | None = None,
    history: bool = True,
    slim_pods: bool = False,
    spark_api: bool = True,
    spark_ui: str | None = None,
) -> ClusterView:
    """The cluster view the flags ask for.

    Actions pass ``history=False, spark_api=False``: a plan is made from the cluster as it is.
    """
    from kubectl_spark.app.view import load as load_view

    g = cli_globals.current()
    recorder = recorder_wanted() if history and not g.no_history else None  # checked first
    history_server = history_server_wanted() if spark_api else None
    api = connect()
    everywhere = g.all_namespaces if all_namespaces is None else all_namespaces
    wanted = Wanted(
        namespace=None if everywhere else api.namespace,
        selector=selector,
        group_by=group_by,
        history=history_path() if history and not g.no_history else None,
        slim_pods=slim_pods,
        spark_api=spark_api,
        history_server=history_server,
        recorder=recorder,
        spark_ui=spark_ui,
    )
    try:
        loaded = load_view(api, wanted)
    except BaseException:
        api.close()
        raise
    memory.hold_until_exit(loaded)  # one view a command: its end frees none of it
    return loaded


def check_spark_ui(url: str) -> None:
    """``--spark-ui``: an http(s) URL, refused before anything is read."""
    if url and not (url.startswith(("http://", "https://")) and len(url) > len("https://")):
        raise UsageError(
            f'invalid --spark-ui "{shown(url)}": use the http(s) URL of a driver\'s UI'
        )


@contextmanager
def view(
    *, history: bool = True, spark_api: bool = True, spark_ui: str | None = None
) -> Iterator[ClusterView]:
    """The cluster as read, closed when done."""
    loaded = load(history=history, spark_api=spark_api, spark_ui=spark_ui)
    try:
        yield loaded
    finally:
        loaded.close()


def session() -> AbstractContextManager[ClusterView]:
    """Read the cluster for an action (no history, no Spark UI: plans use the cluster as it is)."""
    return view(history=False, spark_api=False)


@contextmanager
def one_app(reference: str, *, spark_api: bool = True) -> Iterator[tuple[ClusterView, App]]:
    """Read the cluster and find one application."""
    with view(spark_api=spark_api) as loaded:
        yield loaded, find_app(loaded.analysis, reference)
