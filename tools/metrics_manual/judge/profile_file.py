"""An exported profile read from a file (`judge --profile file.json`, `api.load_profile`).

Only the two forms that carry every expectation can be judged against: the JSON and the YAML that
`metrics-manual export` writes. Anything else given there is a finding at the file's own line and
column, never a parser's or a validator's raw words: another form of export (CSV, alert rules, a
Grafana dashboard) or a source profile is named for what it is; a field the export does not hold
is placed where it stands (the source's reader gives the positions, on this error path only).

An export is untrusted input, held to the source's own rules: YAML is read by the source's reader
(anchors and aliases are refused before anything is expanded, merge keys and duplicate keys too),
JSON refuses a key given twice in an object, and a metric key given twice in `metrics` is a finding
at both places; judge would otherwise read silently one of two values, or judge a metric twice.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.codes import Code
from metrics_manual.diagnostics.finding import Finding
from metrics_manual.disk.files import file_kind
from metrics_manual.model.schema import AtStep, Exact, ProfileExport
from metrics_manual.runs.values import MAX_STEP
from metrics_manual.text import quoted, shown_path

if TYPE_CHECKING:  # the reader is imported on an error path only (judge's start-up: tests/cli/test_imports.py)
    from metrics_manual.source.reader import Document

JUDGED_FORMS = "an exported profile in JSON or YAML (the .json or .yaml that `metrics-manual export` writes)"
TAKES = f"--profile takes a profile id of the project (metrics-manual list profiles) or {JUDGED_FORMS}"
MAX_BYTES = 64 * 2**20  # an export of 10,000 metrics is about 10 MB
MAX_FINDINGS = 100  # listed of one kind of problem: a hostile file may hold a million; the first say what is wrong
_OTHER_FORMS = {  # name endings of the forms export writes that hold no profile to judge against
    ".rules.yml": "Prometheus alerting rules",
    ".rules.yaml": "Prometheus alerting rules",
    ".grafana.json": "a Grafana dashboard",
    ".csv": "a CSV export",
}


class ProfileFileError(ValueError):
    """The file is not an exported profile judge can read: its findings, each at a line and column.
    A ValueError, as `load_profile` has always raised."""

    def __init__(self, path: str, findings: list[Finding]) -> None:
        self.findings = findings
        super().__init__(f"{path}: not an exported metrics-manual profile: " + "; ".join(map(str, findings)))


def other_form(path: Path) -> str | None:
    """The export form a file's name says it is, when that form cannot be judged against."""
    name = path.name.lower()
    return next((what for end, what in _OTHER_FORMS.items() if name.endswith(end)), None)


def cannot_judge(what: str) -> str:
    return f"{what} cannot be judged against; judge takes {JUDGED_FORMS}"


def read_profile_file(path: Path) -> ProfileExport:
    """The exported profile in `path`; ProfileFileError with its findings when it is not one."""
    at = shown_path(path)

    def bad(message: str, code: Code = codes.NOT_A_PROFILE_FILE, line: int = 1, col: int = 1) -> ProfileFileError:
        return ProfileFileError(at, [Finding(at, line, col, message, code=code)])

    if what := other_form(path):
        raise bad(cannot_judge(what))
    raw = _read(path, bad)
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line, col = raw.count(b"\n", 0, exc.start) + 1, exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise bad(f"not UTF-8 (byte 0x{raw[exc.start]:02x}); an export is UTF-8 text", line=line, col=col) from None
    data = _parse(path, text, at, bad)
    if (what := _looks_like(data, text)) is not None:
        raise bad(what)
    try:
        export = ProfileExport.model_validate(data)
    except ValidationError as exc:
        raise ProfileFileError(at, _field_findings(at, text, data, exc)) from None
    except RecursionError:
        raise bad("nested too deeply to be an exported profile") from None
    if twice := _keys_twice(export):
        raise ProfileFileError(at, _twice_findings(at, text, data, twice))
    if far := _steps_too_far(export):
        raise ProfileFileError(at, _far_findings(at, text, data, far))
    return export


def _read(path: Path, bad: Any) -> bytes:
    """The file's bytes: only a regular file, never blocking on a pipe, at most MAX_BYTES."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise bad(f"cannot read the file: {exc.strerror or exc}") from None
    if kind := file_kind(st.st_mode):
        raise bad(f"not a regular file but {kind}; {TAKES}")
    try:  # O_NONBLOCK: a file that turned into a pipe after the check still opens at once
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise bad(f"cannot read the file: {exc.strerror or exc}") from None
    with open(fd, "rb", closefd=True) as fh:
        if kind := file_kind(os.fstat(fd).st_mode):
            raise bad(f"not a regular file but {kind}; {TAKES}")
        try:
            raw = fh.read(MAX_BYTES + 1)
        except OSError as exc:
            raise bad(f"cannot read the file: {exc.strerror or exc}") from None
    if len(raw) > MAX_BYTES:
        raise bad(f"larger than {MAX_BYTES // 2**20} MB; an exported profile is far smaller")
    return raw


def _parse(path: Path, text: str, at: str, bad: Any) -> Any:
    """The file's data, as JSON or (by its name) YAML; a syntax error at its line and column."""
    if _csv_header(text):
        raise bad(cannot_judge("a CSV export"))
    if path.suffix.lower() in (".yaml", ".yml"):
        return _parse_yaml(text, at)
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except _KeyTwice as twice:
        raise ProfileFileError(at, _json_duplicates(at, text, twice.key)) from None
    except json.JSONDecodeError as exc:
        raise bad(f"invalid JSON: {exc.msg[:1].lower()}{exc.msg[1:]}", line=exc.lineno, col=exc.colno) from None
    except (ValueError, RecursionError):
        raise bad("not JSON that an exported profile is (nested too deeply, or a number too long)") from None


def _parse_yaml(text: str, at: str) -> Any:
    """YAML read by the source's reader, held to its rules: anchors, aliases, merge keys, duplicate
    keys, tags and YAML 1.1's surprises are findings. It reads libyaml's events and never expands an
    alias, so a file of a few KB can no longer stand for a million expectations."""
    from metrics_manual.source.reader import read_yaml

    doc, findings = read_yaml(text, at, positions=False)
    findings = [f for f in findings if f.code is not codes.NOT_A_MAPPING]  # said below, as judge says it
    if 0 < len(findings) <= MAX_FINDINGS and any(f.code is codes.DUPLICATE_KEY for f in findings):
        # Again with positions, to say where a duplicate key was first defined (not for a flood of them).
        _, findings = read_yaml(text, at)
        findings = [f for f in findings if f.code is not codes.NOT_A_MAPPING]
    if findings:
        raise ProfileFileError(at, _first(at, findings))
    return doc.data


def _first(at: str, findings: list[Finding], total: int | None = None) -> list[Finding]:
    """At most MAX_FINDINGS findings, then one that counts the rest (of `total`, when more than given)."""
    total = len(findings) if total is None else total
    if total <= MAX_FINDINGS:
        return findings
    more = total - MAX_FINDINGS
    last = findings[MAX_FINDINGS]
    message = f"{more:,} more findings of the same kinds not listed (the first {MAX_FINDINGS} are above)"
    return [*findings[:MAX_FINDINGS], Finding(at, last.line, last.col, message, code=last.code)]


class _KeyTwice(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as a dict; _KeyTwice when a key is given twice (json.loads keeps the last)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _KeyTwice(key)
            seen.add(key)
    return out


def _json_duplicates(at: str, text: str, key: str) -> list[Finding]:
    """The findings for JSON that gives a key twice in an object: each at its line and column as the
    source's reader places them (JSON is YAML to it; on this error path only), else the key at 1:1."""
    from metrics_manual.source.reader import read_yaml

    try:
        _, findings = read_yaml(text, at)
    except Exception:  # noqa: BLE001 - positions are a help; the finding stands without them
        findings = []
    placed = _first(at, [f for f in findings if f.code is codes.DUPLICATE_KEY])
    return placed or [Finding(at, 1, 1, f"duplicate key {quoted(key)} in an object", code=codes.DUPLICATE_KEY)]


def _csv_header(text: str) -> bool:
    first = text.lstrip().split("\n", 1)[0].split(",")
    return len(first) > 3 and first[:3] == ["profile", "section", "key"]


def _looks_like(data: Any, text: str) -> str | None:
    """Why data that parsed is plainly no exported profile (another form, the source), or None."""
    if data is None:
        return f"the file is empty; judge takes {JUDGED_FORMS}"
    if not isinstance(data, dict):
        got = "a list" if isinstance(data, list) else "text" if isinstance(data, str) else "a single value"
        return f"not an exported profile: the file holds {got}, not a mapping; judge takes {JUDGED_FORMS}"
    if "schema_version" in data or "profile" in data or "metrics" in data:
        return None
    if "groups" in data:
        return cannot_judge("Prometheus alerting rules")
    if "panels" in data or "dashboard" in data:
        return cannot_judge("a Grafana dashboard")
    if "expectations" in data or "setup" in data:
        return (
            "a profile of the source (ranges/profiles/), not an export: inside the project give its id "
            "(--profile ID), or export it with metrics-manual export"
        )
    return None


def _field_findings(at: str, text: str, data: Any, exc: ValidationError) -> list[Finding]:
    """The validator's errors as the source's findings (the same codes and words), each placed at
    its value in the file where the source's reader can place it (JSON is YAML to it), else at 1:1,
    and naming the field's path in the export."""
    from metrics_manual.source.load import validate
    from metrics_manual.source.reader import Document, read_yaml

    try:
        doc, _ = read_yaml(text, at)  # positions only: what the file holds is `data`, read above
    except Exception:  # noqa: BLE001 - positions are a help; the findings stand without them
        doc = Document(at, None)
    placed = Document(at, data, doc.values, doc.keys) if doc.data is not None else Document(at, data)
    _, findings = validate(ProfileExport, placed)
    errors = exc.errors(include_url=False)
    out: dict[Finding, None] = {}  # a number's two branches (int, float) give the same finding twice
    for f, err in zip(findings, errors, strict=False):  # validate makes one finding per error, in order
        where = _dotted(err["loc"])
        out[Finding(f.path, f.line, f.col, f"{f.message} (at {where})" if where else f.message, code=f.code)] = None
    return list(out)


def _dotted(loc: tuple[int | str, ...]) -> str:
    """metrics[3].expectations[0].min: where a value stands in the export (the validator's union tags dropped)."""
    from metrics_manual.model.kinds import KINDS

    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part not in KINDS and part not in ("int", "float"):
            text += f".{part}" if text else str(part)
    return text


def _keys_twice(export: ProfileExport) -> list[tuple[str, int, int]]:
    """(key, index of the metric that gives it again, index of the first): a metric key, a family's
    member or a former key given twice in `metrics` (judge would judge it twice, or read one as the
    other). The source refuses the same (source/load.py); an export made from it never has one."""
    every = [k for m in export.metrics for k in (m.key, *m.members, *(r.key for r in m.renamed_from))]
    if len(set(every)) == len(every):  # the common case, at the cost of one set
        return []
    first: dict[str, int] = {}
    twice: list[tuple[str, int, int]] = []
    for i, m in enumerate(export.metrics):
        for key in dict.fromkeys((m.key, *m.members, *(r.key for r in m.renamed_from))):
            if (j := first.setdefault(key, i)) != i:
                twice.append((key, i, j))
    return twice


def _steps_too_far(export: ProfileExport) -> list[tuple[int, int, int]]:
    """(metric index, expectation index, step) of each `at: {step: N}` past MAX_STEP: no run logs such
    a step (a step is from 0 to 2^63-1), so judge would wait on it for ever."""
    return [
        (i, j, e.at.step)
        for i, m in enumerate(export.metrics)
        for j, e in enumerate(m.expectations)
        if isinstance(e, Exact) and isinstance(e.at, AtStep) and e.at.step > MAX_STEP
    ]


def _placed(at: str, text: str, data: Any) -> Document:
    """The profile's data with the positions of its text (read again: only on an error path)."""
    from metrics_manual.source.reader import Document, read_yaml

    try:
        doc, _ = read_yaml(text, at)
    except Exception:  # noqa: BLE001 - positions are a help; the findings stand without them
        doc = Document(at, None)
    return Document(at, data, doc.values, doc.keys) if doc.data is not None else Document(at, data)


def _far_findings(at: str, text: str, data: Any, far: list[tuple[int, int, int]]) -> list[Finding]:
    placed = _placed(at, text, data)
    out = []
    for i, j, step in far[: MAX_FINDINGS + 1]:
        shown = f"{step}" if len(str(step)) <= 40 else f"{str(step)[:20]}... ({len(str(step))} digits)"
        message = (
            f"step {shown} is past the last step a run can log: a step is from 0 to 2^63-1 "
            f"(at metrics[{i}].expectations[{j}].at.step)"
        )
        out.append(placed.finding(("metrics", i, "expectations", j, "at", "step"), message, code=codes.INVALID_VALUE))
    return _first(at, out, len(far))


def _twice_findings(at: str, text: str, data: Any, twice: list[tuple[str, int, int]]) -> list[Finding]:
    """A finding at each metric that gives a key again, naming where the first gave it."""
    placed = _placed(at, text, data)
    out = []
    for key, i, j in twice[: MAX_FINDINGS + 1]:
        line, col = placed.where(("metrics", j, "key"))
        where = f"metrics[{j}], line {line}, column {col}" if (line, col) != (1, 1) else f"metrics[{j}]"
        message = f"metric {quoted(key)} is given twice: metrics[{i}] gives it again (first in {where})"
        out.append(placed.finding(("metrics", i, "key"), message, code=codes.DUPLICATE_ID))
    return _first(at, out, len(twice))
