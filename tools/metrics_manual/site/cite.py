"""Copy and cite: beside each range on the built site, a link to edit its YAML line and the date it last changed.

Added by the MkDocs plugin when the site is built, never written into docs/: the date comes
from `git blame` and the link from mkdocs.yml, and neither exists in a fresh clone's check or
in a test's copy without git. `metrics-manual check` compares the generated Markdown, which
stays the same wherever it runs; only the HTML carries these.
"""

from __future__ import annotations

import datetime
import html
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from metrics_manual import gitrun
from metrics_manual.source.reader import read_yaml

# The range spans of the metrics page (templates/pages/reference/metrics.md.j2), as Markdown leaves them.
# Each range's line: the range, its profile, its source tags, up to the end of the list item.
_RANGE = re.compile(
    r'(<span class="mm-range[^"]*" data-profile="(?P<profile>[a-z0-9-]+)" data-key="(?P<key>[^"]*)" '
    r'data-index="(?P<index>\d+)">[^\n]*?)(?=</li>)'
)
_UNCOMMITTED = "0" * 40


def expectation_lines(text: str, display: str) -> dict[tuple[str, int], tuple[int, int]]:
    """(metric key, index) -> the first and last line of that expectation in a profile's YAML."""
    doc, findings = read_yaml(text, display)
    if findings or not isinstance(doc.data, dict):
        return {}
    out: dict[tuple[str, int], tuple[int, int]] = {}
    for loc, (line, _) in [*doc.values.items(), *doc.keys.items()]:
        if len(loc) >= 3 and loc[0] == "expectations" and isinstance(loc[1], str) and isinstance(loc[2], int):
            first, last = out.get((loc[1], loc[2]), (line, line))
            out[loc[1], loc[2]] = (min(first, line), max(last, line))
    return out


def blame_dates(root: Path, rel: str) -> dict[int, datetime.date]:
    """Line -> the date of the commit that last changed it ({} without git, outside a repository,
    or for lines not committed yet)."""
    if shutil.which("git") is None:
        return {}
    try:
        done = subprocess.run(
            gitrun.command("-C", str(root), "blame", "--porcelain", "--", rel),
            env=gitrun.environment(),
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return {}
    if done.returncode != 0:
        return {}
    times: dict[str, int] = {}
    lines: dict[int, str] = {}
    sha = ""
    for row in done.stdout.splitlines():
        head = row.split(" ")
        if len(head) >= 3 and len(head[0]) == 40 and all(c in "0123456789abcdef" for c in head[0]):
            sha = head[0]
            lines[int(head[2])] = sha
        elif row.startswith("committer-time "):
            times[sha] = int(row.split(" ", 1)[1])
    utc = datetime.UTC
    return {
        n: datetime.datetime.fromtimestamp(times[s], utc).date()
        for n, s in lines.items()
        if s != _UNCOMMITTED and s in times
    }


def edit_base(repo_url: str | None, edit_uri: str | None, docs_dir: str) -> str | None:
    """The URL a repository path is appended to for editing, from mkdocs.yml's `repo_url` and `edit_uri`
    (which points into the docs folder: the ranges live beside it); None when either is unset."""
    if not repo_url or not edit_uri:
        return None
    if edit_uri.startswith(("http://", "https://")):
        base = edit_uri
    else:
        base = repo_url.rstrip("/") + "/" + edit_uri.lstrip("/")
    base = base.rstrip("/")
    docs = Path(docs_dir).name
    return base.removesuffix("/" + docs) + "/"


class Citations:
    """The edit links and dates of one build, each profile's file read and blamed once."""

    def __init__(self, root: Path, edit: str | None) -> None:
        self.root = root
        self.edit = edit
        self._lines: dict[str, dict[tuple[str, int], tuple[int, int]]] = {}
        self._dates: dict[str, dict[int, datetime.date]] = {}

    def _file(self, profile: str) -> str:
        return f"ranges/profiles/{profile}.yaml"

    def lines(self, profile: str) -> dict[tuple[str, int], tuple[int, int]]:
        if profile not in self._lines:
            path = self.root / self._file(profile)
            try:
                text = path.read_text("utf-8")
            except (OSError, UnicodeDecodeError):
                text = ""
            self._lines[profile] = expectation_lines(text, self._file(profile)) if text else {}
        return self._lines[profile]

    def dates(self, profile: str) -> dict[int, datetime.date]:
        if profile not in self._dates:
            self._dates[profile] = blame_dates(self.root, self._file(profile))
        return self._dates[profile]

    def cite(self, html_text: str) -> str:
        """`html_text` with an edit link and a last-changed date after each range span it can place."""
        return _RANGE.sub(self._one, html_text)

    def _one(self, m: re.Match[str]) -> str:
        profile, key, index = m.group("profile"), html.unescape(m.group("key")), int(m.group("index"))
        where = self.lines(profile).get((key, index))
        if where is None:
            return m.group(1)
        first, last = where
        extra = ""
        if self.edit:
            url = f"{self.edit}{self._file(profile)}#L{first}"
            extra += f' <a class="mm-edit" href="{html.escape(url, quote=True)}">edit this range</a>'
        dates = [d for n, d in self.dates(profile).items() if first <= n <= last]
        if dates:
            day = max(dates).isoformat()
            extra += f' <span class="mm-changed">changed <time datetime="{day}">{day}</time></span>'
        return m.group(1) + extra


def for_build(root: Path, repo_url: str | None, edit_uri: str | None, docs_dir: str) -> Callable[[str], str]:
    """What the plugin applies to each page's HTML in one build."""
    return Citations(root, edit_base(repo_url, edit_uri, docs_dir)).cite
