"""Stage 3a, the site: pages rendered from the model (templates, drawings, field reference) and the MkDocs plugin."""
