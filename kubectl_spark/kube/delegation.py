"""Who asks the in-cluster recorder, and whether they may read what they ask: the API server says.

The recorder is an aggregated API (``recorder.kubectl-spark.io``, as metrics-server's
``metrics.k8s.io``), and it delegates both questions as k8s.io/apiserver's delegated options do
(metrics-server's own code path):

- kube-apiserver authenticates the person with whatever their kubeconfig holds, checks RBAC for
  the aggregated resource, and passes the request on over TLS with its front-proxy client
  certificate and the user in ``X-Remote-User``/``X-Remote-Group``/``X-Remote-Extra-*``
  (apiserver/pkg/authentication/request/headerrequest/requestheader.go). Those headers are
  believed only over a certificate that chains to the request-header CA and whose CN is an
  allowed name, both read from ``kube-system/extension-apiserver-authentication``
  (kubernetes/pkg/controlplane/controller/clusterauthenticationtrust);
- a bearer token (Prometheus' service account scraping ``/metrics``) is asked of a TokenReview;
- whether the caller may read the pods, Events or logs asked for is a SubjectAccessReview, so a
  person reads through the recorder exactly what they may read in the cluster.

The service proxy (the way the plugin read before) cannot carry a caller at all: kube-apiserver
deletes the Authorization header once it has authenticated a request
(apiserver/pkg/endpoints/filters/authentication.go), so a recorder behind it sees nobody.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

import orjson

from kubectl_spark import errors

TRUST_NAMESPACE, TRUST_NAME = "kube-system", "extension-apiserver-authentication"
# Answers are kept this long, as the delegated authenticator and authorizer cache theirs
# (k8s.io/apiserver's defaults: 10 s for both, allowed and denied alike here).
CACHE_SECONDS = 10.0
CACHE_ENTRIES = 4096


@dataclass(frozen=True)
class Caller:
    """An authenticated user, as a SubjectAccessReview's spec names one."""

    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def review_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"user": self.name, "groups": list(self.groups)}
        if self.uid:
            spec["uid"] = self.uid
        if self.extra:
            spec["extra"] = {key: list(values) for key, values in self.extra}
        return spec


@dataclass(frozen=True)
class FrontProxyTrust:
    """What the API server publishes about its front proxy: who may pass a user on, and how."""

    client_ca: str  # PEM; empty when the API server has no front proxy configured
    allowed_names: frozenset[str] = frozenset()
    username_headers: tuple[str, ...] = ()
    uid_headers: tuple[str, ...] = ()
    group_headers: tuple[str, ...] = ()
    extra_prefixes: tuple[str, ...] = ()

    @classmethod
    def of(cls, data: Mapping[str, str]) -> FrontProxyTrust:
        def names(key: str) -> tuple[str, ...]:
            try:
                value = orjson.loads(data.get(key) or "[]")
            except orjson.JSONDecodeError:
                return ()
            return tuple(str(v) for v in value) if isinstance(value, list) else ()

        return cls(
            client_ca=str(data.get("requestheader-client-ca-file") or ""),
            allowed_names=frozenset(names("requestheader-allowed-names")),
            username_headers=names("requestheader-username-headers"),
            uid_headers=names("requestheader-uid-headers"),
            group_headers=names("requestheader-group-headers"),
            extra_prefixes=names("requestheader-extra-headers-prefix"),
        )

    def admits(self, common_name: str) -> bool:
        """A verified client certificate's CN may pass users on (any CN when none is listed)."""
        return not self.allowed_names or common_name in self.allowed_names

    def caller(self, headers: Any) -> Caller | None:
        """The user the API server passed on; ``headers`` as http.server's (``get_all``)."""
        name = _first(headers, self.username_headers)
        if not name:
            return None
        groups = [v for h in self.group_headers for v in headers.get_all(h) or []]
        extra: dict[str, list[str]] = {}
        for key in dict.fromkeys(k.lower() for k in headers):  # a repeated header once
            for prefix in self.extra_prefixes:
                if key.lower().startswith(prefix.lower()):
                    extra.setdefault(unquote(key[len(prefix) :]).lower(), []).extend(
                        headers.get_all(key) or []
                    )
        return Caller(
            name,
            tuple(groups),
            _first(headers, self.uid_headers),
            tuple((k, tuple(v)) for k, v in sorted(extra.items())),
        )


def _first(headers: Any, names: Sequence[str]) -> str:
    for name in names:
        value = headers.get(name)
        if value:
            return str(value)
    return ""


def read_trust(api: Any) -> FrontProxyTrust:
    """The API server's published front-proxy trust; raises when it cannot be read.

    The recorder's ServiceAccount reads it through the ``extension-apiserver-authentication-
    reader`` Role the manifests bind (as every aggregated API server's does).
    """
    found = api.request(
        "GET",
        f"/api/v1/namespaces/{TRUST_NAMESPACE}/configmaps/{TRUST_NAME}",
        what=f"read {TRUST_NAMESPACE}/{TRUST_NAME} (the API server's front-proxy trust)",
    )
    data = found.get("data") if isinstance(found, dict) else None
    return FrontProxyTrust.of(data if isinstance(data, dict) else {})


@dataclass
class _Answers:
    """Recent answers by key, for ``CACHE_SECONDS``; bounded, oldest dropped first."""

    kept: dict[Any, tuple[float, Any]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, key: Any, ask: Callable[[], Any], now: Callable[[], float]) -> Any:
        with self.lock:
            hit = self.kept.get(key)
            if hit is not None and now() - hit[0] < CACHE_SECONDS:
                return hit[1]
        answer = ask()
        with self.lock:
            if len(self.kept) >= CACHE_ENTRIES:
                self.kept.pop(next(iter(self.kept)))
            self.kept[key] = (now(), answer)
        return answer


class Delegation:
    """The API server's answers to "who is this token" and "may this caller do that".

    ``api`` is one connection shared by the recorder's request threads (urllib3's pool is
    thread-safe). An answer that cannot be had (the API server unreachable, the recorder's
    own rights missing) raises ``KubectlSparkError``: the request is refused, never let in.
    """

    def __init__(self, api: Any, clock: Callable[[], float] = time.monotonic) -> None:
        self.api = api
        self.clock = clock
        self._tokens = _Answers()
        self._reviews = _Answers()

    def token_caller(self, token: str) -> Caller | None:
        caller: Caller | None = self._tokens.get(
            token, lambda: self._review_token(token), self.clock
        )
        return caller

    def allows(self, caller: Caller, attributes: Mapping[str, str], *, resource: bool) -> bool:
        """``attributes``: a SubjectAccessReview's resourceAttributes (or nonResourceAttributes)."""
        key = (caller, resource, tuple(sorted(attributes.items())))
        return bool(
            self._reviews.get(key, lambda: self._review(caller, attributes, resource), self.clock)
        )

    def _review_token(self, token: str) -> Caller | None:
        answer = self.api.request(
            "POST",
            "/apis/authentication.k8s.io/v1/tokenreviews",
            body={
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenReview",
                "spec": {"token": token},
            },
            what="review a caller's token (TokenReview)",
            idempotent=True,
        )
        status = (answer or {}).get("status") or {}
        user = status.get("user") or {}
        if not status.get("authenticated") or not user.get("username"):
            return None
        return Caller(
            str(user["username"]),
            tuple(str(g) for g in user.get("groups") or []),
            str(user.get("uid") or ""),
            tuple(
                (str(k), tuple(str(v) for v in values or []))
                for k, values in sorted((user.get("extra") or {}).items())
            ),
        )

    def _review(self, caller: Caller, attributes: Mapping[str, str], resource: bool) -> bool:
        spec = caller.review_spec()
        spec["resourceAttributes" if resource else "nonResourceAttributes"] = dict(attributes)
        answer = self.api.request(
            "POST",
            "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            body={
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SubjectAccessReview",
                "spec": spec,
            },
            what="ask whether a caller may read it (SubjectAccessReview)",
            idempotent=True,
        )
        if not isinstance(answer, dict):
            raise errors.KubectlSparkError("the API server answered a SubjectAccessReview oddly")
        return bool((answer.get("status") or {}).get("allowed"))
