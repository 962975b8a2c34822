"""The audit's fields on the pages (issue 28): evidence lines and their links, 'not verified', 'not logged at
this commit', the lab's page against the code, and the audit's state on the coverage page."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import TINY_CATALOG, TINY_PROFILE, write_project
from metrics_manual.site.render import render_pages
from metrics_manual.source.load import load_manual

GRAD_NORM = "      - key: train/grad_norm\n        meaning: the gradient norm\n"
CLIPFRAC = "      - key: train/pg_clipfrac\n        meaning: the share of clipped tokens\n"
WEIGHTS = "        meaning: how large the weights are\n"

AUDITED = """\
        lab_vs_code:
          - lab: the gradient norm
            code: the norm of the whole model's gradient before clipping, summed over every parallel rank
        origin:
          path: miles/train.py
          symbol: Trainer.step
          line: 7
          evidence: 'grad_norm = optimizer.step()  # `x` <b>|</b>'
          computed: the optimizer's norm
          logged: every train step
          named_at:
            path: miles/log.py
            symbol: log_step
            line: 12
            evidence: 'log_dict["train/grad_norm"] = grad_norm'
"""
UNVERIFIED = """\
        origin:
          path: miles/loss.py
          symbol: policy_loss
          computed: tokens where the clipped term wins
          logged: every train step
"""
NOT_LOGGED = """\
        not_logged: the weights are measured in a process that never flushes its timers
        origin:
          path: miles/critic.py
          symbol: Critic.train
          line: 3
          evidence: 'with timer("weights"):'
          computed: the norm of the weights
          logged: never at this commit
"""
COMMIT = "31f1ca96"


def _catalog(url: bool = True) -> str:
    text = TINY_CATALOG.replace(GRAD_NORM, GRAD_NORM + AUDITED).replace(CLIPFRAC, CLIPFRAC + UNVERIFIED)
    text = text.replace(WEIGHTS, WEIGHTS + NOT_LOGGED)
    return text if url else text.replace(" url: https://example.org/miles,", "")


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = write_project(tmp_path_factory.mktemp("audit") / "p", _catalog(), {"tiny": TINY_PROFILE})
    return render_pages(load_manual(root), root)


def entry(pages: dict[str, str], anchor: str) -> str:
    """One metric's entry on its section page: from its heading to the next."""
    page = pages["docs/reference/metrics/training.md"]
    start = page.index("{#" + anchor + " ")
    end = page.find("\n### ", start)
    return page[start : end if end > 0 else len(page)]


def test_the_evidence_line_shows_as_code_with_a_link_to_its_line(pages: dict[str, str]) -> None:
    text = entry(pages, "m-train-grad_norm")
    blob = f"https://example.org/miles/blob/{COMMIT}"
    assert f'<a class="mm-path" href="{blob}/miles/train.py#L7">' in text
    assert (
        f'<span class="mm-evidence">at <a href="{blob}/miles/train.py#L7">line 7</a>: '
        "``grad_norm = optimizer.step() # `x` <b>|</b>``</span>" in text
    )
    assert (
        f'<span class="mm-evidence">at <a href="{blob}/miles/log.py#L12">line 12</a>: '
        '`log_dict["train/grad_norm"] = grad_norm`</span>' in text
    )
    assert "not verified" not in text


def test_a_place_without_evidence_says_it_is_not_verified(pages: dict[str, str]) -> None:
    text = entry(pages, "m-train-pg_clipfrac")
    assert (
        f'Emitted by <a class="mm-path" href="https://example.org/miles/blob/{COMMIT}/miles/loss.py">'
        'miles/<wbr>loss.py</a> (`policy_loss`) <span class="mm-unverified">(not verified against the code)</span>:'
        in text
    )
    assert "mm-evidence" not in text


def test_without_the_repository_url_the_line_shows_without_a_link(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", _catalog(url=False), {"tiny": TINY_PROFILE})
    text = render_pages(load_manual(root), root)["docs/reference/metrics/training.md"]
    assert '<span class="mm-evidence">at line 7: ``grad_norm' in text
    assert "href=" not in text.split("{#m-train-grad_norm ")[1].split("\n### ")[0].split("mm-history")[0]


def test_the_lab_and_the_code_show_side_by_side_before_the_ranges(pages: dict[str, str]) -> None:
    text = entry(pages, "m-train-grad_norm")
    block = (
        '- <span class="mm-lab-vs-code"><span class="mm-lab"><strong>The lab\'s page says</strong> “the gradient '
        'norm”.</span> <span class="mm-code-does"><strong>The code at `31f1ca96` does:</strong> the norm of the '
        "whole model's gradient before clipping, summed over every parallel rank.</span></span>"
    )
    assert block in text
    assert text.index(block) < text.index('class="mm-range') < text.index("mm-origin")


def test_a_key_not_logged_says_so_and_is_never_called_logged(pages: dict[str, str]) -> None:
    text = entry(pages, "m-train-weight")
    assert (
        '- <span class="mm-not-logged"><strong>Not logged at this commit</strong> (Miles `31f1ca96`): the weights '
        "are measured in a process that never flushes its timers.</span>"
    ) in text
    assert "Emitted by" not in text and "logged never" not in text and "no range" not in text
    assert "Computed in " in text
    # The section's table of ranges says it too, in place of 'no range'.
    table = pages["docs/reference/metrics/training.md"].split("m-train-weight", 1)[1].split("</tr>", 1)[0]
    assert '<span class="mm-cell mm-none">not logged</span>' in table and "no range" not in table


def test_the_coverage_page_shows_the_audits_state(pages: dict[str, str]) -> None:
    page = pages["docs/reference/coverage.md"]
    assert (
        "3 of the 4 places in the code that the catalog names (each entry's origin, where its key's name is "
        "built, and where it logs an idle value) carry an evidence line" in page
    )
    # grad_norm and the weights carry evidence everywhere: pg_clipfrac alone is not verified.
    assert (
        "1 of the 3 entries with an origin are **not verified against the code** (a place without evidence): "
        "[`train/pg_clipfrac`](metrics/training.md#m-train-pg_clipfrac)." in page
    )
    assert (
        "2 entries name no place in the code: [`rollout/raw_reward`](metrics/rollout.md#m-rollout-raw_reward), "
        "[`rollout/response_lengths`](metrics/rollout.md#m-rollout-response_lengths)." in page
    )
    assert (
        "- [`train/grad_norm`](metrics/training.md#m-train-grad_norm): the lab's page says “the gradient norm”; "
        "the code at `31f1ca96` does: the norm of the whole model's gradient before clipping, summed over every "
        "parallel rank." in page
    )
    assert (
        "- [`train/weight/*`](metrics/training.md#m-train-weight): the weights are measured in a process that never "
        "flushes its timers" in page
    )


def test_the_coverage_page_of_an_unaudited_catalog(tiny: Path) -> None:
    page = render_pages(load_manual(tiny), tiny)["docs/reference/coverage.md"]
    assert "The catalog names no place in the code yet." in page and "places in the code" not in page
    assert "5 entries name no place in the code" in page
    assert "## Where the lab's page and the code disagree {#s-cov-lab-vs-code}\n\nNone recorded." in page
    assert "## Keys not logged at this commit {#s-cov-not-logged}" in page and page.rstrip().endswith("None.")
