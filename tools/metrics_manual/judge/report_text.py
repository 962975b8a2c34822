"""A judgement as text for people, JSON for tools, JUnit XML for CI dashboards, GitHub annotations."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from metrics_manual.judge.rules import Judgement, Problem, Result
from metrics_manual.model.phrase import num, plain
from metrics_manual.text import github_data, github_property, xml_chars

OUTPUTS = ("text", "json", "junit", "github")
_LABEL = {"pass": "PASS ", "fail": "FAIL ", "error": "ERROR"}


def render(j: Judgement, fmt: str) -> str:
    if fmt == "json":
        return j.to_json()
    if fmt == "junit":
        return junit(j)
    if fmt == "github":
        return github(j)
    return text(j)


def ranges(steps: list[int]) -> str:
    """3, 7-9: steps in the form --exclude-steps takes."""
    out: list[str] = []
    for s in sorted(set(steps)):
        if out and out[-1].split("-")[-1] == str(s - 1):
            out[-1] = f"{out[-1].split('-')[0]}-{s}"
        else:
            out.append(str(s))
    return ", ".join(out)


def headline(j: Judgement) -> list[str]:
    run = j.run
    steps = (
        "; ".join(f"{k} {num(s.first)}-{num(s.last)} ({num(s.count)} steps)" for k, s in run.steps.items()) or "none"
    )
    lines = [
        f"profile {j.profile} ({plain(j.profile_title)}); run: {len(run.paths)} path(s), "
        f"{', '.join(run.formats) or 'no files'}; steps: {steps}"
    ]
    if run.excluded_steps:
        lines.append(f"excluded steps: {ranges(run.excluded_steps)}")
    return lines


def result_line(r: Result) -> str:
    link = f"  {r.url}" if r.url else ""
    return f"{_LABEL[r.verdict]} {r.metric}: expected {r.expected}; {r.reason}{link}"


def summary_line(j: Judgement) -> str:
    s = j.summary
    tail = f", {s.problems} reading error(s)" if s.problems else ""
    return f"{s.passed} pass, {s.failed} fail, {s.errors} error, {s.not_judged} not judged{tail}"


def text(j: Judgement) -> str:
    out = headline(j)
    out += [result_line(r) for r in j.results]
    if j.not_judged:
        out.append("not judged:")
        out += [
            f"  {n.metric}" + (f" (expectation {n.expectation})" if n.expectation is not None else "") + f": {n.reason}"
            for n in j.not_judged
        ]
    out += [problem_line(p) for p in j.problems]
    out.append(summary_line(j))
    return "\n".join(out) + "\n"


def problem_line(p: Problem) -> str:
    """A reading problem as the command prints a finding: `path:line:col: severity: message`."""
    return f"{p.path}:{p.line}:{p.col}: {p.severity}: {p.message}"


def junit(j: Judgement) -> str:
    """One test case per metric and expectation; reading problems are one more case."""
    s = j.summary
    errors = s.errors + (1 if s.problems else 0)
    root = ET.Element(
        "testsuites",
        name="metrics-manual judge",
        tests=str(len(j.results) + 1),
        failures=str(s.failed),
        errors=str(errors),
        skipped="0",
        time="0",
    )
    suite = ET.SubElement(
        root,
        "testsuite",
        name=xml_chars(f"profile {j.profile}"),
        tests=str(len(j.results) + 1),
        failures=str(s.failed),
        errors=str(errors),
        skipped="0",
        time="0",
    )
    props = ET.SubElement(suite, "properties")
    for name, value in (
        ("profile", j.profile),
        ("paths", " ".join(j.run.paths)),
        ("formats", " ".join(j.run.formats)),
        ("excluded_steps", ranges(j.run.excluded_steps)),
    ):
        ET.SubElement(props, "property", name=name, value=xml_chars(value))
    for r in j.results:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=xml_chars(r.metric),
            name=xml_chars(f"[{r.expectation}] {r.kind}: {r.expected}"),
            time="0",
        )
        if r.verdict != "pass":
            tag = "failure" if r.verdict == "fail" else "error"
            el = ET.SubElement(case, tag, message=xml_chars(r.reason), type=r.verdict)
            el.text = xml_chars(f"{r.metric}: expected {r.expected}\n{r.reason}" + (f"\n{r.url}" if r.url else ""))
        else:
            ET.SubElement(case, "system-out").text = xml_chars(r.reason)
    case = ET.SubElement(suite, "testcase", classname="run", name="the run's files read cleanly", time="0")
    errs = [p for p in j.problems if p.severity == "error"]
    if errs:
        ET.SubElement(case, "error", message=xml_chars(f"{len(errs)} reading error(s)"), type="error").text = xml_chars(
            "\n".join(problem_line(p) for p in errs)
        )
    warns = [problem_line(p) for p in j.problems if p.severity != "error"]
    if warns:
        ET.SubElement(case, "system-err").text = xml_chars("\n".join(warns))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def github(j: Judgement) -> str:
    """Workflow commands: an error or warning per result that did not pass, and per reading problem."""
    out = []
    for r in j.results:
        if r.verdict == "pass":
            continue
        title = github_property(f"{r.metric} {r.verdict}")
        out.append(f"::error title={title}::{github_data(f'{r.metric}: expected {r.expected}; {r.reason}')}")
    for p in j.problems:
        props = f"file={github_property(p.path)},line={p.line},col={p.col}"
        out.append(f"::{p.severity} {props}::{github_data(p.message)}")
    out.append(f"::notice title=metrics-manual judge::{github_data(summary_line(j))}")
    return "\n".join(out) + "\n"


__all__ = ["render", "OUTPUTS", "text", "junit", "github", "ranges"]
