"""TUI screens: text views (logs, describe, YAML), the action plan dialog, help."""
