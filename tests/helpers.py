"""Small helpers: raw requests through the official client, pods made, bound or created (a
notebook's client-mode driver too), and the bodies the core built read back as sent."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import orjson
from kubernetes.client.exceptions import ApiException

if TYPE_CHECKING:
    from tests.conftest import ScenarioCluster as Cluster


def raw(
    api: Any,
    method: str,
    path: str,
    body: Any = None,
    *,
    query: dict[str, Any] | None = None,
    content_type: str = "application/json",
) -> tuple[int, Any]:
    """Send one request through the client's transport; return (status, parsed JSON or text)."""
    headers = {"Accept": "application/json", "Content-Type": content_type}
    try:
        response = api.call_api(
            path,
            method,
            query_params=list((query or {}).items()),
            header_params=headers,
            body=body,
            auth_settings=["BearerToken"],
            _preload_content=False,
            _request_timeout=30,
        )
    except ApiException as exc:
        try:
            return exc.status, orjson.loads(exc.body)
        except (orjson.JSONDecodeError, TypeError):
            return exc.status, exc.body
    resp = response[0] if isinstance(response, tuple) else response
    data = resp.data
    try:
        return resp.status, orjson.loads(data)
    except orjson.JSONDecodeError:
        return resp.status, data.decode()


def pod(name: str, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"containers": [{"name": "main", "image": "apache/spark:3.5.1"}], **spec},
    }


PODS = "/api/v1/namespaces/default/pods"
MERGE = "application/merge-patch+json"


def make(
    api: Any, name: str, labels: dict[str, str] | None = None, path: str = PODS, **spec: Any
) -> Any:
    """A pod created through the API (201 checked); its body."""
    status, body = raw(api, "POST", path, pod(name, labels, **spec))
    assert status == 201, body
    return body


def bind(api: Any, name: str, node: str = "node-a") -> None:
    """The pod bound to a node, as kube-scheduler binds it."""
    status, body = raw(
        api, "POST", f"{PODS}/{name}/binding", {"target": {"kind": "Node", "name": node}}
    )
    assert status == 201, body


def sent(bodies: Iterable[Mapping[str, object]]) -> list[Any]:
    """Bodies the core built (manifests, a plan's objects) as the API server would receive
    them: JSON, read back, so a test indexes into them freely and a value that is not JSON fails."""
    return [orjson.loads(orjson.dumps(body)) for body in bodies]


def spark_pod(name: str, role: str = "executor", app: str = "a") -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "labels": {
                "spark-role": role,
                "spark-app-selector": f"spark-{app}",
                "spark-app-name": app,
            },
        },
        "spec": {"containers": [{"name": "c", "image": "spark"}]},
    }


def create_pods(api: Any, *pods: dict[str, Any]) -> None:
    for pod in pods:
        api.request("POST", "/api/v1/namespaces/default/pods", body=pod)


def notebook_with_executors(c: Cluster, executors: tuple[int, ...] = (1, 2)) -> dict[str, Any]:
    """A notebook pod running a client-mode driver (spark.kubernetes.driver.pod.name): Spark
    does not label it, but its executors name it as owner."""
    pods = "/api/v1/namespaces/default/pods"
    notebook = c.world.client.get(f"{pods}/jupyter-alice") or c.world.client.create(
        pods,
        {
            "metadata": {"name": "jupyter-alice"},
            "spec": {"containers": [{"name": "notebook", "image": "jupyter/pyspark-notebook"}]},
        },
    )
    owner = {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": "jupyter-alice",
        "uid": notebook["metadata"]["uid"],
        "controller": True,
    }
    for i in executors:
        labels = {
            "spark-role": "executor",
            "spark-app-selector": "spark-nb",
            "spark-app-name": "notebook",
            "spark-exec-id": str(i),
        }
        c.world.client.create(
            pods,
            {
                "metadata": {"name": f"nb-exec-{i}", "labels": labels, "ownerReferences": [owner]},
                "spec": {"containers": [{"name": "spark-kubernetes-executor", "image": "spark"}]},
            },
        )
    return notebook
