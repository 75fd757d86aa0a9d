"""The Apache operator's CRDs, served by the emulator as kube-apiserver serves its chart's CRDs.

Both versions are served and v1 is stored (conversion strategy None: an object written at
v1beta1 reads back at v1 with only its apiVersion changed); the status subresource keeps
status out of the main resource's writes; kubectl prints the CRD's columns. The Kubeflow CRD
shares the plural ``sparkapplications``: the group tells them apart.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubectl_spark.core import raw
from kubectl_spark.sim.client import Client
from tests.beds import Bed
from tests.conftest import Kubectl, kubectl_binary

APPS = "/apis/spark.apache.org/{version}/namespaces/default/sparkapplications"
MANIFEST = """
apiVersion: spark.apache.org/v1beta1
kind: SparkApplication
metadata:
  name: pi
spec:
  mainClass: org.apache.spark.examples.SparkPi
  runtimeVersions: {sparkVersion: 4.0.1}
status:
  currentState: {currentStateSummary: RunningHealthy}
"""


@pytest.fixture
def admin(bed: Bed) -> Iterator[Client]:
    client = Client(bed.url, bed.token, bed.ca_pem)
    yield client
    client.close()


@pytest.fixture
def kubectl_on(bed: Bed, tmp_path: Path) -> Kubectl:
    binary = kubectl_binary()
    if binary is None:
        pytest.skip("kubectl is not installed (.ci/run installs it)")
    return Kubectl(binary, bed.write_kubeconfig(tmp_path / "kubeconfig"))


def test_both_versions_served_v1_stored_status_apart(admin: Client, kubectl_on: Kubectl) -> None:
    kubectl_on("apply", "-f", "-", input=MANIFEST)
    at_v1 = admin.get(APPS.format(version="v1") + "/pi")
    at_beta = admin.get(APPS.format(version="v1beta1") + "/pi")
    assert at_v1 is not None and at_beta is not None
    assert at_v1["apiVersion"] == "spark.apache.org/v1"
    assert at_beta["apiVersion"] == "spark.apache.org/v1beta1"
    assert at_v1["spec"] == at_beta["spec"]
    assert "status" not in at_v1  # a create does not write status
    state = {"currentState": {"currentStateSummary": "DriverRequested"}}
    admin.request("PUT", APPS.format(version="v1") + "/pi/status", {**at_v1, "status": state})
    listed = admin.list(APPS.format(version="v1beta1"))
    assert [i["status"]["currentState"]["currentStateSummary"] for i in listed] == [
        "DriverRequested"
    ]

    out = kubectl_on("get", "sparkapplications.spark.apache.org").stdout.splitlines()
    assert out[0].split() == ["NAME", "AGE", "CURRENT", "STATE"]
    assert out[1].split()[0] == "pi" and out[1].split()[-1] == "DriverRequested"
    versions = kubectl_on("api-versions").stdout.split()
    assert {"spark.apache.org/v1", "spark.apache.org/v1beta1"} <= set(versions)
    kubeflow = kubectl_on("get", "sparkapplications.sparkoperator.k8s.io").stderr
    assert "No resources found" in kubeflow  # the other group's plural is its own

    kubectl_on(
        "apply",
        "-f",
        "-",
        input="apiVersion: spark.apache.org/v1\nkind: SparkCluster\n"
        "metadata: {name: standalone}\nspec: {}\n",
    )
    clusters = kubectl_on("get", "sparkclusters", "-o", "name").stdout.split()
    assert clusters == ["sparkcluster.spark.apache.org/standalone"]


def test_an_operator_serving_v1beta1_alone_is_read_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An older release of the operator serves v1beta1 only: ls and the live view ask v1 first
    (404), then v1beta1, and read its status the same."""
    from kubectl_spark.cli.main import main
    from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer, EmulatorOptions
    from kubectl_spark.kube.client import Connection, connect
    from kubectl_spark.kube.live import LiveCluster

    with EmbeddedApiServer(EmulatorOptions(apache_versions=("v1beta1",))) as server:
        client = Client(server.url, server.token, server.ca_pem)
        beta = APPS.format(version="v1beta1")
        made = client.create(
            beta,
            {"apiVersion": "spark.apache.org/v1beta1", "kind": "SparkApplication",
             "metadata": {"name": "pi"}, "spec": {}},
        )  # fmt: skip
        state = {"currentState": {"currentStateSummary": "Submitted", "message": "created"}}
        client.request("PUT", f"{beta}/pi/status", {**made, "status": state})
        assert client.get(APPS.format(version="v1") + "/pi") is None  # not served
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        assert main(["--kubeconfig", str(kubeconfig), "ls", "-o", "json"]) == 0
        (app,) = json.loads(capsys.readouterr().out)["items"]
        assert (app["name"], app["source"], app["state"]) == ("pi", "apache-operator", "Pending")
        assert app["operator"]["apiVersion"] == "spark.apache.org/v1beta1"

        live = LiveCluster(lambda: connect(Connection(kubeconfig=str(kubeconfig))), None)
        live.start()
        try:
            assert live.ready.wait(10)
            _, snapshot = live.take_changes()
            assert [raw.name(a) for a in snapshot.apacheapps] == ["pi"]
        finally:
            live.stop()
        client.close()
