"""A warm process: the reading commands answered by a fork of a process that has imported them.

Why: on a small cluster the seven requests of ``ls`` take about 15 ms and the rest of its
wall time is Python importing ``urllib3``, ``yaml``, the ``kubernetes`` package's kubeconfig
and auth modules, typer and the core (docs/performance.md, issue 26). A Go binary has no such
cost; a Python process can pay it once. The first reading command starts a server in the
background (``__warm-serve``, its own session, stdio on /dev/null) that imports what those
commands import and waits on a Unix socket; every later one is a small client (``client``)
that hands the server its argv, environment, working directory, umask and its own stdin,
stdout and stderr (``SCM_RIGHTS``), and gets the exit code back. The server forks; the child
takes the client's environment and file descriptors and runs the same ``main`` a cold start
would: the same kubeconfig read, the same requests, the same analysis, the same output.

Only the reading one-shot commands go this way (``kubectl_spark.command_table.WARM_COMMANDS``,
the table the CLI registers its commands from, and the flags that make them live): a failed hand-over can
always fall back to running them in the client itself. The TUI, ``--watch``/``--follow``,
``record`` and the actions run as they always did. ``KUBECTL_SPARK_WARM=off`` turns it off
(``on``, the default, and ``off`` are the only values); the server exits after
``IDLE_SECONDS`` without a request, and a changed install (any file of the package, the
interpreter, site-packages) is a different server: a stale one idles out, or ``kubectl spark
warm stop`` ends it.

Trust (issue 49): the client hands over its environment and its terminal, so it must reach
its own server and nothing else. It opens the folder once, after checking every directory on
its way (owned by root or this user, writable by nobody else), connects relative to that open
folder, and checks the server's peer credentials (this uid, the pid the server wrote). A
command that would not run the same in the server (a preloaded library, another network or
mount namespace, a Python variable that changes the interpreter) runs here, and ``-v=6`` says
why.
"""

from __future__ import annotations

ENV = "KUBECTL_SPARK_WARM"
# The fast paths off (tests compare the output both ways): cold, as before them. The same
# name as kube.lazy_kubernetes.EAGER, not imported from there: that package loads ``kubernetes``.
EAGER = "KUBECTL_SPARK_EAGER_KUBERNETES"
SERVE = "__warm-serve"  # the hidden command that runs the server
IDLE_SECONDS = 600.0
# Variables Python or an imported module read once, at start or import: a server started with
# other values would answer differently, so they are part of its identity.
IMPORT_TIME_ENV = ("LANG", "LC_ALL", "LC_CTYPE", "TYPER_USE_RICH")
# The values KUBECTL_SPARK_WARM takes; anything else is refused (a typo must not mean "on").
SETTINGS = ("on", "off")
# Set, any of these makes a command run differently from the server (the dynamic loader reads
# them when a process starts; the server started long before): such a command runs cold.
LOADER_ENV_PREFIX = "LD_"
# Python variables a worker reproduces or that change nothing it prints; any other PYTHON*
# variable (PYTHONPATH relative to a cwd the server does not share, PYTHONWARNINGS, ...) runs cold.
REPRODUCED_PYTHON_ENV = frozenset(
    {"PYTHONUNBUFFERED", "PYTHONIOENCODING", "PYTHONDONTWRITEBYTECODE", "PYTHONUTF8"}
)
# The namespaces a process's view of the world comes from: a client in another one (``unshare
# -n``) would be answered from the server's network, mounts, pids or users.
NAMESPACES = ("net", "mnt", "pid", "user")
# What the server's process is called in ``ps`` (setproctitle) and ``warm status``.
TITLE = "kubectl-spark warm server"
