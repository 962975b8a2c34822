"""The lab's words in `lab_vs_code` are a record of what the lab's page wrote: held to that page (a frozen
fixture, tests/fixtures/lab/), never to today's ranges, so a maintainer's range edit is one edit, and one
bad range is one finding, where it is."""

from __future__ import annotations

from pathlib import Path

from conftest import PROJECT, REAL_TREE, REPO, TINY_CATALOG, TINY_PROFILE, run_cli, write_project
from metrics_manual.model.schema import Catalog
from metrics_manual.source.load import load_manual

LAB_PAGE = REPO / "tests" / "fixtures" / "lab" / "lab-metrics-page.md"

# train/pg_clipfrac quotes the lab's page; train/grad_norm's quote is also what today's profile says.
QUOTED = TINY_CATALOG.replace(
    "        meaning: the share of clipped tokens\n",
    "        meaning: the share of clipped tokens\n"
    "        lab_vs_code:\n"
    "          - lab: 0 at every step\n"
    "            code: tokens clip at the later optimizer steps of a rollout\n",
).replace(
    "        meaning: the gradient norm\n",
    "        meaning: the gradient norm\n"
    "        lab_vs_code:\n"
    "          - lab: 0.25 to 4.5 per step\n"
    "            code: a norm before clipping\n",
)
EXACT = "  train/pg_clipfrac:\n    - {kind: exact, value: 0, at: every_step}\n"


def squeezed(text: str) -> str:
    return " ".join(text.split())


def not_on_the_page(catalog: Catalog, page: str) -> list[str]:
    """Each lab quote of the catalog that the lab's page does not hold (whitespace aside)."""
    text = squeezed(page)
    return [
        f"{m.key}: {row.lab!r}"
        for s in catalog.sections
        for m in s.metrics
        for row in m.lab_vs_code
        if squeezed(row.lab) not in text
    ]


@REAL_TREE
def test_the_catalogs_lab_words_are_the_lab_pages() -> None:
    assert not_on_the_page(load_manual(PROJECT).miles_catalog, LAB_PAGE.read_text("utf-8")) == []


def test_a_quote_the_lab_page_lacks_is_named(tmp_path: Path) -> None:
    catalog = load_manual(write_project(tmp_path / "p", QUOTED)).catalog
    assert not_on_the_page(catalog, "| `train/pg_clipfrac` | ... | 0 at every step |") == [
        "train/grad_norm: '0.25 to 4.5 per step'"
    ]


def test_a_range_edit_is_one_edit(tmp_path: Path) -> None:
    assert EXACT in TINY_PROFILE
    band = TINY_PROFILE.replace(EXACT, "  train/pg_clipfrac:\n    - {kind: band, min: 0, max: 0.002}\n")
    root = write_project(tmp_path / "p", QUOTED, {"tiny": band})
    ran = run_cli("validate", "--root", str(root))
    assert ran.returncode == 0, ran.stderr
    assert load_manual(root).metrics["train/pg_clipfrac"].lab_vs_code[0].lab == "0 at every step"


def test_one_bad_band_is_one_finding_where_it_is(tmp_path: Path) -> None:
    # The edit above, with the exact value's `at` left behind: the profile's one fault, and nothing in the catalog.
    bad = TINY_PROFILE.replace(EXACT, "  train/pg_clipfrac:\n    - {kind: band, min: 0, max: 0.002, at: every_step}\n")
    ran = run_cli("validate", "--root", str(write_project(tmp_path / "p", QUOTED, {"tiny": bad})))
    assert ran.returncode == 2
    errors = [line for line in ran.stderr.splitlines() if ": error: " in line]
    assert errors == [
        "ranges/profiles/tiny.yaml:33:40: error: unknown field 'at' here; 'at' belongs in a presence expectation or "
        "an exact expectation [MM101]"
    ]
