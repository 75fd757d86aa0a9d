"""Acting as another user (kubectl's --as, --as-group, --as-uid, or the kubeconfig's ``as``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from urllib3 import HTTPHeaderDict

from kubectl_spark import errors

if TYPE_CHECKING:
    from .client import Connection
    from .config import Resolved

IMPERSONATE_USER = "Impersonate-User"
IMPERSONATE_GROUP = "Impersonate-Group"
IMPERSONATE_UID = "Impersonate-Uid"


def impersonate(client: Any, conn: Connection, resolved: Resolved) -> str:
    """Act as --as/--as-group/--as-uid, or as the kubeconfig user's ``as`` fields, as kubectl does.

    Each flag, when given, wins over its kubeconfig field. The server checks that the
    authenticated user may impersonate; a group is one ``Impersonate-Group`` header each.
    Returns the user acted as ("" for none).
    """
    entry = resolved.user_entry
    user = conn.impersonate or _text(entry.get("as"))
    groups = conn.impersonate_groups or tuple(
        str(g) for g in entry.get("as-groups") or () if isinstance(g, str)
    )
    uid = conn.impersonate_uid or _text(entry.get("as-uid"))
    if not user:
        if groups or uid:
            raise errors.UsageError(
                "--as-group and --as-uid need a user to impersonate: pass --as "
                "(or set `as` in the kubeconfig's user)"
            )
        return ""
    client.set_default_header(IMPERSONATE_USER, user)
    if uid:
        client.set_default_header(IMPERSONATE_UID, uid)
    if groups:
        rest = client.rest_client
        rest.pool_manager = _RepeatedHeader(rest.pool_manager, IMPERSONATE_GROUP, groups)
    return user


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


class _RepeatedHeader:
    """The client's urllib3 pool, sending one header line per value of a header.

    The kubernetes client keeps headers in a plain dict, one value per name, but kube-apiserver
    reads each ``Impersonate-Group`` line as one group (a comma-joined line would be one group
    named "a,b"). urllib3 sends every value of an ``HTTPHeaderDict``.
    """

    def __init__(self, pool: Any, name: str, values: tuple[str, ...]) -> None:
        self._pool = pool
        self._name = name
        self._values = values

    def request(self, method: str, url: str, *args: Any, headers: Any = None, **kw: Any) -> Any:
        merged = HTTPHeaderDict(headers or {})
        merged.discard(self._name)
        for value in self._values:
            merged.add(self._name, value)
        return self._pool.request(method, url, *args, headers=merged, **kw)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._pool, attr)
