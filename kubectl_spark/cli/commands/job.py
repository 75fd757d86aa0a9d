"""``kubectl spark job NAME RESOURCE --image IMG``: print a driver Job without SPARK-23980's hazards.

Built by ``core/safe_job.py``; apply it with ``kubectl apply -f -`` (YAML: one document per
object; JSON: a ``kind: List``).
"""

from __future__ import annotations

import re
import sys

import typer

from kubectl_spark.cli import common, render
from kubectl_spark.core.safe_job import JobOptions, driver_job
from kubectl_spark.errors import UsageError

NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def _namespace() -> str:
    """-n, else the kubeconfig context's namespace, else default; no request is made."""
    from kubectl_spark.app.session import kubeconfig_namespace

    return kubeconfig_namespace(common.connection())


def _conf(pairs: list[str]) -> tuple[tuple[str, str], ...]:
    out = []
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.startswith("spark."):
            raise UsageError(f"--conf {pair!r}: expected spark.KEY=VALUE")
        out.append((key, value))
    return tuple(out)


def run(
    name: str = typer.Argument(..., help="The application's name: the Job's, and spark.app.name."),
    resource: str = typer.Argument(
        ...,
        metavar="RESOURCE",
        help="The application jar or Python file (e.g. local:///opt/app.jar).",
    ),
    app_args: list[str] = typer.Argument(
        None, metavar="[ARGS]...", help="The application's arguments."
    ),
    image: str = typer.Option(..., "--image", help="The Spark image of driver and executors."),
    main_class: str = typer.Option("", "--class", help="The main class (JVM applications)."),
    executors: int = typer.Option(2, "--executors", min=0, help="spark.executor.instances."),
    backoff_limit: int = typer.Option(
        3, "--backoff-limit", min=0, help="Failed attempts before the Job fails."
    ),
    service_account: str = typer.Option(
        "spark", "--service-account", help="The driver's service account."
    ),
    storage_class: str = typer.Option(
        "", "--storage-class", help="For the ReadWriteOncePod lock claim."
    ),
    conf: list[str] = typer.Option(
        [], "--conf", help="More Spark settings, spark.KEY=VALUE (repeatable)."
    ),
    output: str = typer.Option("yaml", "--output", "-o", help="yaml or json."),
) -> None:
    """Print a driver Job with no split-brain hazards: one pod at a time, disruptions not counted, per-attempt executor prefix and app id, a ReadWriteOncePod fence."""
    chosen = render.check_output(output, ("yaml", "json"))
    if not NAME.fullmatch(name) or len(name) > 52:
        raise UsageError(
            f'invalid name "{name}": a lowercase RFC 1123 label of at most 52 characters '
            "(the Job's pods add a suffix)"
        )
    options = JobOptions(
        name=name,
        namespace=_namespace(),
        image=image,
        resource=resource,
        main_class=main_class,
        app_args=tuple(app_args or ()),
        executors=executors,
        backoff_limit=backoff_limit,
        service_account=service_account,
        storage_class=storage_class,
        conf=_conf(conf),
    )
    items = driver_job(options)
    if chosen == "yaml":
        # One document per object, as manifests are kept: ``kubectl apply -f -`` takes them
        # everywhere, where a ``kind: List`` needs the server's OpenAPI v2 to be split.
        sys.stdout.write("---\n".join(render.document(item, chosen) for item in items))
        return
    sys.stdout.write(render.document({"apiVersion": "v1", "kind": "List", "items": items}, chosen))
