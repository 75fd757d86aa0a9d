"""Bound service-account tokens: a TokenRequest for a pod, and the identity such a token carries.

As kube-apiserver (``pkg/registry/core/serviceaccount/storage/token.go`` issues them;
``pkg/serviceaccount/claims.go`` validates them on every request):

- the token names the service account, and the pod it is bound to, which must run as that
  service account;
- the identity is ``system:serviceaccount:NS:SA`` in ``system:serviceaccounts`` and
  ``system:serviceaccounts:NS``, with the pod's name and uid (and its node's) in
  ``userInfo.extra`` — what a ValidatingAdmissionPolicy can tell one pod from another by;
- the token stops working when its pod is gone, replaced by another of the same name, or was
  deleted more than a minute ago (``jwt.DefaultLeeway``): a Terminating pod keeps its
  credentials for its grace period plus that minute.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from kubectl_spark.knowledge.clock import Clock
from kubectl_spark.knowledge.times import parse_time, rfc3339

from .authz import AUTHENTICATED, Identity
from .errors import bad_request, conflict

if TYPE_CHECKING:
    from .store import Store

PREFIX = "authentication.kubernetes.io/"
LEEWAY = timedelta(minutes=1)
DEFAULT_SECONDS = 3600


@dataclass(frozen=True)
class BoundToken:
    namespace: str
    service_account: str
    pod: str
    pod_uid: str
    node: str
    expires: str
    credential_id: str


def issue(
    store: Store, clock: Clock, namespace: str, account: str, body: Any
) -> tuple[str, BoundToken, dict[str, Any]]:
    """A token for ``account``, bound to the pod the request names; the TokenRequest answered."""
    sa_rt = store.registry.lookup("", "v1", "serviceaccounts")
    pods_rt = store.registry.lookup("", "v1", "pods")
    assert sa_rt is not None
    assert pods_rt is not None
    store.get(sa_rt, namespace, account)  # 404 when there is no such account
    spec = (body or {}).get("spec") or {}
    ref = spec.get("boundObjectRef") or {}
    if ref.get("kind") != "Pod":
        raise bad_request("the emulator binds tokens to pods only: boundObjectRef.kind must be Pod")
    pod = store.get(pods_rt, namespace, str(ref.get("name") or ""))  # 404 when it is gone
    meta = pod.get("metadata") or {}
    if ref.get("uid") and ref["uid"] != meta.get("uid"):
        raise conflict(
            "Pod",
            "",
            str(meta.get("name")),
            f"the UID in the bound object reference ({ref['uid']}) does not match the UID in "
            "record. The object might have been deleted and then recreated",
        )
    runs_as = (pod.get("spec") or {}).get("serviceAccountName") or "default"
    if runs_as != account:
        raise bad_request(
            f'cannot bind token for serviceaccount "{account}" to pod running with different '
            f"serviceaccount name."
        )
    seconds = int(spec.get("expirationSeconds") or DEFAULT_SECONDS)
    expires = rfc3339(clock.now() + timedelta(seconds=seconds))
    token = secrets.token_urlsafe(32)
    bound = BoundToken(
        namespace,
        account,
        str(meta.get("name")),
        str(meta.get("uid")),
        str((pod.get("spec") or {}).get("nodeName") or ""),
        expires,
        secrets.token_hex(16),
    )
    answer = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "metadata": {"name": account, "namespace": namespace},
        "spec": {**spec, "expirationSeconds": seconds},
        "status": {"token": token, "expirationTimestamp": expires},
    }
    return token, bound, answer


def identity(store: Store, clock: Clock, bound: BoundToken) -> Identity | None:
    """Who a bound token is, or None when it no longer authenticates (claims.go's checks)."""
    now = clock.now()
    if parse_time(bound.expires) <= now:
        return None
    pods_rt = store.registry.lookup("", "v1", "pods")
    assert pods_rt is not None
    stored = store.lookup(pods_rt, bound.namespace, bound.pod)
    if stored is None:
        return None
    meta = stored.obj.get("metadata") or {}
    if meta.get("uid") != bound.pod_uid:
        return None
    deleted = meta.get("deletionTimestamp")
    if deleted and parse_time(deleted) < now - LEEWAY:
        return None
    extra = [
        (PREFIX + "credential-id", (f"JTI={bound.credential_id}",)),
        (PREFIX + "pod-name", (bound.pod,)),
        (PREFIX + "pod-uid", (bound.pod_uid,)),
    ]
    if bound.node:
        extra.append((PREFIX + "node-name", (bound.node,)))
    return Identity(
        f"system:serviceaccount:{bound.namespace}:{bound.service_account}",
        frozenset(
            {"system:serviceaccounts", f"system:serviceaccounts:{bound.namespace}", AUTHENTICATED}
        ),
        extra=tuple(sorted(extra)),
    )
