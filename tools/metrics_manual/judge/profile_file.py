"""An exported profile read from a file (`judge --profile file.json`, `api.load_profile`).

Only the two forms that carry every expectation can be judged against: the JSON and the YAML that
`metrics-manual export` writes. Anything else given there is a finding at the file's own line and
column, never a parser's or a validator's raw words: another form of export (CSV, alert rules, a
Grafana dashboard) or a source profile is named for what it is; a field the export does not hold
is placed where it stands (the source's reader gives the positions, on this error path only).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.codes import Code
from metrics_manual.diagnostics.finding import Finding
from metrics_manual.model.schema import ProfileExport
from metrics_manual.text import clip, inert

JUDGED_FORMS = "an exported profile in JSON or YAML (the .json or .yaml that `metrics-manual export` writes)"
TAKES = f"--profile takes a profile id of the project (metrics-manual list profiles) or {JUDGED_FORMS}"
MAX_BYTES = 64 * 2**20  # an export of 10,000 metrics is about 10 MB
_OTHER_FORMS = {  # name endings of the forms export writes that hold no profile to judge against
    ".rules.yml": "Prometheus alerting rules",
    ".rules.yaml": "Prometheus alerting rules",
    ".grafana.json": "a Grafana dashboard",
    ".csv": "a CSV export",
}
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class ProfileFileError(ValueError):
    """The file is not an exported profile judge can read: its findings, each at a line and column.
    A ValueError, as `load_profile` has always raised."""

    def __init__(self, path: str, findings: list[Finding]) -> None:
        self.findings = findings
        super().__init__(f"{path}: not an exported metrics-manual profile: " + "; ".join(map(str, findings)))


def shown(path: Path) -> str:
    """A path as text that prints safely (bytes that are not UTF-8 as \\x escapes)."""
    return inert(os.fsencode(path).decode("utf-8", "backslashreplace"))


def file_kind(mode: int) -> str | None:
    """None for a regular file, else what it is in words ('a named pipe')."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def other_form(path: Path) -> str | None:
    """The export form a file's name says it is, when that form cannot be judged against."""
    name = path.name.lower()
    return next((what for end, what in _OTHER_FORMS.items() if name.endswith(end)), None)


def cannot_judge(what: str) -> str:
    return f"{what} cannot be judged against; judge takes {JUDGED_FORMS}"


def read_profile_file(path: Path) -> ProfileExport:
    """The exported profile in `path`; ProfileFileError with its findings when it is not one."""
    at = shown(path)

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
    data = _parse(path, text, bad)
    if (what := _looks_like(data, text)) is not None:
        raise bad(what)
    try:
        return ProfileExport.model_validate(data)
    except ValidationError as exc:
        raise ProfileFileError(at, _field_findings(at, text, data, exc)) from None
    except RecursionError:
        raise bad("nested too deeply to be an exported profile") from None


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


def _parse(path: Path, text: str, bad: Any) -> Any:
    """The file's data, as JSON or (by its name) YAML; a syntax error at its line and column."""
    if _csv_header(text):
        raise bad(cannot_judge("a CSV export"))
    if path.suffix.lower() in (".yaml", ".yml"):
        import yaml  # only here: a JSON profile is read without it

        try:
            return yaml.safe_load(text)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
            problem = " ".join(p for p in (exc.context, exc.problem) if p)
            raise bad(f"invalid YAML: {clip(problem)}", codes.INVALID_YAML, line, col) from None
        except yaml.YAMLError as exc:
            raise bad(f"invalid YAML: {clip(str(exc))}", codes.INVALID_YAML) from None
        except RecursionError:
            raise bad("nested too deeply to be an exported profile") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise bad(f"invalid JSON: {exc.msg[:1].lower()}{exc.msg[1:]}", line=exc.lineno, col=exc.colno) from None
    except (ValueError, RecursionError):
        raise bad("not JSON that an exported profile is (nested too deeply, or a number too long)") from None


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
