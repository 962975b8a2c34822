"""The name of a published version of the manual: the Miles commit its catalog documents.

`python -m metrics_manual.site.release` prints it (the Makefile's `publish` names the mike version with it).
"""

from __future__ import annotations

import sys
from pathlib import Path

from metrics_manual.diagnostics.finding import ManualError
from metrics_manual.source.load import load_manual
from metrics_manual.source.root import find_root

PUBLISH_CONFIG = "mkdocs.publish.yml"  # mkdocs.yml plus Material's version selector (mike)


def release_name(root: Path) -> str:
    """'miles-31f1ca96': the first 8 digits of the catalog's code commit (a commit id is [0-9a-f], safe in a URL)."""
    return f"miles-{load_manual(root).catalog.code.commit[:8]}"


def main() -> None:
    try:
        print(release_name(find_root(None)))
    except ManualError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
