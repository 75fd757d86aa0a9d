"""API aggregation: an APIService's group served by a Service's pods, as kube-aggregator does.

What the plugin's in-cluster recorder needs of it, as kube-apiserver 1.33 behaves:

- ``/apis/<group>/<version>/...`` of a group registered by an APIService (and not served by the
  emulator itself) is authorised here against the request's own attributes (as RBAC sees
  ``keptpods`` in ``recorder.kubectl-spark.io``), then proxied over TLS to an endpoint of the
  APIService's Service (``--enable-aggregator-routing``: the endpoint, not the cluster IP),
  with the front-proxy client certificate and the user in ``X-Remote-User``/``X-Remote-Group``/
  ``X-Remote-Extra-*``; the caller's own credentials are not passed on
  (kube-aggregator/pkg/apiserver/handler_proxy.go, apiserver's transport.SetAuthProxyHeaders);
- the front proxy's trust is published in ``kube-system/extension-apiserver-authentication``
  (kubernetes/pkg/controlplane/controller/clusterauthenticationtrust), where the aggregated
  server reads it;
- what the aggregated server then asks, SubjectAccessReviews and TokenReviews, is answered by
  the same policy and tokens as requests (reviews.py).
"""

from __future__ import annotations

import json
import ssl
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import trustme
from aiohttp import web

from . import admission
from .authz import Attributes, Identity, forbidden_message
from .errors import forbidden
from .service_proxy import HOP_BY_HOP, forward

if TYPE_CHECKING:
    from .server import ApiServer

PROXY_CLIENT = "front-proxy-client"  # the certificate's CN, and the one allowed name
USER_HEADER, GROUP_HEADER, EXTRA_PREFIX = "X-Remote-User", "X-Remote-Group", "X-Remote-Extra-"
VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch"}


class Aggregator:
    """The front proxy's CA and client certificate, and the proxying of aggregated groups."""

    def __init__(self) -> None:
        self.ca = trustme.CA(organization_name="kubectl-spark emulator front proxy")
        client = self.ca.issue_cert(PROXY_CLIENT, common_name=PROXY_CLIENT)
        self._client = ssl.create_default_context()
        self._client.check_hostname = False
        self._client.verify_mode = ssl.CERT_NONE  # insecureSkipTLSVerify (the recorder's)
        with tempfile.TemporaryDirectory(prefix="kubectl-spark-front-proxy-") as folder:
            chain = Path(folder) / "client.pem"
            client.private_key_and_cert_chain_pem.write_to_path(str(chain))
            self._client.load_cert_chain(str(chain))

    def trust_data(self) -> dict[str, str]:
        """``extension-apiserver-authentication``'s front-proxy keys, as kube-apiserver writes them."""
        return {
            "requestheader-client-ca-file": self.ca.cert_pem.bytes().decode(),
            "requestheader-allowed-names": json.dumps([PROXY_CLIENT]),
            "requestheader-username-headers": json.dumps([USER_HEADER]),
            "requestheader-uid-headers": json.dumps([]),
            "requestheader-group-headers": json.dumps([GROUP_HEADER]),
            "requestheader-extra-headers-prefix": json.dumps([EXTRA_PREFIX]),
        }

    @staticmethod
    def registered(server: ApiServer, group: str, version: str) -> dict[str, Any] | None:
        """The APIService serving ``group``/``version`` from a Service, if one is stored."""
        rt = server.registry.lookup("apiregistration.k8s.io", "v1", "apiservices")
        if rt is None:
            return None
        found = server.store.lookup(rt, "", f"{version}.{group}")
        spec = (found.obj.get("spec") or {}) if found is not None else {}
        return spec if spec.get("service") else None

    async def proxy(
        self,
        server: ApiServer,
        request: web.Request,
        user: Identity,
        spec: dict[str, Any],
        rest: list[str],
    ) -> web.StreamResponse:
        """Authorise the request as RBAC would see it, then pass it and its user on."""
        group = str(spec.get("group") or "")
        attributes = _attributes(user, request.method, group, rest, request.query)
        if not server.policy.allows(attributes):
            raise forbidden(
                attributes.resource, group, attributes.name, forbidden_message(attributes)
            )
        service = spec["service"]
        ip, port = server.service_endpoint(
            str(service.get("namespace") or ""),
            str(service.get("name") or ""),
            str(service.get("port") or 443),
        )
        host = f"[{ip}]" if ":" in ip else ip
        # Who asked travels only in the headers set here: the caller's credentials, its
        # impersonation and any X-Remote-* it sent itself are dropped.
        forwarded = [
            (k, v)
            for k, v in request.headers.items()
            if k.lower() not in HOP_BY_HOP
            and k.lower() not in ("authorization", "host")
            and not k.lower().startswith(("x-remote-", "impersonate-"))
        ]
        forwarded.append((USER_HEADER, user.name))
        forwarded += [(GROUP_HEADER, g) for g in sorted(user.groups)]
        forwarded += [(f"{EXTRA_PREFIX}{quote(k, safe='')}", v) for k, vs in user.extra for v in vs]
        return await forward(
            request, f"https://{host}:{port}{request.path}", forwarded, tls=self._client
        )


def _attributes(user: Identity, method: str, group: str, rest: list[str], query: Any) -> Attributes:
    """What kube-apiserver's RequestInfoFactory makes of ``/apis/<group>/<version>/<rest>``."""
    namespace = ""
    if len(rest) >= 2 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    resource = rest[0] if rest else ""
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    if method == "GET":
        verb = "get" if name else "watch" if query.get("watch") in ("1", "true") else "list"
    elif method == "DELETE":
        verb = "delete" if name else "deletecollection"
    else:
        verb = VERBS.get(method, method.lower())
    return Attributes.of(user, verb, group, resource, subresource, namespace, name)


def publish_trust(server: ApiServer, aggregator: Aggregator) -> None:
    """kube-system/extension-apiserver-authentication, as kube-apiserver keeps it."""
    configmaps = server.registry.lookup("", "v1", "configmaps")
    assert configmaps is not None
    body = {
        "metadata": {"name": "extension-apiserver-authentication"},
        "data": aggregator.trust_data(),
    }
    with admission.as_cluster():
        server.store.create(configmaps, "kube-system", body)
