"""The recorder's port as its callers meet it: TLS, a token or the front proxy's certificate.

``Decisions`` stands for the API server's answers (TokenReview, SubjectAccessReview) where a
test runs the recorder's HTTP server alone; functional tests give it the real API server's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import trustme

from kubectl_spark.app.recorder_http import Access
from kubectl_spark.app.recorder_tls import serving_context
from kubectl_spark.kube.delegation import Caller, FrontProxyTrust

ADMIN_TOKEN = "admin-token"
ADMIN = Caller("admin", ("system:masters", "system:authenticated"))
PROXY_CLIENT = "front-proxy-client"


class Decisions:
    """Tokens and rights as a table; every question asked is kept in ``asked``."""

    def __init__(
        self,
        tokens: dict[str, Caller] | None = None,
        allowed: Callable[[Caller, dict[str, str]], bool] = lambda *_: True,
    ) -> None:
        self.tokens = {ADMIN_TOKEN: ADMIN} if tokens is None else tokens
        self.allowed = allowed
        self.asked: list[tuple[str, dict[str, str]]] = []

    def token_caller(self, token: str) -> Caller | None:
        return self.tokens.get(token)

    def allows(self, caller: Caller, attributes: dict[str, str], *, resource: bool) -> bool:
        del resource
        self.asked.append((caller.name, dict(attributes)))
        return self.allowed(caller, attributes)


def access(decisions: Decisions | None = None, front_proxy: trustme.CA | None = None) -> Access:
    """An Access trusting ``front_proxy`` (a CA) as kube-apiserver's front proxy, if given."""
    trust = FrontProxyTrust(
        front_proxy.cert_pem.bytes().decode() if front_proxy is not None else "",
        allowed_names=frozenset({PROXY_CLIENT}),
        username_headers=("X-Remote-User",),
        group_headers=("X-Remote-Group",),
        extra_prefixes=("X-Remote-Extra-",),
    )
    return Access(serving_context(trust, ["localhost"]), trust, decisions or Decisions())


def read_recorder(
    port: int,
    path: str,
    token: str = "",
    cert: Any = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """(status, JSON or text) of ``path`` on the recorder's own port, as a caller reaching it."""
    import json
    import ssl
    import urllib.error
    import urllib.request

    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # its self-signed certificate
    if cert is not None:
        cert.configure_cert(context)
    request = urllib.request.Request(f"https://127.0.0.1:{port}{path}", headers=headers or {})
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as answer:
            status, body = answer.status, answer.read()
    except urllib.error.HTTPError as err:
        status, body = err.code, err.read()
    try:
        return status, json.loads(body)
    except ValueError:
        return status, body.decode(errors="replace")


def recorded_pod(uid: str, rv: str, phase: str = "Running", **env: str) -> dict[str, Any]:
    """A pod as the recorder keeps it, with its container's environment (never served)."""
    return {
        "metadata": {"name": f"p-{uid}", "namespace": "ns", "uid": uid, "resourceVersion": rv,
                     "labels": {"spark-role": "executor"}},
        "spec": {"containers": [{"name": "c", "env": [{"name": k, "value": v}
                                                      for k, v in env.items()]}]},
        "status": {"phase": phase},
    }  # fmt: skip
