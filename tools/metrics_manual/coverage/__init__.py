"""Coverage: the catalog held against the keys a Miles checkout logs (a static scan with ast, never an import)."""
