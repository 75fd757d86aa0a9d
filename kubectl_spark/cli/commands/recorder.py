"""``kubectl spark recorder``: print or apply what runs ``record`` in the cluster.

Built by ``core/recorder_manifests.py``. ``--dry-run -o yaml`` prints the objects as a List
(for ``kubectl apply -f -`` or a GitOps repository); without ``--dry-run`` they are created
with a plan, as the actions' (shown, confirmed, permissions checked first).
"""

from __future__ import annotations

import sys

import typer

from kubectl_spark import __version__
from kubectl_spark.cli import act, common, render
from kubectl_spark.cli.commands.action_options import CreatedOutput, DryRun, Yes
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
    "Deployment": "deployments",
}
CLUSTER_SCOPED = {"ClusterRole", "ClusterRoleBinding"}


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
    dry_run: DryRun = "none",
    yes: Yes = False,
    output: CreatedOutput = "",
) -> None:
    """Print or apply the in-cluster recorder: Deployment, ServiceAccount, least RBAC, Service, claim."""
    mode = act.check_dry_run(dry_run)
    if access_mode not in ("ReadWriteOnce", "ReadWriteMany"):
        raise UsageError(f'invalid --access-mode "{access_mode}": ReadWriteOnce or ReadWriteMany')
    namespace = common.connection().namespace or "kubectl-spark"
    objects = manifests(
        RecorderOptions(namespace, image, replicas, storage, storage_class, access_mode)
    )
    if mode == "client" and render.is_document(output):
        sys.stdout.write(
            render.document({"apiVersion": "v1", "kind": "List", "items": objects}, output)
        )
        return
    operations = tuple(
        Operation(
            "create",
            str(obj["apiVersion"]),
            PLURALS[str(obj["kind"])],
            None if obj["kind"] in CLUSTER_SCOPED else namespace,
            str(obj["metadata"]["name"]),
            f"the recorder's {obj['kind']}",
            obj,
        )
        for obj in objects
    )
    with common.connect() as api:
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
