"""Serving the manual: the MkDocs plugin and its watch of docs/ (above build, which they run)."""
