"""What every action command does once it has a plan: show it, confirm, check, apply, report."""

from __future__ import annotations

import sys
from typing import Any

from kubectl_spark.app.text import escape
from kubectl_spark.cli import render
from kubectl_spark.core.plans import Plan
from kubectl_spark.errors import ApiRequestError, KubectlSparkError, UsageError

DRY_RUN = ("none", "client", "server")


class PlanFailed(KubectlSparkError):
    """A plan stopped at a failed step (what was applied has been reported)."""


def check_dry_run(value: str) -> str:
    if value not in DRY_RUN:
        raise UsageError(f'invalid --dry-run value "{value}": must be "none", "client" or "server"')
    return value


def show(plan: Plan, output: str) -> None:
    if render.is_document(output):
        doc: Any = plan.to_json()
        if plan.action == "resubmit" and plan.created:
            doc = {"apiVersion": "v1", "kind": "List", "items": list(plan.created)}
        sys.stdout.write(render.document(doc, output))
        return
    lines = [
        f"Plan: {plan.action} {plan.app}"
        + (f"/{plan.attempt}" if plan.attempt else "")
        + f" in namespace {plan.namespace}"
    ]
    lines += [f"  {i}. {op.summary()}" for i, op in enumerate(plan.operations, start=1)]
    lines += [f"  note: {n}" for n in plan.notes]
    if plan.guarantees:
        lines.append("  what it guarantees, and what not:")
        lines += [f"    - {g}" for g in plan.guarantees]
    sys.stdout.write(escape("\n".join(lines)) + "\n")
    for warning in plan.warnings:
        sys.stderr.write(escape(f"Warning: {warning}") + "\n")


def execute(api: Any, plan: Plan, *, dry_run: str, yes: bool, output: str) -> None:
    """Refusal → error; no-op → say so; dry-run → print; else confirm, check permissions, apply."""
    from kubectl_spark.app.act import apply
    from kubectl_spark.cli.common import warn

    if plan.refusal:
        raise UsageError(plan.refusal)
    if plan.noop:
        sys.stdout.write(escape(f"{plan.action}: nothing to do: {plan.noop}") + "\n")
        return
    show(plan, output if dry_run == "client" else "")
    if dry_run == "client":
        return
    if dry_run == "none" and not yes:
        if not sys.stdin.isatty():
            raise UsageError(
                "refusing to act without confirmation: pass --yes (or --dry-run to only print the plan)"
            )
        sys.stderr.write("Apply this plan? [y/N] ")
        sys.stderr.flush()
        if sys.stdin.readline().strip().lower() not in ("y", "yes"):
            raise UsageError("not confirmed: nothing was changed")
    api.lift_deadline()  # from here each write and each wait has its own --request-timeout
    report = apply(api, plan, warn, server_dry_run=dry_run == "server")
    prefix = "(server dry run) " if dry_run == "server" else ""
    for op, why in report.done:
        if dry_run == "server":
            line = f"{why}: {op.summary()}" if why else f"accepted: {op.summary()}"
        else:
            line = f"already done: {op.summary()} ({why})" if why else f"done: {op.summary()}"
        sys.stdout.write(escape(prefix + line) + "\n")
    for note in report.notes:
        sys.stderr.write(escape(f"Warning: {note}") + "\n")
    if report.failed is not None:
        op, exc = report.failed
        for skipped in report.skipped:
            sys.stdout.write(escape(f"not done: {skipped.summary()}") + "\n")
        conflict = isinstance(exc, ApiRequestError) and exc.status == 409
        why = (
            " (the object changed since the plan was made; nothing else was touched)"
            if conflict
            else ""
        )
        raise PlanFailed(
            f"{plan.action} stopped at step {len(report.done) + 1} ({op.verb} {op.target()}): {exc.message}{why}; "
            f"{len(report.applied)} step(s) "
            + ("accepted by the server (nothing changed), " if dry_run == "server" else "applied, ")
            + (f"{len(report.already)} already done, " if report.already else "")
            + f"{len(report.skipped) + 1} not"
            + (
                ""
                if dry_run == "server"
                else "; running the same command again finishes it once the cause is fixed"
            )
        )
    ended = (
        f": the server accepted {len(report.applied)} step(s); nothing was changed"
        if dry_run == "server"
        else ": done"
    )
    target = plan.app + (f"/{plan.attempt}" if plan.attempt else "")
    sys.stdout.write(escape(f"{prefix}{plan.action} {target}{ended}") + "\n")
