"""`coverage --miles PATH --write` moves the catalog to a new Miles commit: on a small Miles-shaped git
repository made here, a commit shifts lines, renames a file, changes a computation beside an intact
evidence line, changes an evidence line, renames a key and adds one; each outcome is asserted."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from conftest import run_cli, write_project
from git_helpers import commit, edit, git
from miles_tree import tree

FILES = {
    "miles/trainer.py": """\
        import tracking


        class Trainer:
            def step(self, optimizer):
                grad_norm = optimizer.step()
                log_step(self.args, grad_norm)


        def log_step(args, grad_norm):
            log_dict = {"train/grad_norm": grad_norm, "train/step": 1}
            tracking.log(args, log_dict, step_key="train/step")
        """,
    "miles/rollout/metrics.py": """\
        def reward_metrics(samples):
            mean = sum(s.reward for s in samples) / len(samples)
            return {"rollout/reward": mean, "rollout/step": 1}
        """,
    "miles/loss.py": """\
        def loss_metrics(logits, mask):
            loss = (logits * mask).sum()
            return {"train/loss": loss / mask.sum()}
        """,
    "miles/entropy.py": """\
        def entropy_metrics(probs):
            entropy = -(probs * probs.log()).sum()
            return {"train/entropy": entropy}
        """,
    "miles/kl.py": """\
        def kl_metrics(kl):
            return {"train/kl": kl.mean()}
        """,
}


def _entry(key: str, path: str, symbol: str, line: int, evidence: str, extra: str = "") -> str:
    return f"""\
      - key: {key}
        meaning: the {key}
        origin:
          path: {path}
          symbol: {symbol}
          line: {line}
          evidence: '{evidence}'
          computed: as the code says
          logged: every step
{extra}"""


CATALOG = (
    """\
# A small Miles, read by hand.
title: Metrics
code: {{repository: example/miles, url: https://example.org/miles, branch: main, commit: {commit}}}
step_keys: {{train: train/step, rollout: rollout/step}}
sections:
  - id: training
    title: Training
    metrics:
      # read twice
      - key: train/grad_norm
        meaning: the gradient norm
        origin:
          path: miles/trainer.py
          symbol: Trainer.step
          line: 6  # the optimizer's step
          evidence: 'grad_norm = optimizer.step()'
          computed: the optimizer's norm
          logged: every train step
          named_at:
            path: miles/trainer.py
            symbol: log_step
            line: 11
            evidence: 'log_dict = {{"train/grad_norm": grad_norm, "train/step": 1}}'
"""
    + _entry("train/loss", "miles/loss.py", "loss_metrics", 2, "loss = (logits * mask).sum()")
    + _entry("train/entropy", "miles/entropy.py", "entropy_metrics", 2, "entropy = -(probs * probs.log()).sum()")
    + _entry("train/kl", "miles/kl.py", "kl_metrics", 2, 'return {{"train/kl": kl.mean()}}')
    + """
  - id: rollout
    title: Rollout
    metrics:
"""
    + _entry(
        "rollout/reward",
        "miles/rollout/metrics.py",
        "reward_metrics",
        2,
        "mean = sum(s.reward for s in samples) / len(samples)",
    )
)
C = "ranges/catalog.yaml"


def miles_at_a(root: Path) -> tuple[Path, str]:
    tree(root, FILES)
    git(root, "init", "-q", "-b", "main")
    return root, commit(root, "A")


def only_moves(miles: Path) -> None:
    """Lines shifted, a file renamed, an evidence line respaced: nothing a reader must read again."""
    edit(miles, "miles/trainer.py", "import tracking\n", "import functools\nimport tracking\n")
    edit(
        miles,
        "miles/trainer.py",
        '{"train/grad_norm": grad_norm, "train/step"',
        '{"train/grad_norm": grad_norm,  "train/step"',
    )
    git(miles, "mv", "miles/rollout/metrics.py", "miles/rollout/stats.py")
    edit(miles, "miles/rollout/stats.py", "def reward_metrics", "# the rollout's statistics\n\n\ndef reward_metrics")


def changes(miles: Path) -> None:
    """A computation changed beside an intact evidence line, an evidence line changed, a key renamed, one added."""
    edit(miles, "miles/loss.py", "loss / mask.sum()", "loss / max(mask.sum(), 1)")
    edit(miles, "miles/entropy.py", "probs.log()", "probs.clamp(min=1e-9).log()")
    edit(miles, "miles/kl.py", '"train/kl"', '"train/kl_div"')
    tree(miles, {"miles/extra.py": 'def extra_metrics(x):\n    return {"train/extra": x}\n'})


def project(tmp_path: Path, sha: str) -> Path:
    return write_project(tmp_path / "p", CATALOG.format(commit=sha), profiles={})


def coverage(root: Path, miles: Path, *more: str) -> tuple[int, dict[str, Any], str]:
    """The exit code, the JSON, and the text (the same command run for each: the JSON run first)."""
    ran = run_cli("coverage", "--root", str(root), "--miles", str(miles), "--format", "json", *more)
    text = run_cli("coverage", "--root", str(root), "--miles", str(miles))
    return ran.returncode, json.loads(ran.stdout), text.stdout


def write(root: Path, miles: Path) -> tuple[int, str]:
    ran = run_cli("coverage", "--root", str(root), "--miles", str(miles), "--write")
    return ran.returncode, ran.stdout + ran.stderr


def changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    """(old line, new line) of each line the edit changed; a line added has old ''."""
    a, b = before.splitlines(), after.splitlines()
    out = [(x, y) for x, y in zip(a, b, strict=False) if x != y] if len(a) == len(b) else []
    if len(a) != len(b):
        import difflib

        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
            if tag != "equal":
                out += list(zip(a[i1:i2] + [""] * (j2 - j1 - (i2 - i1)), b[j1:j2], strict=False))
    return out


def test_lines_that_only_moved_are_re_anchored_and_the_command_passes(tmp_path: Path) -> None:
    miles, a = miles_at_a(tmp_path / "miles")
    root = project(tmp_path, a)
    only_moves(miles)
    b = commit(miles, "B: only moves")
    before = (root / C).read_text("utf-8")
    code, out, text = coverage(root, miles)
    assert code == 1  # the catalog reads A: --write moves it
    assert out["move"]["work"] == []
    assert (
        f"the checkout is at {b[:12]} but the catalog reads Miles at {a[:12]}: 6 places of 5 origins hold at "
        f"{b[:12]} (6 evidence lines; 3 at another line, 1 in another file, 0 in another symbol); 0 origins to read "
        "again; `coverage --write` moves the catalog there [MM617]" in text
    )
    assert (root / C).read_text("utf-8") == before  # without --write nothing is written
    code, said = write(root, miles)
    assert code == 0, said
    after = (root / C).read_text("utf-8")
    assert changed_lines(before, after) == [
        (
            "code: {repository: example/miles, url: https://example.org/miles, branch: main, commit: " + a + "}",
            "code: {repository: example/miles, url: https://example.org/miles, branch: main, commit: " + b + "}",
        ),
        ("          line: 6  # the optimizer's step", "          line: 7  # the optimizer's step"),
        ("            line: 11", "            line: 12"),
        (
            """            evidence: 'log_dict = {"train/grad_norm": grad_norm, "train/step": 1}'""",
            """            evidence: 'log_dict = {"train/grad_norm": grad_norm,  "train/step": 1}'""",
        ),
        ("          path: miles/rollout/metrics.py", "          path: miles/rollout/stats.py"),
        ("          line: 2", "          line: 5"),
    ]
    assert f"moved the catalog from Miles {a[:12]} to {b[:12]}: wrote ranges/catalog.yaml" in said
    # At its new commit the catalog holds, and a second run writes nothing.
    code, out, text = coverage(root, miles)
    assert (code, out["evidence"]["verified"], out["evidence"]["at_commit"]) == (0, 6, True)
    assert write(root, miles)[0] == 0 and (root / C).read_text("utf-8") == after


def test_what_changed_is_flagged_kept_as_read_and_listed_until_a_person_clears_it(tmp_path: Path) -> None:
    miles, a = miles_at_a(tmp_path / "miles")
    root = project(tmp_path, a)
    only_moves(miles)
    changes(miles)
    b = commit(miles, "B: moves and changes")
    before = (root / C).read_text("utf-8")
    code, said = write(root, miles)
    assert code == 1
    after = (root / C).read_text("utf-8")
    # The moved are re-anchored; each flagged origin gets read_at (the commit it was read at) and keeps the rest.
    read_at = [(old, new) for old, new in changed_lines(before, after) if "read_at" in new]
    assert read_at == [("", f"          read_at: {a}")] * 3
    flagged = [m["key"] for m in _origins(after) if "read_at" in m["origin"]]
    assert flagged == ["train/loss", "train/entropy", "train/kl"]
    for key, line in [("train/loss", 2), ("train/entropy", 2), ("train/kl", 2)]:
        assert _origin(after, key)["line"] == line  # as read at A
    assert _origin(after, "rollout/reward")["path"] == "miles/rollout/stats.py"
    assert "# A small Miles, read by hand." in after and "# read twice" in after and "# the optimizer's step" in after
    # The work list: one item per entry to read, why, and the diff lines that touch it.
    items = _work_items(said)
    assert [(key, why) for key, why, _ in items] == [
        ("train/loss", "the code of 'loss_metrics' in miles/loss.py changed, though its evidence line did not"),
        (
            "train/entropy",
            "its evidence line is not in miles/entropy.py at " + b[:12] + " any more (nor once anywhere "
            "in the checkout)",
        ),
        (
            "train/kl",
            f"train/kl is no longer logged at {b[:12]}; its evidence line is not in miles/kl.py at {b[:12]} "
            "any more (nor once anywhere in the checkout)",
        ),
        ("train/extra", "train/extra is logged at miles/extra.py:2 (extra_metrics) and documented nowhere"),
        ("train/kl_div", "train/kl_div is logged at miles/kl.py:2 (kl_metrics) and documented nowhere"),
    ]
    diff = dict((key, lines) for key, _, lines in items)
    assert diff["train/loss"] == [
        "miles/loss.py @@ -3,1 +3,1 @@",
        '-    return {"train/loss": loss / mask.sum()}',
        '+    return {"train/loss": loss / max(mask.sum(), 1)}',
    ]
    assert diff["train/kl_div"] == [
        "miles/kl.py @@ -2,1 +2,1 @@",
        '-    return {"train/kl": kl.mean()}',
        '+    return {"train/kl_div": kl.mean()}',
    ]
    # The next run reports the flagged entries again, at their read_at, and fails.
    code, out, text = coverage(root, miles)
    assert code == 1
    assert [w["key"] for w in out["move"]["work"]] == [key for key, _, _ in items]
    lines = [line for line in text.splitlines() if line.endswith("[MM619]")]
    assert [re.sub(r":\d+:\d+:", ":L:C:", line).split(": error: ")[1].split(":")[0] for line in lines] == [
        "train/loss",
        "train/entropy",
        "train/kl",
    ]
    assert all(f"not yet re-read at Miles {b[:12]} (last read at {a[:12]})" in line for line in lines)
    assert write(root, miles)[0] == 1 and (root / C).read_text("utf-8") == after  # never advanced
    # A person reads train/loss at B and clears it: an edit to the catalog.
    (root / C).write_text(after.replace(f"          read_at: {a}\n", "", 1), "utf-8")
    code, out, _ = coverage(root, miles)
    assert [w["key"] for w in out["move"]["work"]] == [key for key, _, _ in items][1:]
    assert "train/loss" not in [c["key"] for c in out["evidence"]["checked"] if not c["verified"]]


def test_the_page_of_a_flagged_entry_says_it_is_not_yet_re_read_and_links_the_diff(tmp_path: Path) -> None:
    miles, a = miles_at_a(tmp_path / "miles")
    root = project(tmp_path, a)
    changes(miles)
    b = commit(miles, "B")
    assert write(root, miles)[0] == 1
    assert run_cli("build", "--root", str(root)).returncode == 0
    page = (root / "docs/reference/metrics/training.md").read_text("utf-8")
    loss = page.split("{#m-train-loss .mm-key}", 1)[1].split("### ", 1)[0]
    assert (
        f"<strong>Not yet re-read at Miles `{b[:9]}`</strong>: the code that computes it changed since it was read, "
        f"at `{a[:9]}` ([the diff](https://example.org/miles/compare/{a}...{b}))"
    ) in loss
    # Its evidence links to the file at the commit it was read at, never at the one no one read it at.
    assert f"https://example.org/miles/blob/{a}/miles/loss.py#L2" in loss and f"blob/{b}" not in loss
    grad_norm = page.split("{#m-train-grad_norm .mm-key}", 1)[1].split("### ", 1)[0]
    assert "Not yet re-read" not in grad_norm and f"blob/{b}/miles/trainer.py#L6" in grad_norm
    coverage_page = (root / "docs/reference/coverage.md").read_text("utf-8")
    assert "3 entries are **not yet re-read at" in coverage_page


def test_a_renamed_function_with_the_same_code_is_followed_and_a_gone_one_is_flagged(tmp_path: Path) -> None:
    miles, a = miles_at_a(tmp_path / "miles")
    root = project(tmp_path, a)
    edit(miles, "miles/loss.py", "def loss_metrics(", "def compute_loss_metrics(")
    edit(miles, "miles/entropy.py", "def entropy_metrics(probs):\n", "")
    edit(miles, "miles/entropy.py", "    entropy =", "entropy =")
    edit(miles, "miles/entropy.py", "    return", "result =")
    commit(miles, "B")
    code, said = write(root, miles)
    assert code == 1
    after = (root / C).read_text("utf-8")
    assert _origin(after, "train/loss")["symbol"] == "compute_loss_metrics"
    assert "read_at" not in _origin(after, "train/loss")
    assert [(k, w) for k, w, _ in _work_items(said)] == [
        (
            "train/entropy",
            "'entropy_metrics' is not defined in miles/entropy.py at " + git(miles, "rev-parse", "HEAD")[:12],
        )
    ]


def test_write_refuses_a_checkout_it_cannot_follow_and_writes_nothing(tmp_path: Path) -> None:
    miles, a = miles_at_a(tmp_path / "miles")
    root = project(tmp_path, a)
    only_moves(miles)
    commit(miles, "B")
    before = (root / C).read_text("utf-8")
    (miles / "miles" / "kl.py").write_text("changed = 1\n", "utf-8")  # a file that differs from HEAD
    code, said = write(root, miles)
    assert code == 2 and "1 file(s) of the checkout differ from its HEAD" in said and "nothing was written" in said
    git(miles, "checkout", "-q", "--", "miles/kl.py")
    git(miles, "checkout", "-q", a)
    later = project(tmp_path / "later", git(miles, "rev-parse", "main"))
    code, said = write(later, miles)  # HEAD older than the catalog's commit
    assert code == 2 and "is older than the catalog's commit" in said
    unknown = project(tmp_path / "unknown", "0123456789abcdef")
    code, said = write(unknown, miles)
    assert code == 2 and "the checkout's history does not hold the catalog's commit 0123456789abcdef" in said
    assert (root / C).read_text("utf-8") == before


def _origins(text: str) -> list[dict[str, Any]]:
    import yaml

    data = yaml.safe_load(text)
    return [m for s in data["sections"] for m in s["metrics"]]


def _origin(text: str, key: str) -> dict[str, Any]:
    return next(m["origin"] for m in _origins(text) if m["key"] == key)


def _work_items(said: str) -> list[tuple[str, str, list[str]]]:
    """(key, why, diff lines) of each item of the printed work list."""
    block = said.split("work list: ", 1)[1].split("\nevidence: ", 1)[0].split("\nranges/", 1)[0]
    items: list[tuple[str, str, list[str]]] = []
    for line in block.splitlines()[1:]:
        m = re.match(r"\s+\d+\. (\S+) \([^)]*\): (.*)$", line)
        if m:
            items.append((m[1], m[2], []))
        elif items and line.startswith("       ") and not line.strip().startswith("(no line"):
            items[-1][2].append(line[7:])
    return items


def test_write_moves_the_commit_of_ranges_coverage_yaml_with_the_catalog(tmp_path: Path) -> None:
    miles, a = miles_at_a(tmp_path / "miles")
    root = project(tmp_path, a)
    coverage_yaml = f"# what coverage found\ncommit: {a}  # the catalog's\nundocumented: []\n"
    (root / "ranges" / "coverage.yaml").write_text(coverage_yaml, "utf-8")
    only_moves(miles)
    b = commit(miles, "B")
    code, said = write(root, miles)
    assert code == 0, said
    assert (root / "ranges" / "coverage.yaml").read_text("utf-8") == coverage_yaml.replace(a, b)
    assert "wrote ranges/catalog.yaml, ranges/coverage.yaml" in said
    assert run_cli("validate", "--root", str(root)).returncode == 0


def test_a_read_at_that_names_the_catalogs_commit_is_refused(tmp_path: Path) -> None:
    text = CATALOG.format(commit="0123456789ab").replace(
        "          path: miles/loss.py", "          read_at: 0123456789ab\n          path: miles/loss.py"
    )
    root = write_project(tmp_path / "p", text, profiles={})
    ran = run_cli("validate", "--root", str(root))
    line = text.splitlines().index("          read_at: 0123456789ab") + 1
    assert ran.returncode == 2
    assert (
        f"{C}:{line}:20: error: train/loss: read_at names the catalog's commit 0123456789ab; an origin without "
        "read_at is read there: remove it [MM116]"
    ) in ran.stderr


def test_an_evidence_line_found_once_in_another_file_is_followed_there_and_twice_is_flagged(tmp_path: Path) -> None:
    miles, a = miles_at_a(tmp_path / "miles")
    root = project(tmp_path, a)
    # kl_metrics moves to a file of its own, among other code: no rename git could see.
    other = "import math\n\n\ndef helper(x):\n    return math.sqrt(x)\n\n\n" + FILES["miles/kl.py"].replace(
        "        ", ""
    )
    tree(miles, {"miles/metrics/kl_stats.py": other, "miles/kl.py": "# moved to miles/metrics/kl_stats.py\n"})
    commit(miles, "B")
    assert write(root, miles)[0] == 0
    assert _origin((root / C).read_text("utf-8"), "train/kl") == {
        **_origin(CATALOG.format(commit=a).replace("{{", "{").replace("}}", "}"), "train/kl"),
        "path": "miles/metrics/kl_stats.py",
        "line": 9,
    }
    # The same line in two files: which one the entry means is for a person to say.
    tree(miles, {"miles/metrics/kl_copy.py": FILES["miles/kl.py"]})
    commit(miles, "C")
    root2 = project(tmp_path / "2", a)
    code, said = write(root2, miles)
    assert code == 1
    assert [(k, why) for k, why, _ in _work_items(said)] == [
        (
            "train/kl",
            "its evidence line left miles/kl.py, and reads the same at 2 places (miles/metrics/kl_copy.py:2, "
            "miles/metrics/kl_stats.py:9)",
        )
    ]
