"""Access and token reviews, answered as kube-apiserver answers them.

By the emulator's policy and tokens, the ones its requests are authorised and authenticated by:

- a SelfSubjectAccessReview (``kubectl auth can-i``): may the requester do it;
- a SubjectAccessReview (what an aggregated server asks of its caller: the in-cluster
  recorder's, aggregation.py): may the user the spec names do it. The policy has no
  non-resource rules: what any authenticated user may get there on a real cluster
  (system:discovery; /metrics through system:monitoring) is not modelled, the emulator's
  admins may and others may not;
- a TokenReview: who a bearer token is.

Like RBAC, a refusal carries no reason (``kubectl auth can-i`` then prints a bare "no").
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from .authz import Attributes, Identity, Policy
from .errors import ApiError


def self_review(policy: Policy, body: Any, user: Identity) -> dict[str, Any]:
    kind = "SelfSubjectAccessReview"
    asked = _spec(body).get("resourceAttributes")
    if not isinstance(asked, dict):
        raise _no_attributes(kind)
    return _answered(
        body, AUTHORIZATION, kind, {"allowed": policy.allows(Attributes.reviewed(user, asked))}
    )


def access_review(policy: Policy, admins: Collection[str], body: Any) -> dict[str, Any]:
    kind = "SubjectAccessReview"
    spec = _spec(body)
    who = Identity(str(spec.get("user") or ""), frozenset(str(g) for g in spec.get("groups") or []))
    asked = spec.get("resourceAttributes")
    if isinstance(asked, dict):
        allowed = policy.allows(Attributes.reviewed(who, asked))
    elif isinstance(spec.get("nonResourceAttributes"), dict):
        allowed = who.name in admins
    else:
        raise _no_attributes(kind)
    return _answered(body, AUTHORIZATION, kind, {"allowed": allowed})


def token_review(identify: Callable[[str], Identity | None], body: Any) -> dict[str, Any]:
    who = identify(str(_spec(body).get("token") or ""))
    status: dict[str, Any] = {"authenticated": who is not None}
    if who is not None:
        status["user"] = {
            "username": who.name,
            "groups": sorted(who.groups),
            **({"uid": who.uid} if who.uid else {}),
            **({"extra": {k: list(v) for k, v in who.extra}} if who.extra else {}),
        }
    return _answered(body, "authentication.k8s.io/v1", "TokenReview", status)


AUTHORIZATION = "authorization.k8s.io/v1"


def _spec(body: Any) -> dict[str, Any]:
    spec = (body or {}).get("spec") if isinstance(body, dict) else None
    return spec if isinstance(spec, dict) else {}


def _no_attributes(kind: str) -> ApiError:
    return ApiError(
        422,
        "Invalid",
        f'{kind}.authorization.k8s.io "" is invalid: spec.resourceAttributes: Required value: '
        "exactly one of nonResourceAttributes or resourceAttributes must be specified",
    )


def _answered(body: Any, api_version: str, kind: str, status: dict[str, Any]) -> dict[str, Any]:
    """The review as created: what was sent, and the server's ``status``."""
    out = dict(body or {})
    out.setdefault("apiVersion", api_version)
    out.setdefault("kind", kind)
    out.setdefault("metadata", {})
    out["status"] = status
    return out
