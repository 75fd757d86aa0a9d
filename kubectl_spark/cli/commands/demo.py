"""``kubectl spark demo``: a cluster for people who have none, and for the tests.

Until the simulator lands the cluster is the bare emulator: empty, changed only by clients.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from kubectl_spark.errors import UsageError


def default_kubeconfig() -> Path:
    state = os.environ.get("XDG_STATE_HOME")
    base = Path(state) if state else Path.home() / ".local" / "state"
    return base / "kubectl-spark" / "demo-kubeconfig.yaml"


def run(
    serve: bool = typer.Option(
        False,
        "--serve",
        help="Keep the cluster running in the foreground until Ctrl-C (SIGINT) or SIGTERM.",
    ),
    kubeconfig: Path | None = typer.Option(
        None,
        "--kubeconfig",
        help="Where --serve writes the kubeconfig (written once the server accepts requests).",
    ),
    port: int = typer.Option(0, "--port", help="Port to listen on (default: any free port)."),
    scenario: str = typer.Option(
        "empty", "--scenario", help="Scenario to load; 'empty' is the bare emulator."
    ),
) -> None:
    """Start the embedded cluster: print how to reach it, or serve it until interrupted."""
    from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer, EmulatorOptions

    if scenario != "empty":
        raise UsageError(
            f"unknown scenario {scenario!r}: only 'empty' is available until the simulator lands"
        )
    if not 0 <= port <= 65535:
        raise UsageError(f"--port must be between 0 and 65535, not {port}")
    server = EmbeddedApiServer(EmulatorOptions(port=port))
    path = kubeconfig or default_kubeconfig()
    if serve:

        def ready(srv: EmbeddedApiServer) -> None:
            srv.write_kubeconfig(path)
            typer.echo(f"Embedded Kubernetes API serving at {srv.url}")
            typer.echo(f"kubeconfig: {path}")
            typer.echo(f"Try:  kubectl --kubeconfig {path} get pods -A")
            typer.echo(f"      KUBECONFIG={path} kubectl spark version")
            typer.echo("Stop with Ctrl-C.")
            sys.stdout.flush()

        try:
            server.serve_forever(ready)
        except OSError as exc:
            raise UsageError(f"cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}") from exc
        typer.echo("Embedded Kubernetes API stopped.")
        return
    _show(server, path)


def _show(server: object, path: Path) -> None:
    from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer
    from kubectl_spark.kube.client import Connection, get_json

    assert isinstance(server, EmbeddedApiServer)
    with server:
        server.write_kubeconfig(path)
        conn = Connection(kubeconfig=str(path))
        version = get_json(conn, "/version")
        namespaces = get_json(conn, "/api/v1/namespaces")
        typer.echo(
            f"Embedded Kubernetes API {version['gitVersion']} at {server.url} "
            f"(namespaces: {', '.join(n['metadata']['name'] for n in namespaces['items'])})"
        )
        typer.echo("It serves:")
        for row in server.served():
            subs = ",".join(row["subresources"])
            scope = "namespaced" if row["namespaced"] else "cluster"
            typer.echo(f"  {row['apiVersion']:<30} {row['resource']:<26} {scope:<10} {subs}")
    typer.echo("")
    typer.echo("To keep it running and point kubectl at it:")
    typer.echo(f"  kubectl spark demo --serve --kubeconfig {path}")
    typer.echo(f"  kubectl --kubeconfig {path} get pods -A      # in another terminal")
