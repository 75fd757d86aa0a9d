"""The command line: ``kubectl-spark`` (``kubectl spark`` once it is on PATH)."""
