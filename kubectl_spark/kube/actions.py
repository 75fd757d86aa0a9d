"""Applying action plans: permissions first, then one operation at a time.

Before writing anything, every (verb, resource, namespace) the plan needs is checked with a
SelfSubjectAccessReview; a refusal names the missing permissions and writes nothing. Then the
operations run in order, each with its preconditions (UID, resourceVersion), and the first
failure stops the plan: what was applied and what was not is reported. A refusal that says the
step's end already holds (a pod already gone, an object already made as asked) is no failure:
the step is reported "already done" and the plan goes on, so running an action again finishes
one an earlier run left half-done. A write is never retried:
when its answer is lost, the object is re-read (core/plans/outcome.py) and the plan goes on if
the write took effect, or stops saying it did not, or that it cannot tell.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubectl_spark import errors
from kubectl_spark.core import raw
from kubectl_spark.core.plans import Operation, Plan
from kubectl_spark.core.plans.outcome import reached, took_effect

from .client import Api


def _path(op: Operation) -> str:
    base = "/api/v1" if op.api_version == "v1" else f"/apis/{op.api_version}"
    scoped = (
        f"{base}/namespaces/{op.namespace}/{op.resource}"
        if op.namespace
        else f"{base}/{op.resource}"
    )
    return (
        scoped
        if op.verb == "create"
        else f"{scoped}/{op.name}" + (f"/{op.subresource}" if op.subresource else "")
    )


def _object_path(op: Operation) -> str:
    """Where the object an operation writes can be read back."""
    path = _path(op)
    if op.verb == "create":
        return f"{path}/{op.name}"
    return path.removesuffix(f"/{op.subresource}") if op.subresource else path


def _settle(api: Api, op: Operation, lost: errors.OutcomeUnknown) -> str:
    """After a write whose answer was lost: a note if it took effect, else an error.

    Nothing is re-sent: the object as it is now says whether the write happened.
    """
    try:
        found: Any = api.request("GET", _object_path(op), what=f"re-read {op.target()}")
    except errors.NotFound:
        found = None
    except errors.KubectlSparkError as again:
        raise errors.OutcomeUnknown(
            f"{lost.message}; re-reading it failed too ({again.message}): "
            f"look at {op.target()} before acting again"
        ) from again
    if took_effect(op, found if isinstance(found, dict) else None):
        return f"the answer to step {op.verb} {op.target()} was lost; re-read: it took effect"
    raise errors.OutcomeUnknown(f"{lost.message}; re-read: it did not take effect (not re-sent)")


WAIT_POLL_SECONDS = 0.5


def _wait(api: Api, op: Operation) -> None:
    """Poll the object until a field holds (``equals``) or changes (``differsFrom``).

    What an operator does next is not the answer to a write: a plan that needs it (suspend,
    then resume) waits for it, within ``timeoutSeconds``, and says so if it does not come.
    """
    body = op.body or {}
    seconds = float(raw.number(body, "timeoutSeconds") or 120)
    check = _refused(api, op, body) if "refusedCreate" in body else _field(api, op, body)
    deadline = time.monotonic() + seconds
    while True:
        held, seen = check()
        if held:
            return
        if time.monotonic() > deadline:
            raise errors.KubectlSparkError(
                f"{op.target()}: {seen} after {seconds:g} s: {op.reason} did not happen"
            )
        time.sleep(WAIT_POLL_SECONDS)


def _field(api: Api, op: Operation, body: Mapping[str, object]) -> Callable[[], tuple[bool, str]]:
    """The object's field at ``path`` holds ``equals`` or differs from ``differsFrom``."""
    path = raw.texts(body, "path")

    def check() -> tuple[bool, str]:
        found: Any = api.request("GET", _path(op), what=op.summary())
        for key in path:
            found = found.get(key) if isinstance(found, dict) else None
        held = ("equals" in body and found == body["equals"]) or (
            "differsFrom" in body and found not in (None, "", body["differsFrom"])
        )
        return held, f"{'.'.join(path)} is {found!r}"

    return check


def _refused(api: Api, op: Operation, body: Mapping[str, object]) -> Callable[[], tuple[bool, str]]:
    """A dry-run create of ``refusedCreate`` is refused by the policy ``by`` (a fence at work).

    A dry run passes every admission step and stores nothing (``dryRun=All``). Only this
    fence's own policy counts (kube-apiserver names it: another policy of the cluster refusing
    the probe proves nothing about this one); any other error is raised.
    """
    by = body.get("by")
    said = f"ValidatingAdmissionPolicy '{by}'" if by else "ValidatingAdmissionPolicy"
    collection = f"/api/v1/namespaces/{op.namespace}/pods"

    def check() -> tuple[bool, str]:
        try:
            api.request(
                "POST",
                collection,
                body=body["refusedCreate"],
                query=[("dryRun", "All")],
                what=op.summary(),
                retry=False,
                idempotent=True,  # a dry run stores nothing
            )
        except errors.ApiRequestError as err:
            if err.status == 403 and said in str(err):
                return True, ""
            raise
        return False, "a new pod of the fenced attempt is still admitted"

    return check


def can(
    api: Api, verb: str, group: str, resource: str, subresource: str = "", namespace: str = ""
) -> bool:
    """Whether the user may: one SelfSubjectAccessReview."""
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {
            "resourceAttributes": {
                "verb": verb,
                "group": group,
                "resource": resource,
                "subresource": subresource,
                "namespace": namespace,
            }
        },
    }
    answer = api.request(
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        body=review,
        what="check permissions (SelfSubjectAccessReview)",
        idempotent=True,  # a review is answered, never stored
    )
    return bool((answer or {}).get("status", {}).get("allowed"))


def missing_permissions(api: Api, plan: Plan) -> list[str]:
    missing = []
    for verb, group, resource, subresource, namespace in plan.permissions():
        if not can(api, verb, group, resource, subresource, namespace):
            kind = f"{resource}/{subresource}" if subresource else resource
            kind = f"{kind}.{group}" if group else kind
            missing.append(
                f"{verb} {kind}"
                + (f" in namespace {namespace}" if namespace else " (cluster-wide)")
            )
    return missing


@dataclass
class Report:
    applied: list[Operation] = field(default_factory=list)
    failed: tuple[Operation, errors.KubectlSparkError] | None = None
    skipped: list[Operation] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # a lost answer, and what the re-read said
    # Steps whose end already held when the API server refused them, and why (outcome.reached).
    already: list[tuple[Operation, str]] = field(default_factory=list)
    # Every step that ended well, in order: "" if applied, else why it was already done.
    done: list[tuple[Operation, str]] = field(default_factory=list)


def apply(api: Api, plan: Plan, *, server_dry_run: bool = False) -> Report:
    report = Report()
    query: list[tuple[str, Any]] = [("dryRun", "All")] if server_dry_run else []
    for index, op in enumerate(plan.operations):
        try:
            try:
                _step(api, op, query, server_dry_run)
            except errors.OutcomeUnknown as lost:
                if server_dry_run:
                    raise  # a dry run stores nothing: there is nothing to re-read
                report.notes.append(_settle(api, op, lost))
            except (errors.NotFound, errors.Conflict) as refused:
                why = (
                    _in_dry_namespace(plan, index, refused)
                    if server_dry_run
                    else _end_reached(api, op, refused)
                )
                if not why:
                    raise
                report.already.append((op, why))
                report.done.append((op, why))
                continue
        except errors.KubectlSparkError as exc:
            report.failed = (op, exc)
            report.skipped = list(plan.operations[index + 1 :])
            return report
        report.applied.append(op)
        report.done.append((op, ""))
    return report


def _in_dry_namespace(plan: Plan, index: int, refused: errors.ApiRequestError) -> str:
    """Why a server dry run could not check a step: its namespace is an earlier dry-run create.

    A dry run stores nothing (``dryRun=All``), so the namespace a plan makes first does not
    exist for the steps after it; the server answers them 404, which says nothing of the plan.
    """
    if not isinstance(refused, errors.NotFound):
        return ""
    made = {
        op.name
        for op in plan.operations[:index]
        if op.verb == "create" and op.resource == "namespaces"
    }
    namespace = plan.operations[index].namespace
    if namespace in made and f'namespaces "{namespace}" not found' in refused.message:
        return f"not checked: its namespace {namespace} is made by an earlier step, for real only"
    return ""


def _end_reached(api: Api, op: Operation, refused: errors.ApiRequestError) -> str:
    """Why a step the API server refused (404, 409) needs no doing: its end holds, or "".

    The object as it is now decides (core/plans/outcome.py): a 404 on a delete is the end it
    wanted; a 409 is read again to tell a UID precondition (another pod of that name), or an
    object already made as asked, from a real conflict.
    """
    if op.verb not in ("delete", "patch", "create"):
        return ""
    if isinstance(refused, errors.NotFound) and op.verb != "create":
        found = None
    else:
        try:
            found = api.request("GET", _object_path(op), what=f"re-read {op.target()}")
        except errors.NotFound:
            found = None
    return reached(op, found if isinstance(found, dict) else None)


def _step(api: Api, op: Operation, query: list[tuple[str, Any]], server_dry_run: bool) -> None:
    """One operation of a plan, sent once."""
    if op.verb == "delete":
        options: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            **(op.body or {}),
        }
        if op.uid:
            options["preconditions"] = {"uid": op.uid}
        if server_dry_run:
            options["dryRun"] = ["All"]
        api.request("DELETE", _path(op), body=options, query=query, what=op.summary())
    elif op.verb == "patch":
        api.request(
            "PATCH",
            _path(op),
            body=op.body,
            query=query,
            content_type="application/merge-patch+json",
            what=op.summary(),
        )
    elif op.verb == "update":
        body = dict(op.body or {})
        body["metadata"] = {
            **raw.mapping(body, "metadata"),
            "resourceVersion": op.resource_version,
        }
        api.request("PUT", _path(op), body=body, query=query, what=op.summary())
    elif op.verb == "wait":
        if not server_dry_run:  # nothing was changed, so nothing will come of it
            _wait(api, op)
    else:
        api.request("POST", _path(op), body=op.body, query=query, what=op.summary())
