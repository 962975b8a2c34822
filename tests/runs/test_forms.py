"""The registry of run forms (runs/forms.py) is the only list of them, and a form is four places.

CONTRIBUTING.md, "Add a run form": a reader (runs/<form>.py), its entry in FORMS, its tests
(tests/runs/test_<form>.py) and its writer (WRITERS in tests/run_forms.py). Everything else takes
the list from the registry; the tests here fail when a form lacks one of the four, and a toy form
added to a copy of the package shows the rest following (detection, --input-format, the messages,
the judging page).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

import run_forms
from conftest import REPO, write_project
from metrics_manual.diagnostics import codes
from metrics_manual.runs.collect import Collector
from metrics_manual.runs.forms import BY_NAME, FORMS, RUN_FORMATS, RunForm, detect
from metrics_manual.runs.read import read_run
from metrics_manual.runs.series import TimedSeries
from metrics_manual.serve.plugin import facts
from metrics_manual.site.render import environment
from metrics_manual.source.load import load_manual

TESTS = REPO / "tests" / "runs"


def untested(forms: Iterable[str], tests: Path = TESTS) -> list[str]:
    """The forms without a test file of their own, tests/runs/test_<form>.py."""
    return [f for f in forms if not (tests / f"test_{f.replace('-', '_')}.py").is_file()]


def unwritten(forms: Iterable[str]) -> list[str]:
    """The forms tests/run_forms.py has no writer for (the tests over every form would skip them)."""
    return [f for f in forms if f not in run_forms.WRITERS]


def test_every_form_has_its_own_test_file_and_a_writer() -> None:
    assert untested(RUN_FORMATS) == [] and unwritten(RUN_FORMATS) == []
    assert set(run_forms.WRITERS) == set(RUN_FORMATS)  # and no writer of a form the registry lacks
    assert untested(["a-form-nobody-wrote"]) == ["a-form-nobody-wrote"]


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.name)
def test_a_sample_of_each_form_is_detected_as_it_and_read(form: RunForm, tmp_path: Path) -> None:
    f = tmp_path / form.sample_file
    f.write_text(form.sample + "\n" if form.sample else "", "utf-8")
    assert form.named(f.name)  # a folder search named --input-format FORM takes the file Miles names so
    assert detect(f) == form.name
    if form.sample:  # what Miles writes: read without a finding (a CSV header alone holds no metric to read)
        run = read_run([f], run_forms.STEP_KEYS)
        assert all(p.code == codes.UNKNOWN_RUN_FORM and "no metric was read" in p.message for p in run.problems)


def test_a_form_appended_to_must_name_its_tailer() -> None:
    events = BY_NAME["events"]
    fields = {k: getattr(events, k) for k in events.__dataclass_fields__}
    with pytest.raises(ValueError, match="a tailer is required"):
        RunForm(**(fields | {"tailer": None}))
    with pytest.raises(ValueError, match="a tailer is required"):
        RunForm(**(fields | {"grows": "exported"}))
    with pytest.raises(TypeError, match="tailer"):  # no default: a new form says what it is
        RunForm(**{k: v for k, v in fields.items() if k != "tailer"})


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.name)
def test_a_form_with_a_time_gives_each_file_its_span_and_each_record_its_time(form: RunForm, tmp_path: Path) -> None:
    # The span orders a run's lives in the merge: a form that names a time must give it, and one that
    # names none gives none (its files are ordered by nothing, docs/judging.md says so).
    if form.name == "tensorboard":
        pytest.importorskip("tensorboard")
    for f in run_forms.write(form.name, {"train/grad_norm": {0: 1.0, 1: 2.0}}, tmp_path):
        out = Collector(run_forms.STEP_KEYS)
        out.begin(str(f))
        form.read(f, str(f), out)
        assert (out.times is not None) == (form.time is not None), f
        # ... and each record its own time (Collector.at): a step's records across files are ordered by it.
        assert isinstance(out.series["train/grad_norm"], TimedSeries) == (form.time is not None), f


def judging_page(project: Path, package: str | None = None) -> str:
    """docs/judging.md rendered over `project`'s manual, as the site's plugin renders it."""
    body = (REPO / "docs" / "judging.md").read_text("utf-8").split("---\n", 2)[2]
    return environment(project / "templates").from_string(body).render(facts(load_manual(project)))


def test_the_judging_page_lists_every_form_from_the_registry(tmp_path: Path) -> None:
    page = judging_page(write_project(tmp_path / "p"))
    for form in FORMS:
        for text in (form.words, f"`{form.name}`", form.detected, form.sample, form.writes, form.reading):
            assert text in page, (form.name, text)
        assert f"| {form.words} | {form.writes} | {form.reading} | {form.time or 'none'} |" in page
    for field in ("sample", "writes", "reading", "detected", "words"):  # a table cell holds no `|`
        assert all("|" not in getattr(f, field) for f in FORMS), field


# --- a toy form, added to a copy of the package -----------------------------------------------------

TOY_READER = '''"""A toy form: a line `toy STEP KEY VALUE` a value."""

from pathlib import Path

from metrics_manual.diagnostics import codes
from metrics_manual.runs.collect import Collector
from metrics_manual.runs.lines import LineCursor


def read(path: Path, rel: str, out: Collector) -> None:
    for _, line in LineCursor(path).lines(out.progress):
        _, step, key, value = (line or b"").decode().split()
        if out.step_key(key) is not None:
            out.put(key, int(step), float(value))
'''
TOY_FORM = """    RunForm(
        name="toy",
        words="toy log",
        named=lambda name: name.endswith(".toy"),
        detect=lambda h: h.raw.startswith(b"toy "),
        detected="a file whose first bytes are `toy `",
        sample_file="run.toy",
        sample="toy 3 train/grad_norm 1.5",
        writes="nothing in Miles: a toy",
        reader="toy:read",
        reading="a value a line",
        grows="exported",
        tailer=None,
        time=None,
    ),
)
BY_NAME = """
TOY_CHECKS = """
import json, sys
from pathlib import Path
from metrics_manual.runs.forms import RUN_FORMATS
from metrics_manual.runs.read import RunInputError, read_run
from metrics_manual.serve.plugin import facts
from metrics_manual.site.render import environment
from metrics_manual.source.load import load_manual

tmp = Path(sys.argv[1])
(tmp / "run.toy").write_text("toy 3 train/grad_norm 1.5\\n", "utf-8")
(tmp / "notes.txt").write_text("not a run\\n", "utf-8")
run = read_run([tmp / "run.toy"], {"train": "train/step"})
try:
    read_run([tmp / "notes.txt"], {"train": "train/step"})
except RunInputError as err:
    refused = str(err)
body = Path(sys.argv[2]).read_text("utf-8").split("---\\n", 2)[2]
page = environment(tmp / "p" / "templates").from_string(body).render(facts(load_manual(tmp / "p")))
print(json.dumps({"forms": RUN_FORMATS, "formats": run.formats, "value": run.series["train/grad_norm"][3],
                  "refused": refused, "page": page}))
"""


@pytest.mark.slow
def test_a_toy_form_in_its_reader_and_its_entry_is_read_detected_offered_and_documented(tmp_path: Path) -> None:
    package = tmp_path / "metrics_manual"
    shutil.copytree(REPO / "tools" / "metrics_manual", package, ignore=shutil.ignore_patterns("__pycache__"))
    # The two places in the package: the reader, and its entry in FORMS.
    (package / "runs" / "toy.py").write_text(TOY_READER, "utf-8")
    forms = package / "runs" / "forms.py"
    text = forms.read_text("utf-8")
    assert text.count("\n)\nBY_NAME = ") == 1, "forms.py changed: update the toy"
    text = text.replace("\n)\nBY_NAME = ", "\n" + TOY_FORM, 1)
    forms.write_text(text, "utf-8")
    write_project(tmp_path / "p")
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}
    ran = subprocess.run(
        [sys.executable, "-c", TOY_CHECKS, str(tmp_path), str(REPO / "docs" / "judging.md")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0, ran.stderr
    got = json.loads(ran.stdout)
    assert got["forms"][-1] == "toy" and got["formats"] == ["toy"] and got["value"] == 1.5  # detected and read
    assert "tried: " + ", ".join(got["forms"]) in got["refused"]  # the message names it
    for text in ("`toy`", "a file whose first bytes are `toy `", "`toy 3 train/grad_norm 1.5`", "a toy"):
        assert text in got["page"], text  # the judging page lists it, --input-format included
    helped = subprocess.run(
        [sys.executable, "-m", "metrics_manual", "judge", "--help"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert "|toy]" in helped.stdout.replace("\n", "").replace(" ", ""), helped.stdout + helped.stderr
    # The two places in the tests: until they are written, these fail.
    assert untested(got["forms"]) == ["toy"] and unwritten(got["forms"]) == ["toy"]
