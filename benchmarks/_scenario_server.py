"""An emulator with a scenario played to its end on a manual clock, then left still.

Run as ``python benchmarks/_scenario_server.py NAME KUBECONFIG``: the benchmarks' small
cluster (the demo's ``mixed``: a few dozen pods in three namespaces). Nothing simulates after
the end, so the measured commands share the machine with an idle server only.
"""

from __future__ import annotations

import signal
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer, EmulatorOptions  # noqa: E402
from kubectl_spark.knowledge.clock import ManualClock  # noqa: E402
from kubectl_spark.sim import scenario as scenarios  # noqa: E402
from kubectl_spark.sim.world import World  # noqa: E402


def main(name: str, kubeconfig: str) -> None:
    loaded = scenarios.load(name)
    clock = ManualClock(
        datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=loaded.duration)
    )
    server = EmbeddedApiServer(EmulatorOptions(clock=clock)).start()
    world = World.for_server(server, clock)
    scenarios.Player(world, loaded).play()
    world.close()
    partial = Path(kubeconfig + ".partial")
    server.write_kubeconfig(partial)
    partial.rename(kubeconfig)  # whole, once the cluster is ready
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    stop.wait()
    server.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
