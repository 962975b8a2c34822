"""The metrics manual: one YAML source of metric definitions and ranges, rendered, exported and judged."""

__version__ = "0.1.0"
