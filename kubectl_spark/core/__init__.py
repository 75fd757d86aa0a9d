"""The pure core: plain dicts from the API in, frozen dataclasses out, no I/O.

Nothing here imports kubernetes, textual, typer or rich (import-linter enforces it).
"""
