"""The method derive draws a band with unless told otherwise: measured by tools/derive_methods.py (the
figures in docs/deriving.md). A module of its own so that derive's --help, which shows it, loads no model."""

DEFAULT_METHOD = "margin:0.25"
