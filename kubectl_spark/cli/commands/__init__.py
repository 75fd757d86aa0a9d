"""One module per command: parse → gateway → core → render."""
