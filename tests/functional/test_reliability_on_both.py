"""The write-once policy on both backends (the emulator, and a real kube-apiserver behind the
fault proxy), and a deeply nested custom resource as kube-apiserver really stores it."""

from __future__ import annotations

import contextlib
import json
import ssl
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from kubectl_spark.cli.main import main
from kubectl_spark.core.plans import Operation, Plan
from kubectl_spark.kube import actions
from kubectl_spark.kube.client import Connection, connect
from tests.beds import Bed
from tests.faultproxy import Fault, FaultProxy, through

CM = "reliability-probe"


def cm_path(name: str = "") -> str:
    return "/api/v1/namespaces/default/configmaps" + (f"/{name}" if name else "")


def test_each_write_reaches_the_server_once_and_its_lost_answer_is_settled(
    bed: Bed, tmp_path: Path
) -> None:
    with FaultProxy(bed.url) as proxy:
        kubeconfig = through(proxy, bed.token, tmp_path / "proxied")
        api = connect(Connection(kubeconfig=str(kubeconfig), request_timeout=1.0))
        body = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": CM, "labels": {"made-by": "test"}},
            "data": {"a": "1"},
        }
        plan = Plan(
            "probe",
            "default",
            CM,
            None,
            operations=(
                Operation("create", "v1", "configmaps", "default", CM, "make it", body),
                Operation(
                    "patch", "v1", "configmaps", "default", CM, "change it", {"data": {"a": "2"}}
                ),
            ),
        )
        # Applied by the server, answered 2 s late: past the 1 s timeout, every time.
        proxy.faults = [
            Fault("late", "POST", "/configmaps", seconds=2),
            Fault("late", "PATCH", "/configmaps", seconds=2),
        ]
        with api:
            report = actions.apply(api, plan)
            assert report.failed is None, report.failed
            assert [op.verb for op in report.applied] == ["create", "patch"]
            assert len(report.notes) == 2 and all("took effect" in n for n in report.notes)
            assert proxy.count("POST", "/configmaps") == 1
            assert proxy.count("PATCH", "/configmaps") == 1
            proxy.faults = []
            found = api.request("GET", cm_path(CM))
            assert found["data"] == {"a": "2"}
            uid = found["metadata"]["uid"]
            proxy.faults = [Fault("late", "DELETE", "/configmaps/", seconds=2)]
            gone = Plan(
                "probe",
                "default",
                CM,
                None,
                operations=(
                    Operation("delete", "v1", "configmaps", "default", CM, "remove it", uid=uid),
                ),
            )
            report = actions.apply(api, gone)
            assert report.failed is None and len(report.notes) == 1, report
            assert proxy.count("DELETE", "/configmaps/") == 1


def _deep(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


def test_a_custom_resource_nested_1100_levels_is_set_aside_by_name(
    control_plane: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """kube-apiserver stores it (its JSON limit is 10,000 levels); orjson reads 1,024."""
    from tests.beds import RealBed, reset

    real = RealBed(control_plane)
    context = ssl.create_default_context(cadata=real.ca_pem.decode())
    try:
        for name, spec in (("deep-one", _deep(1100)), ("plain", '{"type": "Scala"}')):
            text = (
                '{"apiVersion": "sparkoperator.k8s.io/v1beta2", "kind": "SparkApplication", '
                f'"metadata": {{"name": "{name}"}}, "spec": {{"driver": {{"podTemplate": {spec}}}}}}}'
            )
            request = urllib.request.Request(
                real.url
                + "/apis/sparkoperator.k8s.io/v1beta2/namespaces/default/sparkapplications",
                data=text.encode(),
                headers={
                    "Authorization": f"Bearer {real.token}",
                    "Content-Type": "application/json",
                },
                method="POST",
            )
            with urllib.request.urlopen(request, context=context) as answer:
                assert answer.status == 201
        kubeconfig = real.write_kubeconfig(tmp_path / "kubeconfig")
        code = main(["--kubeconfig", str(kubeconfig), "ls", "-o", "json"])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert [a["name"] for a in json.loads(out)["items"]] == ["plain"]
        assert "set aside SparkApplication default/deep-one: nested deeper than" in err
    finally:
        # The reset reads with orjson too: the deep one goes by name first.
        gone = urllib.request.Request(
            real.url
            + "/apis/sparkoperator.k8s.io/v1beta2/namespaces/default/sparkapplications/deep-one",
            headers={"Authorization": f"Bearer {real.token}"},
            method="DELETE",
        )
        with contextlib.suppress(OSError):
            urllib.request.urlopen(gone, context=context).close()
        real.close()
        reset(control_plane)


def test_a_resource_version_from_the_future_is_answered_as_kube_apiserver_does(bed: Bed) -> None:
    """A read at a version the server has not reached: 504 "Too large resource version" for a
    list and a get; a watch from it is accepted and sees nothing older (a client that resumes
    after a restart would never learn what the server lost: the live view lists again)."""
    context = ssl.create_default_context(cadata=bed.ca_pem.decode())

    def get(path: str) -> tuple[int, dict[str, Any]]:
        request = urllib.request.Request(
            bed.url + path, headers={"Authorization": f"Bearer {bed.token}"}
        )
        try:
            with urllib.request.urlopen(request, context=context, timeout=10) as answer:
                text = answer.read().decode()
                return answer.status, json.loads(text) if text.strip() else {}
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read().decode())

    _, listed = get("/api/v1/namespaces/default/serviceaccounts?limit=1")
    future = int(listed["metadata"]["resourceVersion"]) + 100_000
    for path in (
        f"/api/v1/namespaces/default/serviceaccounts?resourceVersion={future}",
        f"/api/v1/namespaces/default/serviceaccounts/default?resourceVersion={future}",
    ):
        status, body = get(path)
        assert status == 504, (path, status, body)
        assert body["reason"] == "Timeout"
        assert body["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"
    status, _ = get(
        f"/api/v1/namespaces/default/serviceaccounts?watch=1&resourceVersion={future}&timeoutSeconds=1"
    )
    assert status == 200
