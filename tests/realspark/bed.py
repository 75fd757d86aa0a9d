"""The real-Spark test bed: a real control plane whose nodes run Spark's own JVMs.

Apache Spark from PyPI (``pyspark`` carries spark-kubernetes and its fabric8 client) and the
machine's Java run the drivers and executors as processes, started by the OS kubelet
(:mod:`kubectl_spark.sim.oskubelet`) for the pods the control plane binds to its nodes. What
Spark does and says — the pods it creates, the exit codes, its REST API's ``removeReason`` —
is Spark's own; the simulator's Spark is held to it (test_differential.py in this folder).

One control plane serves the tier (its start is seconds); each test gets its own nodes and
namespace, and the next test starts on an empty cluster (:func:`tests.beds.reset`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubectl_spark.sim.client import Client
from kubectl_spark.sim.oskubelet.image import SparkImage
from kubectl_spark.sim.oskubelet.kubelet import ProcessKubelet
from kubectl_spark.sim.oskubelet.network import (
    ApiServiceForwarder,
    EgressProxy,
    PodNetwork,
)
from tests.beds import reset
from tests.controlplane.launcher import ControlPlane, ControlPlaneOptions

APPS = Path(__file__).with_name("apps")
SPARK_VERSION = "4.1.1"
IMAGE = f"apache/spark:{SPARK_VERSION}"
REQUIRE = "KUBECTL_SPARK_REQUIRE_REALSPARK"
# Small JVMs: two cores run a handful at once. Spark's floor for an executor is 450 MiB of heap
# (UnifiedMemoryManager: 1.5 x the 300 MiB it reserves).
#
# A PySpark driver's pod runs two processes, the JVM and Python, under one memory limit: Spark's
# default overhead (384 MiB over 512 MiB of heap) is what its docs warn is often too little for
# non-JVM work, and a driver whose JVM grew over a run was OOM-killed in one CI run (its pod's
# limit, as the OS kubelet enforces it). The overhead a PySpark user sets keeps it within.
SMALL = {
    "spark.driver.memory": "512m",
    "spark.driver.memoryOverhead": "768m",
    "spark.executor.memory": "512m",
    "spark.executor.cores": "1",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
}


# Every JVM of the tier (spark-submit here, the drivers and executors in the pods) compiles with
# C1 only: these JVMs live seconds to minutes, and on two cores C2's compilations took a third
# of their CPU and never paid back. Measured on test_driver_and_allocation.py, one worker:
# 180 -> 123 s of CPU, 116 -> 98 s of wall time. What Spark does and says is unchanged.
JVM_OPTIONS = ("-XX:TieredStopAtLevel=1",)


@dataclass(frozen=True)
class Addresses:
    """One pytest-xdist worker's loopback addresses: the tier runs on two workers at once.

    Pods bind their own loopback address and the API server's Service address is a port 443
    bound once, so each worker's beds take a block of their own (worker gw<n>: 127.96.<n>.x for
    the Service, pod addresses from offset 2 + n * POD_BLOCK).
    """

    worker: int

    POD_BLOCK = 4096

    @classmethod
    def of_this_worker(cls) -> Addresses:
        number = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
        return cls(int(number) if number.isdigit() else 0)

    @property
    def api_service_ip(self) -> str:
        """The control plane's Service address."""
        return f"127.96.{self.worker}.1"

    @property
    def emulator_service_ip(self) -> str:
        """The emulator's, held beside the control plane's while a test runs on the emulator."""
        return f"127.96.{self.worker}.2"

    def network(self, api_service_ip: str) -> PodNetwork:
        return PodNetwork(api_service_ip, first=2 + self.worker * self.POD_BLOCK)


class Unavailable(Exception):
    """Spark or Java is not installed here: the tier cannot run (the message says what to do)."""


def spark_home() -> Path:
    try:
        import pyspark
    except ImportError as err:
        raise Unavailable(
            "pyspark is not installed: scripts/dev test installs it (the realspark extra)"
        ) from err
    home = Path(pyspark.__file__).parent
    if not (home / "jars").is_dir():
        raise Unavailable(f"pyspark at {home} carries no jars/")
    return home


def java_home() -> Path:
    """Java 17 or newer (Spark 4 needs 17): $JAVA_HOME, else the `java` on PATH."""
    candidates = [os.environ.get("JAVA_HOME", "")]
    found = shutil.which("java")
    if found:
        candidates.append(str(Path(os.path.realpath(found)).parent.parent))
    for home in filter(None, candidates):
        java = Path(home, "bin", "java")
        if not java.is_file():
            continue
        banner = subprocess.run(
            [str(java), "-version"], capture_output=True, text=True, check=False
        ).stderr
        match = re.search(r'version "(\d+)', banner)
        if match and int(match.group(1)) >= 17:
            return Path(home)
    raise Unavailable("no Java 17 or newer: install openjdk-17-jdk-headless or set JAVA_HOME")


def namespaces() -> None:
    """The OS kubelet gives each container mount and UTS namespaces: root's, as in CI."""
    tried = subprocess.run(
        ["unshare", "--mount", "--uts", "--propagation", "private", "true"],
        capture_output=True,
        text=True,
        check=False,
    )
    if tried.returncode != 0:
        raise Unavailable(
            "the OS kubelet cannot make mount namespaces here (unshare: "
            f"{tried.stderr.strip() or tried.returncode}): the tier runs as root"
        )


class SparkBed:
    """The control plane and what plays around it, for the whole tier."""

    kind = "real"
    rbac = True

    def __init__(self, addresses: Addresses) -> None:
        self.image = SparkImage(spark_home(), java_home(), jvm_options=JVM_OPTIONS)
        namespaces()
        self.addresses = addresses
        self.dir = Path(tempfile.mkdtemp(prefix="kubectl-spark-realspark-"))
        service_ip = addresses.api_service_ip
        self.network = addresses.network(service_ip)
        self.egress = EgressProxy(self.network, self.dir / "egress.sock")
        (self.dir / "egress.yaml").write_text(self.egress.config())
        self.plane = ControlPlane(
            ControlPlaneOptions(
                extra_cert_names=[service_ip],
                extra_apiserver_flags=[f"--egress-selector-config-file={self.dir / 'egress.yaml'}"],
            )
        ).start()
        self.forwarder = ApiServiceForwarder(self.plane.port, service_ip)
        self.client = Client(self.plane.url, self.plane.token, self.plane.ca_pem)
        self.kubeconfig = self.plane.write_kubeconfig(self.dir / "kubeconfig")
        self.ca = self.plane.write_ca(self.dir / "ca.crt")
        self.url = self.plane.url
        self.token = self.plane.token

    def reset(self) -> None:
        reset(self.plane)

    def close(self) -> None:
        self.client.close()
        self.forwarder.close()
        self.plane.stop()
        self.egress.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class EmulatorSparkBed:
    """The project's emulator as the API server, for one test: does real Spark's client run on it?

    On the emulator the simulator plays the controllers a control plane would run (the
    scheduler, node lifecycle, Jobs, …: ``World.tick`` on a real-time clock, in a thread), and
    the OS kubelet plays the nodes as on the real bed. It has no RBAC (it allows by default) and
    no egress selector: the API server does not reach these pods' addresses.
    """

    kind = "emulator"
    rbac = False

    def __init__(self, image: SparkImage, folder: Path, addresses: Addresses) -> None:
        from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer, EmulatorOptions
        from kubectl_spark.knowledge.clock import SystemClock
        from kubectl_spark.sim.world import World

        self.image = image
        self.dir = folder
        service_ip = addresses.emulator_service_ip
        self.network = addresses.network(service_ip)
        self.server = EmbeddedApiServer(EmulatorOptions(cert_names=(service_ip,))).start()
        self.forwarder = ApiServiceForwarder(self.server.port, service_ip)
        self.client = Client(self.server.url, self.server.token, self.server.ca_pem)
        self.kubeconfig = self.server.write_kubeconfig(folder / "kubeconfig")
        self.ca = folder / "ca.crt"
        self.ca.write_bytes(self.server.ca_pem)
        self.url = self.server.url
        self.token = self.server.token
        self.world = World.for_server(self.server, SystemClock())
        self._stop = threading.Event()
        self._ticks = threading.Thread(target=self._tick, daemon=True, name="emulated-controllers")
        self._ticks.start()

    def _tick(self) -> None:
        while not self._stop.wait(0.5):
            with contextlib.suppress(Exception):
                self.world.tick()

    def reset(self) -> None:
        return None

    def close(self) -> None:
        self._stop.set()
        self._ticks.join(timeout=10)
        self.world.close()
        self.client.close()
        self.forwarder.close()
        self.server.stop()


class Cluster:
    """One test's cluster: its nodes (played by its own OS kubelet) and its namespace."""

    def __init__(self, bed: SparkBed | EmulatorSparkBed, namespace: str, tmp: Path) -> None:
        self.bed = bed
        self.client = bed.client
        self.namespace = namespace
        self.tmp = tmp
        self.kubelet = ProcessKubelet(bed.client, bed.image, bed.network, tmp / "kubelet").start()
        self.client.create("/api/v1/namespaces", {"metadata": {"name": namespace}})
        if bed.rbac:
            self._grant_edit()
        self._wait_for_account()

    def _grant_edit(self) -> None:
        namespace = self.namespace
        # Spark's docs: the driver's service account needs to create and delete pods,
        # services and configmaps; `edit` is what they suggest.
        self.client.create(
            f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/rolebindings",
            {
                "metadata": {"name": "spark-edit"},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": "edit",
                },
                "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": namespace}],
            },
        )

    def _wait_for_account(self) -> None:
        path = f"/api/v1/namespaces/{self.namespace}/serviceaccounts/default"
        until(lambda: self.client.get(path) is not None, 30, "the namespace's default account")

    def close(self) -> None:
        self.kubelet.stop()
        self.bed.reset()

    def executor_template(self, template: dict[str, Any]) -> dict[str, str]:
        """``template`` as Spark's executor pod template file: the conf that names it."""
        path = self.tmp / "executor-template.json"
        path.write_text(json.dumps(template))
        return {"spark.kubernetes.executor.podTemplateFile": str(path)}

    # ------------------------------------------------------------------------------ reads
    def pods(self, **labels: str) -> list[dict[str, Any]]:
        selector = ",".join(f"{k.replace('_', '-')}={v}" for k, v in labels.items())
        query = {"labelSelector": selector} if selector else {}
        return self.client.list(f"/api/v1/namespaces/{self.namespace}/pods", **query)

    def running(self, **labels: str) -> list[dict[str, Any]]:
        return [
            p
            for p in self.pods(**labels)
            if (p.get("status") or {}).get("phase") == "Running"
            and not p["metadata"].get("deletionTimestamp")
        ]

    def log(self, pod: dict[str, Any], container: str | None = None) -> str:
        """A container's log as its node keeps it (readable while the node is cut off too)."""
        meta = pod["metadata"]
        name = container or pod["spec"]["containers"][0]["name"]
        entry = self.kubelet.logs.logs.get(meta["uid"], name)
        return entry.current.text() if entry else ""

    def spark(self, driver: dict[str, Any], path: str) -> Any:
        """Spark's REST API of a running driver, asked on its own address (as its UI serves it)."""
        return json.loads(self.spark_answer(driver, path))

    def spark_answer(self, driver: dict[str, Any], path: str) -> bytes:
        """``spark``'s answer as Spark wrote it, once it is JSON.

        A UI still starting, or busy, may answer with an error page for a moment: asked again
        for up to 20 s before that counts.
        """
        name = driver["metadata"]["name"]
        address = self.kubelet.local_address(self.namespace, name)
        if not address:
            now = self.client.get(f"/api/v1/namespaces/{self.namespace}/pods/{name}") or {}
            status = json.dumps(now.get("status", {}).get("containerStatuses"))
            raise AssertionError(f"{name} runs nowhere: {status}\n{self.log(driver)[-2000:]}")
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(
                    f"http://{address}:4040/api/v1/{path}", timeout=10
                ) as answer:
                    body: bytes = answer.read()
                json.loads(body)
                return body
            except (urllib.error.URLError, OSError, ValueError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    def app_id(self, driver: dict[str, Any]) -> str:
        return str(self.spark(driver, "applications")[0]["id"])

    def executors(self, driver: dict[str, Any]) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = json.loads(self.executors_answer(driver))
        return found

    def executors_answer(self, driver: dict[str, Any]) -> bytes:
        """The driver's ``allexecutors`` as Spark wrote it."""
        return self.spark_answer(driver, f"applications/{self.app_id(driver)}/allexecutors")

    # ----------------------------------------------------------------------------- runs
    def kubectl_spark(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """kubectl spark through its real entry point, as a user runs it."""
        binary = Path(sys.executable).with_name("kubectl-spark")
        done = subprocess.run(
            [str(binary), "--kubeconfig", str(self.bed.kubeconfig), "-n", self.namespace, *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if check:
            assert done.returncode == 0, (
                f"kubectl spark {' '.join(args)}:\n{done.stdout}{done.stderr}"
            )
        return done

    def app_json(self, name: str) -> dict[str, Any]:
        out = self.kubectl_spark("ls", "-o", "json").stdout
        return next(a for a in json.loads(out)["items"] if a["name"] == name)


def until(
    check: Callable[[], bool],
    seconds: float,
    what: str,
    detail: Callable[[], str] | None = None,
) -> None:
    """Real time: JVMs start in seconds, the control plane's timers run as they run.

    ``detail``: what to show when it does not happen (a log's end, the pods)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except (urllib.error.URLError, OSError, KeyError, IndexError, ValueError):
            pass
        time.sleep(0.3)
    shown = f"\n{detail()}" if detail is not None else ""
    raise AssertionError(f"{what}: not within {seconds:.0f} s{shown}")
