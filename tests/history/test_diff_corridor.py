"""A corridor in `metrics-manual diff`: a revision's corridors read their reference from git, and a change of
its tolerance or of its curve, however small, is a part that changed."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli
from corridor_fixture import KEY, REFERENCE, corridor_profile, corridor_project, curve, pin
from git_helpers import commit, edit, git
from metrics_manual.runs.capture import reference_text


def changes(root: Path, base: str) -> dict[str, tuple[str, str]]:
    out = run_cli("diff", "--root", str(root), base, "--format", "json")
    assert out.returncode == 0, out.stderr
    [profile] = json.loads(out.stdout)["profiles"]
    [metric] = [m for m in profile["metrics"] if m["key"] == KEY]
    [r] = metric["ranges"]
    return {f["field"]: (f["before"], f["after"]) for f in r["fields"]}


def test_a_corridor_s_tolerance_and_its_curve_show_as_changed_parts(tmp_path: Path) -> None:
    root = corridor_project(tmp_path / "p")
    git(root, "init", "-q", "-b", "main")
    base = commit(root, "a corridor")
    edit(root, "ranges/profiles/p.yaml", "abs_floor_up: 0.1,", "abs_floor_up: 0.2,")
    assert changes(root, base) == {"bounds": ("0.1 above, 0.1 below", "0.2 above, 0.1 below")}
    # One value of the curve moved, its digest recorded anew: the reference's curve changed, nothing else.
    points = curve()
    points[50] = (50, points[50][1] + 0.01)
    sha = pin(root, REFERENCE, reference_text({KEY: points}))
    (root / "ranges/profiles/p.yaml").write_text(corridor_profile(sha), "utf-8")
    got = changes(root, base)
    assert set(got) == {"reference curve"} and got["reference curve"][0] != got["reference curve"][1]
    # Both sides read from git: the base's reference capture is the committed one, not the working tree's.
    head = commit(root, "moved one value")
    assert changes(root, base) == got
    out = run_cli("diff", "--root", str(root), head, "--format", "json")
    assert out.returncode == 0 and json.loads(out.stdout)["profiles"] == []
    # A base whose reference capture is gone from git is a finding of that revision, never a traceback.
    git(root, "rm", "-q", REFERENCE)
    gone = commit(root, "reference removed")
    out = run_cli("diff", "--root", str(root), gone, "--format", "json")
    assert out.returncode == 2 and f"{gone[:12]}:ranges/profiles/p.yaml:8:" in out.stderr
    assert f"capture {REFERENCE} is missing [MM412]" in out.stderr
