"""Authentication by bearer token, a small allow/deny authorization policy, and an audit log.

The policy is deliberately simpler than RBAC (first matching rule wins, then a default) but it
answers requests and SelfSubjectAccessReviews the same way, with kube-apiserver's 403 wording, so
the plugin's permission checks and error messages can be tested against it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


def _set(values: Iterable[str] | str | None) -> frozenset[str]:
    if values is None:
        return frozenset({"*"})
    if isinstance(values, str):
        return frozenset({values})
    return frozenset(values)


AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
ANONYMOUS = "system:anonymous"


@dataclass(frozen=True)
class Identity:
    """Who a request acts as: a user name and the groups it is in."""

    name: str
    groups: frozenset[str] = frozenset({AUTHENTICATED})
    impersonated_by: str = ""  # the authenticated user, when the request impersonates ``name``
    uid: str = ""
    # userInfo.extra: a bound service-account token carries its pod's name and uid here.
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True)
class Attributes:
    user: str
    verb: str
    group: str  # the API group
    resource: str
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    user_groups: frozenset[str] = frozenset()
    impersonated_by: str = ""

    @classmethod
    def of(
        cls,
        who: Identity,
        verb: str,
        group: str,
        resource: str,
        subresource: str = "",
        namespace: str = "",
        name: str = "",
    ) -> Attributes:
        return cls(
            who.name,
            verb,
            group,
            resource,
            subresource,
            namespace,
            name,
            who.groups,
            who.impersonated_by,
        )

    @classmethod
    def reviewed(cls, who: Identity, asked: Mapping[str, Any]) -> Attributes:
        """What an access review's ``resourceAttributes`` ask, for ``who``."""
        keys = ("verb", "group", "resource", "subresource", "namespace", "name")
        return cls.of(who, *(str(asked.get(key, "")) for key in keys))

    @property
    def resource_path(self) -> str:
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


@dataclass(frozen=True)
class Rule:
    effect: str  # "allow" or "deny"
    verbs: frozenset[str] = frozenset({"*"})
    resources: frozenset[str] = frozenset({"*"})  # "pods", "pods/log", "pods/*", "*"
    api_groups: frozenset[str] = frozenset({"*"})
    namespaces: frozenset[str] = frozenset({"*"})
    users: frozenset[str] = frozenset({"*"})
    groups: frozenset[str] = frozenset({"*"})  # the user's groups (RBAC's Group subjects)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Rule:
        effect = str(data.get("effect", "allow"))
        if effect not in ("allow", "deny"):
            raise ValueError(f"rule effect must be allow or deny, not {effect!r}")
        return cls(
            effect=effect,
            verbs=_set(data.get("verbs")),
            resources=_set(data.get("resources")),
            api_groups=_set(data.get("apiGroups")),
            namespaces=_set(data.get("namespaces")),
            users=_set(data.get("users")),
            groups=_set(data.get("groups")),
        )

    def matches(self, a: Attributes) -> bool:
        def hit(values: frozenset[str], value: str) -> bool:
            return "*" in values or value in values

        resource_hit = (
            "*" in self.resources
            or a.resource_path in self.resources
            or (a.subresource != "" and f"{a.resource}/*" in self.resources)
        )
        return (
            hit(self.verbs, a.verb)
            and resource_hit
            and hit(self.api_groups, a.group)
            and hit(self.namespaces, a.namespace)
            and hit(self.users, a.user)
            and ("*" in self.groups or not self.groups.isdisjoint(a.user_groups))
        )


@dataclass
class Policy:
    rules: list[Rule] = field(default_factory=list)
    default: str = "allow"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Policy:
        default = str(data.get("default", "allow"))
        if default not in ("allow", "deny"):
            raise ValueError(f"policy default must be allow or deny, not {default!r}")
        return cls([Rule.from_dict(r) for r in data.get("rules") or []], default)

    def allows(self, a: Attributes) -> bool:
        for rule in self.rules:
            if rule.matches(a):
                return rule.effect == "allow"
        return self.default == "allow"


def forbidden_message(a: Attributes) -> str:
    where = f'in the namespace "{a.namespace}"' if a.namespace else "at the cluster scope"
    return f'User "{a.user}" cannot {a.verb} resource "{a.resource_path}" in API group "{a.group}" {where}'


@dataclass
class AuditLog:
    entries: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=100_000))

    def record(self, a: Attributes, code: int, *, dry_run: bool) -> None:
        self.entries.append(
            {
                "user": a.user,
                "verb": a.verb,
                "group": a.group,
                "resource": a.resource,
                "subresource": a.subresource,
                "namespace": a.namespace,
                "name": a.name,
                "code": code,
                "dryRun": dry_run,
                "impersonatedBy": a.impersonated_by,
            }
        )

    WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})

    def writes(self) -> list[dict[str, Any]]:
        """Requests that changed (or would have changed) stored state, excluding reviews."""
        return [
            e
            for e in self.entries
            if e["verb"] in self.WRITE_VERBS
            and e["code"] < 400
            and not e["dryRun"]
            and e["resource"] != "selfsubjectaccessreviews"
        ]
