"""The recorder as a security review meets it (issue 49, point 3).

Its rendered objects are admitted by the real control plane at the ``restricted`` Pod
Security level (kube-apiserver's PodSecurity admission; the emulator has none), its
NetworkPolicy names the API server's own addresses as the cluster keeps them, ``record``
outside a cluster listens on loopback only, and a half-sent request does not hold the port.
"""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from kubectl_spark.app import recorder_http
from kubectl_spark.sim.client import Client, SimApiError
from tests.incluster import free_port, machine_address
from tests.recorder_access import access

NS = "recorder-restricted"
RESTRICTED = {
    "pod-security.kubernetes.io/enforce": "restricted",
    "pod-security.kubernetes.io/enforce-version": "latest",
}


def _rendered(kubeconfig: Path, *args: str) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "kubectl_spark.cli.main", "--kubeconfig", str(kubeconfig),
         "recorder", "-n", NS, "--dry-run", "-o", "json", *args],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    items: list[dict[str, Any]] = json.loads(done.stdout)["items"]
    return items


def _create(admin: Client, obj: dict[str, Any]) -> None:
    """Created as a server dry run: admitted (or refused) by every admission plugin."""
    group, _, version = str(obj["apiVersion"]).rpartition("/")
    base = f"/apis/{group}/{version}" if group else f"/api/{version}"
    plural = {
        "NetworkPolicy": "networkpolicies",
        "PodDisruptionBudget": "poddisruptionbudgets",
        "PersistentVolumeClaim": "persistentvolumeclaims",
        "ServiceAccount": "serviceaccounts",
    }.get(str(obj["kind"]), str(obj["kind"]).lower() + "s")
    scoped = obj["kind"] not in ("ClusterRole", "ClusterRoleBinding", "APIService")
    namespace = obj["metadata"].get("namespace", NS)  # the trust reader's is kube-system
    path = f"{base}/namespaces/{namespace}/{plural}" if scoped else f"{base}/{plural}"
    admin.request("POST", path, obj, query={"dryRun": "All"})


def test_the_rendered_recorder_is_admitted_at_the_restricted_level(
    control_plane: Any, tmp_path: Path
) -> None:
    from tests.beds import RealBed, reset

    real = RealBed(control_plane)
    admin = Client(real.url, real.token, real.ca_pem)
    try:
        admin.create("/api/v1/namespaces", {"metadata": {"name": NS, "labels": dict(RESTRICTED)}})
        # kube-apiserver's endpoint reconciler keeps its address there; the test plane runs
        # without it (it listens on loopback, which an Endpoints may not hold): written here.
        admin.create(
            "/api/v1/namespaces/default/endpoints",
            {"metadata": {"name": "kubernetes"},
             "subsets": [{"addresses": [{"ip": machine_address()}],
                          "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}]},
        )  # fmt: skip
        objects = _rendered(real.write_kubeconfig(tmp_path / "kubeconfig"))
        kinds = [o["kind"] for o in objects]
        assert {"NetworkPolicy", "PodDisruptionBudget", "Deployment"} <= set(kinds)
        for obj in objects:
            _create(admin, obj)
        # the policy names the API server's addresses, read from its kubernetes Endpoints
        endpoints = admin.get("/api/v1/namespaces/default/endpoints/kubernetes") or {}
        addresses = {a["ip"] for s in endpoints.get("subsets", []) for a in s.get("addresses", [])}
        (policy,) = [o for o in objects if o["kind"] == "NetworkPolicy"]
        blocks = {
            f["ipBlock"]["cidr"] for f in policy["spec"]["ingress"][0]["from"] if "ipBlock" in f
        }
        assert addresses and blocks == {f"{a}/32" for a in addresses}
        # the Deployment's pod, as its ReplicaSet would create it, passes PodSecurity ...
        (account,) = [o for o in objects if o["kind"] == "ServiceAccount"]
        admin.create(f"/api/v1/namespaces/{NS}/serviceaccounts", account)  # its pod names it
        (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
        template = deployment["spec"]["template"]
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "recorder-probe", "labels": template["metadata"]["labels"]},
               "spec": template["spec"]}  # fmt: skip
        admin.request("POST", f"/api/v1/namespaces/{NS}/pods", pod, query={"dryRun": "All"})
        # ... and would not without its seccomp profile: the admission is really enforcing
        del pod["spec"]["securityContext"]["seccompProfile"]
        del pod["spec"]["containers"][0]["securityContext"]["seccompProfile"]
        with pytest.raises(SimApiError) as refused:
            admin.request("POST", f"/api/v1/namespaces/{NS}/pods", pod, query={"dryRun": "All"})
        assert refused.value.status == 403
        assert "violates PodSecurity" in json.dumps(refused.value.body)
    finally:
        admin.delete("/api/v1/namespaces/default/endpoints/kubernetes")  # reset keeps that name
        admin.close()
        real.close()
        reset(control_plane)


def test_a_given_apiserver_cidr_and_digest_are_what_is_rendered(kubeconfig: Path) -> None:
    objects = _rendered(
        kubeconfig, "--apiserver-cidr", "10.96.0.0/12", "--apiserver-cidr", "192.0.2.7",
        "--image-digest", "sha256:" + "0f" * 32,
    )  # fmt: skip
    (policy,) = [o for o in objects if o["kind"] == "NetworkPolicy"]
    blocks = [f["ipBlock"]["cidr"] for f in policy["spec"]["ingress"][0]["from"] if "ipBlock" in f]
    assert blocks == ["10.96.0.0/12", "192.0.2.7/32"]
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"].endswith(
        "@sha256:" + "0f" * 32
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--apiserver-cidr", "nope"], 'invalid --apiserver-cidr "nope": an address or CIDR'),
        (["--image-digest", "sha256:xyz"], 'invalid --image-digest "sha256:xyz"'),
    ],
)
def test_bad_recorder_options_are_one_line_errors(
    kubeconfig: Path, args: list[str], message: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kubectl_spark.cli.main", "--kubeconfig", str(kubeconfig),
         "recorder", "--dry-run", "-o", "yaml", *args],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines()[0].startswith(f"error: {message}"), done.stderr


def test_without_the_apiserver_s_endpoints_it_asks_for_them(kubeconfig: Path) -> None:
    """The emulator keeps no kubernetes Endpoints: the command says what to pass."""
    done = subprocess.run(
        [sys.executable, "-m", "kubectl_spark.cli.main", "--kubeconfig", str(kubeconfig),
         "recorder", "--dry-run", "-o", "yaml"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1 and done.stdout == ""
    assert "pass --apiserver-cidr" in done.stderr


def _healthy(host: str, port: int) -> bool:
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE  # self-signed
    try:
        with urllib.request.urlopen(
            f"https://{host}:{port}/healthz", timeout=2, context=context
        ) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def test_record_outside_a_cluster_listens_on_loopback_only(
    kubeconfig: Path, tmp_path: Path
) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubectl_spark.cli.main", "--kubeconfig", str(kubeconfig),
         "record", "-A", "-q", "--port", str(port), "--history-db", str(tmp_path / "h.db")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not _healthy("127.0.0.1", port):
            assert proc.poll() is None and time.monotonic() < deadline, "record never served"
            time.sleep(0.2)
        assert not _healthy(machine_address(), port)
    finally:
        proc.terminate()
        proc.wait(20)


def test_a_half_sent_request_does_not_hold_the_port(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(recorder_http, "REQUEST_SECONDS", 0.5)
    server = recorder_http.RecorderServer(tmp_path / "h.db", None, None, 0, "127.0.0.1", access())
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    try:
        # a handshake never begun, then a request never ended: each closed by the server
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as silent:
            started = time.monotonic()
            with contextlib.suppress(ConnectionResetError):
                assert silent.recv(1024) == b""
            assert time.monotonic() - started < 8
        with (
            socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw,
            context.wrap_socket(raw) as slow,
        ):
            slow.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # never the blank line
            started = time.monotonic()
            with contextlib.suppress(ConnectionResetError, ssl.SSLError):
                assert slow.recv(1024) == b""  # closed by the server
            assert time.monotonic() - started < 8
        assert _healthy("127.0.0.1", server.port)
    finally:
        server.close()


def test_with_its_addresses_given_the_recorder_renders_without_a_cluster(
    kubeconfig: Path, tmp_path: Path
) -> None:
    """For a GitOps repository: nothing to read, so nothing is asked (the server is down)."""
    down = tmp_path / "down"
    port = free_port()
    down.write_text(
        kubeconfig.read_text().replace(
            kubeconfig.read_text().split("server: ")[1].split()[0], f"https://127.0.0.1:{port}"
        )
    )
    objects = _rendered(down, "--apiserver-cidr", "192.0.2.7")
    assert {"NetworkPolicy", "Deployment"} <= {o["kind"] for o in objects}
