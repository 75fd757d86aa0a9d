"""The Textual terminal UI, installed as ``kubectl_spark.tui`` (never as a top-level ``tui``).

It lands with the TUI issue; until then this package only reserves its place in the layout.
"""
