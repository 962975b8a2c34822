"""The `metrics-manual` command: one module per command, and what they share."""
