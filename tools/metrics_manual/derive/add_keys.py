"""`derive --add-keys TEAM`: the keys the runs log and no catalog documents, added to the team's catalog
(ranges/catalogs/TEAM.yaml) with a placeholder meaning, so that derive ranges them as any other key.

A key is added when every run logs it, it is a key a catalog can hold, Miles does not log it (a key
ranges/coverage.yaml lists as Miles' is Miles' catalog's to document), and its namespace has a step
key, or its records all carry one (which is added under the team's step_keys). Each key it does not
add comes back with why; `validate` warns of each placeholder until a person writes the meaning.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from metrics_manual.derive.not_ranged import carried_step_key, lacking, logged_keys
from metrics_manual.derive.profile_edit import NEW_FILE_INDENT
from metrics_manual.diagnostics.finding import UsageError
from metrics_manual.disk.files import read_text
from metrics_manual.model.keys import KeySet
from metrics_manual.model.schema import METRIC_KEY_PATTERN, PLACEHOLDER_MEANING
from metrics_manual.runs.run import Run
from metrics_manual.source.load import TEAMS, Manual, Team
from metrics_manual.source.yaml_edit import YamlEdit, append, text_scalar

NEW_TEAM = """\
team: the MoE team
code: {repository: OWNER/NAME, url: https://github.com/OWNER/NAME, branch: BRANCH, commit: COMMIT}
"""


@dataclass
class CatalogEdit:
    """The team catalog as --add-keys edits it."""

    file: Path
    display: str  # ranges/catalogs/TEAM.yaml
    old_text: str
    new_text: str
    keys: list[str] = field(default_factory=list)  # the keys added
    step_keys: dict[str, str] = field(default_factory=dict)  # the namespaces added -> their step key


def team_of(manual: Manual, team_id: str) -> Team:
    """The team catalog --add-keys names; a UsageError that shows how to make it when there is none."""
    for team in manual.teams:
        if team.id == team_id:
            return team
    raise UsageError(
        f"--add-keys {team_id}: no team catalog {TEAMS}/{team_id}.yaml; make it first, saying whose keys they "
        f"are and the fork that logs them (docs/deriving.md, 'Your team's own keys'):\n\n{NEW_TEAM}"
    )


def add_keys(
    root: Path, manual: Manual, runs: Mapping[str, Run], team_id: str, asked: Collection[str] = ()
) -> tuple[CatalogEdit, dict[str, str]]:
    """The team's catalog with the keys the runs log and no catalog has; and each such key not added -> why."""
    team = team_of(manual, team_id)
    documented = KeySet(manual.documented())
    miles_logs = KeySet(e.key for e in (manual.coverage.undocumented if manual.coverage else []))
    step_keys = manual.catalog.step_keys
    why_not: dict[str, str] = {}
    carried: dict[str, dict[str, str | None]] = {}  # a namespace with no step key -> its keys -> what they carry
    added: list[str] = []
    for key in sorted(logged_keys(runs) - set(step_keys.values())):
        if documented.match(key) is not None or miles_logs.match(key) is not None:
            continue  # documented, or Miles' to document: not_ranged says so
        if asked and key not in asked:
            why_not[key] = "not named by --metric"
        elif not re.match(METRIC_KEY_PATTERN, key) or key.endswith("/*"):
            why_not[key] = "not a key a catalog can hold (a namespace, then segments of letters, digits, _ @ . -)"
        elif missing := lacking(key, runs):
            why_not[key] = f"--add-keys adds a key every run logs, and {', '.join(missing)} lack(s) it"
        elif (ns := key.split("/", 1)[0]) not in step_keys:
            carried.setdefault(ns, {})[key] = carried_step_key(key, runs)
        else:
            added.append(key)
    new_step_keys: dict[str, str] = {}
    for ns, keys in carried.items():
        found = set(keys.values())
        if len(found) == 1 and None not in found:
            new_step_keys[ns] = found.pop() or ""
            added += keys
            continue
        why = f"its records carry {' or '.join(sorted(str(f) for f in found if f))}" if found - {None} else ""
        for key in keys:
            why_not[key] = (
                f"its namespace {ns} has no step key and its records carry no one step key{f' ({why})' if why else ''}:"
                f" add `{ns}: STEP_KEY` under step_keys in {team.path}, then derive again"
            )
    file = root / team.path
    old = read_text(file) or ""
    taken = {s.id for s in manual.catalog.sections}
    new = _edited(old, team, sorted(added), new_step_keys, taken) if added else old
    return CatalogEdit(file, team.path, old, new, sorted(added), new_step_keys), why_not


def _edited(text: str, team: Team, keys: list[str], step_keys: dict[str, str], taken: set[str]) -> str:
    """The team catalog's text with `keys` appended to its last section (a new one when it has none), and
    the namespaces of `step_keys` under its step_keys."""
    editor = YamlEdit(text, team.path, prefer=NEW_FILE_INDENT)
    data = editor.data
    if step_keys and (data.get("step_keys") is None):
        data.pop("step_keys", None)
        append(data, "step_keys", CommentedMap())
    for ns, sk in step_keys.items():
        append(data["step_keys"], ns, sk)
    if not data.get("sections"):
        data.pop("sections", None)
        section = CommentedMap(
            id=team.id if team.id not in taken else f"{team.id}-keys",
            title=text_scalar(f"Keys of {team.catalog.team}"),
            metrics=CommentedSeq(),
        )
        append(data, "sections", CommentedSeq([section]))
    metrics = data["sections"][-1]["metrics"]
    for key in keys:
        append(metrics, len(metrics), CommentedMap(key=text_scalar(key), meaning=text_scalar(PLACEHOLDER_MEANING)))
    return editor.text()
