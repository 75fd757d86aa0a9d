"""``kubectl spark demo``: a simulated cluster for people who have none, and for the tests.

- ``demo`` / ``demo --no-tui``: play a scenario to its end on a simulated clock (seconds of real
  time) and print what happened. (The TUI, once it lands, opens instead when on a terminal.)
- ``demo --serve``: keep the cluster running in the foreground, the scenario unfolding at
  ``--speed`` times real time, so kubectl and kubectl spark can watch it from elsewhere.
- ``--scenario empty``: the bare emulator, nothing simulated: only clients change it.
"""

from __future__ import annotations

import os
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import typer

from kubectl_spark.errors import UsageError

DEFAULT_SCENARIO = "mixed"


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
        DEFAULT_SCENARIO,
        "--scenario",
        help="Scenario to play; 'empty' is the bare emulator (see --list-scenarios).",
    ),
    list_scenarios: bool = typer.Option(
        False, "--list-scenarios", help="List the scenarios and exit."
    ),
    speed: float = typer.Option(
        10.0, "--speed", help="With --serve: simulated seconds per real second."
    ),
    no_tui: bool = typer.Option(
        False,
        "--no-tui",
        help="Play the scenario to its end and print what happened (non-interactive).",
    ),
    faults: str = typer.Option(
        "none",
        "--faults",
        help="With --serve: a fault profile for clients (none, flaky): 5xx, 429, slow and cut "
        "answers, watch cuts, 410s.",
    ),
) -> None:
    """Start the embedded cluster and play a failure scenario on it."""
    from kubectl_spark.sim import scenario as scenarios

    if list_scenarios:
        typer.echo(f"{'empty':<36} the bare emulator: nothing changes unless a client changes it")
        for name in scenarios.available():
            typer.echo(f"{name:<36} {scenarios.load(name).title}")
        return
    if scenario != "empty" and scenario not in scenarios.available():
        raise UsageError(f"unknown scenario {scenario!r} (see kubectl spark demo --list-scenarios)")
    if not 0 <= port <= 65535:
        raise UsageError(f"--port must be between 0 and 65535, not {port}")
    if not 0 < speed <= 1000:
        raise UsageError(f"--speed must be above 0 and at most 1000, not {speed}")
    from kubectl_spark.cluster.apiserver.faults import PROFILES

    if faults not in PROFILES:
        raise UsageError(f"unknown fault profile {faults!r}: one of {', '.join(PROFILES)}")
    if faults != "none" and not serve:
        raise UsageError("--faults needs --serve (it is for clients of a served cluster)")
    from kubectl_spark.cli import globals as cli_globals

    # --kubeconfig is also one of kubectl's global flags, taken out of argv before typer runs.
    global_path = cli_globals.current().kubeconfig
    given = kubeconfig or (Path(global_path) if global_path else None)
    path = given or default_kubeconfig()
    if serve:
        _serve(scenario, path, port, speed, faults)
        return
    if not no_tui and scenario != "empty" and sys.stdin.isatty() and sys.stdout.isatty():
        _tui(scenario, path, speed)
        return
    _play(scenario, path)


def _serve(scenario_name: str, path: Path, port: int, speed: float, faults: str) -> None:
    from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer, EmulatorOptions
    from kubectl_spark.knowledge.clock import ScaledClock, SystemClock
    from kubectl_spark.sim import scenario as scenarios

    duration = 0.0 if scenario_name == "empty" else scenarios.load(scenario_name).duration
    clock = SystemClock() if scenario_name == "empty" else ScaledClock(speed, lead=duration)
    server = EmbeddedApiServer(EmulatorOptions(port=port, clock=clock, faults=faults))
    stop = threading.Event()
    threads: list[threading.Thread] = []

    def ready(srv: EmbeddedApiServer) -> None:
        srv.write_kubeconfig(path)
        typer.echo(f"Embedded Kubernetes API serving at {srv.url}")
        typer.echo(f"kubeconfig: {path}")
        typer.echo(f"Try:  kubectl --kubeconfig {path} get pods -A -w")
        typer.echo(f"      KUBECONFIG={path} kubectl spark version")
        hint = path_hint()
        if hint:
            typer.echo(hint)
        if scenario_name != "empty":
            thread = threading.Thread(
                target=_simulate,
                args=(srv, clock, scenario_name, stop),
                name="simulator",
                daemon=True,
            )
            thread.start()
            threads.append(thread)
        typer.echo("Stop with Ctrl-C.")
        sys.stdout.flush()

    def halt() -> None:
        stop.set()
        for thread in threads:
            thread.join(timeout=10)

    try:
        server.serve_forever(ready, halt)
    except OSError as exc:
        raise UsageError(f"cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}") from exc
    finally:
        halt()
    typer.echo("Embedded Kubernetes API stopped.")


def _simulate(
    server: Any, clock: Any, scenario_name: str, stop: threading.Event, *, announce: bool = True
) -> None:
    """Tick the simulator against the served cluster until told to stop.

    Under the TUI nothing is announced: a line written while the TUI holds the terminal would
    appear only after it exits, as if the scenario had started then.
    """
    from urllib3.exceptions import HTTPError

    from kubectl_spark.sim import scenario as scenarios
    from kubectl_spark.sim.client import SimApiError
    from kubectl_spark.sim.world import World

    world = World.for_server(server, clock)
    player = scenarios.Player(world, scenarios.load(scenario_name))
    try:
        player.setup()
        if announce:
            typer.echo(f"Playing scenario {scenario_name!r}: {player.scenario.title}")
            sys.stdout.flush()
        # About one simulated second per tick, as on the manual clock; never busier than 50 Hz.
        interval = max(0.02, min(0.5, 1.0 / player_speed(clock)))
        while not stop.wait(interval):
            player.run_due(on_error=lambda exc: sys.stderr.write(f"warning: {exc}\n"))
            world.tick()
    except (SimApiError, OSError, HTTPError, scenarios.ScenarioError) as exc:
        if not stop.is_set():
            sys.stderr.write(f"error: the simulator stopped: {exc}\n")
    finally:
        world.close()


def _tui(scenario_name: str, path: Path, speed: float) -> None:
    """The embedded cluster, the scenario unfolding at ``speed``, and the TUI on top of it."""
    from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer, EmulatorOptions
    from kubectl_spark.knowledge.clock import ScaledClock
    from kubectl_spark.sim import scenario as scenarios

    clock = ScaledClock(speed, lead=scenarios.load(scenario_name).duration)
    stop = threading.Event()
    with EmbeddedApiServer(EmulatorOptions(clock=clock)) as server:
        server.write_kubeconfig(path)
        simulator = threading.Thread(
            target=_simulate,
            args=(server, clock, scenario_name, stop),
            kwargs={"announce": False},
            name="simulator",
            daemon=True,
        )
        simulator.start()

        try:
            demo_app(path, clock).run()
        finally:
            stop.set()
            simulator.join(timeout=10)


def demo_app(path: Path, clock: Any) -> Any:
    """The TUI on the demo's cluster, reading the simulated clock the cluster stamps times with.

    Ages, churn windows and the timeline's "now" read that clock, not the wall's, which is
    ahead of it while it catches up.
    """
    from kubectl_spark.app.session import Connection
    from kubectl_spark.tui.app import SparkTUI
    from kubectl_spark.tui.sources import LiveSource

    def make_source(namespace: str | None, context: str | None, all_namespaces: bool) -> Any:
        return LiveSource(
            Connection(
                kubeconfig=str(path), context=context, namespace=namespace, interactive=False
            ),
            all_namespaces=all_namespaces,
            clock=clock.now,
        )

    return SparkTUI(make_source, all_namespaces=True, demo=True)  # it reads its source's clock


def player_speed(clock: Any) -> float:
    return float(getattr(clock, "speed", 1.0)) or 1.0


def _play(scenario_name: str, path: Path) -> None:
    from kubectl_spark.app.session import Connection, get_json
    from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer, EmulatorOptions
    from kubectl_spark.knowledge.clock import ManualClock
    from kubectl_spark.sim import scenario as scenarios
    from kubectl_spark.sim.world import World

    # Start in the past so that the scenario ends now: ages then read as they would on a cluster.
    lead = 0.0 if scenario_name == "empty" else scenarios.load(scenario_name).duration
    clock = ManualClock(datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=lead))
    with EmbeddedApiServer(EmulatorOptions(clock=clock)) as server:
        server.write_kubeconfig(path)
        conn = Connection(kubeconfig=str(path))
        version = get_json(conn, "/version")
        typer.echo(f"Embedded Kubernetes API {version['gitVersion']} at {server.url}")
        if scenario_name == "empty":
            _show_served(server)
        else:
            loaded = scenarios.load(scenario_name)
            world = World.for_server(server, clock)
            try:
                scenarios.Player(world, loaded).play()
                typer.echo(
                    f"Played scenario {scenario_name!r} ({loaded.title}) to {int(loaded.duration)} s of simulated time."
                )
                typer.echo("")
                _show_apps(path)  # while the simulated drivers still answer
            finally:
                world.close()
    typer.echo("")
    typer.echo("To keep a cluster running and point kubectl at it:")
    typer.echo(f"  kubectl spark demo --serve --scenario {scenario_name} --kubeconfig {path}")
    typer.echo(f"  kubectl --kubeconfig {path} get pods -A -w      # in another terminal")
    hint = path_hint()
    if hint:
        typer.echo(hint)


def _show_served(server: Any) -> None:
    typer.echo("It serves:")
    for row in server.served():
        subs = ",".join(row["subresources"])
        scope = "namespaced" if row["namespaced"] else "cluster"
        typer.echo(f"  {row['apiVersion']:<30} {row['resource']:<26} {scope:<10} {subs}")


def _show_apps(kubeconfig: Path) -> None:
    """`kubectl spark ls -A` and `kubectl spark history` for the played cluster.

    The commands themselves, run against it as a user would: the printout is their answer,
    from the same sources (Spark's executor lists from the simulated drivers included), never
    a second analysis of our own.
    """
    typer.echo("$ kubectl spark ls -A")
    typer.echo(_command(kubeconfig, "ls", "-A"), nl=False)
    listed = _command(
        kubeconfig, "ls", "-A", "-o", 'jsonpath={range .items[*]}{.namespace} {.name}{"\\n"}{end}'
    )
    for line in sorted(listed.splitlines()):
        namespace, _, name = line.partition(" ")
        typer.echo("")
        typer.echo(f"$ kubectl spark history {name} -n {namespace}")
        typer.echo(_command(kubeconfig, "history", name, "-n", namespace), nl=False)


def _command(kubeconfig: Path, *args: str) -> str:
    """What ``kubectl spark ARGS`` prints on the demo's cluster (its errors said, not raised)."""
    import subprocess

    done = subprocess.run(  # noqa: S603 - this interpreter, this package, our own arguments
        [sys.executable, "-m", "kubectl_spark.cli.main", "--kubeconfig", str(kubeconfig), *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "KUBECTL_SPARK_WARM": "off"},  # one-off commands: no server left
    )
    return done.stdout + done.stderr


def path_hint() -> str:
    """Where kubectl would not find this plugin: the line that puts it on PATH.

    kubectl runs ``kubectl-spark`` from PATH; run from a virtualenv's bin (``scripts/dev``),
    ``kubectl spark`` fails in another terminal until that directory is on PATH.
    """
    import shutil

    here = Path(sys.argv[0]).resolve().parent
    found = shutil.which("kubectl-spark")
    if found is not None and Path(found).resolve().parent == here:
        return ""
    if not (here / "kubectl-spark").exists():
        return ""  # not run as the installed command (a test, python -m): nothing to say
    return (
        "Note: kubectl finds plugins on PATH, and this kubectl-spark is not on it:\n"
        f"      export PATH={here}{os.pathsep}$PATH"
    )
