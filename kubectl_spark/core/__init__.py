"""The pure core: plain dicts from the API in, dataclass values out (never changed once returned), no I/O.

Nothing here imports kubernetes, textual, typer or rich (import-linter enforces it).
"""
