"""Finding what a user named: an application, an attempt, an executor (with errors that help)."""

from __future__ import annotations

from kubectl_spark.core.model import Analysis, App, Attempt, Executor
from kubectl_spark.errors import NotFound, UsageError


def find_app(analysis: Analysis, reference: str) -> App:
    """An application by name (the newest of that name) or by app id."""
    by_id = [a for a in analysis.apps if a.app_id == reference]
    if by_id:
        return by_id[-1]
    named = [a for a in analysis.apps if a.name == reference]
    if named:
        return max(named, key=lambda a: a.created_at or "")
    by_pod = [a for a in analysis.apps if any(t.driver_pod == reference for t in a.attempts)]
    if by_pod:
        return by_pod[0]
    names = sorted({a.name for a in analysis.apps})
    listing = ", ".join(names[:10]) + (" …" if len(names) > 10 else "") if names else "none here"
    raise NotFound(f'application "{reference}" not found (applications: {listing})', status=404)


def runs_of_schedule(analysis: Analysis, reference: str) -> list[App]:
    """The runs of a ScheduledSparkApplication named ``reference``, when no application is.

    An application's own name wins: a schedule and one of its runs never share one (runs are
    ``<schedule>-<time>``), but an unrelated application may be named like a schedule.
    """
    if any(reference in (a.name, a.app_id) for a in analysis.apps):
        return []
    return [a for a in analysis.apps if a.schedule == reference]


def find_attempt(analysis: Analysis, reference: str, *, acting: str = "") -> tuple[App, Attempt]:
    """``<app>/<n>``, ``<app>/latest`` or a driver pod name.

    ``acting``: the action (fence, force-kill) that will change the attempt. It must be named
    (``<app>/<n>`` or its driver pod): the latest attempt is usually the healthy one, the one
    an action must not pick by default.
    """
    app_ref, slash, which = reference.partition("/")
    if not slash:
        for app in analysis.apps:
            for attempt in app.attempts:
                if attempt.driver_pod == reference:
                    return app, attempt
        app = find_app(analysis, reference)
        which = "latest"
    else:
        app = find_app(analysis, app_ref)
    if not app.attempts:
        raise NotFound(f"application {app.name} has no driver attempts", status=404)
    if acting and which in ("latest", ""):
        listed = ", ".join(
            f"{app.name}/{a.number} ({a.state}{f' on {a.node}' if a.node else ''})"
            for a in app.attempts
        )
        raise UsageError(
            f"{acting} needs the attempt to act on, APP/N or its driver pod (the latest is "
            f"usually the healthy one): {listed}"
        )
    if which in ("latest", ""):
        return app, app.attempts[-1]
    if not which.isdecimal() or not 1 <= int(which) <= len(app.attempts):
        candidates = ", ".join(f"{app.name}/{a.number}" for a in app.attempts)
        raise UsageError(
            f'attempt "{which}" of {app.name} not found: candidates are {candidates}, {app.name}/latest'
        )
    return app, app.attempts[int(which) - 1]


def find_executor(app: App, attempt: Attempt, reference: str) -> Executor:
    """The executor a reference names; an error that says whether it existed, when it is not here.

    Spark numbers a driver's executors 1, 2, 3…: an id below the highest one seen was this
    attempt's, and its pod (with its log) is gone; one above it never was.
    """
    wanted = reference.removeprefix("exec-")
    for executor in attempt.executors:
        if executor.id == wanted or executor.pod == reference:
            return executor
    # Spark's own id, as its UI and the driver's log say it, for a pod whose label does not
    # carry it (the Deployment and StatefulSet allocators): the pod that ran that JVM.
    hosting = [e for e in attempt.executors if wanted in e.spark_ids]
    if hosting:
        return hosting[-1]
    from kubectl_spark.core.sparkview import exec_number, exec_numbers

    numbers = exec_numbers({e.id for e in attempt.executors})
    number = exec_number(wanted)
    if number is not None and numbers and number < max(numbers):
        raise UsageError(
            f"executor {wanted} of {app.name}/{attempt.number} is gone (Spark numbered it before "
            f"exec-{max(numbers)}): its pod was deleted, and its log with it; "
            f"`kubectl spark describe {app.name}` says why it was lost"
        )
    candidates = (
        ", ".join(
            f"{app.name}/{attempt.number}/exec-{e.id}"
            + (f" (Spark's {', '.join(e.spark_ids)})" if e.spark_ids else "")
            for e in attempt.executors
        )
        or "none"
    )
    raise UsageError(
        f'executor "{reference}" not found in {app.name}/{attempt.number}: '
        f"candidates are {candidates}"
    )
