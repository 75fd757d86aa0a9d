"""TUI widgets, one per file."""
