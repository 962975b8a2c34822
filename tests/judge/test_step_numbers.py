"""Steps are integers: every output names them with every digit, never in a float's scientific form."""

from __future__ import annotations

from pathlib import Path

import run_forms
from conftest import run_cli
from judge_fixture import CATALOG, PROFILE, clean_run, judged_project
from metrics_manual.model.phrase import num


def test_an_integer_keeps_every_digit() -> None:
    assert num(2**62) == "4,611,686,018,427,387,904"
    assert num(10**20) == "100,000,000,000,000,000,000"
    assert num(2.5e20) == "2.5e+20"  # a float far from 1 still reads in scientific form


def test_the_headline_names_a_far_step_with_every_digit(tmp_path: Path) -> None:
    project = judged_project(tmp_path / "p", CATALOG, PROFILE)
    (f,) = run_forms.write_dashboard(clean_run(), tmp_path / "d")
    with f.open("a", encoding="utf-8") as fh:
        fh.write(
            '{"ts": 1.0, "step_key": "train/step", "step": 4611686018427387904, "metrics": {"train/step": 4611686018427387904}}\n'
        )
    ran = run_cli("judge", "--profile", "judged", str(tmp_path / "d"), cwd=project)
    head = ran.stdout.splitlines()[0]
    assert "train/step 0-4,611,686,018,427,387,904 (11 steps)" in head, head
    assert "e+18" not in ran.stdout
