"""Every rejection of the source, with its exact file, line, column and message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import PROJECT, REAL_TREE, REPO_ITSELF, TINY_CATALOG, TINY_PROFILE, run_cli, write_project
from metrics_manual.diagnostics.finding import SourceError
from metrics_manual.source.load import load_manual

P = "ranges/profiles/tiny.yaml"
C = "ranges/catalog.yaml"

# (case, text replaced in the tiny profile, replacement, the one finding expected)
PROFILE_CASES = [
    (
        "broken YAML",
        "title: Tiny runs",
        "title: [Tiny runs",
        f"{P}:3:8: error: invalid YAML: while parsing a flow sequence did not find expected ',' or ']' [MM201]",
    ),
    (
        "duplicate key",
        "title: Tiny runs",
        "title: Tiny runs\ntitle: Again",
        f"{P}:3:1: error: duplicate key 'title' (first defined at line 2, column 1) [MM208]",
    ),
    (
        "number as string",
        "min: 0.5,",
        "min: '0.5',",
        f"{P}:26:25: error: min: expected a number, got the string '0.5'; remove the quotes [MM104]",
    ),
    (
        "min above max",
        "min: 0.5, max: 0.9",
        "min: 0.95, max: 0.9",
        f"{P}:26:7: error: min 0.95 is above max 0.9 [MM105]",
    ),
    (
        "unknown metric",
        "  train/pg_clipfrac:",
        "  train/pg_clipfrak:",
        f"{P}:32:3: error: unknown metric 'train/pg_clipfrak'; add it to ranges/catalog.yaml first (a key of your fork: to ranges/catalogs/TEAM.yaml); did you mean 'train/pg_clipfrac'? [MM108]",
    ),
    (
        "unknown source",
        "sources: [summary]}",
        "sources: [sumary]}",
        f"{P}:26:61: error: unknown source 'sumary'; declare it under 'sources'; did you mean 'summary'? [MM108]",
    ),
    (
        "python tag",
        "title: Tiny runs",
        "title: !!python/object/apply:os.system ['touch PWNED']",
        f"{P}:2:8: error: YAML tag '!!python/object/apply:os.system' is not allowed; use a plain list [MM205]",
    ),
    (
        "custom tag",
        "title: Tiny runs",
        "title: !secret Tiny",
        f"{P}:2:8: error: YAML tag '!secret' is not allowed; only plain strings, numbers, booleans, lists and mappings are [MM205]",
    ),
    (
        "nan",
        "max: 0.9",
        "max: .nan",
        f"{P}:26:35: error: max: '.nan' is not a finite number; ranges must be finite [MM212]",
    ),
    (
        "inf",
        "max: 0.9",
        "max: -.inf",
        f"{P}:26:35: error: max: '-.inf' is not a finite number; ranges must be finite [MM212]",
    ),
    (
        "overflow",
        "max: 0.9",
        "max: 1.0e+999",
        f"{P}:26:35: error: max: '1.0e+999' is not a finite number; ranges must be finite [MM212]",
    ),
    (
        "overflow without dot",
        "max: 0.9",
        "max: 1e999",
        f"{P}:26:35: error: max: '1e999' is not a finite number; ranges must be finite [MM212]",
    ),
    (
        "zero steps",
        "value: 400, steps: 10",
        "value: 400, steps: 0",
        f"{P}:28:41: error: steps: Input should be greater than 0 [MM105]",
    ),
    (
        "negative steps",
        "steps: 10, sources",
        "steps: -3, sources",
        f"{P}:26:47: error: steps: Input should be greater than 0 [MM105]",
    ),
    (
        "unknown field",
        "  dataset: D",
        "  datasett: D\n  dataset: D",
        f"{P}:8:3: error: unknown field 'datasett'; did you mean 'dataset'? [MM101]",
    ),
    (
        "misplaced field",
        "  steps: 10\n",
        "  steps: 10\nsteps: 10\n",
        f"{P}:14:1: error: unknown field 'steps' here; 'steps' belongs in a band expectation, a median expectation or setup [MM101]",
    ),
    (
        "long value is cut in the message",
        "kind: median",
        "kind: " + "m" * 10_000,
        f"{P}:28:14: error: unknown kind '"
        + "m" * 78
        + "…; expected one of: 'band', 'median', 'exact', 'presence', 'corridor' [MM103]",
    ),
    ("missing field", "advice: Build your own.\n", "", f"{P}:1:1: error: missing field 'advice' [MM102]"),
    (
        "unknown kind",
        "kind: median",
        "kind: mean",
        f"{P}:28:14: error: unknown kind 'mean'; expected one of: 'band', 'median', 'exact', 'presence', 'corridor' [MM103]",
    ),
    (
        "boolean for integer",
        "prompts_per_step: 4",
        "prompts_per_step: true",
        f"{P}:10:21: error: prompts_per_step: expected an integer, got True [MM104]",
    ),
    (
        "alias",
        "  steps: 10\nsources:",
        "  steps: 10\nextra_setup: &s {a: 1}\nagain: *s\nsources:",
        f"{P}:14:14: error: anchors and aliases (&name, *name) are not supported here; write the value out [MM206]",
    ),
    (
        "date",
        "commit: abcdef12",
        "commit: 2026-01-01",
        f"{P}:16:63: error: '2026-01-01' reads as a date; quote it to make it a string [MM214]",
    ),
    (
        "window longer than steps",
        "window: {first: 2}",
        "window: {first: 2}, steps: 1",
        f"{P}:31:7: error: window of the first 2 steps is longer than the 1 steps [MM105]",
    ),
    (
        "steps beyond setup",
        "value: 400, steps: 10",
        "value: 400, steps: 11",
        f"{P}:28:41: error: 11 steps is more than the 10 steps of the setup [MM109]",
    ),
    (
        "unknown section note",
        "  training: {text",
        "  trainin: {text",
        f"{P}:18:3: error: unknown section 'trainin'; did you mean 'training'? [MM108]",
    ),
    (
        "unknown note",
        "see: tiny-notes",
        "see: tiny-note",
        f"{P}:18:46: error: unknown note 'tiny-note'; add it under 'notes'; did you mean 'tiny-notes'? [MM108]",
    ),
    (
        "line break in text",
        "title: Tiny runs",
        'title: "Tiny\\nruns"',
        f"{P}:2:8: error: title: text must be one line without control characters; fold long text with >- [MM105]",
    ),
    ("blank text", "title: Tiny runs", 'title: "   "', f"{P}:2:8: error: title: text must not be blank [MM105]"),
    (
        "top-level list",
        TINY_PROFILE,
        "- a\n- b\n",
        f"{P}:1:1: error: the file must hold a YAML mapping at the top [MM204]",
    ),
    ("empty file", TINY_PROFILE, "", f"{P}:1:1: error: file is empty; it must hold a YAML mapping [MM204]"),
    (
        "only a comment",
        TINY_PROFILE,
        "# nothing yet\n",
        f"{P}:1:1: error: file is empty; it must hold a YAML mapping [MM204]",
    ),
    (
        "two documents",
        TINY_PROFILE,
        "a: 1\n---\nb: 2\n",
        f"{P}:2:1: error: invalid YAML: expected a single document in the stream but found another document [MM201]",
    ),
]


def findings_of(root: Path) -> list[str]:
    with pytest.raises(SourceError) as exc:
        load_manual(root)
    return [str(f) for f in exc.value.findings]


def kinds_of(root: Path) -> list[tuple[str, int, int, str]]:
    """Where each finding is and its kind: what a test of which problems are found holds to."""
    with pytest.raises(SourceError) as exc:
        load_manual(root)
    return [(f.path, f.line, f.col, f.code.id) for f in exc.value.findings]


@pytest.mark.parametrize(("case", "old", "new", "expected"), PROFILE_CASES, ids=[c[0] for c in PROFILE_CASES])
def test_profile_rejection(tmp_path: Path, case: str, old: str, new: str, expected: str) -> None:
    assert old in TINY_PROFILE
    root = write_project(tmp_path, profiles={"tiny": TINY_PROFILE.replace(old, new, 1)})
    assert findings_of(root) == [expected]


def test_tag_is_never_executed(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    text = TINY_PROFILE.replace("title: Tiny runs", f"title: !!python/object/apply:os.system ['touch {marker}']")
    root = write_project(tmp_path / "p", profiles={"tiny": text})
    result = run_cli("validate", "--root", str(root))
    assert result.returncode == 2
    assert not marker.exists()


def test_non_utf8(tmp_path: Path) -> None:
    root = write_project(tmp_path, profiles={})
    (root / P).write_bytes(TINY_PROFILE.encode().replace(b"Tiny runs", b"Tiny \xff runs"))
    assert findings_of(root) == [f"{P}:2:13: error: file is not UTF-8 (byte 0xff); save it as UTF-8 [MM203]"]


CATALOG_CASES = [
    (
        "duplicate metric",
        "      - key: train/pg_clipfrac",
        "      - key: train/grad_norm",
        f"{C}:18:14: error: metric 'train/grad_norm' is already in the catalog (section 'training') [MM106]",
    ),
    (
        "bad key",
        "key: train/grad_norm",
        "key: Train grad norm",
        f"{C}:16:14: error: key: String should match pattern '^([a-z][a-z0-9_]*|\\{{[a-z_]+\\}})(/([A-Za-z0-9_@.\\-]|\\{{[a-z_]+\\}})+)+(/\\*)?$', got 'Train grad norm' [MM105]",
    ),
    (
        "family without members",
        "        members: [train/weight/mean, train/weight/max]\n",
        "",
        f"{C}:20:9: error: a family key ends in /* and lists its members [MM105]",
    ),
    (
        "duplicate section",
        "  - id: training",
        "  - id: rollout",
        f"{C}:13:9: error: duplicate section id 'rollout' [MM106]",
    ),
]


@pytest.mark.parametrize(("case", "old", "new", "expected"), CATALOG_CASES, ids=[c[0] for c in CATALOG_CASES])
def test_catalog_rejection(tmp_path: Path, case: str, old: str, new: str, expected: str) -> None:
    assert old in TINY_CATALOG
    catalog = TINY_CATALOG.replace(old, new, 1)
    # A profile that names no metric and no section, so only the catalog can be wrong.
    profile = TINY_PROFILE.split("section_notes:")[0]
    root = write_project(tmp_path, catalog=catalog, profiles={"tiny": profile})
    assert findings_of(root) == [expected]


def test_all_findings_collected_across_files(tmp_path: Path) -> None:
    root = write_project(
        tmp_path,
        profiles={
            "tiny": TINY_PROFILE.replace("max: 0.9", "max: .nan"),
            "two": TINY_PROFILE.replace("title: Tiny runs", "title: [x"),
            "three": TINY_PROFILE,  # same id and note id as tiny
        },
    )
    assert kinds_of(root) == [
        ("ranges/profiles/tiny.yaml", 26, 35, "MM212"),  # non-finite-number
        ("ranges/profiles/two.yaml", 3, 8, "MM201"),  # invalid-yaml
    ]
    root = write_project(tmp_path / "b", profiles={"tiny": TINY_PROFILE, "three": TINY_PROFILE})
    assert kinds_of(root) == [
        ("ranges/profiles/tiny.yaml", 1, 5, "MM106"),  # duplicate-id
        ("ranges/profiles/tiny.yaml", 20, 9, "MM107"),  # anchor-clash
    ]


def test_cli_exit_codes_and_formats(tmp_path: Path) -> None:
    root = write_project(tmp_path, profiles={"tiny": TINY_PROFILE.replace("max: 0.9", "max: .nan")})
    text = run_cli("validate", "--root", str(root))
    assert (text.returncode, text.stdout) == (2, "")
    assert text.stderr == (
        f"{P}:26:35: error: max: '.nan' is not a finite number; ranges must be finite [MM212]\n1 error(s).\n"
    )
    as_json = run_cli("validate", "--root", str(root), "--format", "json")
    assert as_json.returncode == 2
    assert json.loads(as_json.stdout) == [
        {
            "path": P,
            "line": 26,
            "col": 35,
            "severity": "error",
            "code": "MM212",
            "name": "non-finite-number",
            "message": "max: '.nan' is not a finite number; ranges must be finite",
            "hint": "Write a finite number, or leave the bound out.",
            "diff": "",
        }
    ]
    github = run_cli("validate", "--root", str(root), "--format", "github")
    assert (github.returncode, github.stdout) == (
        2,
        f"::error file={P},line=26,col=35,title=MM212 non-finite-number::"
        "max: '.nan' is not a finite number; ranges must be finite\n",
    )
    assert "Traceback" not in text.stderr + as_json.stderr


def test_cli_root_and_missing_root(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p")
    ok = run_cli("validate", cwd=root)
    assert (ok.returncode, ok.stdout) == (0, "ok: 5 metrics, 1 profile(s), 5 expectations\n")
    # Like git, the command finds the project from any folder inside it.
    deeper = root / "docs" / "deeper"
    deeper.mkdir(parents=True)
    assert run_cli("validate", cwd=deeper).stdout == ok.stdout
    missing = run_cli("validate", cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stderr == (
        f"error: no ranges/ folder in {tmp_path.resolve()} or any folder above it; "
        "run inside a project or pass --root DIR; outside a project, judge a run with an exported profile: "
        "--profile FILE (as `metrics-manual export` writes it)\n"
    )


def test_missing_catalog(tmp_path: Path) -> None:
    root = write_project(tmp_path)
    (root / C).unlink()
    assert kinds_of(root) == [(C, 1, 1, "MM202")]  # unreadable-file


@REAL_TREE
@REPO_ITSELF
def test_real_source_is_valid() -> None:
    manual = load_manual(PROJECT)
    assert manual.profiles and manual.metrics


def test_independent_problems_of_a_file_all_show_at_once(tmp_path: Path) -> None:
    """Four mistakes in one file: a misplaced field, a bad number, an unknown metric, an unknown source."""
    profile = (
        TINY_PROFILE.replace("  steps: 10\n", "")
        .replace("setup:\n", "steps: 10\nsetup:\n")
        .replace("max: 0.9, steps: 10", "max: x, steps: 10")
        .replace("rollout/response_lengths:", "rollout/response_lengthz:")
        .replace("sources: [summary]}", "sources: [sumary]}")
    )
    root = write_project(tmp_path, profiles={"tiny": profile})
    assert kinds_of(root) == [
        (P, 5, 1, "MM101"),  # unknown-field (misplaced)
        (P, 7, 3, "MM102"),  # missing-field
        (P, 26, 35, "MM104"),  # wrong-type
        (P, 26, 59, "MM108"),  # unknown-reference (source)
        (P, 27, 3, "MM108"),  # unknown-reference (metric)
    ]


def test_yml_profiles_are_read_and_other_files_are_findings(tmp_path: Path) -> None:
    two = TINY_PROFILE.replace("id: tiny", "id: two").replace("tiny-notes", "two-notes")
    root = write_project(tmp_path, profiles={"tiny": TINY_PROFILE})
    (root / "ranges/profiles/two.yml").write_text(two, "utf-8")
    assert [p.id for p in load_manual(root).profiles] == ["tiny", "two"]
    (root / "ranges/profiles/notes.txt").write_text("x", "utf-8")
    (root / "ranges/extra.yaml").write_text("a: 1", "utf-8")
    (root / "ranges/profiles/.swap").write_text("editor state", "utf-8")  # hidden files are not source
    assert kinds_of(root) == [
        ("ranges/extra.yaml", 1, 1, "MM110"),  # not-a-source-file
        ("ranges/profiles/notes.txt", 1, 1, "MM110"),
    ]


def test_profiles_follow_their_order_field(tmp_path: Path) -> None:
    def named(pid: str, order: str) -> str:
        return TINY_PROFILE.replace("id: tiny\n", f"id: {pid}\n{order}").replace("tiny-notes", f"{pid}-notes")

    root = write_project(
        tmp_path, profiles={"a": named("a", ""), "b": named("b", "order: 2\n"), "c": named("c", "order: 1\n")}
    )
    assert [p.id for p in load_manual(root).profiles] == ["c", "b", "a"]


@pytest.mark.parametrize("note_id", ["training", "sources", "origins"])
def test_a_note_whose_anchor_is_taken_is_a_finding(tmp_path: Path, note_id: str) -> None:
    profile = TINY_PROFILE.replace("tiny-notes", note_id)
    root = write_project(tmp_path, profiles={"tiny": profile})
    owner = {
        "training": "section 'training' of ranges/catalog.yaml",
        "sources": "the sources",
        "origins": "the table of where the keys come from",
    }[note_id]
    assert findings_of(root) == [
        f"{P}:20:9: error: note id {note_id!r} gives the anchor 's-ref-{note_id}', "
        f"which {owner} already has; choose another id [MM107]"
    ]


def test_whole_floats_read_as_the_numbers_they_are(tmp_path: Path) -> None:
    root = write_project(tmp_path, profiles={"tiny": TINY_PROFILE.replace("value: 400,", "value: 400.0,")})
    value = load_manual(root).profile("tiny").expectations["rollout/response_lengths"][0].value
    assert (value, type(value)) == (400, int)


def test_version_and_help() -> None:
    version = run_cli("--version")
    assert version.returncode == 0 and version.stdout.startswith("metrics-manual, version ")
    helptext = run_cli("--help").stdout
    for command in ("validate", "build", "check", "export", "judge", "derive"):
        line = next(x for x in helptext.splitlines() if x.strip().startswith(command))
        assert not line.rstrip().endswith("..."), line
    assert "Exit codes" in helptext and "_METRICS_MANUAL_COMPLETE" in helptext


def test_did_you_mean_has_a_budget_per_load_so_many_unknown_keys_report_at_once(tmp_path, monkeypatch) -> None:
    """A profile of thousands of keys the catalog lacks (a namespace renamed) must not take hours for
    its hints (difflib against every key): past a load's budget of comparisons the findings come
    without them, and the next load (serve's next save) hints again."""
    from metrics_manual.source import load

    typos = "".join(f"  train/pg_clipfra{i}:\n    - {{kind: exact, value: 0, at: every_step}}\n" for i in range(6))
    root = write_project(
        tmp_path, profiles={"tiny": TINY_PROFILE.replace("expectations:\n", "expectations:\n" + typos)}
    )
    pools: list[int] = []
    real = load.difflib.get_close_matches
    monkeypatch.setattr(load.difflib, "get_close_matches", lambda w, p, **kw: pools.append(len(p)) or real(w, p, **kw))
    with pytest.raises(SourceError):
        load_manual(root)
    monkeypatch.setattr(load, "HINT_COMPARISONS", max(pools) * 3)  # room for three hints of a metric key
    for _ in range(2):  # each load has the whole budget
        with pytest.raises(SourceError) as err:
            load_manual(root)
        unknown = [f.message for f in err.value.findings if "unknown metric" in f.message]
        assert len(unknown) == 6
        assert sum("did you mean 'train/pg_clipfrac'" in m for m in unknown) == 3


def test_two_keys_that_give_one_prometheus_gauge_are_a_finding(tmp_path: Path) -> None:
    extra = (
        "      - key: train/x@y-z\n        meaning: one\n"
        "      - key: train/x_at_y_z\n        meaning: two\n"
        "      - key: train/k/*\n        name: k\n        members: [train/k/a, train/k-a]\n        meaning: k\n"
        "      - key: train/k_a\n        meaning: three\n"
    )
    catalog = TINY_CATALOG.replace(
        "        meaning: how large the weights are\n", "        meaning: how large the weights are\n" + extra
    )
    root = write_project(tmp_path, catalog, profiles={})
    assert findings_of(root) == [
        f"{C}:26:14: error: 'train/x_at_y_z' and 'train/x@y-z' give the same Prometheus gauge "
        "'miles_metric_train_x_at_y_z'; rename one [MM115]",
        f"{C}:30:30: error: 'train/k-a' and 'train/k/a' give the same Prometheus gauge 'miles_metric_train_k_a'; "
        "rename one [MM115]",
        f"{C}:32:14: error: 'train/k_a' and 'train/k/a' give the same Prometheus gauge 'miles_metric_train_k_a'; "
        "rename one [MM115]",
    ]
    # Keys whose gauges differ pass, patterns aside (they name no one gauge).
    catalog = (
        catalog.replace("train/x_at_y_z", "train/x_at_y")
        .replace("train/k-a", "train/k/b")
        .replace("train/k_a", "train/k_c")
    )
    assert len(load_manual(write_project(tmp_path / "ok", catalog, profiles={})).metrics) == 9
