"""The demo's clock catches up with the wall clock without a jump that a node would feel.

The clock once jumped forward by lead/speed at its catch-up point: 45-66 s in the demo, longer
than the node grace period, so every node flapped NotReady and healthy pods got NodeNotReady
Events that describe and history then showed as evidence. Here the grace period and the lease
renewal are shortened so that the old jump (5 s) would be felt, and the clock's real seconds
are the test's: each round of the loop is ``STEP`` real seconds however long a loaded machine
takes to run it (a wall-clock loop once flapped node-b under load).
"""

from __future__ import annotations

import pytest

from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer, EmulatorOptions
from kubectl_spark.knowledge.clock import ScaledClock
from kubectl_spark.sim import kubelet, nodelifecycle
from kubectl_spark.sim import scenario as scenarios
from kubectl_spark.sim.world import World

SPEED = 20.0
LEAD = 100.0  # the old jump: LEAD / SPEED = 5 s, more than the grace period below
STEP = 0.05  # real seconds a round of the loop stands for: 1 simulated second


@pytest.mark.slow
def test_a_scenario_played_across_the_catch_up_point_disturbs_no_other_node(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(nodelifecycle, "GRACE_SECONDS", 4)
    monkeypatch.setattr(kubelet, "LEASE_RENEW_SECONDS", 1)
    real = [0.0]
    clock = ScaledClock(SPEED, lead=LEAD, real=lambda: real[0])
    catch_up = LEAD / (SPEED - 1)
    with EmbeddedApiServer(EmulatorOptions(clock=clock)) as server:
        world = World.for_server(server, clock)
        try:
            player = scenarios.Player(world, scenarios.load("s1-node-shutdown"))
            player.setup()
            while real[0] < catch_up + 2.0:
                player.run_due()
                world.tick()
                real[0] += STEP
            events = world.client.list("/api/v1/events")
            node_of = {
                p["metadata"]["name"]: p["spec"].get("nodeName")
                for p in world.client.list("/api/v1/pods")
            }
        finally:
            world.close()
    not_ready = {
        e["involvedObject"].get("name")
        for e in events
        if e.get("reason") == "NodeNotReady" and e["involvedObject"].get("kind") == "Node"
    }
    pods_not_ready = {
        e["involvedObject"].get("name")
        for e in events
        if e.get("reason") == "NodeNotReady" and e["involvedObject"].get("kind") == "Pod"
    }
    assert not_ready <= {"node-a"}, not_ready  # node-a is the one S1 shuts down
    assert all(node_of.get(name) == "node-a" for name in pods_not_ready), pods_not_ready
