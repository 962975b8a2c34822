"""Runs: one streaming reader per form a Miles run writes, detection, the series they fill, and captures."""
