"""check's closing advice follows each finding's code: `metrics-manual build` only for what build fixes
(`Code.rebuild`), the code's own fix for a capture that changed, is missing or disagrees with its range."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_cli
from derive_helpers import seed_run, seeds_project, write_runs
from metrics_manual.diagnostics import codes

BUILD = "run `metrics-manual build`"


@pytest.fixture
def captured(tmp_path: Path) -> Path:
    """A project whose profile was derived from three runs captured into captures/seeds/, built and in sync."""
    root = seeds_project(tmp_path / "manual")
    paths = write_runs(tmp_path / "runs", {f"seed-{i}": seed_run(i) for i in (1, 2, 3)})
    runs = [f"--run={name}={path}" for name, path in paths.items()]
    derived = run_cli("derive", "--profile", "seeds", *runs, "--capture-to", "captures/seeds", "--write", cwd=root)
    assert derived.returncode == 0, derived.stdout + derived.stderr
    assert run_cli("build", cwd=root).returncode == 0
    assert run_cli("check", cwd=root).returncode == 0
    return root


def _check(root: Path) -> tuple[list[str], list[str]]:
    """The findings' lines and check's closing advice (the lines after them)."""
    result = run_cli("check", cwd=root)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    at = next(i for i, line in enumerate(lines) if " problem(s)" in line and "error:" not in line)
    return [line for line in lines[:at] if ": error: " in line], lines[at:]


def _hint(code: codes.Code) -> str:
    return f"  {code.id} {code.name}: {code.hint}"


def _break_captures(root: Path) -> None:
    capture = root / "captures/seeds/seed-1.jsonl"
    capture.write_text(capture.read_text("utf-8").replace("0.", "0.0", 1), "utf-8")
    (root / "captures/seeds/seed-2.jsonl").unlink()


def test_captures_that_build_cannot_fix_get_their_own_fix(captured: Path) -> None:
    _break_captures(captured)
    assert run_cli("build", cwd=captured).returncode == 0  # the pages follow the captures: only the captures are wrong
    findings, advice = _check(captured)
    assert {f.rsplit(" ", 1)[-1] for f in findings} >= {"[MM412]", "[MM413]"}
    assert not any(c.rebuild for c in codes.CODES.values() if f"[{c.id}]" in "".join(findings))
    assert BUILD not in "\n".join(advice)
    assert advice[0] == f"{len(findings)} problem(s), which `metrics-manual build` does not fix:"
    assert _hint(codes.CAPTURE_MISSING) in advice and _hint(codes.CAPTURE_CHANGED) in advice


def test_drift_and_capture_problems_each_get_their_fix_the_captures_first(captured: Path) -> None:
    _break_captures(captured)  # the pages drawn from the captures drift too: build fixes those, not the captures
    findings, advice = _check(captured)
    rebuilt = [f for f in findings if f.endswith(("[MM401]", "[MM402]"))]
    assert rebuilt and len(rebuilt) < len(findings)
    # A build now would draw what the changed capture gives into the pages: the captures come first.
    assert advice[0] == (
        f"{len(findings)} problem(s); fix the captures first (a build now would write what a changed or missing "
        "capture gives into the pages):"
    )
    assert advice[-1] == f"  then {BUILD} to regenerate files ({len(rebuilt)} of them)"
    # Each code build does not fix, once, with its fix (the changed capture's values break a range too).
    listed = {c.id for c in codes.CODES.values() if f"[{c.id}]" in "".join(findings) and not c.rebuild}
    assert {"MM412", "MM413"} <= listed
    assert advice[1:-1] == [_hint(codes.CODES[i]) for i in sorted(listed)]


def test_drift_and_a_range_its_capture_breaks_each_get_their_fix(captured: Path) -> None:
    profile = captured / "ranges/profiles/seeds.yaml"
    text = profile.read_text("utf-8")
    line = next(t for t in text.splitlines() if t.lstrip().startswith("- {kind: band, min: 0.452"))
    profile.write_text(text.replace(line, line.replace("max: 0.908", "max: 0.6")), "utf-8")  # its capture breaks it
    findings, advice = _check(captured)  # and the pages drift: not built since
    rebuilt = [f for f in findings if codes.CODES[f.rsplit("[", 1)[-1][:-1]].rebuild]
    assert rebuilt and len(rebuilt) < len(findings)
    assert advice[0] == (
        f"{len(findings)} problem(s): {BUILD} to regenerate files ({len(rebuilt)} of them); "
        f"build does not fix the other {len(findings) - len(rebuilt)}:"
    )


def test_a_range_its_capture_breaks_is_not_builds_to_fix(captured: Path) -> None:
    profile = captured / "ranges/profiles/seeds.yaml"
    text = profile.read_text("utf-8")
    line = next(t for t in text.splitlines() if t.lstrip().startswith("- {kind: band, min: 0.452"))
    profile.write_text(text.replace(line, line.replace("max: 0.908", "max: 0.6")), "utf-8")
    assert run_cli("build", cwd=captured).returncode == 0
    findings, advice = _check(captured)
    assert findings and all(f.endswith("[MM414]") for f in findings)
    assert advice == [
        f"{len(findings)} problem(s), which `metrics-manual build` does not fix:",
        _hint(codes.CAPTURE_DISAGREES),
    ]
