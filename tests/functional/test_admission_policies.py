"""ValidatingAdmissionPolicy and bound tokens: the emulator answers as kube-apiserver does.

One body, both backends: what a fence relies on (a policy refusing one pod's identity, and the
errors people see when a policy is wrong) must not be a property of the emulator alone.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer, EmulatorOptions
from kubectl_spark.knowledge.clock import ManualClock
from kubectl_spark.sim.client import Client, SimApiError, request_token
from tests.beds import Bed, grant_edit_to_default_account

ADMISSION = "/apis/admissionregistration.k8s.io/v1"
PODS = "/api/v1/namespaces/default/pods"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
ALL_WRITES = {
    "apiGroups": ["*"],
    "apiVersions": ["*"],
    "operations": ["CREATE", "UPDATE", "DELETE"],
    "resources": ["*/*"],
}


@pytest.fixture
def admin(bed: Bed) -> Iterator[Client]:
    client = Client(bed.url, bed.token, bed.ca_pem)
    yield client
    client.close()


def _policy(name: str, validation: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "matchConstraints": {"resourceRules": [copy.deepcopy(ALL_WRITES)]},
            "validations": [validation],
            **spec,
        },
    }


def _bind(admin: Client, name: str) -> None:
    admin.create(
        f"{ADMISSION}/validatingadmissionpolicybindings",
        {"metadata": {"name": name}, "spec": {"policyName": name, "validationActions": ["Deny"]}},
    )


def _error(call: Callable[[], Any]) -> SimApiError:
    with pytest.raises(SimApiError) as caught:
        call()
    return caught.value


def _eventually(binding: str, call: Callable[[], Any]) -> SimApiError:
    """kube-apiserver puts a binding to work, and out of it, a second or so after the write
    (its informer): wait until this binding refuses."""
    deadline = time.monotonic() + 15
    while True:
        try:
            call()
        except SimApiError as err:
            if f"with binding '{binding}'" in str(err):
                return err
        assert time.monotonic() < deadline, f"binding {binding} never refused"
        time.sleep(0.3)


def _configmap(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"probe": "yes"}}}


def test_a_policy_that_does_not_compile_is_refused(admin: Client) -> None:
    err = _error(
        lambda: admin.create(
            f"{ADMISSION}/validatingadmissionpolicies",
            _policy("broken", {"expression": "object.metadata.name ==== 'x'"}),
        )
    )
    assert err.status == 422
    assert "spec.validations[0].expression" in str(err) and "compil" in str(err)
    mixed = _policy("mixed", {"expression": "true"})
    mixed["spec"]["matchConstraints"]["resourceRules"][0]["resources"] = ["*", "*/*"]
    err = _error(lambda: admin.create(f"{ADMISSION}/validatingadmissionpolicies", mixed))
    assert err.status == 422 and "if '*/*' is present, must not specify other resources" in str(err)


def test_a_denial_reads_as_kube_apiserver_words_it(admin: Client) -> None:
    """No reason: 422 Invalid, with dispatcher.go's wording."""
    guard = "!has(object.metadata.labels) || !('probe' in object.metadata.labels)"
    admin.create(
        f"{ADMISSION}/validatingadmissionpolicies",
        _policy("no-probe", {"expression": f"object == null || ({guard})", "message": "no probes"}),
    )
    _bind(admin, "no-probe")
    err = _eventually(
        "no-probe",
        lambda: admin.request("POST", CONFIGMAPS, _configmap("p1"), query={"dryRun": "All"}),
    )
    assert err.status == 422 and err.reason == "Invalid"
    assert str(err).endswith(
        "configmaps \"p1\" is forbidden: ValidatingAdmissionPolicy 'no-probe' with binding "
        "'no-probe' denied request: no probes"
    )
    admin.create(CONFIGMAPS, {"metadata": {"name": "plain"}})  # no label: allowed
    # reason Forbidden (403) is the fence's: test_fence_enforced and the bound-token test below.


def test_a_bound_token_carries_its_pod_and_a_policy_can_refuse_it(bed: Bed, admin: Client) -> None:
    """The fence's rule: writes with one pod's token refused, another pod's let through."""
    made = [
        admin.create(
            PODS,
            {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "spark"}]}},
        )
        for name in ("zombie", "live")
    ]
    if bed.kind == "real":
        grant_edit_to_default_account(admin, "pods-edit")
    clients = {}
    for pod in made:
        meta = pod["metadata"]
        token = request_token(admin, "default", "default", meta["name"], meta["uid"])
        clients[meta["name"]] = Client(bed.url, token, bed.ca_pem)
    try:
        uid = made[0]["metadata"]["uid"]
        extra = "request.userInfo.extra"
        key = "authentication.kubernetes.io/pod-uid"
        admin.create(
            f"{ADMISSION}/validatingadmissionpolicies",
            _policy(
                "fence",
                {
                    "expression": f"!has({extra}) || !('{key}' in {extra}) || !('{uid}' in {extra}['{key}'])",
                    "reason": "Forbidden",
                    "message": "fenced",
                },
            ),
        )
        _bind(admin, "fence")
        err = _eventually(
            "fence",
            lambda: clients["zombie"].request(
                "POST", CONFIGMAPS, _configmap("z"), query={"dryRun": "All"}
            ),
        )
        assert err.status == 403 and "denied request: fenced" in str(err)
        clients["live"].create(CONFIGMAPS, {"metadata": {"name": "from-live"}})
        admin.create(CONFIGMAPS, {"metadata": {"name": "from-admin"}})
        # A mismatched uid in the TokenRequest is a conflict, as token.go answers.
        err = _error(lambda: request_token(admin, "default", "default", "live", uid))
        assert err.status == 409
    finally:
        for client in clients.values():
            client.close()


def test_a_deleted_pods_token_stops_working_a_minute_after_its_deletion() -> None:
    """claims.go: a bound pod deleted more than jwt.DefaultLeeway (60 s) ago invalidates the
    token. On the emulator only: its clock is moved rather than waited on."""
    clock = ManualClock()
    with EmbeddedApiServer(EmulatorOptions(clock=clock)) as server:
        admin = Client(server.url, server.token, server.ca_pem)
        pod = admin.create(
            PODS,
            {
                "metadata": {"name": "d", "finalizers": ["example.com/hold"]},
                "spec": {"containers": [{"name": "c", "image": "spark"}]},
            },
        )
        token = request_token(admin, "default", "default", "d", pod["metadata"]["uid"])
        mine = Client(server.url, token, server.ca_pem)
        mine.create(CONFIGMAPS, {"metadata": {"name": "before"}})
        admin.delete(f"{PODS}/d", grace=0)  # held by its finalizer: Terminating
        clock.advance(59)
        mine.create(CONFIGMAPS, {"metadata": {"name": "within-the-minute"}})
        clock.advance(2)
        assert (
            _error(lambda: mine.create(CONFIGMAPS, {"metadata": {"name": "after"}})).status == 401
        )
        mine.close()
        admin.close()
