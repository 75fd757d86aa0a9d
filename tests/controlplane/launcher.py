"""Start a real Kubernetes control plane on 127.0.0.1: etcd, kube-apiserver,
kube-controller-manager and kube-scheduler, built by :mod:`tests.controlplane.build`.

There are no kubelets: the simulator plays them (node status, leases, pod status, logs) over
the API, as KWOK does. Everything else a cluster does to pods (Jobs, garbage collection, the
node-lifecycle and taint-eviction controllers, pod GC, scheduling) is done by the real
controllers, with their timers shortened so that a node loss plays out in seconds:

- ``--node-monitor-grace-period`` (KCM) is how long a silent node stays Ready;
- ``--default-{not-ready,unreachable}-toleration-seconds`` (kube-apiserver's
  DefaultTolerationSeconds admission) is how long a pod stays on a NotReady/unreachable node
  before the taint-eviction controller deletes it.

Every process runs in its own session with PR_SET_PDEATHSIG, so a test run that is killed
takes its control plane with it; :meth:`ControlPlane.stop` ends them in the reverse order.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trustme
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from kubectl_spark.cluster.apiserver.embedded import kubeconfig_document, write_kubeconfig_file

from .build import built

ADMIN_USER = "kubectl-spark-admin"
CONTEXT_NAME = "kubectl-spark-controlplane"
# Users with a token but no role: permission tests bind them to what they need.
RESTRICTED_USERS = ("alice", "bob", "viewer", "operator")
SERVICE_CIDR = "10.96.0.0/16"
PROXY_CLIENT = "front-proxy-client"


@dataclass
class ControlPlaneOptions:
    node_monitor_grace_seconds: int = 6
    node_monitor_period_seconds: int = 1
    not_ready_toleration_seconds: int = 4
    unreachable_toleration_seconds: int = 4
    namespace: str = "default"
    extra_apiserver_flags: list[str] = field(default_factory=list)
    #: More names and addresses the API server's certificate holds (the OS kubelet's pods reach
    #: it at the ``kubernetes`` Service's loopback address).
    extra_cert_names: list[str] = field(default_factory=list)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:
    """In the child, before exec: SIGKILL when the test process dies (Linux only)."""
    os.setsid()
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class ControlPlaneError(Exception):
    """A component did not start: the message holds the end of its log."""


class ControlPlane:
    """One real control plane in a temporary folder; ``with ControlPlane() as cp:``."""

    def __init__(self, options: ControlPlaneOptions | None = None) -> None:
        self.options = options or ControlPlaneOptions()
        binaries = built()
        if binaries is None:
            raise ControlPlaneError(
                "the control plane's binaries are not built: run python -m tests.controlplane.build"
            )
        self.bin = binaries
        self.dir = Path(tempfile.mkdtemp(prefix="kubectl-spark-cp-"))
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.port = 0
        self.token = secrets.token_urlsafe(32)
        self.user_tokens = {name: secrets.token_urlsafe(24) for name in RESTRICTED_USERS}
        self._ca = trustme.CA(organization_name="kubectl-spark test bed")
        # The aggregation layer's: kube-apiserver reaches an APIService (the recorder) with a
        # certificate of this CA, which the aggregated server verifies.
        self._front_proxy_ca = trustme.CA(organization_name="kubectl-spark test bed front proxy")

    # ------------------------------------------------------------------------- addresses
    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def ca_pem(self) -> bytes:
        return bytes(self._ca.cert_pem.bytes())

    def kubeconfig(
        self, *, user: str = ADMIN_USER, token: str | None = None, namespace: str | None = None
    ) -> dict[str, Any]:
        """The same shape the emulator writes, so that tests need not tell them apart."""
        chosen = token or (self.token if user == ADMIN_USER else self.user_tokens[user])
        return kubeconfig_document(
            self.url, self.ca_pem, user, chosen, namespace or self.options.namespace, CONTEXT_NAME
        )

    def write_kubeconfig(self, path: str | os.PathLike[str], **kwargs: Any) -> Path:
        return write_kubeconfig_file(path, self.kubeconfig(**kwargs))

    def write_ca(self, path: str | os.PathLike[str]) -> Path:
        target = Path(path)
        target.write_bytes(self.ca_pem)
        return target

    # ---------------------------------------------------------------------------- running
    def _files(self) -> None:
        d = self.dir
        cert = self._ca.issue_cert(
            "127.0.0.1",
            "localhost",
            "kubernetes",
            "kubernetes.default",
            "kubernetes.default.svc",
            "kubernetes.default.svc.cluster.local",
            "10.96.0.1",
            *self.options.extra_cert_names,
        )
        cert.private_key_pem.write_to_path(str(d / "apiserver.key"))
        cert.cert_chain_pems[0].write_to_path(str(d / "apiserver.crt"))
        self._ca.cert_pem.write_to_path(str(d / "ca.crt"))
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        (d / "sa.key").write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.TraditionalOpenSSL,
                serialization.NoEncryption(),
            )
        )
        (d / "sa.pub").write_bytes(
            key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )
        rows = [f'{self.token},{ADMIN_USER},{ADMIN_USER},"system:masters"']
        rows += [f"{token},{name},{name}" for name, token in self.user_tokens.items()]
        (d / "tokens.csv").write_text("\n".join(rows) + "\n")
        self._front_proxy_ca.cert_pem.write_to_path(str(d / "front-proxy-ca.crt"))
        proxy_client = self._front_proxy_ca.issue_cert(PROXY_CLIENT, common_name=PROXY_CLIENT)
        proxy_client.private_key_pem.write_to_path(str(d / "front-proxy-client.key"))
        proxy_client.cert_chain_pems[0].write_to_path(str(d / "front-proxy-client.crt"))
        (d / "tokens.csv").chmod(0o600)

    def _spawn(self, name: str, args: list[str]) -> None:
        log = (self.dir / f"{name}.log").open("wb")
        self.processes[name] = subprocess.Popen(
            [str(self.bin / name), *args],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,  # noqa: PLW1509 - setsid and the death signal only
        )
        log.close()

    def log_tail(self, name: str, lines: int = 30) -> str:
        path = self.dir / f"{name}.log"
        if not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def _wait(self, name: str, ready: Any, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            proc = self.processes[name]
            if proc.poll() is not None:
                raise ControlPlaneError(
                    f"{name} exited ({proc.returncode}):\n{self.log_tail(name)}"
                )
            if ready():
                return
            time.sleep(0.1)
        raise ControlPlaneError(f"{name} not ready in {seconds:.0f} s:\n{self.log_tail(name)}")

    def _get(self, path: str, *, token: str | None = None) -> int:
        ctx = ssl.create_default_context(cadata=self.ca_pem.decode())
        request = urllib.request.Request(
            self.url + path, headers={"Authorization": f"Bearer {token or self.token}"}
        )
        try:
            with urllib.request.urlopen(request, context=ctx, timeout=5) as response:
                return int(response.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)
        except (urllib.error.URLError, OSError):
            return 0

    def start(self) -> ControlPlane:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        d = self.dir
        self._files()
        etcd_port, peer_port = _free_port(), _free_port()
        self._spawn(
            "etcd",
            [
                f"--data-dir={d / 'etcd'}",
                f"--listen-client-urls=http://127.0.0.1:{etcd_port}",
                f"--advertise-client-urls=http://127.0.0.1:{etcd_port}",
                f"--listen-peer-urls=http://127.0.0.1:{peer_port}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer_port}",
                f"--initial-cluster=default=http://127.0.0.1:{peer_port}",
                "--unsafe-no-fsync",
                "--log-level=warn",
            ],
        )
        self._wait("etcd", lambda: _accepts(etcd_port), 30)
        self.port = _free_port()
        o = self.options
        self._spawn(
            "kube-apiserver",
            [
                f"--etcd-servers=http://127.0.0.1:{etcd_port}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={self.port}",
                f"--cert-dir={d / 'certs'}",
                f"--tls-cert-file={d / 'apiserver.crt'}",
                f"--tls-private-key-file={d / 'apiserver.key'}",
                f"--client-ca-file={d / 'ca.crt'}",
                f"--token-auth-file={d / 'tokens.csv'}",
                "--authorization-mode=RBAC",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                f"--service-account-key-file={d / 'sa.pub'}",
                f"--service-account-signing-key-file={d / 'sa.key'}",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
                f"--default-not-ready-toleration-seconds={o.not_ready_toleration_seconds}",
                f"--default-unreachable-toleration-seconds={o.unreachable_toleration_seconds}",
                "--kubelet-preferred-address-types=InternalIP",
                # The loopback address cannot back the kubernetes Service's endpoints.
                "--endpoint-reconciler-type=none",
                "--allow-privileged=true",
                # The aggregation layer, as kubeadm configures it; routing to the endpoint,
                # not the cluster IP, as no kube-proxy runs here.
                f"--requestheader-client-ca-file={d / 'front-proxy-ca.crt'}",
                f"--requestheader-allowed-names={PROXY_CLIENT}",
                "--requestheader-username-headers=X-Remote-User",
                "--requestheader-group-headers=X-Remote-Group",
                "--requestheader-extra-headers-prefix=X-Remote-Extra-",
                f"--proxy-client-cert-file={d / 'front-proxy-client.crt'}",
                f"--proxy-client-key-file={d / 'front-proxy-client.key'}",
                "--enable-aggregator-routing=true",
                "--profiling=false",
                "--v=0",
                *o.extra_apiserver_flags,
            ],
        )
        self._wait("kube-apiserver", lambda: self._get("/readyz") == 200, 90)
        admin = self.write_kubeconfig(d / "admin.kubeconfig")
        self._spawn(
            "kube-controller-manager",
            [
                f"--kubeconfig={admin}",
                "--leader-elect=false",
                "--secure-port=0",
                "--use-service-account-credentials=false",
                f"--service-account-private-key-file={d / 'sa.key'}",
                f"--root-ca-file={d / 'ca.crt'}",
                f"--node-monitor-grace-period={o.node_monitor_grace_seconds}s",
                f"--node-monitor-period={o.node_monitor_period_seconds}s",
                # A claim made just after its volume can reach the binder before the volume
                # does; it is bound on the next full sync (15 s by default).
                "--pvclaimbinder-sync-period=1s",
                "--controllers=*",
                "--v=0",
            ],
        )
        self._spawn(
            "kube-scheduler",
            [f"--kubeconfig={admin}", "--leader-elect=false", "--secure-port=0", "--v=0"],
        )
        self._install_crds()
        # The service account controller makes "default" in each namespace; pods need it.
        self._wait(
            "kube-controller-manager",
            lambda: self._get("/api/v1/namespaces/default/serviceaccounts/default") == 200,
            60,
        )
        for served in CRD_PATHS:
            self._wait("kube-apiserver", lambda path=served: self._get(path) == 200, 30)

    def _install_crds(self) -> None:
        """The two Spark operators' CRDs, which the emulator serves built in."""
        ctx = ssl.create_default_context(cadata=self.ca_pem.decode())
        for file in CRD_FILES:
            for crd in yaml.safe_load_all(Path(__file__).with_name(file).read_text()):
                request = urllib.request.Request(
                    self.url + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                    data=json.dumps(crd).encode(),
                    method="POST",
                    headers={
                        "Authorization": f"Bearer {self.token}",
                        "Content-Type": "application/json",
                    },
                )
                with urllib.request.urlopen(request, context=ctx, timeout=10):
                    pass

    def stop(self) -> None:
        for name in reversed(list(self.processes)):
            proc = self.processes[name]
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=10)
        self.processes.clear()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> ControlPlane:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


CRD_FILES = ("sparkapplication-crd.yaml", "apache-spark-crds.yaml")
# Served once established: every version of every CRD the bed installs.
CRD_PATHS = (
    "/apis/sparkoperator.k8s.io/v1beta2/sparkapplications",
    *(
        f"/apis/spark.apache.org/{version}/{plural}"
        for plural in ("sparkapplications", "sparkclusters")
        for version in ("v1", "v1beta1")
    ),
)


def _accepts(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0
