"""A minimal JSON client for the emulator (urllib3 over HTTPS with the kubeconfig's CA and token).

The simulator does not use the plugin's gateway: it plays cluster components, which would talk
to kube-apiserver with their own clients.
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlencode

import orjson
import urllib3

from . import podlists

MERGE = "application/merge-patch+json"


class SimApiError(Exception):
    def __init__(self, status: int, body: Any) -> None:
        message = body.get("message") if isinstance(body, dict) else str(body)
        super().__init__(f"{status}: {message}")
        self.status = status
        self.body = body
        self.reason = body.get("reason", "") if isinstance(body, dict) else ""


SIMULATOR_AGENT = "kubectl-spark-simulator"


class Client:
    def __init__(self, url: str, token: str, ca_pem: bytes) -> None:
        self.url = url.rstrip("/")
        self.ca_pem = ca_pem
        context = ssl.create_default_context(cadata=ca_pem.decode()) if ca_pem else None
        self.http = urllib3.PoolManager(
            maxsize=4,
            ssl_context=context,
            retries=False,
            timeout=urllib3.Timeout(connect=5, read=30),
        )
        self.headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json",
            # The emulator's fault layer spares the simulated world (see faults.py).
            "User-Agent": SIMULATOR_AGENT,
        }
        self._cache: dict[str, bytes] | None = None  # this tick's reads (tick_cache)
        self._kept: dict[str, bytes] = {}  # the last tick's reads, while nothing was written
        self._kept_at: str | None = None  # the server's resourceVersion they were read at

    def close(self) -> None:
        self.http.clear()

    @contextlib.contextmanager
    def tick_cache(self, *, across_ticks: bool = False) -> Iterator[None]:
        """Within one tick, a read asked again before anything was written is answered again.

        Each controller of a tick lists the pods (the kubelets, the scheduler, the node
        lifecycle, Spark): as real ones read a shared informer cache, not the API server each
        time. Any write empties it. The answer's bytes are kept and parsed again, so no caller
        sees another's changes to what it was given. Pod lists by label are cut from the full
        one (``podlists``), as an informer's indexers answer them.

        ``across_ticks``: where the simulator is the only writer but the tests (the emulator), a
        tick whose server has written nothing since the last one (its resourceVersion, asked
        first) starts with the last tick's reads, as an informer that got no event would.
        """
        if across_ticks:
            now = self._resource_version()
            if now is None or now != self._kept_at:
                self._kept, self._kept_at = {}, now
        else:
            self._kept, self._kept_at = {}, None
        self._cache = self._kept
        try:
            yield
        finally:
            self._cache = None

    def _resource_version(self) -> str | None:
        """The server's current resourceVersion: a list's is the store's latest write."""
        answer = self.request("GET", "/api/v1/namespaces", query={"limit": 1})
        meta = answer.get("metadata") if isinstance(answer, dict) else None
        return str(meta.get("resourceVersion") or "") or None if isinstance(meta, dict) else None

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        query: dict[str, Any] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        url = self.url + path + (("?" + urlencode(query)) if query else "")
        cache = self._cache
        if cache is not None:
            if method != "GET":
                cache.clear()
                self._kept_at = None  # written since: the next tick reads again
            elif url in cache:
                return orjson.loads(cache[url])
            elif (narrow := podlists.narrowing(path, query)) and narrow != ("", []):
                return podlists.cut(self.request("GET", podlists.ALL_PODS), *narrow)
        headers = dict(self.headers)
        data = None
        if body is not None:
            data = orjson.dumps(body)
            headers["Content-Type"] = content_type
        resp = self.http.request(method, url, body=data, headers=headers)
        try:
            parsed = orjson.loads(resp.data) if resp.data else None
        except orjson.JSONDecodeError:
            parsed = resp.data.decode("utf-8", "replace")
        if resp.status >= 400:
            raise SimApiError(resp.status, parsed)
        if cache is not None and method == "GET" and resp.data and not isinstance(parsed, str):
            cache[url] = resp.data
        return parsed

    # ------------------------------------------------------------------ conveniences
    def get(self, path: str) -> dict[str, Any] | None:
        try:
            result: dict[str, Any] = self.request("GET", path)
        except SimApiError as err:
            if err.status == 404:
                return None
            raise
        return result

    def list(self, path: str, **query: Any) -> list[dict[str, Any]]:
        """The items, each with its apiVersion and kind filled in from the list's.

        kube-apiserver sends a built-in list's items without them; kubectl fills them in too.
        """
        answer = self.request("GET", path, query=query or None)
        items: list[dict[str, Any]] = answer["items"]
        kind = str(answer.get("kind") or "").removesuffix("List")
        for item in items:
            item.setdefault("apiVersion", answer.get("apiVersion"))
            if kind:
                item.setdefault("kind", kind)
        return items

    def create(self, path: str, obj: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = self.request("POST", path, obj)
        return result

    def patch(self, path: str, patch: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = self.request("PATCH", path, patch, content_type=MERGE)
        return result

    def delete(
        self,
        path: str,
        *,
        grace: int | None = None,
        uid: str | None = None,
        propagation: str | None = None,
    ) -> dict[str, Any] | None:
        options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if grace is not None:
            options["gracePeriodSeconds"] = grace
        if uid is not None:
            options["preconditions"] = {"uid": uid}
        if propagation is not None:
            options["propagationPolicy"] = propagation
        try:
            result: dict[str, Any] = self.request("DELETE", path, options)
        except SimApiError as err:
            if err.status == 404:
                return None
            raise
        return result

    def admin(self, method: str, what: str, body: Any = None) -> Any:
        return self.request(method, f"/x-emulator/v1/{what}", body)


def reconcile_each(client: Client, path: str, sync: Callable[[dict[str, Any]], None]) -> None:
    """An operator's loop: each custom resource in turn, none when its CRD is not installed.

    A 404 or 409 while syncing one (it went meanwhile, or was written first) waits for the
    next tick, as a controller requeues it.
    """
    try:
        items = client.list(path)
    except SimApiError as err:
        if err.status == 404:
            return
        raise
    for item in items:
        try:
            sync(item)
        except SimApiError as err:
            if err.status not in (404, 409):
                raise


def pods(namespace: str) -> str:
    return f"/api/v1/namespaces/{namespace}/pods"


def pod(namespace: str, name: str) -> str:
    return f"/api/v1/namespaces/{namespace}/pods/{name}"


def events(namespace: str) -> str:
    return f"/api/v1/namespaces/{namespace}/events"


def jobs(namespace: str) -> str:
    return f"/apis/batch/v1/namespaces/{namespace}/jobs"


def sparkapps(namespace: str) -> str:
    return f"/apis/sparkoperator.k8s.io/v1beta2/namespaces/{namespace}/sparkapplications"


NODES = "/api/v1/nodes"
VOLUME_ATTACHMENTS = "/apis/storage.k8s.io/v1/volumeattachments"


def request_token(client: Client, namespace: str, account: str, pod_name: str, pod_uid: str) -> str:
    """A token of ``account`` bound to one pod (TokenRequest), as the kubelet mounts it."""
    answer = client.create(
        f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token",
        {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {
                "boundObjectRef": {
                    "kind": "Pod",
                    "apiVersion": "v1",
                    "name": pod_name,
                    "uid": pod_uid,
                },
                "expirationSeconds": 3600,
            },
        },
    )
    return str(answer["status"]["token"])
