"""A team's first step: a new profile file made from its runs, with nothing of any other profile.

`derive --profile NEW_ID --title TEXT ...` starts from this file when no profile has that id:
its setup is what the runs tell (the steps they reached) and what the options say (the rest of
the setup, which no run form Miles writes carries); its sources are the runs' captures, which
derive adds as it does to any profile; its ranges are derive's proposals.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from metrics_manual.derive.profile_edit import new_file_text
from metrics_manual.diagnostics.finding import UsageError
from metrics_manual.disk.files import symlink_on_the_way
from metrics_manual.model.phrase import words
from metrics_manual.model.schema import SLUG_PATTERN
from metrics_manual.runs.run import Run
from metrics_manual.source.load import PROFILES

LONGEST_ID = 64  # an id names files and pages: a path component, never a path
SCHEMA_COMMENT = "yaml-language-server: $schema=../../docs/schema/profile.schema.json"
_HARDWARE = re.compile(r"^([1-9][0-9]{0,5})\s*[x×]\s*(\S.*)$")

# The options that give a new profile's setup, by the setup field each fills.
SETUP_OPTIONS = {
    "model": "--model",
    "dataset": "--dataset",
    "hardware": "--hardware",
    "prompts_per_step": "--prompts-per-step",
    "answers_per_prompt": "--answers-per-prompt",
    "token_limit": "--token-limit",
}


@dataclass(frozen=True)
class NewProfile:
    """What the options say of a profile that does not exist yet."""

    id: str
    title: str
    setup: dict[str, Any]  # the setup fields the options gave (framework included)

    def missing(self) -> list[str]:
        """The options of setup fields not given: the runs do not carry them, and a range holds only for its setup."""
        return [option for name, option in SETUP_OPTIONS.items() if self.setup.get(name) is None]


def parse_hardware(text: str) -> dict[str, Any]:
    """`8xH100` (or `8 x H100`) -> {count: 8, name: H100}."""
    m = _HARDWARE.match(text.strip())
    if not m:
        raise UsageError(f"--hardware {text!r}: expected COUNTxNAME, e.g. 8xH100")
    return {"count": int(m.group(1)), "name": m.group(2).strip()}


def new_file(root: Path, profile_id: str) -> Path:
    """Where a new profile `profile_id` is written: ranges/profiles/<id>.yaml, a real file that does not exist.

    The id is untrusted input (it names a file): a slug of at most LONGEST_ID characters, so never a
    path out of ranges/profiles/; no symlink on the way, and nothing already there (not even a dangling link).
    """
    if len(profile_id) > LONGEST_ID or not re.fullmatch(SLUG_PATTERN, profile_id):
        raise UsageError(
            f"--profile {profile_id!r}: a new profile's id names its file and pages: lower-case letters, digits "
            f"and dashes (such as my-setup), at most {LONGEST_ID} characters"
        )
    target = root / PROFILES / f"{profile_id}.yaml"
    link = symlink_on_the_way(root, target)
    if link is not None:
        raise UsageError(
            f"--profile {profile_id}: {link.relative_to(root).as_posix()} is a symlink; a new profile is written only to a real folder"
        )
    for taken in (target, target.with_suffix(".yml")):
        if os.path.lexists(taken):
            raise UsageError(
                f"--profile {profile_id}: {taken.relative_to(root).as_posix()} exists and holds no profile of that id; "
                "pick another id, or fix that file's id"
            )
    return target


def run_steps(run: Run) -> int:
    """How many steps a run reached: the most of any of its step keys (else of any metric's)."""
    counts = [len(run.reached(sk)) for sk in set(run.step_keys.values())]
    return max(counts or [len(series) for series in run.series.values()], default=0)


def setup_steps(runs: dict[str, Run]) -> tuple[int, str | None]:
    """The setup's steps: the most any run reached; with a note when the runs differ."""
    reached = {name: run_steps(run) for name, run in runs.items()}
    most = max(reached.values(), default=0)
    if most < 1:
        raise UsageError("the runs reached no step: a profile's setup needs the steps of its runs")
    if len(set(reached.values())) > 1:
        each = ", ".join(f"{name} {n}" for name, n in reached.items())
        return most, f"the runs reached different numbers of steps ({each}): the setup says {most}"
    return most, None


def profile_text(new: NewProfile, steps: int, sources: dict[str, dict[str, Any]]) -> str:
    """The new profile file before derive adds its ranges: every word from the options and the runs."""
    names = list(sources)
    count = words(len(names))
    return new_file_text(
        SCHEMA_COMMENT,
        {
            "id": new.id,
            "title": new.title,
            "summary": f"Ranges derived by metrics-manual derive from {count} run{'s' if len(names) != 1 else ''} "
            f"of this setup ({', '.join(names)}).",
            "advice": "Derive ranges for a setup of your own from two or three runs of it.",
            "setup": {**new.setup, "steps": steps},
            "sources": sources,
        },
    )
