"""Derive: ranges from runs (statistics of the same kinds, rounded outward) and their edit into a profile, layout kept."""
