"""Exported profiles: schema-valid, deterministic, round-tripping, and Prometheus rules that promtool accepts."""

from __future__ import annotations

import csv
import io
import json
import math
import subprocess
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import PROJECT, REAL_TREE, REPO, TINY_CATALOG, TINY_PROFILE, require_tool, run_cli, write_project
from metrics_manual.api import load_profile
from metrics_manual.build import generate
from metrics_manual.exports.csv_table import read_csv, to_csv
from metrics_manual.exports.document import export_document, to_json
from metrics_manual.exports.prometheus import to_prometheus
from metrics_manual.exports.yaml_text import to_yaml
from metrics_manual.model.gauges import gauge_name, no_gauge
from metrics_manual.model.schema import (
    AtStep,
    Band,
    EveryStep,
    Exact,
    FirstSteps,
    Profile,
    ProfileExport,
    Span,
    Window,
)
from metrics_manual.source.load import load_manual
from promtool_rules import doc_rules, expand, held

SCHEMA = json.loads((REPO / "docs/export/profile.schema.json").read_text("utf-8"))


def test_tiny_exports_match_golden(tiny: Path, golden) -> None:
    _, files = generate(tiny)
    for suffix in ("json", "yaml", "csv", "rules.yml", "grafana.json"):
        golden(f"tiny/docs/export/tiny.{suffix}", files[f"docs/export/tiny.{suffix}"])


@REAL_TREE
@pytest.mark.parametrize("suffix", ["json", "yaml"])
def test_published_exports_validate_against_their_schema(suffix: str) -> None:
    files = sorted(
        f
        for f in (PROJECT / "docs/export").glob(f"*.{suffix}")
        if not f.name.endswith((".schema.json", ".grafana.json"))  # a dashboard: tests/exports/test_grafana.py
    )
    assert files, "no exported profiles"
    for file in files:
        text = file.read_text("utf-8")
        jsonschema.validate(json.loads(text) if suffix == "json" else yaml.safe_load(text), SCHEMA)


def test_schema_rejects_a_broken_export(tiny: Path) -> None:
    data = json.loads(generate(tiny)[1]["docs/export/tiny.json"])
    jsonschema.validate(data, SCHEMA)
    data["metrics"][0]["expectations"][0]["min"] = "0.53"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, SCHEMA)


def test_same_source_gives_byte_identical_files(tiny: Path) -> None:
    files = generate(tiny)[1]
    assert files == generate(tiny)[1]
    first = run_cli("export", "--root", str(tiny), "--profile", "tiny", "--format", "json")
    assert first.returncode == 0
    assert first.stdout == files["docs/export/tiny.json"]


def test_export_to_file_and_unknown_profile(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "rules.yml"
    result = run_cli("export", "--root", str(tiny), "--profile", "tiny", "--format", "prometheus", "-o", str(out))
    assert (result.returncode, result.stdout) == (0, "")
    assert out.read_text("utf-8") == generate(tiny)[1]["docs/export/tiny.rules.yml"]
    bad = run_cli("export", "--root", str(tiny), "--profile", "tinny", "--format", "csv")
    assert bad.returncode == 2
    assert bad.stderr == "error: unknown profile 'tinny'; profiles: tiny; did you mean 'tiny'?\n"


@REAL_TREE
def test_published_exports_load_back_to_their_profiles() -> None:
    """The real manual's exports, read back in every format, are the profiles they came from."""
    manual, files = generate(PROJECT)
    for profile in manual.profiles:
        for suffix in ("json", "yaml"):
            doc = load_profile(PROJECT / f"docs/export/{profile.id}.{suffix}")
            assert doc.schema_version == 1 and doc.to_profile() == profile
            assert [m.key for m in doc.metrics] == list(manual.metrics)
        csv_text = (PROJECT / f"docs/export/{profile.id}.csv").read_bytes().decode("utf-8")
        assert {k: v for k, v in read_csv(csv_text).items() if v} == profile.expectations


def test_api_answers_what_a_metric_should_be(tiny: Path, tmp_path: Path) -> None:
    (tiny / "mkdocs.yml").write_text("site_name: x\nsite_url: http://127.0.0.1:8000/\n", "utf-8")
    exported = tmp_path / "tiny.yaml"
    exported.write_text(generate(tiny)[1]["docs/export/tiny.yaml"], "utf-8")
    doc = load_profile(exported)
    [band] = doc.expected("rollout/raw_reward")
    assert isinstance(band, Band) and (band.min, band.max, band.steps) == (0.5, 0.9, 10)
    assert band.contains(0.5) and band.contains(0.9) and not band.contains(0.95)
    [exact] = doc.expected("train/pg_clipfrac")
    assert isinstance(exact, Exact) and exact.at == "every_step" and exact.contains(0)
    assert doc.expected("train/weight/max") == []
    grad = doc.metric("train/grad_norm")
    assert (grad.section, grad.meaning, grad.url) == (
        "training",
        "the gradient norm",
        "http://127.0.0.1:8000/reference/metrics/training/#m-train-grad_norm",
    )
    with pytest.raises(KeyError):
        doc.expected("train/nothing")
    broken = tmp_path / "x.json"
    broken.write_text('{"schema_version": 2}', "utf-8")
    with pytest.raises(ValueError, match="not an exported metrics-manual profile"):
        load_profile(broken)


# --- round trip, as a property over generated profiles ---------------------------------

numbers = st.one_of(st.integers(-(10**6), 10**6), st.floats(-1e9, 1e9, allow_nan=False, allow_infinity=False))
# What the model accepts as text: one line, no control characters, not blank.
texts = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=30).filter(str.strip)
conditions = st.none() | texts
sources = st.lists(st.sampled_from(["summary", "code"]), max_size=2, unique=True)


@st.composite
def bands(draw: st.DrawFn) -> dict:
    lo, hi = sorted([draw(numbers), draw(numbers)])
    e = {"kind": "band", "condition": draw(conditions), "sources": draw(sources)}
    which = draw(st.sampled_from(["both", "min", "max"]))
    e.update({"min": lo} if which != "max" else {})
    e.update({"max": hi} if which != "min" else {})
    if draw(st.booleans()):
        e["steps"] = draw(st.integers(2, 10))
        if draw(st.booleans()):
            e["window"] = {"first": draw(st.integers(1, e["steps"]))}
    return e


tolerances = st.integers(0, 10) | st.floats(0, 1e3, allow_nan=False)


@st.composite
def corridors(draw: st.DrawFn) -> dict:
    steps = draw(st.lists(st.integers(0, 10**6), min_size=1, max_size=8, unique=True))
    reference = {
        "source": draw(st.sampled_from(["summary", "code"])),
        "points": [[s, draw(numbers)] for s in sorted(steps)],
    }
    if draw(st.booleans()):
        reference["rolling_median"] = draw(st.integers(1, 9))
    e = {"kind": "corridor", "reference": reference, "condition": draw(conditions), "sources": draw(sources)}
    for side in ("up", "down"):  # each side states one of its tolerances or both
        which = draw(st.sampled_from(["rel", "abs_floor", "both"]))
        e.update({f"rel_{side}": draw(tolerances)} if which != "abs_floor" else {})
        e.update({f"abs_floor_{side}": draw(tolerances)} if which != "rel" else {})
    return e


expectations = st.one_of(
    bands(),
    corridors(),
    st.fixed_dictionaries(
        {
            "kind": st.just("median"),
            "value": numbers,
            "steps": st.integers(1, 10),
            "condition": conditions,
            "sources": sources,
        },
        optional={"tolerance": st.floats(1e-6, 10, allow_nan=False)},
    ),
    st.fixed_dictionaries(
        {
            "kind": st.just("exact"),
            "value": numbers,
            "condition": conditions,
            "at": st.sampled_from(["every_step", "every_run"]) | st.builds(lambda s: {"step": s}, st.integers(0, 9)),
        }
    ),
    st.fixed_dictionaries({"kind": st.just("presence"), "condition": conditions}),
)
KEYS = ["rollout/raw_reward", "rollout/response_lengths", "train/grad_norm", "train/pg_clipfrac", "train/weight/*"]


@pytest.fixture(scope="module")
def tiny_manual(tmp_path_factory: pytest.TempPathFactory):
    root = write_project(tmp_path_factory.mktemp("rt"))
    return load_manual(root), root


@settings(max_examples=100, deadline=None)
@given(
    exps=st.dictionaries(st.sampled_from(KEYS), st.lists(expectations, min_size=1, max_size=3), max_size=5), title=texts
)
def test_every_format_loads_back_to_the_same_profile(tiny_manual, exps: dict, title: str) -> None:
    manual, _ = tiny_manual
    base = manual.profile("tiny").model_dump()
    profile = Profile.model_validate({**base, "title": title, "expectations": exps}, strict=False)
    doc = export_document(manual, profile, "http://127.0.0.1:8000/")
    assert ProfileExport.model_validate(json.loads(to_json(doc))).to_profile() == profile
    assert ProfileExport.model_validate(yaml.safe_load(to_yaml(doc))).to_profile() == profile
    from_csv = {k: v for k, v in read_csv(to_csv(doc)).items() if v}
    assert from_csv == profile.expectations
    for m in json.loads(to_json(doc))["metrics"]:
        for e in m["expectations"]:
            for field in ("min", "max", "value"):
                assert field not in e or math.isfinite(e[field])


json_like = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(blacklist_categories=("Cs",))),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(st.characters(blacklist_categories=("Cs",))), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text(st.characters(blacklist_categories=("Cs",))), json_like, max_size=5))
def test_yaml_emitter_round_trips_any_json_like_data(data: dict) -> None:
    from metrics_manual.exports.yaml_text import to_yaml_text

    assert yaml.safe_load(to_yaml_text(data)) == (data or None)


# --- Prometheus ------------------------------------------------------------------------


def test_gauge_names_follow_miles() -> None:
    assert gauge_name("train/grad_norm") == "miles_metric_train_grad_norm"
    assert gauge_name("passrate/pass@k-8") == "miles_metric_passrate_pass_at_k_8"


def test_rules_leave_out_what_no_rule_can_judge(tiny: Path) -> None:
    (tiny / "mkdocs.yml").write_text("site_name: x\nsite_url: http://127.0.0.1:8000/\n", "utf-8")
    manual, files = generate(tiny)
    text = files["docs/export/tiny.rules.yml"]
    rules = yaml.safe_load(text)["groups"][0]["rules"]
    assert [(r["labels"]["metric"], r["alert"], r.get("for")) for r in rules] == [
        ("rollout/raw_reward", "MilesRolloutRawRewardOutOfRangeInFirst10Steps", "1m"),
        ("train/grad_norm", "MilesTrainGradNormOutOfRange", None),
        ("train/grad_norm", "MilesTrainGradNormOutOfRangeInFirst2Steps", "1m"),
        ("train/pg_clipfrac", "MilesTrainPgClipfracNotExpected", None),
    ]
    assert [line for line in text.splitlines() if line.startswith("# - ")] == [
        "# - rollout/response_lengths: 400 tokens median of 10 steps, with plain sampling (a median over steps: "
        "Prometheus keeps scrapes, not steps (a longer step would count more), and the median is known only after "
        "its last step)",
    ]
    g = "miles_metric_train_grad_norm"
    assert rules[1]["expr"] == f"{g} < 0.25 or {g} > 4.5 or {g} != {g}"
    assert rules[2]["expr"] == f"({g} < 1 or {g} > 3 or {g} != {g}) and on(run_name) miles_metric_train_step < 2"
    assert (
        rules[1]["annotations"]["manual_url"] == "http://127.0.0.1:8000/reference/metrics/training/#m-train-grad_norm"
    )


def test_site_url_comes_from_the_environment_as_mkdocs_reads_it(tiny: Path) -> None:
    (tiny / "mkdocs.yml").write_text("site_name: x\nsite_url: !ENV [SITE_URL, 'http://127.0.0.1:8000/']\n", "utf-8")
    import os
    import subprocess
    import sys

    env = {**os.environ, "SITE_URL": "https://metrics.example.org/manual/"}
    out = subprocess.run(
        [sys.executable, "-m", "metrics_manual", "export", "--root", str(tiny), "--profile", "tiny"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    assert (
        json.loads(out.stdout)["metrics"][0]["url"]
        == "https://metrics.example.org/manual/reference/metrics/rollout/#m-rollout-raw_reward"
    )
    env.pop("SITE_URL")
    out = subprocess.run(
        [sys.executable, "-m", "metrics_manual", "export", "--root", str(tiny), "--profile", "tiny"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert (
        json.loads(out.stdout)["metrics"][0]["url"]
        == "http://127.0.0.1:8000/reference/metrics/rollout/#m-rollout-raw_reward"
    )


@pytest.mark.parametrize("text", ['=HYPERLINK("http://x","y")', "+1", "-2+3", "@SUM(A1)", "'quoted", "plain"])
def test_csv_cells_never_open_as_formulas(tmp_path: Path, text: str) -> None:
    profile = TINY_PROFILE.replace("condition: with plain sampling", f"condition: {json.dumps(text)}")
    catalog = TINY_CATALOG.replace("meaning: the gradient norm", f"meaning: {json.dumps(text)}")
    manual, files = generate(write_project(tmp_path, catalog=catalog, profiles={"tiny": profile}))
    rows = list(csv.DictReader(io.StringIO(files["docs/export/tiny.csv"], newline="")))
    cells = [r["condition"] for r in rows if r["key"] == "rollout/response_lengths"] + [
        r["meaning"] for r in rows if r["key"] == "train/grad_norm"
    ]
    for cell in cells:
        assert not cell.startswith(("=", "+", "-", "@")) and cell.lstrip("'") == text.lstrip("'")
        assert cell == (text if text == "plain" else "'" + text)
    assert {k: v for k, v in read_csv(files["docs/export/tiny.csv"]).items() if v} == manual.profile(
        "tiny"
    ).expectations


def test_annotation_text_from_the_source_is_not_a_go_template(tiny: Path) -> None:
    manual = load_manual(
        write_project(
            tiny.parent / "g",
            profiles={
                "tiny": TINY_PROFILE.replace(
                    "{kind: band, min: 0.25, max: 4.5}", "{kind: band, min: 0.25, max: 4.5, condition: 'with {{ $x }}'}"
                )
            },
        )
    )
    doc = export_document(manual, manual.profile("tiny"), None)
    rules = yaml.safe_load(to_prometheus(doc))["groups"][0]["rules"]
    grad = next(r for r in rules if r["labels"]["metric"] == "train/grad_norm")
    assert grad["annotations"]["expected"] == '0.25 to 4.5 per step, with {{ "{{" }} $x }}'


def ruled(doc: ProfileExport, rules: list[dict]) -> list[tuple[str, Band | Exact, dict]]:
    """Each rule beside the key and expectation it judges: the rules follow the metrics, their
    expectations and keys in order, one for each that a rule can judge."""
    judged = [
        (key, e)
        for m in doc.metrics
        for e in m.expectations
        if isinstance(e, Band | Exact)
        for key in m.members or [m.key]
        if no_gauge(key) is None
        and (e.span == EveryStep() or no_gauge(doc.step_keys.get(key.split("/")[0], ".")) is None)
    ]
    assert [key for key, _ in judged] == [r["labels"]["metric"] for r in rules]
    return [(key, e, r) for (key, e), r in zip(judged, rules)]


def covered_and_not(span: Span) -> tuple[int, int | None]:
    """A step the span covers, and one it does not (None: it covers every step)."""
    if isinstance(span, Window):
        return 0, span.first
    if isinstance(span, FirstSteps):
        return 0, span.count
    if isinstance(span, AtStep):
        return span.step, span.step + 1
    assert isinstance(span, EveryStep), span
    return 0, None


def promtool_tests(rule_file: Path, doc: ProfileExport, keys: set[str] | None = None) -> dict:
    """A promtool unit test per rule: it fires for a series outside, or NaN, at a step the range covers;
    not for one inside, nor for one outside at a step the range does not cover."""
    tests = []
    for key, e, rule in ruled(doc, doc_rules(rule_file)):
        if keys is not None and key not in keys:
            continue
        if isinstance(e, Band):
            lo, hi = e.min, e.max
            width = abs((hi if hi is not None else 0) - (lo if lo is not None else 0)) or 1.0
            inside = (lo + hi) / 2 if lo is not None and hi is not None else (lo if lo is not None else hi)
            outside = [
                v
                for v in ((lo - width) if lo is not None else None, (hi + width) if hi is not None else None)
                if v is not None
            ] + [math.nan]
        else:
            inside, outside = e.value, [e.value + 1, e.value - 1, math.nan]
        g = gauge_name(key)
        step, later = covered_and_not(e.span)
        step_gauge = gauge_name(doc.step_keys[key.split("/")[0]]) if later is not None else None
        for bad in outside:
            series = [
                {"series": f'{g}{{run_name="good"}}', "values": held(inside)},
                {"series": f'{g}{{run_name="bad"}}', "values": held(bad)},
            ]
            if step_gauge:
                series += [
                    {"series": f'{step_gauge}{{run_name="good"}}', "values": held(step)},
                    {"series": f'{step_gauge}{{run_name="bad"}}', "values": held(step)},
                    {"series": f'{g}{{run_name="later"}}', "values": held(bad)},
                    {"series": f'{step_gauge}{{run_name="later"}}', "values": held(later)},
                ]
            alert = {
                "exp_labels": {**rule["labels"], "run_name": "bad"},
                "exp_annotations": {k: expand(v, "bad", bad) for k, v in rule["annotations"].items()},
            }
            tests.append(
                {
                    "interval": "1m",
                    "input_series": series,
                    "alert_rule_test": [{"eval_time": "2m", "alertname": rule["alert"], "exp_alerts": [alert]}],
                }
            )
    return {"rule_files": [str(rule_file)], "evaluation_interval": "1m", "tests": tests}


@pytest.mark.promtool
@pytest.mark.parametrize("root_kind", [pytest.param("repo", marks=REAL_TREE), "tiny"])
def test_promtool_checks_and_unit_tests_the_rules(tmp_path: Path, tiny: Path, root_kind: str) -> None:
    promtool = require_tool("promtool")
    root = PROJECT if root_kind == "repo" else tiny
    manual, files = generate(root)
    for profile in manual.profiles:
        rule_file = tmp_path / f"{profile.id}.rules.yml"
        rule_file.write_text(files[f"docs/export/{profile.id}.rules.yml"], "utf-8")
        checked = subprocess.run([promtool, "check", "rules", str(rule_file)], capture_output=True, text=True)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        doc = export_document(manual, profile, None)
        spec = promtool_tests(rule_file, doc)
        if not spec["tests"]:
            continue  # a profile may have no range a gauge can judge
        test_file = tmp_path / f"{profile.id}.test.yml"
        test_file.write_text(yaml.safe_dump(spec, sort_keys=False), "utf-8")
        tested = subprocess.run([promtool, "test", "rules", str(test_file)], capture_output=True, text=True)
        assert tested.returncode == 0, tested.stdout + tested.stderr
        # The same tests must fail if a rule stayed silent: drop one alert and expect promtool to say so.
        spec["tests"][0]["alert_rule_test"][0]["exp_alerts"] = []
        test_file.write_text(yaml.safe_dump(spec, sort_keys=False), "utf-8")
        assert subprocess.run([promtool, "test", "rules", str(test_file)], capture_output=True).returncode != 0


# Every character the metric key pattern accepts after the namespace, one key each.
KEY_CHARACTERS = "abzAZ09_@.-"


@pytest.mark.promtool
@pytest.mark.parametrize("step_key", ["train/step", "train/St-ep@1", "train/st.ep"])
def test_rules_are_valid_for_every_key_the_pattern_allows(tmp_path: Path, step_key: str) -> None:
    """Every character a key may hold, in the metric's key and its step key's; quotes and Go template
    braces in the source's words. promtool accepts the rules, and they fire as the profile says."""
    promtool = require_tool("promtool")
    keys = [f"train/k{i}{c}x" for i, c in enumerate(KEY_CHARACTERS)] + ["train/a.b/c-d@e"]
    words = "with \"quotes\", 'single' and {{ $labels.x }}"
    catalog = TINY_CATALOG.replace(
        "      - key: train/pg_clipfrac\n",
        "".join(f"      - {{key: {json.dumps(k)}, meaning: {json.dumps(words)}}}\n" for k in keys)
        + "      - key: train/pg_clipfrac\n",
    ).replace("train: train/step", f"train: {json.dumps(step_key)}")
    ranges = "[{kind: band, min: 0, max: 1}, {kind: band, min: 0, max: 1, steps: 5}, {kind: exact, value: 0, at: {step: 0}, condition: %s}]"
    profile = (
        TINY_PROFILE.split("expectations:")[0].replace("title: Tiny runs", f"title: {json.dumps(words)}")
        + "expectations:\n"
        + "".join(f"  {json.dumps(k)}: {ranges % json.dumps(words)}\n" for k in keys)
    )
    manual, files = generate(write_project(tmp_path / "p", catalog=catalog, profiles={"tiny": profile}))
    text = files["docs/export/tiny.rules.yml"]
    rule_file = tmp_path / "rules.yml"
    rule_file.write_text(text, "utf-8")
    checked = subprocess.run([promtool, "check", "rules", str(rule_file)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    rules = doc_rules(rule_file)
    gauged = [k for k in keys if "." not in k]
    steps_known = "." not in step_key
    assert [r["labels"]["metric"] for r in rules] == [k for k in gauged for _ in range(3 if steps_known else 1)]
    for key in keys:
        if "." in key:
            assert (
                f"# - {key}: 0 to 1 per step (no gauge: Miles keeps '.' in the name, which Prometheus does not allow)"
                in text
            )
        elif not steps_known:
            why = f"only the first 5 steps, and its step key {step_key} has no gauge: Miles keeps '.' in the name"
            assert f"# - {key}: 0 to 1 per step over 5 steps ({why}, which Prometheus does not allow)" in text
    if step_key != "train/St-ep@1":
        return  # the firing tests once, on a key with each character Miles replaces and a capital
    doc = export_document(manual, manual.profile("tiny"), None)
    spec = promtool_tests(rule_file, doc, {k for k in gauged if any(c in k for c in "@-A")})
    test_file = tmp_path / "test.yml"
    test_file.write_text(yaml.safe_dump(spec, sort_keys=False), "utf-8")
    tested = subprocess.run([promtool, "test", "rules", str(test_file)], capture_output=True, text=True)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert spec["tests"] and all(
        '"quotes"' in t["alert_rule_test"][0]["exp_alerts"][0]["exp_annotations"]["description"] for t in spec["tests"]
    )


def test_load_profile_refuses_deep_nesting_as_a_value_error(tmp_path: Path) -> None:
    for name, text in (("deep.json", "[" * 100_000), ("deep.yaml", "[" * 100_000)):
        (tmp_path / name).write_text(text, "utf-8")
        with pytest.raises(ValueError, match="not an exported metrics-manual profile"):
            load_profile(tmp_path / name)


def test_an_empty_output_is_an_error_not_standard_output(tiny: Path) -> None:
    out = run_cli("export", "--root", str(tiny), "--profile", "tiny", "-o", "")
    assert (out.returncode, out.stdout) == (2, "")
    assert "-o: an empty value; name a file (or a folder), or - for standard output" in out.stderr
