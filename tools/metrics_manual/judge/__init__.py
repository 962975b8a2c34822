"""Judge: a run against a profile (the rules and the typed verdict) and the verdict's reports (text, JSON, JUnit, GitHub, HTML)."""
