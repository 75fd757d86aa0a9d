"""The recorder answers only whom the cluster lets read: issue 49's first point, on the real plane.

kube-apiserver's service proxy drops the caller's credentials (it deletes the Authorization
header once it has authenticated the request: apiserver/pkg/endpoints/filters/
authentication.go), so the recorder is an aggregated API: the API server authenticates the
person, checks RBAC for the recorder's resources, and passes the user on with its front-proxy
certificate; the recorder verifies that certificate and asks a SubjectAccessReview whether the
user may read the pods themselves. Four callers with different rights, and nobody:

- alice may read pods and the recorder's resources in ``default``: answered;
- bob may do the same in ``team-b`` only: refused ``default`` by the API server's RBAC;
- operator may ask the recorder about every namespace but read pods in ``team-b`` only:
  refused ``default`` by the recorder itself (its own SubjectAccessReview);
- nobody (no token, a token nobody issued, a certificate of another CA) reaching the port
  directly: 401, or no TLS session at all; ``/healthz`` stays open for the kubelet's probes.
"""

from __future__ import annotations

import json
import re
import ssl
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme

from kubectl_spark.cli.main import main
from kubectl_spark.core.recorder_manifests import (
    API_PATH,
    NAME,
    RecorderOptions,
    manifests,
)
from kubectl_spark.sim.client import Client, SimApiError
from tests.helpers import sent
from tests.incluster import expose, free_port, register, start_recorder, token_of
from tests.recorder_access import read_recorder
from tests.stages import Stage

pytestmark = pytest.mark.slow
NS = "kubectl-spark"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
READER = f"{NAME}:reader"  # the manifests' aggregated reader ClusterRole
POD_READING = [
    {"apiGroups": [""], "resources": ["pods", "pods/log", "events"], "verbs": ["get", "list"]}
]


def _role(client: Client, namespace: str, name: str, user: str, rules: list[Any]) -> None:
    with_ns = f"{RBAC}/namespaces/{namespace}"
    client.create(f"{with_ns}/roles", {"metadata": {"name": name}, "rules": rules})
    client.create(
        f"{with_ns}/rolebindings",
        {
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": [{"kind": "User", "name": user}],
        },
    )


def _bind_cluster_role(client: Client, role: str, user: str, *, namespace: str = "") -> None:
    """``role`` (a ClusterRole) for ``user``: cluster-wide, or in ``namespace`` only."""
    body = {
        "metadata": {"name": f"{user}-{role.replace(':', '-')}"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "User", "name": user}],
    }
    where = f"/namespaces/{namespace}/rolebindings" if namespace else "/clusterrolebindings"
    client.create(f"{RBAC}{where}", body)


@pytest.fixture
def rights(staged: Any) -> Iterator[Stage]:
    """The stage, with the four callers' rights and the reader role."""
    s: Stage = staged("s9-deleted-executors")
    client: Client = s.world.client
    (reader,) = [
        m for m in sent(manifests(RecorderOptions(NS, "unused"))) if m["metadata"]["name"] == READER
    ]
    client.create(f"{RBAC}/clusterroles", reader)
    client.create("/api/v1/namespaces", {"metadata": {"name": "team-b"}})
    _role(client, "default", "alice-pods", "alice", POD_READING)
    _bind_cluster_role(client, READER, "alice", namespace="default")
    _role(client, "team-b", "bob-pods", "bob", POD_READING)
    _bind_cluster_role(client, READER, "bob", namespace="team-b")
    _role(client, "team-b", "operator-pods", "operator", POD_READING)
    _bind_cluster_role(client, READER, "operator")
    _role(client, "default", "viewer-pods", "viewer", POD_READING)  # no reader role at all
    try:
        yield s
    finally:
        for path in (
            f"{RBAC}/clusterrolebindings/operator-{READER.replace(':', '-')}",
            f"{RBAC}/clusterroles/{READER}",
        ):
            client.delete(path)


def _as(plane: Any, user: str) -> Client:
    return Client(plane.url, plane.user_tokens[user], plane.ca_pem)


def _status(client: Client, path: str) -> tuple[int, str]:
    try:
        client.request("GET", path)
    except SimApiError as err:
        return err.status, str(err)
    return 200, ""


@pytest.mark.parametrize("bed", ["real"], indirect=True)
def test_each_caller_reads_only_what_the_cluster_lets_it_read(
    rights: Stage,
    control_plane: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    s = rights
    port = free_port()
    (service,) = [
        m for m in sent(manifests(RecorderOptions(NS, "unused"))) if m["kind"] == "Service"
    ]
    expose(s, service, port)
    recorder = start_recorder(s.kubeconfig, port, tmp_path / "recorder.db")
    try:
        register(s, NS, port)
        s.do("submit", "vanishing")
        s.until("an executor running", lambda: bool(s.running(spark_role="executor")))
        token = token_of(s.kubeconfig)
        deadline = time.monotonic() + 30
        while not read_recorder(port, f"{API_PATH}/namespaces/default/keptpods", token)[1].get(
            "items"
        ):
            assert time.monotonic() < deadline, "the recorder never kept a pod"
            time.sleep(0.3)
        pod_uid = s.running(spark_role="executor")[0]["metadata"]["uid"]
        _callers_through_the_api_server(control_plane, pod_uid)
        _nobody_at_the_port(port)
        _the_plugin_reads_as_its_user(control_plane, tmp_path, capsys)
    finally:
        recorder.terminate()
        recorder.wait(20)


def _callers_through_the_api_server(plane: Any, pod_uid: str) -> None:
    default, team_b = f"{API_PATH}/namespaces/default", f"{API_PATH}/namespaces/team-b"
    alice, bob, operator = _as(plane, "alice"), _as(plane, "bob"), _as(plane, "operator")
    try:
        assert _status(alice, f"{default}/keptpods") == (200, "")
        assert _status(alice, f"{default}/keptevents") == (200, "")
        # 404: no lines kept for a running pod; the right was granted
        assert _status(alice, f"{default}/keptlogs/{pod_uid}")[0] == 404
        assert _status(bob, f"{team_b}/keptpods") == (200, "")

        code, said = _status(bob, f"{default}/keptpods")  # the API server's RBAC
        assert code == 403 and 'User "bob" cannot list resource "keptpods"' in said, said
        assert _status(bob, f"{default}/keptlogs/{pod_uid}")[0] == 403
        assert _status(alice, f"{team_b}/keptpods")[0] == 403
        assert _status(alice, f"{API_PATH}/keptpods")[0] == 403  # every namespace: no

        code, said = _status(operator, f"{default}/keptpods")  # the recorder's own review
        assert code == 403 and 'User "operator" cannot list resource "pods"' in said, said
        assert _status(operator, f"{API_PATH}/keptpods")[0] == 403
        code, said = _status(operator, f"{default}/keptlogs/{pod_uid}")
        assert code == 403 and 'cannot get resource "pods/log"' in said, said
        assert _status(operator, f"{team_b}/keptpods") == (200, "")
        # an unknown token: the API server's 401; none at all: anonymous, refused by RBAC
        for token, code in (("not-a-token", 401), ("", 403)):
            nobody = Client(plane.url, token, plane.ca_pem)
            assert _status(nobody, f"{default}/keptpods")[0] == code
            nobody.close()
    finally:
        for client in (alice, bob, operator):
            client.close()


def _nobody_at_the_port(port: int) -> None:
    assert read_recorder(port, "/healthz") == (200, "ok\n")
    for path in (f"{API_PATH}/namespaces/default/keptpods", f"{API_PATH}", "/metrics"):
        status, answer = read_recorder(port, path)
        assert status == 401 and answer["reason"] == "Unauthorized", (path, answer)
        assert read_recorder(port, path, token="not-a-token")[0] == 401
    # X-Remote-User over no certificate is no one; a certificate of another CA, no session
    forged = trustme.CA().issue_cert("front-proxy-client", common_name="front-proxy-client")
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        read_recorder(port, f"{API_PATH}/keptpods", cert=forged)


def _the_plugin_reads_as_its_user(
    plane: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``describe`` as alice reads the recorder; as viewer (pods, not the recorder) it warns."""
    pinned = ("--recorder", f"{NS}/{NAME}")
    for user, kept in (("alice", True), ("viewer", False)):
        kubeconfig = plane.write_kubeconfig(tmp_path / f"{user}.kubeconfig", user=user)
        code = main(
            ["--kubeconfig", str(kubeconfig), *pinned, "-v=6",
             "describe", "vanishing", "-n", "default", "-o", "json"]
        )  # fmt: skip
        out, err = capsys.readouterr()
        assert code == 0, err
        assert json.loads(out)["name"] == "vanishing"
        said = re.search(r"recorder \S+ \(aggregated API\): (\d+) pod state", err)
        if kept:
            assert "keptpods 200 OK" in err and said and int(said[1]) > 0, err
        else:
            assert "keptpods 403 Forbidden" in err and said is None, err
            assert f"the recorder {NS}/{NAME} refused you" in err, err
