"""Stage 2, the model: the typed catalog and profiles, the range kinds, and their phrasing in words."""
