"""What an in-cluster recorder serves on its port: its metrics, and what it kept, for the plugin.

An aggregated API (``recorder.kubectl-spark.io/v1alpha1``, registered by the manifests'
APIService) over TLS: the plugin asks kube-apiserver, which authenticates the person, checks
RBAC for these resources and passes the user on with its front-proxy certificate; the recorder
then asks the API server whether that user may read what was asked (``kube/delegation.py``).
Issue 49: before, anyone who reached the port read every namespace's pods and kept log lines.

- ``/healthz``, ``/livez``, ``/readyz``: ``ok``, to anyone (the kubelet's probes);
- ``/metrics``: Prometheus' text format (``app/metrics.py``), to a caller allowed
  ``get`` on the non-resource URL ``/metrics`` (Prometheus' service account token, reviewed);
- ``/apis/recorder.kubectl-spark.io/v1alpha1``: discovery, to any authenticated caller;
- ``…/[namespaces/NS/]keptpods|keptevents[?app=APP][&limit=N][&continue=TOKEN]``: the kept
  states (``KeptList``) to a caller who may ``list`` pods (or events) there, a page at a time as
  the API server pages a list: at most ``limit`` items and ``MAX_ANSWER_BYTES`` of them,
  ``metadata.continue`` naming where the next page starts (one unpaged read of 500,000 Events
  answered 434 MB and took the process to 2.4 GiB); ``app`` keeps one application's pods;
- ``…/namespaces/NS/keptlogs/UID[?previous=true]``: a gone container's last lines, to a caller
  who may ``get pods/log`` in NS; 404 if none.

Nothing else answers: 401 without a caller, 403 (with kube-apiserver's wording) without the
right. Pods are served as ``core.slim`` keeps them: without the containers' environment (where
Spark configurations carry credentials) or volumes. The store is opened read-only per request:
the recording thread keeps its own connection.
"""

from __future__ import annotations

import base64
import re
import ssl
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

import orjson

from kubectl_spark.core.recorder_manifests import (
    API_GROUP,
    API_PATH,
    API_VERSION,
    KEPT_RESOURCES,
    LOGS_RESOURCE,
)
from kubectl_spark.core.slim import slim
from kubectl_spark.errors import KubectlSparkError
from kubectl_spark.knowledge.labels import APACHE_APP, APP_ID, APP_NAME, OPERATOR_APP
from kubectl_spark.kube.delegation import Caller, FrontProxyTrust

LIST_KIND_VERSION = f"{API_GROUP}/{API_VERSION}"
# A request's whole head (and its TLS handshake) must arrive within this: a client that sends
# half of one (a slow loris) holds a thread this long, no longer.
REQUEST_SECONDS = 10.0
# An answer's items stop at this many bytes (at least one item): what one request costs the
# recorder is a page, never the store. The plugin pages through (kube/recorder_api.py).
MAX_ANSWER_BYTES = 4 << 20
MAX_LIMIT = 10_000
BATCH = 1_000  # rows read from the store at a time while a page fills
APP_LABELS = (APP_NAME, APP_ID, OPERATOR_APP, APACHE_APP)
OPEN_PATHS = ("/healthz", "/livez", "/readyz")
KIND_OF = {resource: kind for kind, resource in KEPT_RESOURCES.items()}
_RESOURCE_PATH = re.compile(
    rf"^{re.escape(API_PATH)}(?:/namespaces/(?P<ns>[a-z0-9]([-a-z0-9]*[a-z0-9])?))?"
    r"/(?P<resource>[a-z]+)(?:/(?P<name>[^/]+))?/?$"
)


class Deciding(Protocol):
    """The API server's answers the recorder needs (``kube.delegation.Delegation``)."""

    def token_caller(self, token: str) -> Caller | None: ...

    def allows(self, caller: Caller, attributes: dict[str, str], *, resource: bool) -> bool: ...


@dataclass(frozen=True)
class Access:
    """How the port knows its callers.

    The TLS context serves the recorder's certificate and verifies a client certificate, when
    one is presented, against the front-proxy CA; ``trust`` says whose users to believe.
    """

    tls: ssl.SSLContext
    trust: FrontProxyTrust
    deciding: Deciding


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, *_: Any) -> None:
        return None  # a failed handshake or a dropped client is that client's business


class RecorderServer:
    """The recorder's HTTPS port, served from a daemon thread until ``close``."""

    def __init__(
        self, path: Path, scope: Any, metrics: Any, port: int, address: str, access: Access
    ) -> None:
        self.path, self.scope, self.metrics, self.access = path, scope, metrics, access
        owner = self

        class Handler(BaseHTTPRequestHandler):
            timeout = REQUEST_SECONDS  # the socket's timeout for every read (StreamRequestHandler)

            def setup(self) -> None:
                self.request.settimeout(REQUEST_SECONDS)
                self.request.do_handshake()  # here, in this request's thread, within the timeout
                super().setup()

            def do_GET(self) -> None:
                owner.answer(self)

            def log_message(self, *_: Any) -> None:
                return None  # the recorder's own lines say what matters

        self.httpd = _Server((address, port), Handler)
        self.httpd.socket = access.tls.wrap_socket(
            self.httpd.socket, server_side=True, do_handshake_on_connect=False
        )
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        url = urlsplit(handler.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        try:
            status, content_type, body = self._route(handler, url.path, query)
        except KubectlSparkError as exc:
            status, content_type, body = _status(503, "ServiceUnavailable", exc.message)
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    def caller(self, handler: BaseHTTPRequestHandler) -> Caller | None:
        """The API server's user over its front-proxy certificate, else a reviewed token."""
        trust = self.access.trust
        cert = handler.request.getpeercert() if isinstance(handler.request, ssl.SSLSocket) else None
        if cert:  # verified against the front-proxy CA by the handshake
            subject: Any = cert.get("subject", ())
            names = [v for rdn in subject for k, v in rdn if k == "commonName"]
            if names and trust.admits(names[-1]):
                return trust.caller(handler.headers)
            return None
        scheme, _, token = str(handler.headers.get("Authorization") or "").partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return self.access.deciding.token_caller(token.strip())
        return None

    def _route(
        self, handler: BaseHTTPRequestHandler, path: str, query: dict[str, str]
    ) -> tuple[int, str, bytes]:
        if path in OPEN_PATHS:
            return 200, "text/plain", b"ok\n"
        who = self.caller(handler)
        if who is None:
            return _status(401, "Unauthorized", "Unauthorized")
        deciding = self.access.deciding
        if path == "/metrics":
            if not deciding.allows(who, {"verb": "get", "path": path}, resource=False):
                return _status(
                    403, "Forbidden", f'forbidden: User "{who.name}" cannot get path "{path}"'
                )
            from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

            return 200, CONTENT_TYPE_LATEST, generate_latest(self.metrics.registry)
        if path.rstrip("/") == API_PATH:
            return 200, "application/json", _discovery()
        found = _RESOURCE_PATH.match(path)
        if found is None:
            return _status(404, "NotFound", "the server could not find the requested resource")
        namespace, resource, name = found["ns"] or "", found["resource"], found["name"]
        if resource in KIND_OF and not name:
            kind = KIND_OF[resource]
            wanted = {"verb": "list", "resource": kind, "namespace": namespace}
            if not deciding.allows(who, wanted, resource=True):
                return _forbidden(who, wanted)
            try:
                limit = _limit(query.get("limit", ""))
                after = _after(query.get("continue", ""))
            except ValueError as exc:
                return _status(400, "BadRequest", str(exc))
            if query.get("app") and kind != "pods":
                return _status(400, "BadRequest", "app selects pods only")
            page = self._kept(kind, namespace, query.get("app"), limit, after)
            return 200, "application/json", page
        if resource == LOGS_RESOURCE and namespace and name:
            wanted = {"verb": "get", "resource": "pods", "subresource": "log"}
            wanted["namespace"] = namespace
            if not deciding.allows(who, wanted, resource=True):
                return _forbidden(who, wanted)
            kept = self._tail(namespace, name, previous=query.get("previous") == "true")
            if kept is None:
                return _status(404, "NotFound", "no lines kept for this pod")
            return 200, "application/json", orjson.dumps(kept)
        return _status(404, "NotFound", "the server could not find the requested resource")

    def _kept(
        self, kind: str, namespace: str | None, app: str | None, limit: int, after: int
    ) -> bytes:
        """One page: at most ``limit`` items and about ``MAX_ANSWER_BYTES`` of them.

        Encoded an item at a time; ``metadata.continue`` is set when a matching item is left.
        """
        from kubectl_spark.localstore import LocalStore

        items: list[bytes] = []
        size, sent_last, more = 0, after, False
        with LocalStore(self.path, create=False) as store:
            cursor = after
            while not more:
                rows = store.page(self.scope, kind, namespace or None, after=cursor, limit=BATCH)
                if not rows:
                    break
                for rowid, body, seen, deleted in rows:
                    cursor = rowid
                    obj = orjson.loads(body)
                    if app and not _of_app(obj, app):
                        continue
                    item = orjson.dumps(
                        {"object": slim(kind, obj), "seenAt": seen, "deletedAt": deleted}
                    )
                    if items and (len(items) >= limit or size + len(item) > MAX_ANSWER_BYTES):
                        more = True
                        break
                    items.append(item)
                    size += len(item) + 1
                    sent_last = rowid
        head = orjson.dumps(
            {"apiVersion": LIST_KIND_VERSION, "kind": "KeptList", "context": self.scope.context}
        )
        meta = orjson.dumps({"continue": _token(sent_last)} if more else {})
        return b"".join((head[:-1], b',"metadata":', meta, b',"items":[', b",".join(items), b"]}"))

    def _tail(self, namespace: str, uid: str, *, previous: bool) -> dict[str, Any] | None:
        from kubectl_spark.kube.logtails import kept_tail
        from kubectl_spark.localstore import LocalStore

        with LocalStore(self.path, create=False) as store:
            return kept_tail(store, self.scope, namespace, uid, previous=previous)


def _limit(text: str) -> int:
    if not text:
        return MAX_LIMIT
    if not text.isdecimal() or not 0 < int(text) <= MAX_LIMIT:
        raise ValueError(f"limit must be a whole number from 1 to {MAX_LIMIT}")
    return int(text)


def _token(rowid: int) -> str:
    """Opaque to the reader, as the API server's continue tokens are."""
    return base64.urlsafe_b64encode(f"kept/1/{rowid}".encode()).decode()


def _after(token: str) -> int:
    if not token:
        return 0
    try:
        prefix, _, rowid = base64.urlsafe_b64decode(token.encode()).decode().rpartition("/")
    except (ValueError, UnicodeError):
        prefix, rowid = "", ""
    if prefix != "kept/1" or not rowid.isdecimal():
        raise ValueError("continue is not a token this recorder gave")
    return int(rowid)


def _of_app(obj: dict[str, Any], app: str) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return any(labels.get(key) == app for key in APP_LABELS)


def _status(code: int, reason: str, message: str) -> tuple[int, str, bytes]:
    """A Kubernetes Status, as kube-apiserver passes an aggregated server's answer on."""
    body: dict[str, object] = {"kind": "Status", "apiVersion": "v1", "metadata": {}}
    body |= {"status": "Failure", "message": message, "reason": reason, "code": code}
    return code, "application/json", orjson.dumps(body)


def _forbidden(who: Caller, wanted: dict[str, str]) -> tuple[int, str, bytes]:
    """kube-apiserver's wording (apiserver/pkg/endpoints/handlers/responsewriters/errors.go)."""
    resource = wanted["resource"]
    shown = f"{resource}/{wanted['subresource']}" if wanted.get("subresource") else resource
    where = (
        f'in the namespace "{wanted["namespace"]}"'
        if wanted.get("namespace")
        else "at the cluster scope"
    )
    return _status(
        403,
        "Forbidden",
        f'{shown} is forbidden: User "{who.name}" cannot {wanted["verb"]} resource "{shown}" '
        f'in API group "" {where}',
    )


def _discovery() -> bytes:
    """The APIResourceList the aggregator's availability check and discovery read."""
    resources = [
        {
            "name": name,
            "singularName": "",
            "namespaced": True,
            "kind": "KeptList",
            "verbs": ["list"],
        }
        for name in KEPT_RESOURCES.values()
    ]
    resources.append(
        {"name": LOGS_RESOURCE, "singularName": "", "namespaced": True, "kind": "KeptLog",
         "verbs": ["get"]}
    )  # fmt: skip
    return orjson.dumps(
        {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": LIST_KIND_VERSION,
            "resources": resources,
        }
    )
