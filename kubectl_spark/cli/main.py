"""Entry point: builds the command tree and renders every error in one place."""

from __future__ import annotations

import os
import sys

from kubectl_spark.errors import KubectlSparkError, UsageError
from kubectl_spark.warm import SERVE


def prog_name(argv0: str | None = None) -> str:
    """Krew's convention: print usage as ``kubectl spark`` when run as a kubectl plugin."""
    base = os.path.basename(argv0 or sys.argv[0])
    return "kubectl spark" if base.startswith(("kubectl-", "kubectl_")) else base


def main(argv: list[str] | None = None) -> int:
    if argv is not None:
        return run(list(argv))
    # A process of its own (the console script): a warm server may answer (kubectl_spark.warm).
    from kubectl_spark.warm import client as warm

    args = sys.argv[1:]
    try:
        code = warm.forward(args)
    except KeyboardInterrupt:  # before the worker's pid came back: nothing to forward it to
        return 130
    except KubectlSparkError as exc:  # KUBECTL_SPARK_WARM=bogus
        render_error(exc)
        return exc.exit_code
    if code is None:
        code = run(args)
        warm.start_if_wanted()
        from kubectl_spark import memory

        if memory.holding() and warm.eligible(args):
            memory.end_without_freeing(code)  # as a warm worker ends: the view not freed
    return code


def run(args: list[str], served_for: int | None = None) -> int:
    """The command line in this process: what a cold start and a warm worker both run.

    ``served_for``: the client process a warm worker answers for (its -v trace says so).
    """
    if args[:1] == ["__complete"]:
        # the shell-completion protocol: kept off the normal path, never an error
        from kubectl_spark.cli.complete import run as complete

        return complete(args[1:])
    if args == ["version"]:
        # What people run to check an install: answered before typer is even imported.
        from kubectl_spark import __version__

        sys.stdout.write(f"kubectl spark v{__version__}\n")
        return 0
    if args == ["--help"] and _print_top_help():
        return 0
    if args == [SERVE]:
        from kubectl_spark.warm.server import serve

        return serve(run)
    from kubectl_spark.cli import globals as cli_globals
    from kubectl_spark.cli.app import NAMES, build_app
    from kubectl_spark.warm import EAGER

    try:
        options, rest = cli_globals.split(args)
        if served_for is not None:
            import dataclasses  # not at the top: a warm client imports next to nothing

            options = dataclasses.replace(options, served_for=served_for)
        cli_globals.use(options)
        # Only the command asked for is built (its module alone imported); anything else (a
        # typo, the top-level help) gets the whole tree and its own message.
        eager = bool(os.environ.get(EAGER))  # the fast paths off: tests compare the output
        app = build_app(rest[0] if rest and rest[0] in NAMES and not eager else None)
        returned = app(args=rest, prog_name=prog_name(), standalone_mode=False)
        if isinstance(returned, int):
            # typer turns Ctrl-C into Exit(130) and, outside standalone mode, returns its
            # code instead of raising it: dropped, Ctrl-C ended a command with 0.
            return returned
    except KubectlSparkError as exc:
        render_error(exc)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader went away (| head): quietly, as kubectl does
        sys.stderr.close()
        return 0
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else 1
    except Exception as exc:  # noqa: BLE001 - click's usage errors and anything unforeseen
        return render_unexpected(exc)
    return 0


def _print_top_help() -> bool:
    """Print the top-level help written ahead, when typer would print exactly that text.

    Typer (click) wraps help at the terminal's width, capped at 80 columns, so the text is the
    same on any terminal of 80 columns or more, or none; the usage line names the program as
    ``kubectl spark``, which is how a kubectl plugin runs.
    """
    import shutil

    from kubectl_spark.cli.command_flags import TOP_HELP

    if not TOP_HELP or prog_name() != "kubectl spark" or shutil.get_terminal_size().columns < 80:
        return False
    sys.stdout.write(TOP_HELP)
    return True


def render_error(exc: KubectlSparkError) -> None:
    from kubectl_spark.app.text import escape

    sys.stderr.write(f"error: {escape(exc.message)}\n")
    if exc.hint:
        sys.stderr.write(f"hint: {escape(exc.hint)}\n")


CLICK_USAGE = 2  # click.exceptions.UsageError.exit_code


def render_unexpected(exc: Exception) -> int:
    from kubectl_spark.app.text import escape

    usage = getattr(exc, "format_message", None)
    code = getattr(exc, "exit_code", None)
    if usage is not None and isinstance(code, int):
        # click/typer usage errors: one line, like kubectl's "error: unknown flag", and exit 1
        # as every other bad input does (kubectl's code for them all; click's would be 2).
        sys.stderr.write(f"error: {escape(usage())}\n")
        return UsageError.exit_code if code == CLICK_USAGE else code
    sys.stderr.write(f"error: unexpected {type(exc).__name__}: {escape(str(exc))}\n")
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
