"""Check that docs, exports and schemas agree with ranges/, without building anything.

`check` makes the files in memory, asks `switch.plan` how the disk differs (the same plan
`build` carries out) and reports each difference as a finding, with a short diff.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from metrics_manual.build import generate
from metrics_manual.check.readback import reference_findings
from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import Finding
from metrics_manual.disk.files import read_text
from metrics_manual.disk.switch import MANIFEST, Plan, locked, plan, recover
from metrics_manual.exports.generated import EXPORT_DIR
from metrics_manual.judge.captures import rejudge
from metrics_manual.source.load import did_you_mean, gc_paused

FIX = "run `metrics-manual build`"
DIFF_LINES = 20  # lines of diff shown per file; the rest are counted
DIFF_WINDOW = 400  # changed lines per side that difflib compares: keeps a large drift linear


def short_diff(rel: str, old: str, new: str) -> str:
    """A unified diff of at most DIFF_LINES lines, with a count of the rest.

    The common head and tail are trimmed in linear time before difflib sees the middle,
    and difflib sees at most DIFF_WINDOW lines of it, so a drift of a whole large file
    costs about what reading it costs.
    """
    a, b = old.splitlines(True), new.splitlines(True)
    head = 0
    while head < len(a) and head < len(b) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < len(a) - head and tail < len(b) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    mid_a, mid_b = a[head : len(a) - tail], b[head : len(b) - tail]
    cut = max(len(mid_a), len(mid_b)) > DIFF_WINDOW
    lo = max(0, head - 3)
    win_a = a[lo : head + min(len(mid_a), DIFF_WINDOW) + (0 if cut else tail and 3)]
    win_b = b[lo : head + min(len(mid_b), DIFF_WINDOW) + (0 if cut else tail and 3)]
    body: list[str] = []
    for group in difflib.SequenceMatcher(None, win_a, win_b, autojunk=False).get_grouped_opcodes(3):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        body.append(f"@@ -{lo + i1 + 1},{i2 - i1} +{lo + j1 + 1},{j2 - j1} @@\n")
        for tag, ia, ib, ja, jb in group:
            if tag == "equal":
                body += [" " + _line(a, lo + i) for i in range(ia, ib)]
                continue
            body += _changed(a, lo + ia, lo + ib, b, lo + ja, lo + jb)  # whole files: a drawing's heading is above
    out = [f"--- a/{rel}\n", f"+++ b/{rel}\n", *body[:DIFF_LINES]]
    rest = len(body) - DIFF_LINES
    if cut:
        out.append(f"… over {max(rest, 0)} more lines: the changes span {max(len(mid_a), len(mid_b))} lines\n")
    elif rest > 0:
        out.append(f"… {rest} more lines\n")
    return "".join(line if line.endswith("\n") else line + "\n" for line in out)


_SVG = re.compile(r"<svg[\s>]")
_HEADING_KEY = re.compile(r"`([^`]+)`")
_LOOK_BACK = 40  # lines from a drawing up to its metric's heading


def _drawing(lines: list[str], i: int) -> str | None:
    """What the drawing on line `i` shows ("drawing of train/grad_norm"); None if the line is no drawing.

    A drawing is one line of inline SVG thousands of characters long: a diff names it instead."""
    if not _SVG.search(lines[i]):
        return None
    for j in range(i - 1, max(-1, i - 1 - _LOOK_BACK), -1):
        if lines[j].startswith("#"):
            heading = lines[j].lstrip("#").split("{#")[0].strip()
            key = _HEADING_KEY.search(heading)
            return f"drawing of {key.group(1) if key else heading}"
    return "drawing"


def _line(lines: list[str], i: int) -> str:
    drawing = _drawing(lines, i)
    return lines[i] if drawing is None else f"{drawing} (inline SVG)\n"


def _changed(a: list[str], ia: int, ib: int, b: list[str], ja: int, jb: int) -> list[str]:
    """The diff lines of one changed block; a drawing changed in place reads as one line."""
    pairs = [(i, j) for i, j in zip(range(ia, ib), range(ja, jb)) if (d := _drawing(a, i)) and d == _drawing(b, j)]
    same_a, same_b = {i for i, _ in pairs}, {j for _, j in pairs}
    out = ["-" + _line(a, i) for i in range(ia, ib) if i not in same_a]
    out += ["+" + _line(b, j) for j in range(ja, jb) if j not in same_b]
    return out + [f"~ {_drawing(a, i)} changed\n" for i, _ in pairs]


def plan_findings(root: Path, todo: Plan) -> list[Finding]:
    """Each difference of the plan as a finding, the way build would resolve it."""
    out: list[Finding] = list(todo.refused) + list(todo.kept)
    for rel, text in todo.write.items():
        if rel in todo.missing:
            out.append(Finding(rel, 1, 1, f"generated file is missing; {FIX}", code=codes.GENERATED_MISSING))
            continue
        current = read_text(root / rel) or ""
        line = next(
            (i for i, (x, y) in enumerate(zip(current.splitlines(), text.splitlines()), 1) if x != y),
            min(current.count("\n"), text.count("\n")) + 1,
        )
        code = codes.HAND_EDITED if rel in todo.hand_edited else codes.GENERATED_OUT_OF_DATE
        if rel in todo.hand_edited:
            why = f"generated file was edited by hand; edit ranges/ or templates/ instead and {FIX}"
        elif rel == MANIFEST:
            why = f"list of generated files is out of date; {FIX}"
        else:
            why = f"generated file is out of date; {FIX}"
        out.append(Finding(rel, line, 1, why, diff=short_diff(rel, current, text), code=code))
    for rel in todo.remove:
        out.append(
            Finding(
                rel,
                1,
                1,
                f"stray generated file: build no longer makes it; {FIX} to remove it",
                code=codes.STRAY_GENERATED,
            )
        )
    return out


def drift_total(findings: list[Finding]) -> str | None:
    """check's count of the files that drifted from ranges/ (what build fixes), for its last lines; None if none."""
    drifted = {f.path for f in findings if f.code.rebuild}
    if not drifted:
        return None
    return f"{len(drifted)} file{'s' if len(drifted) > 1 else ''} drifted"


def foreign_exports(root: Path, files: dict[str, str]) -> list[Finding]:
    """Files in the export folder that build did not make: readers would take them for exports."""
    folder = root / EXPORT_DIR
    if not folder.is_dir() or folder.is_symlink():
        return []
    return [
        Finding(
            rel,
            1,
            1,
            "file in the export folder that build does not make; move it out of "
            f"{EXPORT_DIR}/ (build never deletes a file it did not write)",
            code=codes.FOREIGN_EXPORT,
        )
        for rel in sorted(p.relative_to(root).as_posix() for p in folder.rglob("*") if p.is_file())
        if rel not in files
    ]


_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
_CODE_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
# Looser than the model's METRIC_KEY_PATTERN on purpose: a misspelt key (any word characters, a `*`)
# must still be taken for a key, to be named as unknown.
_LOOKS_LIKE_KEY = re.compile(r"[\w/@.\-*]+")


def unknown_keys(known: set[str], rel: str, text: str) -> list[Finding]:
    """Code spans that look like a metric key (a known namespace, a slash) but name none."""
    namespaces = {k.split("/", 1)[0] for k in known}
    text = _FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
    out = []
    for match in _CODE_SPAN.finditer(text):
        word = match.group(1).strip()
        head, _, rest = word.partition("/")
        if head in namespaces and rest and _LOOKS_LIKE_KEY.fullmatch(word) and word not in known:
            line = text.count("\n", 0, match.start()) + 1
            col = match.start() - (text.rfind("\n", 0, match.start()) + 1) + 1
            out.append(
                Finding(
                    rel,
                    line,
                    col,
                    f"unknown metric {word!r}: not in ranges/catalog.yaml" + did_you_mean(word, known),
                    code=codes.UNKNOWN_METRIC_IN_PAGE,
                )
            )
    return out


def check(root: Path) -> list[Finding]:
    """Every way the files under root disagree with ranges/ (raises SourceError on bad input).

    It writes nothing, except to finish a build that was killed while switching files.
    """
    with gc_paused(), locked(root):
        recover(root)
        manual, files = generate(root)
        findings = plan_findings(root, plan(root, files)) + foreign_exports(root, files)
        pages = {p.relative_to(root).as_posix(): read_text(p) or "" for p in sorted((root / "docs").rglob("*.md"))}
        pages.update({rel: text for rel, text in files.items() if rel.endswith(".md")})
    known = manual.known_keys()
    for rel, text in sorted(pages.items()):
        findings += unknown_keys(known, rel, text)
    # Reading the page back also finds every catalog metric that is missing from it.
    findings += reference_findings(manual, files)
    findings += rejudge(root, manual)
    return findings
