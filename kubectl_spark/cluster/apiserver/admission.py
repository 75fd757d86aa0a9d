"""ValidatingAdmissionPolicy: kube-apiserver's CEL policies on writes, enforced the same way.

The expressions run in a real CEL interpreter (the ``common-expression-language`` package).

What is modelled, from k8s.io/apiserver ``pkg/admission/plugin/policy``:

- which requests a policy and its binding see (``matching``: resourceRules with ``*``, ``*/*``
  and ``pods/*``; namespace and object selectors; admissionregistration's own resources are
  exempt, so a policy cannot lock out its own removal);
- the variables an expression reads: ``object`` and ``oldObject`` (null on a create or a
  delete), ``request`` (operation, userInfo with its ``extra`` only when it has some, resource,
  name, namespace), ``namespaceObject``, ``params`` (always null here) and ``variables``;
- ``matchConditions`` (all must hold), then each validation in order; the first that does not
  hold denies with ``validating/dispatcher.go``'s wording — ``ValidatingAdmissionPolicy 'P' with
  binding 'B' denied request: M`` — and the code of its ``reason`` (Invalid, 422, when unset);
- ``failurePolicy``: an expression that fails to evaluate denies (Fail, the default) or is
  skipped (Ignore).

Only requests that come over HTTP are admitted (the identity is the request's): the
emulator's own controllers write as the cluster does, without asking.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubectl_spark.knowledge.selectors import selector_from_match

from .authz import Identity
from .errors import ApiError, forbidden, invalid

if TYPE_CHECKING:
    from .resources import ResourceType
    from .store import Store

GROUP = "admissionregistration.k8s.io"
POLICIES = f"validatingadmissionpolicies.{GROUP}"
BINDINGS = f"validatingadmissionpolicybindings.{GROUP}"
REASON_CODES = {"Unauthorized": 401, "Forbidden": 403, "Invalid": 422, "RequestEntityTooLarge": 413}

# Who sent the request being served (set by the server around a request; unset: an internal write).
requester: contextvars.ContextVar[Identity | None] = contextvars.ContextVar(
    "requester", default=None
)


@contextlib.contextmanager
def as_cluster() -> Iterator[None]:
    """Writes the cluster makes on its own inside a request: not admitted as the requester's.

    The garbage collector's cascade, the namespace and service-account controllers' writes.
    """
    token = requester.set(None)
    try:
        yield
    finally:
        requester.reset(token)


@dataclass(frozen=True)
class Request:
    operation: str  # CREATE, UPDATE, DELETE or CONNECT (a proxy request)
    rt: ResourceType
    namespace: str
    name: str
    subresource: str
    obj: Mapping[str, Any] | None
    old: Mapping[str, Any] | None
    dry_run: bool = False


class EvaluationError(Exception):
    pass


@functools.lru_cache(maxsize=512)
def _program(expression: str) -> Any:
    import cel  # the interpreter loads only when a policy is there to evaluate

    try:
        return cel.compile(expression)
    except Exception as exc:  # the library raises several kinds
        raise EvaluationError(f"compilation failed: {exc}") from exc


def evaluate(expression: str, context: Mapping[str, Any]) -> Any:
    program = _program(expression)
    try:
        return program.execute(dict(context))
    except Exception as exc:  # a missing key, a type mismatch, ...
        raise EvaluationError(f"expression '{expression}' resulted in error: {exc}") from exc


def check_policy(rt: ResourceType, obj: Mapping[str, Any]) -> None:
    """Refuse (422) a policy whose expressions do not compile, as the API server's validation."""
    if f"{rt.plural}.{rt.group}" != POLICIES:
        return
    spec = obj.get("spec") or {}
    causes = []
    for field in ("validations", "matchConditions", "variables"):
        for i, item in enumerate(spec.get(field) or []):
            expression = str((item or {}).get("expression") or "")
            try:
                _program(expression)
            except EvaluationError as exc:
                causes.append(
                    (
                        "FieldValueInvalid",
                        f"spec.{field}[{i}].expression",
                        f"Invalid value: {expression!r}: {exc}",
                    )
                )
    constraints = spec.get("matchConstraints") or {}
    for i, rule in enumerate(constraints.get("resourceRules") or []):
        resources = list((rule or {}).get("resources") or [])
        if "*/*" in resources and len(resources) > 1:
            causes.append(
                (
                    "FieldValueInvalid",
                    f"spec.matchConstraints.resourceRules[{i}].resources",
                    "Invalid value: []string{"
                    + ", ".join(f'"{r}"' for r in resources)
                    + "}: if '*/*' is present, must not specify other resources",
                )
            )
    if causes:
        name = str((obj.get("metadata") or {}).get("name") or "")
        raise invalid("ValidatingAdmissionPolicy", GROUP, name, causes)


def admit(store: Store, request: Request) -> None:
    """Raise the API server's denial if a bound policy refuses this write."""
    who = requester.get()
    if who is None or request.rt.group == GROUP:
        return
    policies = _objects(store, POLICIES)
    for binding in sorted(_objects(store, BINDINGS).values(), key=_name):
        spec = binding.get("spec") or {}
        policy = policies.get(str(spec.get("policyName") or ""))
        if policy is None or "Deny" not in (spec.get("validationActions") or []):
            continue
        constraints = (policy.get("spec") or {}).get("matchConstraints") or {}
        if not _matches(store, constraints, request) or not _matches(
            store, spec.get("matchResources") or {}, request, rules_optional=True
        ):
            continue
        _validate(store, policy, binding, request, who)


def _validate(
    store: Store,
    policy: Mapping[str, Any],
    binding: Mapping[str, Any],
    request: Request,
    who: Identity,
) -> None:
    spec = policy.get("spec") or {}
    context = _context(store, request, who)
    try:
        context["variables"] = {}
        for variable in spec.get("variables") or []:
            context["variables"][str(variable["name"])] = evaluate(variable["expression"], context)
        for condition in spec.get("matchConditions") or []:
            if evaluate(str(condition.get("expression")), context) is not True:
                return
        for validation in spec.get("validations") or []:
            expression = str(validation.get("expression"))
            if evaluate(expression, context) is True:
                continue
            message = str(validation.get("message") or f"failed expression: {expression}")
            if validation.get("messageExpression"):
                # kube-apiserver falls back to the message when the expression fails.
                with contextlib.suppress(EvaluationError):
                    message = str(evaluate(validation["messageExpression"], context))
            raise _denied(policy, binding, request, message, str(validation.get("reason") or ""))
    except EvaluationError as exc:
        if spec.get("failurePolicy", "Fail") == "Ignore":
            return
        raise _denied(policy, binding, request, str(exc), "") from exc


def _denied(
    policy: Mapping[str, Any],
    binding: Mapping[str, Any],
    request: Request,
    message: str,
    reason: str,
) -> ApiError:
    text = (
        f"ValidatingAdmissionPolicy '{_name(policy)}' with binding '{_name(binding)}' "
        f"denied request: {message}"
    )
    err = forbidden(request.rt.plural, request.rt.group, request.name, text)
    chosen = reason or "Invalid"
    details = {**(err.details or {}), "causes": [{"message": text}]}
    return ApiError(REASON_CODES.get(chosen, 422), chosen, err.message, details)


def _objects(store: Store, key: str) -> dict[str, dict[str, Any]]:
    storage = store.storages.get(key)
    if storage is None:
        return {}
    return {_name(s.obj): s.obj for s in storage.objects.values()}


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def _matches(
    store: Store, match: Mapping[str, Any], request: Request, *, rules_optional: bool = False
) -> bool:
    rules = match.get("resourceRules") or []
    if not rules and not rules_optional:
        return False
    if rules and not any(_rule_matches(r, request) for r in rules):
        return False
    if any(_rule_matches(r, request) for r in match.get("excludeResourceRules") or []):
        return False
    if request.rt.namespaced and match.get("namespaceSelector"):
        namespace = _namespace(store, request.namespace) or {}
        labels = (namespace.get("metadata") or {}).get("labels") or {}
        if not selector_from_match(match["namespaceSelector"]).matches(labels):
            return False
    if match.get("objectSelector"):
        selector = selector_from_match(match["objectSelector"])
        candidates = [o for o in (request.obj, request.old) if o is not None]
        if not any(
            selector.matches((o.get("metadata") or {}).get("labels") or {}) for o in candidates
        ):
            return False
    return True


def _rule_matches(rule: Mapping[str, Any], request: Request) -> bool:
    def hit(values: Any, value: str) -> bool:
        values = values or []
        return "*" in values or value in values

    rt = request.rt
    operations = rule.get("operations") or []
    if not (hit(operations, request.operation)):
        return False
    if not hit(rule.get("apiGroups"), rt.group) or not hit(rule.get("apiVersions"), rt.version):
        return False
    sub = request.subresource
    for resource in rule.get("resources") or []:
        head, _, tail = str(resource).partition("/")
        if head not in ("*", rt.plural):
            continue
        # "pods" and "*" name no subresource; "*/*", "pods/*" and "*/status" name them.
        if (not tail and not sub) or (tail and sub and tail in ("*", sub)) or resource == "*/*":
            return True
    return False


def _namespace(store: Store, name: str) -> dict[str, Any] | None:
    storage = store.storages.get("namespaces.")
    stored = storage.objects.get(("", name)) if storage else None
    return stored.obj if stored else None


def _context(store: Store, request: Request, who: Identity) -> dict[str, Any]:
    user: dict[str, Any] = {"username": who.name, "groups": sorted(who.groups)}
    if who.uid:
        user["uid"] = who.uid
    if who.extra:
        user["extra"] = {key: list(values) for key, values in who.extra}
    rt = request.rt
    admission_request: dict[str, Any] = {
        "operation": request.operation,
        "userInfo": user,
        "name": request.name,
        "namespace": request.namespace,
        "resource": {"group": rt.group, "version": rt.version, "resource": rt.plural},
        "kind": {"group": rt.group, "version": rt.version, "kind": rt.kind},
        "dryRun": request.dry_run,
    }
    if request.subresource:
        admission_request["subResource"] = request.subresource
    return {
        "object": _plain(request.obj),
        "oldObject": _plain(request.old),
        "request": admission_request,
        "params": None,
        "namespaceObject": _plain(_namespace(store, request.namespace))
        if request.namespace
        else None,
    }


def _plain(value: Any) -> Any:
    """A JSON value as the interpreter takes it (plain dicts and lists, no mapping views)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
