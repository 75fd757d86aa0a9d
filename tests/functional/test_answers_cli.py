"""Issue 23 through the real entry point: what `events`, `describe` and `ls` say of a played
scenario, each test one bullet of the issue that a person reading the output would notice."""

from __future__ import annotations

import json

import pytest

from tests.command_line import app_named, ls_json, run


def test_events_of_an_app_include_its_gone_pods(played, capsys: pytest.CaptureFixture[str]) -> None:
    """s9: executor 3 was preempted and its pod is gone; its Event still names it."""
    c = played("s9-deleted-executors")
    code, out, err = run(capsys, c, "events", "vanishing", "-o", "json")
    assert code == 0, err
    items = json.loads(out)
    items = items["items"] if isinstance(items, dict) else items
    preempted = [e for e in items if e["reason"] == "Preempted"]
    assert preempted and preempted[0]["object"].endswith("-exec-3"), items


def test_describe_keeps_warnings_and_says_what_it_left_out(played, capsys) -> None:
    """s1: the node loss's Warnings are kept over later Normal ones, and the cut is said."""
    c = played("s1-node-shutdown")
    code, out, err = run(capsys, c, "events", "networkwordcount", "-o", "json")
    assert code == 0, err
    doc = json.loads(out)
    every = doc["items"] if isinstance(doc, dict) else doc
    assert len(every) > 10
    code, out, err = run(capsys, c, "describe", "networkwordcount")
    assert code == 0, err
    events = out.split("Events:", 1)[1]
    assert "NodeNotReady" in events or "TaintManagerEviction" in events
    assert "more not shown" in events and f"lists all {len(every)}" in events
    warnings = [e for e in every if e["type"] == "Warning"]
    shown_warnings = sum(1 for line in events.splitlines() if " Warning " in line)
    assert shown_warnings == min(len(warnings), 10)


def test_ls_sort_by_an_unknown_path_is_an_error_and_created_at_sorts(played, capsys) -> None:
    c = played("mixed")
    code, out, err = run(capsys, c, "ls", "-A", "--sort-by", ".createdat")
    assert code != 0 and out == ""
    assert err.count("\n") == 1 and "couldn't find any field" in err and "Traceback" not in err
    doc = ls_json(capsys, c, "--sort-by", ".createdAt")
    created = [a["createdAt"] for a in doc["items"]]
    assert all(created) and created == sorted(created)
    code, out, err = run(capsys, c, "ls", "-A", "--sort-by", "{.createdAt}", "-o", "name")
    assert code == 0 and len(out.splitlines()) == len(created)
    # each line as kubectl reads it: resource.group/name of what launched the application
    expected = {
        "job": "job.batch/", "sparkapplication": "sparkapplication.sparkoperator.k8s.io/",
        "apache-operator": "sparkapplication.spark.apache.org/",
        "spark-cluster": "sparkcluster.spark.apache.org/", "pod": "pod/",
    }  # fmt: skip
    for line, item in zip(out.splitlines(), doc["items"], strict=True):
        assert line.startswith(expected[item["source"]]), (line, item["source"])
    assert {i["source"] for i in doc["items"]} >= {"pod", "sparkapplication"}
    assert app_named(doc, doc["items"][0]["name"])["createdAt"] == created[0]


def test_force_killed_zombie_attempt_stays_in_describe_history_and_events(cluster, capsys) -> None:
    """s2b: after force-kill of the Job's zombie attempt, the attempt, its node loss and the
    ForceKilled Event are still told, and the Job's next attempt follows it."""
    c = cluster("s2b-partition-replacement-blocked")
    c.player.play()
    code, _, err = run(capsys, c, "force-kill", "networkwordcount/1", "--out-of-service", "--yes")
    assert code == 0, err
    c.world.step(90)
    code, out, err = run(capsys, c, "describe", "networkwordcount", "-o", "json")
    assert code == 0, err
    attempts = json.loads(out)["attempts"]
    assert len(attempts) == 2 and attempts[1]["state"] == "Running"
    first = attempts[0]
    assert first["reason"]["code"] == "NodeLost" and first["endedAt"]
    assert any("ForceKilled" in e for e in first["reason"]["evidence"])
    code, out, err = run(capsys, c, "history", "networkwordcount", "-o", "json")
    kinds = [(h["kind"], h["attempt"]) for h in json.loads(out)["items"]]
    assert ("ForceKilled", 1) in kinds and ("AttemptReplaced", 1) in kinds
    assert all(h["time"] for h in json.loads(out)["items"])  # no <unknown> end
    code, out, err = run(capsys, c, "events", "networkwordcount")
    assert "ForceKilled" in out and "NodeNotReady" in out
    code, out, err = run(capsys, c, "ls")
    assert "ReplacementBlocked" not in out


def test_resubmitted_job_continues_its_application(cluster, capsys) -> None:
    """s2: after resubmit, one row, one timeline with the Resubmitted Event and every attempt
    (the force-killed one too, though its Job never counted it)."""
    c = cluster("s2-partition")
    c.player.play()
    for n in (1, 2):
        assert run(capsys, c, "fence", f"networkwordcount/{n}", "--force", "--yes")[0] == 0
    assert run(capsys, c, "force-kill", "networkwordcount/2", "--no-replace", "--yes")[0] == 0
    code, _, err = run(capsys, c, "resubmit", "networkwordcount", "--yes")
    assert code == 0, err
    c.world.step(20)
    doc = ls_json(capsys, c)
    rows = [a for a in doc["items"] if a["name"] == "networkwordcount"]
    assert len(rows) == 1
    (app,) = rows
    assert [a["state"] for a in app["attempts"]][-1] == "Running" and len(app["attempts"]) == 3
    assert app["attempts"][1]["reason"]["code"] == "DeletedByUser"
    code, out, err = run(capsys, c, "history", "networkwordcount", "-o", "json")
    kinds = {h["kind"] for h in json.loads(out)["items"]}
    assert {"Resubmitted", "ForceKilled", "Fenced"} <= kinds
