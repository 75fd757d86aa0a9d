"""``kubectl spark record``: watch and keep every attempt's and executor's last state locally.

Runs until Ctrl-C or SIGTERM (a terminal, tmux, a systemd user unit, or a pod: see the README).
What it keeps lets ``ls``, ``describe``, ``history`` and the TUI explain losses whose pods and
Events the cluster has since forgotten. The session itself (leading, serving, keeping) is
``app/record_session.py``; this is its command line.
"""

from __future__ import annotations

import dataclasses
import os
import socket

import typer

from kubectl_spark.cli import common
from kubectl_spark.cli import globals as cli_globals
from kubectl_spark.core.recorder_manifests import NAME as LEASE  # the Lease is the recorder's name
from kubectl_spark.errors import UsageError


def run(
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Say nothing but errors."),
    in_cluster: bool = typer.Option(
        False, "--in-cluster", help="Use the pod's service account, whatever kubeconfig there is."
    ),
    leader_elect: bool = typer.Option(
        False,
        "--leader-elect",
        help=f"Record only while holding the Lease {LEASE} in the recorder's namespace; "
        "watch meanwhile, and write what was watched on taking it over.",
    ),
    port: int = typer.Option(
        0,
        "--port",
        "--metrics-port",
        min=0,
        max=65535,
        help="Serve on this port (HTTPS): Prometheus metrics (/metrics), and what was kept, "
        "which the plugin reads as an aggregated API through the API server, each caller "
        "authenticated and authorised by it (docs/recorder.md); 0: none.",
    ),
    tls_cert_file: str = typer.Option(
        "",
        "--tls-cert-file",
        help="The serving certificate (PEM) for --port; default: a self-signed one made at start.",
    ),
    tls_private_key_file: str = typer.Option(
        "", "--tls-private-key-file", help="The key of --tls-cert-file (PEM)."
    ),
    address: str = typer.Option(
        "",
        "--address",
        help="The address to serve on (default: 127.0.0.1; with --in-cluster every address, "
        "as the Service's endpoint is the pod's IP).",
    ),
    lease_duration: int = typer.Option(
        15,
        "--lease-duration",
        min=3,
        max=300,
        help="Seconds the Lease holds without a renewal (client-go's default, 15); renewed "
        "every third of it.",
    ),
    identity: str = typer.Option(
        "",
        "--identity",
        help="This recorder's name in the Lease (default: $POD_NAME, else host and process id).",
    ),
) -> None:
    """Watch Spark pods and their Events and keep them in the local history store."""
    from kubectl_spark.app.record_session import Leading, RecordSession, Serving

    conn = common.connection()
    if in_cluster:
        conn = dataclasses.replace(conn, in_cluster=True)
    session = RecordSession(
        conn,
        common.history_path(),
        all_namespaces=cli_globals.current().all_namespaces,
        quiet=quiet,
    )
    if leader_elect:
        me = identity or os.environ.get("POD_NAME") or f"{socket.gethostname()}-{os.getpid()}"
        session.lead(Leading(me, lease_duration))
    if tls_private_key_file and not tls_cert_file:
        raise UsageError("--tls-private-key-file needs --tls-cert-file")
    try:
        if port:
            address = address or ("0.0.0.0" if in_cluster else "127.0.0.1")  # noqa: S104
            session.serve(Serving(port, address, (tls_cert_file, tls_private_key_file)))
        session.run()
    finally:
        session.close()
