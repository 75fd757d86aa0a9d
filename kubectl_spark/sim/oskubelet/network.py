"""The pod network of the OS kubelet: an address per pod, cluster DNS, and the way in from the API server.

A pod's processes run on this machine, so everything they send stays on loopback: each pod gets
an address of its own in 127.244.0.0/16 (Linux routes all of 127.0.0.0/8 to ``lo``), which its
processes bind and which the downward API's ``status.podIP`` gives them, so two drivers both
listen on :7078 and :4040 without colliding.

kube-apiserver, though, refuses to proxy to a loopback address (``pods/<name>:<port>/proxy``
and the service proxy check ``IsProxyableIP``: a global unicast address only,
k8s.io/apimachinery/pkg/util/proxy). So the pod's IP *in the API* is its twin in 10.244.0.0/16,
and the API server reaches it as it reaches pods behind Konnectivity: its egress selector
(``--egress-selector-config-file``, the ``cluster`` egress) sends an HTTP CONNECT for
``10.244.a.b:port`` to :class:`EgressProxy` over a Unix socket, which opens ``127.244.a.b:port``.
Nothing on this machine ever connects to a 10.244 address: the proxy maps it, or refuses it.

In the other direction, the pods reach the API server as in a cluster: through the ``kubernetes``
Service's address (:data:`API_SERVICE_IP`, port 443, which :class:`ApiServiceForwarder` forwards
to the API server's real port) or its name ``kubernetes.default.svc``; both are in the pod's
``/etc/hosts``, with every Service's name, headless (a pod IP per name) as Spark's driver
Service is (DriverServiceFeatureStep: ``clusterIP: None``).
"""

from __future__ import annotations

import contextlib
import ipaddress
import select
import socket
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

API_NETWORK = ipaddress.ip_network("10.244.0.0/16")
LOCAL_NETWORK = ipaddress.ip_network("127.244.0.0/16")
#: The ``kubernetes`` Service's address as the pods see it (a loopback address: the API server's
#: certificate names it, tests/controlplane/launcher.py).
API_SERVICE_IP = "127.96.0.1"
API_SERVICE_NAMES = (
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
)


@dataclass(frozen=True)
class PodAddress:
    api: str  #: status.podIP, what the API and kube-apiserver's proxy see
    local: str  #: what the pod's processes bind and are reached at


class PodNetwork:
    """Addresses handed out by pod UID, and the map the egress proxy reads."""

    def __init__(self, api_service_ip: str = API_SERVICE_IP, first: int = 2) -> None:
        """``first``: the offset of the first pod's address in the networks.

        .0.0 and .0.1 are the network's and a gateway's, as on a node's CIDR. Two networks on
        one machine (two test workers) take blocks of their own: their pods bind the loopback
        addresses, which one machine has once.
        """
        #: Where the pods find the API server (:class:`ApiServiceForwarder` listens there).
        self.api_service_ip = api_service_ip
        self._lock = threading.Lock()
        self._by_uid: dict[str, PodAddress] = {}
        self._cut: set[str] = set()  # local addresses of pods on nodes cut off or down
        self._next = first

    def allocate(self, uid: str) -> PodAddress:
        with self._lock:
            found = self._by_uid.get(uid)
            if found is None:
                offset = self._next
                self._next += 1
                if offset >= API_NETWORK.num_addresses - 1:
                    raise RuntimeError("the pod network has no address left")
                found = PodAddress(
                    str(API_NETWORK.network_address + offset),
                    str(LOCAL_NETWORK.network_address + offset),
                )
                self._by_uid[uid] = found
            return found

    def reachable(self, local: str, *, reachable: bool) -> None:
        """A pod on a node cut off from the API server is out of its reach too."""
        with self._lock:
            (self._cut.discard if reachable else self._cut.add)(local)

    def cut_off(self, local: str) -> bool:
        with self._lock:
            return local in self._cut

    def local_for(self, api_address: str) -> str | None:
        """The loopback twin of a pod's API address, or None for an address that is not a pod's."""
        try:
            ip = ipaddress.ip_address(api_address)
        except ValueError:
            return None
        if ip not in API_NETWORK:
            return None
        local = str(LOCAL_NETWORK.network_address + (int(ip) - int(API_NETWORK.network_address)))
        with self._lock:
            known = any(a.local == local for a in self._by_uid.values())
        return local if known else None


def hosts_file(
    entries: Iterable[tuple[str, str]], hostname: str, address: str, api: str = API_SERVICE_IP
) -> str:
    """An /etc/hosts as the kubelet writes a pod's, with the API server and Services' names."""
    lines = [
        "127.0.0.1\tlocalhost",
        "::1\tlocalhost ip6-localhost ip6-loopback",
        f"{api}\t" + " ".join(API_SERVICE_NAMES),
    ]
    lines += [f"{address}\t{name}" for address, name in entries]
    lines.append(f"{address}\t{hostname[:63]}")
    return "\n".join(lines) + "\n"


def _pipe(a: socket.socket, b: socket.socket) -> None:
    """Copy both ways until either side closes."""
    sockets = [a, b]
    try:
        while True:
            readable, _, _ = select.select(sockets, [], [], 60)
            if not readable:
                continue
            for src in readable:
                data = src.recv(65536)
                if not data:
                    return
                (b if src is a else a).sendall(data)
    except OSError:
        return
    finally:
        for s in sockets:
            with contextlib.suppress(OSError):
                s.close()


def _accept(server: socket.socket, handle: Callable[[socket.socket], None]) -> None:
    """Each connection to its own thread, until the listening socket is closed."""
    while True:
        try:
            conn, _ = server.accept()
        except OSError:
            return
        threading.Thread(target=handle, args=(conn,), daemon=True).start()


def _close_listener(server: socket.socket) -> None:
    with contextlib.suppress(OSError):
        server.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
    with contextlib.suppress(OSError):
        server.close()


class EgressProxy:
    """kube-apiserver's ``cluster`` egress: HTTP CONNECT over a Unix socket.

    ``CONNECT 10.244.a.b:port`` opens the pod's loopback address; ``CONNECT 127.0.0.1:port``
    (a kubelet's API, whose node's InternalIP is loopback) is passed on as it is; anything else is
    refused with 403, so no address off this machine is ever dialled.
    """

    def __init__(self, network: PodNetwork, path: Path) -> None:
        self.network = network
        self.path = path
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        path.unlink(missing_ok=True)
        self._server.bind(str(path))
        self._server.listen(64)
        self._thread = threading.Thread(target=self._serve, daemon=True, name="egress-proxy")
        self._thread.start()

    def config(self) -> str:
        """The EgressSelectorConfiguration that points kube-apiserver's pod traffic here."""
        return (
            "apiVersion: apiserver.k8s.io/v1beta1\n"
            "kind: EgressSelectorConfiguration\n"
            "egressSelections:\n"
            "- name: cluster\n"
            "  connection:\n"
            "    proxyProtocol: HTTPConnect\n"
            "    transport:\n"
            "      uds:\n"
            f"        udsName: {self.path}\n"
        )

    def _serve(self) -> None:
        _accept(self._server, self._handle)

    def _target(self, request: bytes) -> tuple[str, int] | None:
        first = request.split(b"\r\n", 1)[0].decode("latin-1").split()
        if len(first) < 2 or first[0] != "CONNECT":
            return None
        host, _, port_text = first[1].rpartition(":")
        if not port_text.isdigit():
            return None
        port = int(port_text)
        if host in ("127.0.0.1", "localhost"):
            return "127.0.0.1", port
        local = self.network.local_for(host)
        return (local, port) if local else None

    def _handle(self, conn: socket.socket) -> None:
        conn.settimeout(10)
        request = b""
        try:
            while b"\r\n\r\n" not in request and len(request) < 8192:
                chunk = conn.recv(4096)
                if not chunk:
                    conn.close()
                    return
                request += chunk
            target = self._target(request)
            if target is None:
                conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
                conn.close()
                return
            try:
                if self.network.cut_off(target[0]):
                    raise ConnectionRefusedError(target)  # as a dial to a cut-off node fails
                upstream = socket.create_connection(target, timeout=5)
            except OSError:
                conn.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
                conn.close()
                return
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            rest = request.split(b"\r\n\r\n", 1)[1]
            if rest:
                upstream.sendall(rest)
            conn.settimeout(None)
            upstream.settimeout(None)
        except OSError:
            with contextlib.suppress(OSError):
                conn.close()
            return
        _pipe(conn, upstream)

    def close(self) -> None:
        _close_listener(self._server)
        self.path.unlink(missing_ok=True)


class ApiServiceForwarder:
    """``kubernetes.default.svc:443`` for the pods: a TCP forwarder to the API server's port."""

    def __init__(self, api_port: int, address: str = API_SERVICE_IP, port: int = 443) -> None:
        self.api_port = api_port
        self._server = socket.socket()
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind((address, port))
        self._server.listen(64)
        threading.Thread(target=self._serve, daemon=True, name="api-service").start()

    def _serve(self) -> None:
        _accept(self._server, self._forward)

    def _forward(self, conn: socket.socket) -> None:
        try:
            upstream = socket.create_connection(("127.0.0.1", self.api_port), timeout=5)
        except OSError:
            conn.close()
            return
        upstream.settimeout(None)
        _pipe(conn, upstream)

    def close(self) -> None:
        _close_listener(self._server)
