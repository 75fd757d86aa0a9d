"""Impersonation headers, as kube-apiserver's impersonation filter reads them.

``kubectl --as`` (and ``kubectl spark --as``) sends ``Impersonate-User``, one
``Impersonate-Group`` per group, ``Impersonate-Uid`` and ``Impersonate-Extra-<key>``. The
authenticated user must be allowed the ``impersonate`` verb on each (users, serviceaccounts,
groups, uids and userextras); the request then runs as the impersonated identity, which gets
``system:authenticated`` when no group is named. Anything but a user, asked without a user, is
an internal error in kube-apiserver too.
"""

from __future__ import annotations

from collections.abc import Callable, ItemsView
from typing import Protocol
from urllib.parse import unquote

from .authz import ANONYMOUS, AUTHENTICATED, Attributes, Identity, forbidden_message
from .errors import forbidden, internal

USER = "Impersonate-User"
GROUP = "Impersonate-Group"
UID = "Impersonate-Uid"
EXTRA = "impersonate-extra-"
SERVICE_ACCOUNT = "system:serviceaccount:"
AUTHENTICATION_GROUP = "authentication.k8s.io"


class Headers(Protocol):
    """A request's headers, repeated ones kept (aiohttp's CIMultiDictProxy)."""

    def get(self, key: str, default: str, /) -> str: ...
    def getall(self, key: str, default: list[str], /) -> list[str]: ...
    def items(self) -> ItemsView[str, str]: ...


def impersonated(
    headers: Headers, requestor: Identity, allows: Callable[[Attributes], bool]
) -> Identity | None:
    """The identity a request asks to act as (None: it asks for none), once allowed."""
    user = headers.get(USER, "")
    groups = headers.getall(GROUP, [])
    uid = headers.get(UID, "")
    extras = [
        (unquote(k[len(EXTRA) :]).lower(), v)
        for k, v in headers.items()
        if k.lower().startswith(EXTRA)
    ]
    if not (user or groups or uid or extras):
        return None
    if not user:
        raise internal("requested groups, uid or extra fields without impersonating a user")
    asked: list[tuple[str, str, str, str, str]] = []  # (api group, resource, subresource, ns, name)
    implied: list[str] = []
    if user.startswith(SERVICE_ACCOUNT) and user.count(":") == 3:
        namespace, name = user[len(SERVICE_ACCOUNT) :].split(":")
        asked.append(("", "serviceaccounts", "", namespace, name))
        implied = ["system:serviceaccounts", f"system:serviceaccounts:{namespace}"]
    else:
        asked.append(("", "users", "", "", user))
    asked += [("", "groups", "", "", g) for g in groups]
    if uid:
        asked.append((AUTHENTICATION_GROUP, "uids", "", "", uid))
    asked += [(AUTHENTICATION_GROUP, "userextras", key, "", value) for key, value in extras]
    for api_group, resource, subresource, namespace, name in asked:
        attrs = Attributes.of(
            requestor, "impersonate", api_group, resource, subresource, namespace, name
        )
        if not allows(attrs):
            raise forbidden(resource, api_group, name, forbidden_message(attrs))
    chosen = list(groups) if groups else implied
    if not groups and user != ANONYMOUS and AUTHENTICATED not in chosen:
        chosen.append(AUTHENTICATED)
    return Identity(user, frozenset(chosen), requestor.name)
