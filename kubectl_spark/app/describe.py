"""``describe``'s text: attempts, executors, loss reasons with evidence and advice, alerts, events."""

from __future__ import annotations

from datetime import datetime

from kubectl_spark.app.advice import advice
from kubectl_spark.app.summary import summarize
from kubectl_spark.app.text import continued, escape, table
from kubectl_spark.core.model import App, Attempt, Executor, Reason
from kubectl_spark.knowledge.times import age, parse

FAULT = {
    "app": "the application's fault",
    "cluster": "the cluster's fault",
    "driver": "the driver's own decision",
    "user": "a user's action",
    "unknown": "cause unknown",
}


def _reason_lines(
    reason: Reason,
    indent: str,
    *,
    waiting: bool = False,
    role: str = "executor",
    attempt: Attempt | None = None,
) -> list[str]:
    """A loss reason, or (``waiting``) why nothing lost has started: no failure rule to tell."""
    more = indent + " " * 11
    fault = FAULT.get(reason.category, reason.category)
    if reason.code == "Completed":
        fault = "not a failure: it finished"
    lines = [
        f"{indent}{'Waiting:' if waiting else 'Reason:':<11}{reason.code} — {continued(reason.message, more)}",
        f"{more}{fault}" if waiting else f"{more}{fault}; {counters(reason, role)}",
    ]
    if reason.evidence:
        lines.append(f"{indent}Evidence:  {continued(reason.evidence[0], more)}")
        lines += [f"{more}{continued(e, more)}" for e in reason.evidence[1:]]
    todo = advice(reason, attempt, role)
    if todo:
        lines.append(f"{indent}{'To do:':<11}{todo}")
    return lines


def counters(reason: Reason, role: str = "executor") -> str:
    """Spark's two counts of an executor's loss, in words; for a driver, its owner's count.

    An executor's tasks count toward spark.task.maxFailures (exitCausedByApp: countsAsFailure)
    and the executor toward spark.executor.maxNumFailures (countsTowardMaxNumFailures).
    """
    if role == "driver":
        return (
            "counts as a failed attempt"
            if reason.counts_as_failure
            else "does not count as a failed attempt"
        )
    tasks = "its tasks count" if reason.counts_as_failure else "its tasks do not count"
    tasks += " toward spark.task.maxFailures (exitCausedByApp)"
    executor = (
        "counted toward spark.executor.maxNumFailures"
        if reason.counts_toward_max_failures
        else "not counted toward spark.executor.maxNumFailures"
    )
    return f"{tasks}; {executor}"


def text(app: App, now: datetime, events: list[dict[str, str]]) -> str:
    """``describe``'s text, escaped for a terminal (the TUI shows the same in a screen)."""
    lines = _header(app, now)
    lines.append(f"Attempts:     {len(app.attempts)}")
    for attempt in app.attempts:
        lines += _attempt(attempt)
    lines += _events(events, app)
    return escape("\n".join(lines)) + "\n"


def _header(app: App, now: datetime) -> list[str]:
    col = " " * 14
    summary = summarize(app)
    lines = [
        f"Name:         {continued(app.name, col)}",
        f"Namespace:    {continued(app.namespace, col)}",
        f"App ID:       {continued(app.app_id or '<none>', col)}",
        f"Source:       {app.source}" + (f" ({continued(app.owner, col)})" if app.owner else ""),
        *(
            [
                f"Schedule:     {continued(app.schedule, col)} (a run of this ScheduledSparkApplication)"
            ]
            if app.schedule
            else []
        ),
        f"State:        {app.state}",
        *_operator_lines(app, col),
        f"Created:      {app.created_at or '<unknown>'} ({age(parse(app.created_at), now)} ago)",
        f"Read from:    {', '.join(app.sources)}",
        # The numbers of the ls row, from the same summary.
        (
            f"Summary:      attempt {summary.attempt}/{summary.attempts}, driver {summary.driver}, "
            f"executors {summary.running}/{summary.executors} running, "
            f"lost {summary.lost_text()}, restarts {summary.restarts}"
        ),
    ]
    lines += [f"  note: {continued(n, '    ')}" for n in app.notes]
    lines.append("Alerts:" + ("       <none>" if not app.alerts else ""))
    lines += [f"  ! {a.type}: {continued(a.message, '    ')}" for a in app.alerts]
    return lines


def _operator_lines(app: App, col: str) -> list[str]:
    """The Apache operator's own state and restart budget (its SparkApplication's status)."""
    view = app.operator
    if view is None:
        return []
    state = str(view.get("state") or "<none>")
    if "attemptId" in view:
        state += f" (attempt id {view['attemptId']})"
    if view.get("message"):
        state += f": {view['message']}"
    lines = [f"Operator:     {continued(state, col)}"]
    if view.get("restart"):
        lines.append(f"Restart:      {continued(str(view['restart']), col)}")
    return lines


def _attempt(attempt: Attempt) -> list[str]:
    where = f" on {attempt.node}" if attempt.node else ""
    lines = [
        f"  #{attempt.number} {attempt.state:<11} driver {continued(attempt.driver_shown() + where, '      ')}"
        + (f", {attempt.restarts} restart(s)" if attempt.restarts else "")
        + (" [fenced]" if attempt.fenced else ""),
        f"      Created:   {attempt.created_at or '<unknown>'}"
        + (f"   Ended: {attempt.ended_at}" if attempt.ended_at else ""),
    ]
    if attempt.reason is not None:
        lines += _reason_lines(attempt.reason, "      ", role="driver", attempt=attempt)
    elif attempt.waiting is not None:
        lines += _reason_lines(attempt.waiting, "      ", waiting=True)
    if attempt.unknown_losses:
        lines.append(
            f"      Lost:      {attempt.unknown_losses} executor(s) Spark numbered that no "
            "source explains (cause unknown)"
        )
    if attempt.executors:
        lines += _executors(attempt)
    return lines


def _reason_cell(executor: Executor) -> str:
    if executor.reason:
        return f"{executor.reason.code} ({executor.reason.category})"
    return f"waiting: {executor.waiting.code}" if executor.waiting else "-"


def _executors(attempt: Attempt) -> list[str]:
    running = sum(1 for e in attempt.executors if e.state == "Running")
    lines = [f"      Executors: {running} running of {len(attempt.executors)}"]
    listing = table(
        ("ID", "POD", "NODE", "STATE", "RESTARTS", "REASON", "FROM"),
        [
            (
                e.id,
                e.pod or "<gone>",
                e.node or "-",
                e.state,
                str(e.restarts),
                _reason_cell(e),
                e.source,
            )
            for e in attempt.executors
        ],
    )
    lines += ["        " + line for line in listing.rstrip("\n").split("\n")]
    for executor in attempt.executors:
        if executor.reason is not None and executor.reason.code not in ("Completed", "OwnerGone"):
            lines.append(f"        exec-{continued(executor.id, '          ')}:")
            lines += _reason_lines(executor.reason, "          ", attempt=attempt)
        elif executor.reason is None and executor.waiting is not None:
            lines.append(f"        exec-{continued(executor.id, '          ')}:")
            lines += _reason_lines(executor.waiting, "          ", waiting=True)
    return lines


EVENTS_SHOWN = 10


def shown_events(events: list[dict[str, str]], limit: int = EVENTS_SHOWN) -> list[dict[str, str]]:
    """The Events ``describe`` has room for: every Warning first, then the latest others.

    A node loss's NodeNotReady and TaintManagerEviction matter more than the Pulled and
    Created that follow them; oldest first, as kubectl prints them.
    """
    if len(events) <= limit:
        return events
    order = sorted(range(len(events)), key=lambda i: (events[i]["type"] != "Warning", -i))
    kept = sorted(order[:limit])
    return [events[i] for i in kept]


def _events(events: list[dict[str, str]], app: App) -> list[str]:
    lines = ["Events:" + ("       <none>" if not events else "")]
    if events:
        shown = shown_events(events)
        listing = table(
            ("LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"),
            [(e["age"], e["type"], e["reason"], e["object"], e["message"]) for e in shown],
        )
        lines += ["  " + line for line in listing.rstrip("\n").split("\n")]
        if len(shown) < len(events):
            left = len(events) - len(shown)
            lines.append(
                f"  ({left} more not shown: Warnings first, then the latest; "
                f"kubectl spark events {app.name} -n {app.namespace} lists all {len(events)})"
            )
    return lines


def schedule_text(name: str, runs: list[App], now: datetime) -> str:
    """A ScheduledSparkApplication by its runs: each one's state, attempt and losses.

    Read from the runs (the SparkApplications it started, by their label or owner), so a
    tenant who may list SparkApplications sees it; oldest first, as Events are listed.
    """
    namespace = runs[0].namespace
    lines = [
        f"Schedule:     {continued(name, ' ' * 14)}",
        f"Namespace:    {continued(namespace, ' ' * 14)}",
        "Kind:         ScheduledSparkApplication (read from its runs)",
        f"Runs:         {len(runs)}",
    ]
    rows = [
        [
            run.name,
            summary.state,
            f"{summary.attempt}/{summary.attempts}",
            summary.lost_text(),
            age(parse(run.created_at), now),
        ]
        for run in sorted(runs, key=lambda a: a.created_at or "")
        for summary in (summarize(run),)
    ]
    runs_table = table(("RUN", "STATE", "ATTEMPT", "LOST", "AGE"), rows)
    return escape("\n".join(lines)) + "\n\n" + runs_table
