"""``kubectl spark logs <app>[/<attempt>[/exec-<id>]]``: the driver's log by default.

Flag names follow stern and kubectl logs: --previous/-p, --follow/-f, --tail, --since,
--timestamps, --container/-c.
"""

from __future__ import annotations

import re
import sys

import typer

from kubectl_spark.app.act import node_reachable
from kubectl_spark.app.logtext import KEEP_HINT, PREVIOUS_GONE
from kubectl_spark.app.text import escape
from kubectl_spark.cli import common
from kubectl_spark.core.sparkview import only_kept
from kubectl_spark.errors import UsageError
from kubectl_spark.knowledge.names import shown


def since_seconds(text: str) -> int | None:
    if not text:
        return None
    units = {"s": 1, "m": 60, "h": 3600}
    parts = re.findall(r"(\d+)([smh])", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise UsageError(f'invalid --since "{shown(text)}": use a duration like 30s, 5m, 1h')
    seconds = sum(int(n) * units[u] for n, u in parts)
    if seconds > LONGEST_DURATION:
        # kubectl parses it with Go's time.ParseDuration, which stops at 2562047h47m16s.
        raise UsageError(f'invalid --since "{shown(text)}": longer than 2562047h')
    return seconds


LONGEST_DURATION = (2**63 - 1) // 10**9  # seconds in Go's largest time.Duration
INT64_MAX = 2**63 - 1


def check_tail(tail: int) -> None:
    """Kubectl's rules for --tail: -1 for all, else a count of lines an int64 holds."""
    if tail < -1:
        raise UsageError("--tail must be greater than or equal to -1")
    if tail > INT64_MAX:
        raise UsageError(
            f'invalid argument "{shown(str(tail))}" for "--tail" flag: value out of range'
        )


def _print_kept(
    loaded: common.Loaded, namespace: str, uid: str, pod: str, *, previous: bool
) -> bool:
    """Print the last lines a recorder kept of a gone pod; False if none kept any.

    The local history store first, then an in-cluster recorder (through the API server, as an aggregated API).
    With ``previous`` (``-p``), those of the run before the last.
    """
    from kubectl_spark.app.logtext import kept_lines
    from kubectl_spark.cli import globals as cli_globals

    if not uid or cli_globals.current().no_history:
        return False
    kept = kept_lines(
        loaded.api,
        namespace,
        uid,
        previous=previous,
        store=common.history_path(),
        recorder=common.recorder_wanted(),
        warn=common.warn,
    )
    if kept is None:
        return False
    ended = kept.doc.get("finishedAt") or "?"
    sys.stderr.write(
        escape(
            f"pod {pod} is gone; these are the last {kept.doc.get('tailLines', '?')} lines of its "
            f"{kept.doc.get('container', '?')} container ({kept.run_said(earlier=previous)}, "
            f"ended {ended}), kept by {kept.keeper}\n"
        )
    )
    sys.stdout.write(escape(kept.text))
    sys.stdout.flush()
    return True


def run(
    reference: str = typer.Argument(
        ...,
        metavar="APP[/ATTEMPT][/exec-ID]",
        help="What to show: app, app/2, app/exec-3 (the current attempt's), app/2/exec-3, or a driver pod.",
    ),
    previous: bool = typer.Option(
        False, "--previous", "-p", help="The previous (restarted) container's log."
    ),
    follow: bool = typer.Option(False, "--follow", "-f", help="Keep streaming new lines."),
    tail: int = typer.Option(-1, "--tail", help="Lines from the end to show (-1: all)."),
    since: str = typer.Option("", "--since", help="Only lines newer than this (e.g. 5m, 1h)."),
    timestamps: bool = typer.Option(
        False, "--timestamps", help="Prefix each line with its timestamp."
    ),
    container: str = typer.Option(
        "", "--container", "-c", help="Container name (default: the Spark container)."
    ),
) -> None:
    """Print the log of a driver attempt or an executor."""
    seconds = since_seconds(since)
    check_tail(tail)
    parts = reference.split("/")
    if len(parts) > 3 or any(not p for p in parts):
        raise UsageError(
            f'invalid reference "{shown(reference)}": use APP, APP/ATTEMPT, APP/exec-ID or '
            "APP/ATTEMPT/exec-ID"
        )
    if len(parts) == 2 and parts[1].startswith("exec-"):
        parts = [parts[0], "latest", parts[1]]  # an executor of the current attempt
    loaded = common.load()
    try:
        app, attempt = common.find_attempt(loaded.analysis, "/".join(parts[:2]))
        pod, node = attempt.driver_pod, attempt.node
        default_container = "spark-kubernetes-driver"
        if len(parts) == 3:
            executor = common.find_executor(app, attempt, parts[2])
            if executor.source != "cluster":
                if _print_kept(
                    loaded, app.namespace, executor.uid, executor.pod, previous=previous
                ):
                    return
                raise UsageError(
                    f"executor {executor.id} of {app.name}/{attempt.number} is gone (its pod "
                    f"{executor.pod} was deleted; last seen by {executor.source}): its "
                    + (PREVIOUS_GONE if previous else f"log went with it{KEEP_HINT}")
                )
            pod, node, default_container = executor.pod, executor.node, "spark-kubernetes-executor"
        elif attempt.outside:
            raise UsageError(
                f"the driver of {app.name}/{attempt.number} runs outside the cluster (Spark's "
                f"client mode): its log is where it runs; its executors' logs are here "
                f"({app.name}/{attempt.number}/exec-ID)"
            )
        elif not pod or attempt.uid is None or only_kept(loaded.snapshot.pods, attempt.uid):
            if attempt.uid and _print_kept(
                loaded, app.namespace, attempt.uid, pod or "?", previous=previous
            ):
                return
            raise UsageError(
                f"attempt {attempt.number} of {app.name} has no driver pod any more: its "
                + (PREVIOUS_GONE if previous else f"log is gone{KEEP_HINT}")
            )
        query: list[tuple[str, object]] = [("container", container or default_container)]
        if previous:
            query.append(("previous", "true"))
        if follow:
            query.append(("follow", "true"))
        if tail >= 0:
            query.append(("tailLines", tail))
        if seconds:
            query.append(("sinceSeconds", seconds))
        if timestamps:
            query.append(("timestamps", "true"))
        path = f"/api/v1/namespaces/{app.namespace}/pods/{pod}/log"
        # The kubelet serves the log: one on an unreachable node will not answer a retry either.
        reachable = node_reachable(loaded.snapshot, node)
        response = loaded.api.request(
            "GET",
            path,
            query=query,
            stream=True,
            what=f"get logs of pod {pod}"
            + (f" on {node}" if node else "")
            + ("" if reachable else f" (node {node} is unreachable)"),
            retry=reachable,
        )
        for chunk in response.stream(65536):
            sys.stdout.write(escape(chunk.decode("utf-8", "replace")))
            sys.stdout.flush()
    finally:
        loaded.api.close()
