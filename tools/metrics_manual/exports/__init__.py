"""Stage 3b, the exports: a profile as JSON, YAML, CSV and Prometheus alerting rules, and the JSON Schemas."""
