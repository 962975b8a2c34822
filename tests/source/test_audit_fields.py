"""The audit's fields of the catalog (issue 28): evidence on origin and named_at, not_logged, lab_vs_code."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import TINY_CATALOG, TINY_PROFILE, write_project
from metrics_manual.diagnostics.finding import SourceError
from metrics_manual.source.load import load_manual

C = "ranges/catalog.yaml"
P = "ranges/profiles/tiny.yaml"

GRAD_NORM = "      - key: train/grad_norm\n        meaning: the gradient norm\n"

ORIGIN = """\
        origin:
          path: miles/train.py
          symbol: Trainer.step
          line: 12
          evidence: 'grad_norm = optimizer.step()'
          computed: the optimizer's norm
          logged: every train step
          named_at:
            path: miles/log.py
            symbol: log_step
            line: 3
            evidence: 'out["train/grad_norm"] = grad_norm'
"""


def _project(tmp_path: Path, extra: str, profile: str = TINY_PROFILE) -> Path:
    """The tiny project with `extra` fields added to train/grad_norm."""
    assert GRAD_NORM in TINY_CATALOG
    return write_project(tmp_path / "p", TINY_CATALOG.replace(GRAD_NORM, GRAD_NORM + extra), {"tiny": profile})


def _findings(root: Path) -> list[str]:
    with pytest.raises(SourceError) as err:
        load_manual(root)
    return [str(f) for f in err.value.findings]


def test_evidence_on_origin_and_named_at_loads(tmp_path: Path) -> None:
    metric = load_manual(_project(tmp_path, ORIGIN)).metrics["train/grad_norm"]
    assert metric.origin is not None and metric.origin.named_at is not None
    assert (metric.origin.line, metric.origin.evidence) == (12, "grad_norm = optimizer.step()")
    assert metric.origin.verified and metric.origin.named_at.verified
    assert (metric.origin.named_at.line, metric.origin.named_at.evidence) == (3, 'out["train/grad_norm"] = grad_norm')


def test_origin_without_evidence_is_not_verified(tmp_path: Path) -> None:
    bare = "".join(line for line in ORIGIN.splitlines(keepends=True) if "line:" not in line and "evidence:" not in line)
    metric = load_manual(_project(tmp_path, bare)).metrics["train/grad_norm"]
    assert metric.origin is not None and metric.origin.named_at is not None
    assert not metric.origin.verified and not metric.origin.named_at.verified


@pytest.mark.parametrize(
    ("drop", "expected"),
    [
        (
            "          evidence: 'grad_norm = optimizer.step()'\n",
            f"{C}:19:11: error: origin: line without evidence: line and evidence go together (the 1-based line number and "
            "that line of the file, verbatim), or neither [MM105]",
        ),
        (
            "          line: 12\n",
            f"{C}:19:11: error: origin: evidence without line: line and evidence go together (the 1-based line number and "
            "that line of the file, verbatim), or neither [MM105]",
        ),
        (
            "            line: 3\n",
            f"{C}:26:13: error: named_at: evidence without line: line and evidence go together (the 1-based line number and "
            "that line of the file, verbatim), or neither [MM105]",
        ),
    ],
    ids=["origin line alone", "origin evidence alone", "named_at evidence alone"],
)
def test_line_and_evidence_go_together(tmp_path: Path, drop: str, expected: str) -> None:
    assert drop in ORIGIN
    assert _findings(_project(tmp_path, ORIGIN.replace(drop, ""))) == [expected]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0", f"{C}:21:17: error: line: Input should be greater than 0 [MM105]"),
        ("'12'", f"{C}:21:17: error: line: expected a number, got the string '12'; remove the quotes [MM104]"),
    ],
)
def test_line_is_a_positive_whole_number(tmp_path: Path, value: str, expected: str) -> None:
    assert _findings(_project(tmp_path, ORIGIN.replace("line: 12", f"line: {value}"))) == [expected]


def test_evidence_is_one_line(tmp_path: Path) -> None:
    bad = ORIGIN.replace("'grad_norm = optimizer.step()'", '"a\\nb"')
    assert _findings(_project(tmp_path, bad)) == [
        f"{C}:22:21: error: evidence: text must be one line without control characters; fold long text with >- [MM105]"
    ]


LAB = """\
        lab_vs_code:
          - lab: {lab}
            code: the norm before clipping, of the whole model
"""


@pytest.mark.parametrize(
    "lab",
    ["the gradient norm", "gradient", "0.25 to 4.5 per step", "1 to 3 per step in the first 2 steps"],
    ids=["the meaning", "a part of the meaning", "a profile's band in words", "a windowed band"],
)
def test_lab_words_found_in_the_meaning_or_a_profile_range(tmp_path: Path, lab: str) -> None:
    metric = load_manual(_project(tmp_path, LAB.format(lab=lab))).metrics["train/grad_norm"]
    assert [(row.lab, row.code) for row in metric.lab_vs_code] == [
        (lab, "the norm before clipping, of the whole model")
    ]


def test_lab_words_found_in_a_members_range(tmp_path: Path) -> None:
    family = "        meaning: how large the weights are\n"
    assert family in TINY_CATALOG
    catalog = TINY_CATALOG.replace(family, family + LAB.format(lab="'0.1 to 0.2 per step'"))
    profile = TINY_PROFILE + "  train/weight/max:\n    - {kind: band, min: 0.1, max: 0.2}\n"
    manual = load_manual(write_project(tmp_path / "p", catalog, {"tiny": profile}))
    assert manual.metrics["train/weight/*"].lab_vs_code[0].lab == "0.1 to 0.2 per step"


def test_lab_words_found_with_other_spacing(tmp_path: Path) -> None:
    folded = "        lab_vs_code:\n          - lab: >-\n              the   gradient\n              norm\n"
    folded += "            code: the norm before clipping\n"
    metric = load_manual(_project(tmp_path, folded)).metrics["train/grad_norm"]
    assert metric.lab_vs_code[0].lab == "the   gradient norm"


def test_lab_vs_code_needs_both_sides(tmp_path: Path) -> None:
    assert _findings(_project(tmp_path, "        lab_vs_code:\n          - lab: the gradient norm\n")) == [
        f"{C}:19:13: error: missing field 'code' [MM102]"
    ]


NOT_LOGGED = "        not_logged: the norm is computed in a process that never logs it\n"


def test_not_logged_without_a_range_loads(tmp_path: Path) -> None:
    profile = TINY_PROFILE.replace(
        "  train/grad_norm:\n    - {kind: band, min: 0.25, max: 4.5}\n    - {kind: band, min: 1, max: 3, window: {first: 2}}\n",
        "",
    )
    assert profile != TINY_PROFILE
    metric = load_manual(_project(tmp_path, NOT_LOGGED, profile)).metrics["train/grad_norm"]
    assert metric.not_logged == "the norm is computed in a process that never logs it"


def test_not_logged_with_a_range_is_a_finding(tmp_path: Path) -> None:
    assert _findings(_project(tmp_path, NOT_LOGGED)) == [
        f"{P}:29:3: error: train/grad_norm is not logged at the catalog's commit ({C}:18:21); a range for it "
        "can never hold: remove it [MM114]"
    ]


def test_not_logged_family_with_a_members_range_is_a_finding(tmp_path: Path) -> None:
    family = "        meaning: how large the weights are\n"
    catalog = TINY_CATALOG.replace(family, family + "        not_logged: no process logs them\n")
    profile = TINY_PROFILE + "  train/weight/max:\n    - {kind: band, min: 0.1, max: 0.2}\n"
    root = write_project(tmp_path / "p", catalog, {"tiny": profile})
    assert _findings(root) == [
        f"{P}:34:3: error: train/weight/max is not logged at the catalog's commit ({C}:24:21); a range for it "
        "can never hold: remove it [MM114]"
    ]
