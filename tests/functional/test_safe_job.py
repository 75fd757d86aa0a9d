"""``kubectl spark job`` and ``kubectl spark doctor`` (issue 24), through the real entry point.

The Job it prints is accepted as it is by kube-apiserver's validation (podReplacementPolicy,
podFailurePolicy, ReadWriteOncePod) and by the emulator; ``doctor`` finds none of the hazards in
it, and finds them in S2's plain driver Job.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_spark.cli.main import main
from kubectl_spark.sim.client import Client
from tests.beds import Bed
from tests.command_line import run


def _cli(capsys: pytest.CaptureFixture[str], kubeconfig: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--kubeconfig", str(kubeconfig), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_safe_job_is_accepted_and_has_no_hazard(bed: Bed, tmp_path: Path, capsys) -> None:
    kubeconfig = bed.write_kubeconfig(tmp_path / "kubeconfig")
    code, out, err = _cli(
        capsys, kubeconfig, "job", "etl", "local:///opt/app.jar", "--image", "apache/spark:3.5.3",
        "--class", "org.example.Etl", "--", "--day", "2026-12-01",
    )  # fmt: skip
    assert code == 0, err
    pvc, job = yaml.safe_load_all(out)  # one document per object (issue 46)
    args = job["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "spark.app.id=$(POD_NAME)" in args and args[-2:] == ["--day", "2026-12-01"]
    client = Client(bed.url, bed.token, bed.ca_pem)
    try:
        client.create("/api/v1/namespaces/default/persistentvolumeclaims", pvc)
        created = client.create("/apis/batch/v1/namespaces/default/jobs", job)
    finally:
        client.close()
    assert created["spec"]["podReplacementPolicy"] == "Failed"
    assert created["spec"]["podFailurePolicy"]["rules"][0]["action"] == "Ignore"
    world = bed.world()
    world.add_node("node-a")
    for _ in range(30):  # the Job controller (real, or the simulator's stand-in) makes the pod
        world.tick()
        if world.find_pods("default", spark_role="driver"):
            break
        time.sleep(0.2)
    code, out, err = _cli(capsys, kubeconfig, "doctor", "etl", "-o", "json")
    assert code == 0, err
    states = {h["code"]: h["state"] for h in json.loads(out)["items"]}
    assert states == {
        "ReplacementWhileRunning": "ok",
        "DisruptionsCountAsFailures": "ok",
        "SharedExecutorPrefix": "ok",
        "SharedAppId": "ok",
        "NoVolumeFence": "ok",
        "NoLeaseCheck": "unknown",
    }


def test_doctor_finds_s2s_hazards(played, capsys) -> None:
    c = played("s2-partition")
    code, out, err = run(capsys, c, "doctor", "networkwordcount")
    assert code == 0, err
    lines = {line.split()[0]: line.split()[1] for line in out.splitlines()[1:]}
    assert lines["ReplacementWhileRunning"] == "risk"
    assert lines["DisruptionsCountAsFailures"] == "risk"
    assert lines["SharedAppId"] == "risk"  # the attempts already share one
    assert lines["NoVolumeFence"] == "risk"


def test_bad_input_to_job_is_one_line_and_no_output(capsys, tmp_path: Path) -> None:
    for args in (
        ("job", "BAD", "x", "--image", "y"),
        ("job", "ok", "x", "--image", "y", "--conf", "nope"),
        ("job", "ok", "x", "--image", "y", "-o", "table"),
    ):
        code = main(["--kubeconfig", str(tmp_path / "none"), *args])
        out, err = capsys.readouterr()
        assert code != 0 and out == "" and len(err.strip().splitlines()) == 1, (args, err)


def test_the_safe_job_applies_with_kubectl(kubeconfig: Path, kubectl: Any, capsys) -> None:
    """issue 46: ``kubectl spark job … | kubectl apply -f -`` works on the emulator too (a
    ``kind: List`` needed its /openapi/v2)."""
    code, out, err = _cli(
        capsys, kubeconfig, "job", "etl", "local:///opt/app.jar", "--image", "apache/spark:3.5.3"
    )
    assert code == 0, err
    applied = kubectl("apply", "-f", "-", input=out)
    assert "job.batch/etl created" in applied.stdout, applied.stdout + applied.stderr
