"""What Spark's own client needs of the API server, on both backends alike.

Found by running Spark 4.1.1 against the emulator (tests/realspark/test_on_the_emulator.py):
its fabric8 client watches over a WebSocket, and its driver trusts the API server by the CA in
the service account volume that kube-apiserver's ServiceAccount admission mounts into every pod.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import time
from typing import Any

import aiohttp

from kubectl_spark.sim.client import Client
from tests.beds import Bed

MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"


def _client(bed: Bed) -> Client:
    return Client(bed.url, bed.token, bed.ca_pem)


def test_a_pod_gets_its_service_account_volume(bed: Bed) -> None:
    """plugin/pkg/admission/serviceaccount: a projected token, the root CA, the namespace."""
    client = _client(bed)
    try:
        made = client.create(
            "/api/v1/namespaces/default/pods",
            {"metadata": {"name": "sa"}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
        )
        opted_out = client.create(
            "/api/v1/namespaces/default/pods",
            {
                "metadata": {"name": "no-sa"},
                "spec": {
                    "automountServiceAccountToken": False,
                    "containers": [{"name": "c", "image": "x"}],
                },
            },
        )
        # kube-controller-manager publishes it a moment after a namespace appears.
        deadline = time.monotonic() + 20
        roots = None
        while roots is None and time.monotonic() < deadline:
            roots = client.get("/api/v1/namespaces/default/configmaps/kube-root-ca.crt")
            time.sleep(0 if roots else 0.2)
    finally:
        client.close()
    (volume,) = [v for v in made["spec"]["volumes"] if v["name"].startswith("kube-api-access-")]
    sources = volume["projected"]["sources"]
    assert sources[0]["serviceAccountToken"]["path"] == "token"
    assert sources[1]["configMap"]["name"] == "kube-root-ca.crt"
    assert sources[2]["downwardAPI"]["items"][0]["fieldRef"]["fieldPath"] == "metadata.namespace"
    (mount,) = made["spec"]["containers"][0]["volumeMounts"]
    assert (mount["name"], mount["mountPath"], mount["readOnly"]) == (volume["name"], MOUNT, True)
    assert not opted_out["spec"].get("volumes")
    assert roots is not None and "BEGIN CERTIFICATE" in roots["data"]["ca.crt"]


async def _refused_without_origin(bed: Bed) -> int:
    context = ssl.create_default_context(cadata=bed.ca_pem.decode())
    url = bed.url.replace("https://", "wss://") + "/api/v1/namespaces/default/configmaps?watch=true"
    async with aiohttp.ClientSession() as session:
        try:
            async with session.ws_connect(
                url, headers={"Authorization": f"Bearer {bed.token}"}, ssl=context
            ):
                return 101
        except aiohttp.WSServerHandshakeError as refused:
            return refused.status
        finally:
            await asyncio.sleep(0.25)


async def _watch_by_websocket(bed: Bed) -> list[dict[str, Any]]:
    context = ssl.create_default_context(cadata=bed.ca_pem.decode())
    url = bed.url.replace("https://", "wss://") + (
        "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0"
    )
    headers = {"Authorization": f"Bearer {bed.token}"}
    events: list[dict[str, Any]] = []
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(url, headers=headers, ssl=context, origin=bed.url) as socket,
    ):
        while len(events) < 1:
            message = await asyncio.wait_for(socket.receive(), timeout=20)
            assert message.type == aiohttp.WSMsgType.TEXT, message
            events.append(json.loads(message.data))
    # An SSL transport closes a loop iteration or two after its session (aiohttp's own advice).
    await asyncio.sleep(0.25)
    return events


def test_a_watch_over_a_websocket(bed: Bed) -> None:
    """k8s.io/apiserver handlers/watch.go: one text message per event (fabric8's only way)."""
    client = _client(bed)
    try:
        client.create(
            "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "w"}, "data": {}}
        )
    finally:
        client.close()
    events = asyncio.run(_watch_by_websocket(bed))
    # Without an Origin the handshake is refused (golang.org/x/net/websocket: "null origin").
    assert asyncio.run(_refused_without_origin(bed)) == 403
    assert events[0]["type"] == "ADDED"
    assert events[0]["object"]["kind"] == "ConfigMap"
