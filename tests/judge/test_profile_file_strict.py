"""An exported profile is untrusted input, held to the source's rules (judge --profile FILE,
api.load_profile): no YAML anchor or alias (refused before anything is expanded), no merge key, no key
given twice in a mapping or a JSON object, no metric key given twice in `metrics`, and schema_version a
whole number. Each is `path:line:col: error: message [MMnnn]`, exit 2, no traceback."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

import run_forms
from conftest import run_cli
from judge_fixture import clean_run, judged_project
from metrics_manual.api import ProfileFileError, load_profile

FINDING = re.compile(
    r"^(?P<path>.+):(?P<line>\d+):(?P<col>\d+): (?P<severity>error|warning): (?P<msg>.+) \[(?P<code>MM\d{3})\]$"
)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The text of the `judged` profile's JSON and YAML exports."""
    project = judged_project(tmp_path_factory.mktemp("strict") / "p")
    out = {}
    for fmt in ("json", "yaml"):
        dest = project.parent / f"judged.{fmt}"
        ran = run_cli("export", "--profile", "judged", "--format", fmt, "-o", str(dest), cwd=project)
        assert ran.returncode == 0, ran
        out[fmt] = dest.read_text("utf-8")
    return out


def _judge(tmp_path: Path, name: str, text: str) -> tuple[Path, list[re.Match[str]]]:
    """judge --profile FILE (holding `text`) outside any project: exit 2, nothing on stdout, no
    traceback; the file and its findings."""
    profile = tmp_path / name
    profile.write_text(text, "utf-8")
    run = tmp_path / "run"
    if not run.exists():
        run_forms.write_dashboard(clean_run(), run)
    ran = run_cli("judge", "--profile", str(profile), str(run), cwd=tmp_path)
    assert (ran.returncode, ran.stdout) == (2, ""), ran
    assert "Traceback" not in ran.stderr and "pydantic" not in ran.stderr, ran.stderr
    found = [m for m in map(FINDING.match, ran.stderr.splitlines()) if m]
    assert found and len(found) == len(ran.stderr.splitlines()), ran.stderr
    assert all(m["path"] == str(profile) and m["severity"] == "error" for m in found)
    return profile, found


def _at(text: str, needle: str, nth: int = 0) -> tuple[int, int]:
    """1-based line and column of the nth occurrence of `needle` in `text`."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(needle, at + 1)
    return text.count("\n", 0, at) + 1, at - (text.rfind("\n", 0, at) + 1) + 1


def _where(m: re.Match[str]) -> tuple[int, int]:
    return int(m["line"]), int(m["col"])


def test_the_exports_as_written_are_judged(exported: dict[str, str], tmp_path: Path) -> None:
    """The rules refuse nothing export writes: both forms load, with every metric once."""
    for fmt, text in exported.items():
        (tmp_path / f"ok.{fmt}").write_text(text, "utf-8")
        profile = load_profile(tmp_path / f"ok.{fmt}")
        assert len({m.key for m in profile.metrics}) == len(profile.metrics) == 8


# --- YAML: anchors, aliases, merge keys ----------------------------------------------------------


def _laughs(levels: int, width: int) -> str:
    """A billion laughs: `levels` anchors, each a list of `width` aliases of the one before
    (width**levels values once expanded), under an expectation's `min`."""
    lines = ["laughs:", "  l0: &l0 [0.5]"]
    for i in range(1, levels):
        lines.append(f"  l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_before_it_is_expanded(exported: dict[str, str], tmp_path: Path) -> None:
    # 10**6 values once expanded (yaml.safe_load took seconds and hundreds of MB on less), then
    # a metric's expectations given as an alias of the same list 200 times (a pass for each).
    text = exported["yaml"].replace("metrics:\n", _laughs(7, 10) + "metrics:\n", 1)
    text = text.replace("  - key: rollout/raw_reward\n", "  - &m\n    key: rollout/raw_reward\n", 1)
    text += "  - *m\n" * 200
    started = time.process_time()
    path, found = _judge(tmp_path, "bomb.yaml", text)
    took = time.process_time() - started
    assert took < 1.0, f"{took:.2f} s of CPU to refuse the bomb"
    # One finding an anchor; an alias of an anchor already reported adds none.
    assert [m["code"] for m in found] == ["MM206"] * 8, [m.group() for m in found]
    assert _where(found[0]) == _at(text, "&l0")
    assert _where(found[-1]) == _at(text, "&m")
    assert found[0]["msg"] == "anchors and aliases (&name, *name) are not supported here; write the value out"


def test_an_alias_of_an_anchor_that_is_not_there_is_refused(exported: dict[str, str], tmp_path: Path) -> None:
    text = exported["yaml"].replace("min: 0.2", "min: *low", 1)
    _, found = _judge(tmp_path, "alias.yaml", text)
    assert [(m["code"], _where(m)) for m in found] == [("MM206", _at(text, "*low"))]


def test_a_merge_key_is_refused_at_its_place(exported: dict[str, str], tmp_path: Path) -> None:
    text = exported["yaml"].replace("        kind: band\n", "        <<: {kind: band}\n        kind: band\n", 1)
    _, found = _judge(tmp_path, "merge.yaml", text)
    assert [(m["code"], _where(m)) for m in found] == [("MM207", _at(text, "<<"))]
    assert found[0]["msg"] == "merge keys (<<) are not supported here; write the values out"


# --- a key given twice -----------------------------------------------------------------------------


def test_a_key_twice_in_yaml_is_refused_naming_the_first(exported: dict[str, str], tmp_path: Path) -> None:
    # YAML keeps the last: the band would have been judged on 0.0, not 0.2.
    text = exported["yaml"].replace("        min: 0.2\n", "        min: 0.2\n        min: 0.0\n", 1)
    _, found = _judge(tmp_path, "twice.yaml", text)
    (m,) = found
    first = _at(text, "min: 0.2")
    assert (m["code"], _where(m)) == ("MM208", _at(text, "min: 0.0"))
    assert m["msg"] == f"duplicate key 'min' (first defined at line {first[0]}, column {first[1]})"


def test_a_key_twice_in_a_json_object_is_refused_at_its_line_and_column(
    exported: dict[str, str], tmp_path: Path
) -> None:
    # json.loads keeps the last: the band would have been judged on 0.0, not 0.2.
    text = exported["json"].replace('"min": 0.2,', '"min": 0.2, "min": 0.0,', 1)
    path, found = _judge(tmp_path, "twice.json", text)
    (m,) = found
    first = _at(text, '"min": 0.2')
    assert (m["code"], _where(m)) == ("MM208", _at(text, '"min": 0.0'))
    assert m["msg"] == f"duplicate key 'min' (first defined at line {first[0]}, column {first[1]})"
    with pytest.raises(ProfileFileError) as caught:  # the API says the same
        load_profile(path)
    assert [(f.line, f.col, f.code.id) for f in caught.value.findings] == [(*_where(m), "MM208")]


def test_a_key_twice_in_json_the_yaml_reader_cannot_place_is_still_refused(
    exported: dict[str, str], tmp_path: Path
) -> None:
    # A raw U+2028 in a string is JSON but not YAML the reader takes: the finding stands at 1:1.
    text = exported["json"].replace('"Made up for tests."', '"Made up\u2028for tests."', 1)
    text = text.replace('"schema_version": 1,', '"schema_version": 1, "schema_version": 1,', 1)
    _, found = _judge(tmp_path, "twice.json", text)
    assert [(m["code"], _where(m), m["msg"]) for m in found] == [
        ("MM208", (1, 1), "duplicate key 'schema_version' in an object")
    ]


@pytest.mark.parametrize("form", ["json", "yaml"])
def test_a_metric_given_twice_is_refused_at_both_places(form: str, exported: dict[str, str], tmp_path: Path) -> None:
    """Judged twice otherwise (and the second copy's ranges may differ): the second names the first."""
    data = json.loads(exported["json"])
    twice = json.loads(json.dumps(data["metrics"][0]))
    twice["expectations"][0]["min"] = 0.0
    data["metrics"].append(twice)
    if form == "json":
        text, key = json.dumps(data, indent=2), '"key": '
    else:
        metric = exported["yaml"].split("\n  - key: ")[1]  # the first metric's lines, as export writes them
        text, key = exported["yaml"] + "  - key: " + metric.replace("min: 0.2", "min: 0.0") + "\n", "key: "
    _, found = _judge(tmp_path, f"twice.{form}", text)
    (m,) = found
    # Each at its key's value: the first metric's and the last's.
    (line, col), (again, again_col) = (
        _at(text, key + ('"' if form == "json" else "") + "rollout/raw_reward", n) for n in (0, 1)
    )
    first = (line, col + len(key))
    assert (m["code"], _where(m)) == ("MM106", (again, again_col + len(key)))
    assert m["msg"] == (
        "metric 'rollout/raw_reward' is given twice: metrics[8] gives it again "
        f"(first in metrics[0], line {first[0]}, column {first[1]})"
    )


def test_a_metric_key_that_is_also_another_metrics_member_is_refused(exported: dict[str, str], tmp_path: Path) -> None:
    data = json.loads(exported["json"])
    data["metrics"][3]["members"] = ["train/grad_norm"]  # the key of metrics[2]
    path, found = _judge(tmp_path, "member.json", json.dumps(data))
    assert [m["code"] for m in found] == ["MM106"]
    assert found[0]["msg"].startswith("metric 'train/grad_norm' is given twice: metrics[3] gives it again")


# --- schema_version --------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "shown"), [("true", "True"), ("1.0", "1.0")])
def test_schema_version_is_a_whole_number_not_a_boolean_or_a_float(
    value: str, shown: str, exported: dict[str, str], tmp_path: Path
) -> None:
    # A Literal[1] takes True and 1.0 by equality, even in strict mode.
    for form, was in (("json", '"schema_version": 1,'), ("yaml", "schema_version: 1\n")):
        now = was.replace("1", value)
        text = exported[form].replace(was, now, 1)
        _, found = _judge(tmp_path, f"version.{form}", text)
        (m,) = found
        assert (m["code"], _where(m)) == ("MM104", _at(text, value))
        assert m["msg"] == f"schema_version: expected an integer, got {shown} (at schema_version)"


def test_a_file_of_many_refused_keys_lists_the_first_hundred_and_counts_the_rest(
    exported: dict[str, str], tmp_path: Path
) -> None:
    text = exported["yaml"].replace("metrics:\n", "laughs:\n" + "  a: 1\n" * 251 + "metrics:\n", 1)
    _, found = _judge(tmp_path, "many.yaml", text)
    assert [m["code"] for m in found] == ["MM208"] * 101
    first = _at(text, "  a: 1")
    # Where the first was is not looked up again for so many (a second reading of a hostile file).
    assert (found[0]["msg"], _where(found[0])) == ("duplicate key 'a'", (first[0] + 1, 3))
    assert _where(found[-1]) == (first[0] + 101, 3)
    assert found[-1]["msg"] == "150 more findings of the same kinds not listed (the first 100 are above)"


def test_a_flood_of_metrics_given_twice_lists_the_first_hundred(exported: dict[str, str], tmp_path: Path) -> None:
    data = json.loads(exported["json"])
    data["metrics"] += [data["metrics"][0]] * 250
    _, found = _judge(tmp_path, "flood.json", json.dumps(data, indent=2))
    assert [m["code"] for m in found] == ["MM106"] * 101
    assert found[99]["msg"].startswith("metric 'rollout/raw_reward' is given twice: metrics[107] gives it again")
    assert found[-1]["msg"] == "150 more findings of the same kinds not listed (the first 100 are above)"
