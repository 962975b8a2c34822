"""`metrics-manual diff`: range changes between revisions of small git repositories the tests create."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import markdown
import pytest

from conftest import REPO, TINY_CATALOG, TINY_PROFILE, run_cli, write_project
from git_helpers import commit, edit, git
from metrics_manual.history.diff import RangeDiff

SCHEMA = json.loads((REPO / "docs/export/diff.schema.json").read_text("utf-8"))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = write_project(tmp_path / "proj")
    git(root, "init", "-q", "-b", "main")
    commit(root, "first ranges")
    return root


def diff(root: Path, *args: str) -> dict:
    out = run_cli("diff", "--root", str(root), *args, "--format", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    jsonschema.validate(data, SCHEMA)
    return data


def _profile(data: dict, pid: str) -> dict:
    return next(p for p in data["profiles"] if p["id"] == pid)


def test_no_change(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD")
    data = diff(repo, base)
    assert RangeDiff.model_validate(data).empty
    out = run_cli("diff", "--root", str(repo), base)
    assert out.returncode == 0 and "No change to the ranges." in out.stdout


def test_updated_band_lists_each_changed_part(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD")
    edit(
        repo,
        "ranges/profiles/tiny.yaml",
        "{kind: band, min: 0.5, max: 0.9, steps: 10, sources: [summary]}",
        "{kind: band, min: 0.5, max: 0.95, steps: 10, condition: with greedy decoding}",
    )
    data = diff(repo, base)  # against the working tree
    assert data["head"] == {"name": "working tree", "commit": None}
    m = _profile(data, "tiny")["metrics"]
    assert [(x["key"], x["change"]) for x in m] == [("rollout/raw_reward", "updated")]
    r = m[0]["ranges"][0]
    assert r["change"] == "updated"
    assert r["before"] == "0.5 to 0.9 per step over 10 steps (source: summary)"
    assert r["after"] == "0.5 to 0.95 per step over 10 steps, with greedy decoding"
    assert {f["field"]: (f["before"], f["after"]) for f in r["fields"]} == {
        "bounds": ("0.5 to 0.9", "0.5 to 0.95"),
        "condition": ("none", "with greedy decoding"),
        "sources": ("summary", "all of the profile's sources"),
    }
    text = run_cli("diff", "--root", str(repo), base).stdout
    assert "bounds: 0.5 to 0.9 -> 0.5 to 0.95" in text


def test_every_change_kind_between_two_commits(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD")
    # catalog: a meaning, a unit and a path change; a rename (same meaning, new key); an added metric
    edit(repo, "ranges/catalog.yaml", "meaning: the gradient norm", "meaning: the global gradient norm")
    edit(
        repo,
        "ranges/catalog.yaml",
        "meaning: the share of clipped tokens",
        "meaning: the share of clipped tokens\n        unit: fraction",
    )
    edit(repo, "ranges/catalog.yaml", "key: rollout/raw_reward", "key: rollout/reward")
    edit(
        repo,
        "ranges/catalog.yaml",
        "        unit: tokens\n",
        "        unit: tokens\n      - key: rollout/new_one\n        meaning: something new\n",
    )
    # profile: the renamed key's range moves with it; a median's tolerance; a range removed, one added
    edit(repo, "ranges/profiles/tiny.yaml", "  rollout/raw_reward:", "  rollout/reward:")
    edit(
        repo,
        "ranges/profiles/tiny.yaml",
        "{kind: median, value: 400, steps: 10, condition: with plain sampling}",
        "{kind: median, value: 400, steps: 10, tolerance: 0.05, condition: with plain sampling}",
    )
    edit(repo, "ranges/profiles/tiny.yaml", "    - {kind: band, min: 1, max: 3, window: {first: 2}}\n", "")
    edit(
        repo,
        "ranges/profiles/tiny.yaml",
        "  train/pg_clipfrac:",
        "  rollout/new_one:\n    - {kind: presence}\n  train/pg_clipfrac:",
    )
    head = commit(repo, "many changes")
    data = diff(repo, base, head)
    assert data["base"]["commit"] == base and data["head"]["commit"] == head
    cat = {m["key"]: m for m in data["metrics"]}
    assert (
        cat["rollout/reward"]["change"] == "renamed" and cat["rollout/reward"]["renamed_from"] == "rollout/raw_reward"
    )
    assert cat["rollout/new_one"]["change"] == "added"
    grad = {f["field"]: (f["before"], f["after"]) for f in cat["train/grad_norm"]["fields"]}
    assert grad == {"meaning": ("the gradient norm", "the global gradient norm")}
    clip = {f["field"]: (f["before"], f["after"]) for f in cat["train/pg_clipfrac"]["fields"]}
    assert clip == {"unit": ("none", "fraction")}
    prof = {m["key"]: m for m in _profile(data, "tiny")["metrics"]}
    # A renamed key whose range is the same is not listed as a range change; its rename is in the catalog.
    assert "rollout/reward" not in prof
    med = prof["rollout/response_lengths"]["ranges"][0]
    assert [(f["field"], f["before"], f["after"]) for f in med["fields"]] == [("tolerance", "none", "5%")]
    grad_ranges = prof["train/grad_norm"]["ranges"]
    assert [r["change"] for r in grad_ranges] == ["removed"]
    assert grad_ranges[0]["before"] == "1 to 3 per step in the first 2 steps"
    assert prof["rollout/new_one"]["change"] == "added"
    assert prof["rollout/new_one"]["ranges"][0]["after"] == "logged in every step"
    # pg_clipfrac's range is the same numbers: its unit change is the catalog's, not a range change.
    assert "train/pg_clipfrac" not in prof


def test_renamed_key_with_a_changed_range(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD")
    edit(repo, "ranges/catalog.yaml", "key: rollout/raw_reward", "key: rollout/reward")
    edit(
        repo,
        "ranges/profiles/tiny.yaml",
        "  rollout/raw_reward:\n    - {kind: band, min: 0.5,",
        "  rollout/reward:\n    - {kind: band, min: 0.4,",
    )
    data = diff(repo, base)
    prof = {m["key"]: m for m in _profile(data, "tiny")["metrics"]}
    assert prof["rollout/reward"]["change"] == "renamed"
    assert prof["rollout/reward"]["renamed_from"] == "rollout/raw_reward"
    assert prof["rollout/reward"]["ranges"][0]["fields"][0] == {
        "field": "bounds",
        "before": "0.5 to 0.9",
        "after": "0.4 to 0.9",
    }


def test_profile_added_renamed_and_removed(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD")
    second = TINY_PROFILE.replace("tiny", "second").replace("title: Tiny runs", "title: Second runs")
    (repo / "ranges/profiles/second.yaml").write_text(second, "utf-8")
    added = commit(repo, "add a profile")
    data = diff(repo, base, added)
    p = _profile(data, "second")
    assert p["change"] == "added" and {m["change"] for m in p["metrics"]} == {"added"}
    # Renamed: a new id, the same title.
    edit(repo, "ranges/profiles/second.yaml", "id: second\n", "id: second-b\n")
    renamed = commit(repo, "rename it")
    data = diff(repo, added, renamed)
    assert [(p["id"], p["change"], p["renamed_from"]) for p in data["profiles"]] == [("second-b", "renamed", "second")]
    (repo / "ranges/profiles/second.yaml").unlink()
    removed = commit(repo, "remove it")
    data = diff(repo, renamed, removed)
    assert [(p["id"], p["change"]) for p in data["profiles"]] == [("second-b", "removed")]
    # Setup and source changes are profile fields, phrased.
    edit(repo, "ranges/profiles/tiny.yaml", "commit: abcdef12", "commit: 1234abcd")
    edit(repo, "ranges/profiles/tiny.yaml", "steps: 10\nsources", "steps: 12\nsources")
    data = diff(repo, removed)
    fields = {f["field"]: (f["before"], f["after"]) for f in _profile(data, "tiny")["fields"]}
    assert "commit abcdef12" in fields["source code"][0] and "commit 1234abcd" in fields["source code"][1]
    assert fields["setup"][0].endswith("10 steps") and fields["setup"][1].endswith("12 steps")


def test_default_base_is_the_merge_base_with_main(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    edit(repo, "ranges/profiles/tiny.yaml", "max: 0.9", "max: 0.8")
    commit(repo, "narrow on the branch")
    git(repo, "checkout", "-q", "main")
    edit(repo, "ranges/catalog.yaml", "meaning: the gradient norm", "meaning: changed on main")
    commit(repo, "main moves on")
    git(repo, "checkout", "-q", "feature")
    data = diff(repo)
    assert data["base"]["name"] == "merge base with main"
    assert data["metrics"] == []  # main's later change is not this branch's
    assert [m["key"] for m in _profile(data, "tiny")["metrics"]] == ["rollout/raw_reward"]


def test_markdown_is_a_comment_with_inert_text(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD")
    edit(
        repo,
        "ranges/catalog.yaml",
        "meaning: the gradient norm",
        "meaning: '<script>x</script> **b** [l](javascript:y)'",
    )
    out = run_cli("diff", "--root", str(repo), base, "--format", "markdown")
    assert out.returncode == 0
    assert out.stdout.startswith("### Range changes:")
    html = markdown.markdown(out.stdout)
    assert "<script" not in html and "<strong>" not in html and "<a " not in html
    assert "train/grad_norm" in html


def test_bad_input_exits_2(repo: Path, tmp_path: Path) -> None:
    out = run_cli("diff", "--root", str(repo), "no-such-rev")
    assert out.returncode == 2 and "unknown revision 'no-such-rev'" in out.stderr
    base = git(repo, "rev-parse", "HEAD")
    edit(repo, "ranges/profiles/tiny.yaml", "max: 0.9", "max: nine")
    broken = commit(repo, "broken")
    out = run_cli("diff", "--root", str(repo), base, broken)
    assert out.returncode == 2
    assert f"{broken[:12]}:ranges/profiles/tiny.yaml:" in out.stderr and "Traceback" not in out.stderr
    plain = write_project(tmp_path / "nogit", TINY_CATALOG)
    out = run_cli("diff", "--root", str(plain), "HEAD")
    assert out.returncode == 2 and "not a git repository" in out.stderr


def _text_diff(root: Path, *args: str):  # type: ignore[no-untyped-def]
    out = run_cli("diff", "--root", str(root), *args)
    assert out.returncode == 0, out.stderr
    return out


def test_on_main_itself_the_base_is_head_and_the_note_names_the_base_meant(repo: Path) -> None:
    """The issue's case: a local main with 4 commits that changed ranges/ compared with itself."""
    (repo / "README.md").write_text("a project\n", "utf-8")
    before = commit(repo, "a readme: ranges/ unchanged")
    for i, new in enumerate(("0.91", "0.92", "0.93", "0.94")):
        edit(repo, "ranges/profiles/tiny.yaml", f"max: {('0.9', '0.91', '0.92', '0.93')[i]}", f"max: {new}")
        commit(repo, f"max {new}")
    out = _text_diff(repo)
    assert out.stdout.startswith("Range changes: merge base with main: HEAD itself (")
    assert "No change to the ranges." in out.stdout  # the working tree is HEAD
    note = out.stderr
    assert note.startswith("note: the base is HEAD itself: main holds every commit of HEAD"), note
    assert f"metrics-manual diff HEAD~4 ({before[:12]}, the last commit before the latest 4 commits in a row" in note
    assert "upstream" not in note  # there is none
    # The base it names shows the four commits' change, and no note: the base was named.
    named = _text_diff(repo, "HEAD~4")
    assert "max 0.9" not in named.stdout and "0.5 to 0.94" in named.stdout and named.stderr == ""
    assert diff(repo, "HEAD~4")["base"]["name"] == "HEAD~4"


def test_a_clone_ahead_of_its_upstream_is_told_to_name_it(repo: Path, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    edit(clone, "ranges/profiles/tiny.yaml", "max: 0.9", "max: 0.8")
    commit(clone, "narrow on the local main")
    note = _text_diff(clone).stderr
    assert "metrics-manual diff origin/main (the upstream)" in note, note
    # The first commit made ranges/: there is no commit before it to name.
    assert "HEAD~" not in note
    assert "0.5 to 0.8" in _text_diff(clone, "origin/main").stdout


def test_a_branch_names_its_merge_base_and_gives_no_note(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    edit(repo, "ranges/profiles/tiny.yaml", "max: 0.9", "max: 0.8")
    commit(repo, "narrow on the branch")
    out = _text_diff(repo)
    assert out.stdout.startswith("Range changes: merge base with main (") and out.stderr == ""


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["HEAD..HEAD"], "not a revision: 'HEAD..HEAD' is not one commit; name BASE and HEAD apart"),
        (["HEAD~0...HEAD"], "not a revision: 'HEAD~0...HEAD' is not one commit"),
        ([""], "not a revision: ''; name a commit, a branch or a tag"),
        (["HEAD", ""], "not a revision: ''; name a commit, a branch or a tag"),
    ],
)
def test_a_range_or_an_empty_value_is_no_revision(repo: Path, args: list[str], said: str) -> None:
    out = run_cli("diff", "--root", str(repo), *args)
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr.startswith(f"error: {said}")
    assert "fatal" not in out.stderr and "Traceback" not in out.stderr
