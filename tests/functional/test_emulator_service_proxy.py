"""The emulator's service proxy and Endpoints, held to kube-apiserver's rules.

``ResourceLocation`` (pkg/registry/core/service/storage/storage.go): a port given by number
must be the Service's; the Endpoints of its name must exist (404) and have subsets (503); an
address is used only if its targetRef is a pod with that IP. ``ValidateEndpointIP``: no
loopback, link-local or unspecified address in an Endpoints.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.helpers import pod, raw
from tests.incluster import machine_address

SERVICES = "/api/v1/namespaces/default/services"
ENDPOINTS = "/api/v1/namespaces/default/endpoints"
PODS = "/api/v1/namespaces/default/pods"
MERGE = "application/merge-patch+json"


@pytest.fixture
def backend() -> Iterator[int]:
    """A plain HTTP server on every address, saying what path and query it was asked."""

    class Echo(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = f"asked {self.path}".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: Any) -> None:
            return None

    server = ThreadingHTTPServer(("0.0.0.0", 0), Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()


def _service(api: Any) -> None:
    status, body = raw(
        api,
        "POST",
        SERVICES,
        {"metadata": {"name": "web"},
         "spec": {"ports": [{"name": "http", "port": 80, "targetPort": "http"}]}},
    )  # fmt: skip
    assert status == 201, body


def _endpoints(address: str, port: int, pod_name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": "web"},
        "subsets": [
            {
                "addresses": [
                    {"ip": address, "targetRef": {"kind": "Pod", "namespace": "default",
                                                  "name": pod_name}}
                ],
                "ports": [{"name": "http", "port": port}],
            }
        ],
    }  # fmt: skip


def test_endpoints_refuse_what_kube_apiserver_refuses(api: Any) -> None:
    for address, says in (
        ("127.0.0.1", "may not be in the loopback range (127.0.0.0/8, ::1/128)"),
        ("169.254.1.1", "may not be in the link-local range (169.254.0.0/16, fe80::/10)"),
        ("0.0.0.0", "may not be unspecified (0.0.0.0)"),
        ("no-ip", "must be a valid IP address"),
    ):
        status, body = raw(api, "POST", ENDPOINTS, _endpoints(address, 80, "p"))
        assert status == 422, body
        assert f'subsets[0].addresses[0].ip: Invalid value: "{address}": {says}' in body["message"]


def test_the_service_proxy_resolves_as_kube_apiserver_does(api: Any, backend: int) -> None:
    address = machine_address()
    proxy = f"{SERVICES}/web:http/proxy/some/path"
    status, body = raw(api, "GET", proxy)
    assert (status, body["reason"]) == (404, "NotFound"), body  # no Service
    _service(api)
    status, body = raw(api, "GET", proxy)
    assert (status, body["message"]) == (404, 'endpoints "web" not found'), body
    status, body = raw(api, "GET", f"{SERVICES}/web:81/proxy/")
    assert (status, body["message"]) == (503, 'no service port 81 found for service "web"')
    status, body = raw(api, "POST", ENDPOINTS, _endpoints(address, backend, "backend"))
    assert status == 201, body
    # The address is no pod's: refused, as isValidAddress does.
    status, body = raw(api, "GET", proxy)
    assert (status, body["message"]) == (503, 'no endpoints available for service "web:http"')
    status, made = raw(api, "POST", PODS, pod("backend"))
    assert status == 201, made
    status, body = raw(
        api, "PATCH", f"{PODS}/backend/status", {"status": {"podIP": address}}, content_type=MERGE
    )
    assert status == 200, body
    status, body = raw(api, "GET", proxy, query={"a": "1"})
    assert (status, body) == (200, "asked /some/path?a=1")
    status, body = raw(api, "GET", f"{SERVICES}/web:80/proxy/by-number")  # 80 is "http"
    assert (status, body) == (200, "asked /by-number")
    status, body = raw(api, "GET", f"{SERVICES}/a:b:c:d/proxy/")
    assert (status, body["message"]) == (400, 'invalid service request "a:b:c:d"')


def test_the_real_kubectl_prints_and_proxies_them(api: Any, kubectl: Any, backend: int) -> None:
    """kubectl's own columns (printService, printEndpoints) and `get --raw` through the proxy."""
    address = machine_address()
    _service(api)
    assert raw(api, "POST", ENDPOINTS, _endpoints(address, backend, "backend"))[0] == 201
    assert raw(api, "POST", PODS, pod("backend"))[0] == 201
    status, body = raw(
        api, "PATCH", f"{PODS}/backend/status", {"status": {"podIP": address}}, content_type=MERGE
    )
    assert status == 200, body
    services = kubectl("get", "svc", "web", "-o", "wide").stdout.splitlines()
    assert services[0].split() == [
        "NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR",
    ]  # fmt: skip
    name, kind, cluster_ip, external, ports, _, selector = services[1].split()
    assert (name, kind, external, ports, selector) == (
        "web",
        "ClusterIP",
        "<none>",
        "80/TCP",
        "<none>",
    )
    assert cluster_ip.count(".") == 3
    endpoints = kubectl("get", "endpoints", "web").stdout.splitlines()
    assert endpoints[0].split() == ["NAME", "ENDPOINTS", "AGE"]
    assert endpoints[1].split()[:2] == ["web", f"{address}:{backend}"]
    out = kubectl("get", "--raw", f"{SERVICES}/web:http/proxy/x?y=1").stdout
    assert out == "asked /x?y=1"
