"""``kubectl spark recorder``: print or apply what runs ``record`` in the cluster.

Built by ``core/recorder_manifests.py``. ``--dry-run -o yaml`` prints the objects as a List
(for ``kubectl apply -f -`` or a GitOps repository); without ``--dry-run`` they are created
with a plan, as the actions' (shown, confirmed, permissions checked first).
"""

from __future__ import annotations

import ipaddress
import re
import sys
from collections.abc import Sequence
from typing import Any

import typer

from kubectl_spark import __version__
from kubectl_spark.cli import act, common, render
from kubectl_spark.cli.commands.action_options import CreatedOutput, DryRun, Yes
from kubectl_spark.core import raw
from kubectl_spark.core.jsonvalue import Body
from kubectl_spark.core.plans import Plan
from kubectl_spark.core.plans.base import Operation
from kubectl_spark.core.recorder_manifests import IMAGE, NAME, RecorderOptions, manifests
from kubectl_spark.errors import NotFound, UsageError

PLURALS = {
    "ServiceAccount": "serviceaccounts",
    "ClusterRole": "clusterroles",
    "ClusterRoleBinding": "clusterrolebindings",
    "Role": "roles",
    "RoleBinding": "rolebindings",
    "PersistentVolumeClaim": "persistentvolumeclaims",
    "Service": "services",
    "NetworkPolicy": "networkpolicies",
    "PodDisruptionBudget": "poddisruptionbudgets",
    "Deployment": "deployments",
    "APIService": "apiservices",
}
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
# kube-apiserver keeps its own addresses in the default namespace's ``kubernetes`` Endpoints
# (its endpoint reconciler, pkg/controlplane/reconcilers): where its proxy connects from.
APISERVER_ENDPOINTS = "/api/v1/namespaces/default/endpoints/kubernetes"
CLUSTER_SCOPED = {"ClusterRole", "ClusterRoleBinding", "APIService"}


def run(
    image: str = typer.Option(
        IMAGE.format(version=__version__),
        "--image",
        help="The recorder's image (built from the Dockerfile; see the README).",
    ),
    replicas: int = typer.Option(2, "--replicas", min=1, help="Recorders; one records at a time."),
    storage: str = typer.Option("1Gi", "--storage", help="The store's claim size."),
    storage_class: str = typer.Option("", "--storage-class", help="The store's storage class."),
    access_mode: str = typer.Option(
        "ReadWriteOnce",
        "--access-mode",
        help="The store's access mode: ReadWriteOnce keeps the replicas on one node.",
    ),
    image_digest: str = typer.Option(
        "", "--image-digest", help="Pin the image by this digest (sha256:...), as reviews ask."
    ),
    apiserver_cidr: list[str] = typer.Option(
        [],
        "--apiserver-cidr",
        help="Where the API server's proxy connects from, for the NetworkPolicy (repeatable); "
        "default: the addresses of the default namespace's kubernetes Endpoints.",
    ),
    dry_run: DryRun = "none",
    yes: Yes = False,
    output: CreatedOutput = "",
) -> None:
    """Print or apply the in-cluster recorder: Deployment, least RBAC, Service, APIService, claim."""
    mode = act.check_dry_run(dry_run)
    if access_mode not in ("ReadWriteOnce", "ReadWriteMany"):
        raise UsageError(f'invalid --access-mode "{access_mode}": ReadWriteOnce or ReadWriteMany')
    if image_digest and not DIGEST.fullmatch(image_digest):
        raise UsageError(f'invalid --image-digest "{image_digest[:80]}": sha256: and 64 hex digits')
    given = tuple(_cidr(c) for c in apiserver_cidr)
    namespace = common.connection().namespace or "kubectl-spark"

    def objects(cidrs: tuple[str, ...]) -> list[Body]:
        return manifests(
            RecorderOptions(
                namespace,
                image,
                replicas,
                storage,
                storage_class,
                access_mode,
                image_digest=image_digest,
                apiserver_cidrs=cidrs,
            )
        )

    if mode == "client" and render.is_document(output) and given:
        _print(objects(given), output)  # rendered offline, for a GitOps repository
        return
    with common.connect() as api:
        rendered = objects(given or _apiserver_cidrs(api))
        if mode == "client" and render.is_document(output):
            _print(rendered, output)
            return
        operations = tuple(
            Operation(
                "create",
                raw.text(obj, "apiVersion"),
                PLURALS[raw.text(obj, "kind")],
                # the front-proxy trust's reader is bound in kube-system, where that Role is
                None if raw.text(obj, "kind") in CLUSTER_SCOPED else raw.namespace(obj),
                raw.name(obj),
                f"the recorder's {raw.text(obj, 'kind')}",
                obj,
            )
            for obj in rendered
        )
        try:
            api.request("GET", f"/api/v1/namespaces/{namespace}", what=f"get namespace {namespace}")
        except NotFound:
            body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
            operations = (
                Operation("create", "v1", "namespaces", None, namespace, "its namespace", body),
                *operations,
            )
        plan = Plan("recorder", namespace, NAME, None, operations=operations)
        act.execute(api, plan, dry_run=mode, yes=yes, output=output)


def _print(objects: Sequence[Body], output: str) -> None:
    sys.stdout.write(
        render.document({"apiVersion": "v1", "kind": "List", "items": objects}, output)
    )


def _cidr(text: str) -> str:
    try:
        return str(ipaddress.ip_network(text, strict=False))
    except ValueError:
        raise UsageError(f'invalid --apiserver-cidr "{text[:80]}": an address or CIDR') from None


def _apiserver_cidrs(api: Any) -> tuple[str, ...]:
    """The API server's own addresses (each a /32 or /128), read from the cluster."""
    try:
        endpoints: Any = api.request(
            "GET", APISERVER_ENDPOINTS, what="get the API server's endpoints"
        )
    except NotFound:
        endpoints = {}
    found = sorted(
        {
            str(ipaddress.ip_network(address["ip"]))
            for subset in (endpoints or {}).get("subsets") or []
            for address in subset.get("addresses") or []
            if isinstance(address, dict) and address.get("ip")
        }
    )
    if not found:
        raise UsageError(
            "the API server's addresses are not in the default namespace's kubernetes Endpoints",
            hint="pass --apiserver-cidr with where its proxy connects from (the NetworkPolicy "
            "admits only it and Prometheus)",
        )
    return tuple(found)
