"""The commands, once: what the CLI registers, what help and completion list, what goes warm.

Read by the command tree (``cli/app.py``), by shell completion and the written-ahead help
(``cli/complete.py``, ``cli/main.py``), and by the warm process's client (``warm/client.py``),
which decides from it, before importing anything, whether a command line is a one-shot read a
warm server may answer. Plain tuples and no imports: the warm client reads this at every start.
The flags of each command are derived from the tree into ``cli/command_flags.py``
(``scripts/command_table.py``), checked by a test.
"""

from __future__ import annotations

# name, module (kubectl_spark.cli.commands.*), function, one-line help, help panel, and the
# flags that make it long-running (its own signals, terminal and timing). A command with the
# flags tuple None changes the cluster, runs until stopped, or starts something: never warm;
# with a tuple, it is a one-shot read unless one of those flags is given. In help's order.
COMMANDS: tuple[tuple[str, str, str, str, str | None, tuple[str, ...] | None], ...] = (
    (
        "ls",
        "ls",
        "run",
        "List Spark applications: attempts, executors, losses, alerts.",
        None,
        ("-w", "--watch", "--watch-only"),
    ),
    (
        "describe",
        "describe",
        "run",
        "Show one application with loss reasons, evidence and alerts.",
        None,
        (),
    ),
    (
        "history",
        "history",
        "run",
        "Show an application's restart history as a timeline.",
        None,
        (),
    ),
    (
        "events",
        "events",
        "run",
        "Show the Events of an application's pods, Job and SparkApplication.",
        None,
        (),
    ),
    (
        "logs",
        "logs",
        "run",
        "Print the log of a driver attempt or an executor.",
        None,
        ("-f", "--follow"),
    ),
    ("tui", "tui", "run", "Open the live terminal UI.", None, None),
    (
        "record",
        "record",
        "run",
        "Keep Spark pods' last states and Events in the local history store.",
        None,
        None,
    ),
    (
        "recorder",
        "recorder",
        "run",
        "Print or apply the in-cluster recorder (record with leader election).",
        None,
        None,
    ),
    (
        "fence",
        "fence",
        "run",
        "Fence an attempt so that it cannot make progress.",
        "Actions",
        None,
    ),
    ("unfence", "fence", "unfence", "Undo a fence.", "Actions", None),
    (
        "force-kill",
        "force_kill",
        "run",
        "Delete exactly one attempt's pods, now, by UID.",
        "Actions",
        None,
    ),
    (
        "resubmit",
        "resubmit",
        "run",
        "Start a fresh attempt of an application.",
        "Actions",
        None,
    ),
    (
        "doctor",
        "doctor",
        "run",
        "List the split-brain hazards of an application's driver Job.",
        None,
        (),
    ),
    (
        "job",
        "job",
        "run",
        "Print a driver Job that avoids the split-brain hazards by construction.",
        None,
        None,
    ),
    (
        "demo",
        "demo",
        "run",
        "Run the embedded cluster with a simulated failure scenario.",
        None,
        None,
    ),
    (
        "completion",
        "completion",
        "run",
        "Shell completion: bash, zsh or fish scripts, or install it for kubectl.",
        None,
        None,
    ),
    ("version", "version", "run", "Print the kubectl spark version.", None, None),
    (
        "warm",
        "warm",
        "run",
        "See or stop the warm process that answers reads fast.",
        None,
        None,
    ),
)
NAMES = frozenset(c[0] for c in COMMANDS)
HELP = {c[0]: c[3] for c in COMMANDS}
# The one-shot reads a warm process may answer, and the flags that make any of them live.
WARM_COMMANDS = frozenset(c[0] for c in COMMANDS if c[5] is not None)
LIVE_FLAGS = frozenset(flag for c in COMMANDS for flag in c[5] or ())
