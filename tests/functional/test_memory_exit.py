"""A process that holds its answer until exit ends without freeing it (kubectl_spark.memory)."""

from __future__ import annotations


def test_a_held_object_is_not_freed_when_the_process_ends_without_freeing() -> None:
    """Output flushed, atexit's functions run, the exit code kept; the held object never freed."""
    import subprocess
    import sys

    script = (
        "import atexit, sys\n"
        "from kubectl_spark import memory\n"
        "class Big:\n"
        "    def __del__(self):\n"
        "        sys.stdout.write('freed\\n')\n"
        "atexit.register(lambda: sys.stdout.write('atexit ran\\n'))\n"
        "memory.hold_until_exit(Big())\n"
        "assert memory.holding()\n"
        "sys.stdout.write('answer\\n')\n"  # buffered: the end must flush it
        "memory.end_without_freeing(3)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 3, done.stderr
    assert done.stdout.splitlines() == ["answer", "atexit ran"]
