"""A judgement as text for people, JSON for tools, JUnit XML for CI dashboards, GitHub annotations."""

from __future__ import annotations

from metrics_manual.diagnostics.codes import CODES
from metrics_manual.judge.outputs import OUTPUTS
from metrics_manual.judge.verdict import Judgement, NotJudged, Problem, Result, Span, Uncovered
from metrics_manual.model.phrase import num, plain
from metrics_manual.text import github_data, github_property, inert, xml_chars

_LABEL = {"pass": "PASS ", "fail": "FAIL ", "error": "ERROR"}
NOT_JUDGED_SHOWN = 40  # the not-judged lines listed one by one (the run's unknown keys are 26 of them at most)
UNCOVERED_SHOWN = 40  # the metrics with steps no expectation covers, listed one by one


def render(j: Judgement, fmt: str) -> str:
    if fmt == "json":
        return j.to_json()
    if fmt == "junit":
        return junit(j)
    if fmt == "github":
        return github(j)
    return text(j)


def ranges(spans: list[Span]) -> str:
    """3, 7-9: steps in the form --exclude-steps takes."""
    return ", ".join(str(s.first) if s.first == s.last else f"{s.first}-{s.last}" for s in spans)


def headline(j: Judgement) -> list[str]:
    run = j.run
    steps = (
        "; ".join(
            f"{k} {num(s.first)}-{num(s.last)} ({num(s.count)} steps"
            + (f", no record at {ranges(s.no_record)})" if s.no_record else ")")
            for k, s in run.steps.items()
        )
        or "none"
    )
    lines = [
        f"profile {j.profile} ({plain(j.profile_title)}); run: {len(run.paths)} path(s), "
        f"{', '.join(run.formats) or 'no files'}; steps: {steps}"
    ]
    if run.excluded_steps:
        lines.append(f"excluded steps: {ranges(run.excluded_steps)}")
    # A TensorBoard file holds records, not lines.
    cut = "record" if run.formats == ["tensorboard"] else "line or record" if "tensorboard" in run.formats else "line"
    for sk, step in run.unfinished_steps.items():
        why = "judged live, --live: the run may still be writing it" if run.live else f"a file's last {cut} is cut"
        lines.append(f"unfinished: {sk} {step} ({why}; a value missing there is not judged)")
    for r in run.relogged:
        lines.append(f"re-logged (a resumed run; the later record is judged): {r.path}: {r.step_key} {ranges(r.steps)}")
    return lines


def former(r: Result) -> str:
    """' (read under its former name x)' when the run logged the key under a name from before a rename."""
    if not r.logged_as:
        return ""
    names = ", ".join(r.logged_as)
    return f" (read under its former name{'s' if len(r.logged_as) > 1 else ''} {names})"


def result_line(r: Result) -> str:
    link = f"  {r.url}" if r.url else ""
    return f"{_LABEL[r.verdict]} {r.metric}{former(r)}: expected {r.expected}; {r.reason}{link}"


def unknown_line(j: Judgement) -> str | None:
    """The run's keys the catalog does not document, counted, the first named: what the manual lacks."""
    u = j.unknown_keys
    if not u.count:
        return None
    about = "about " if u.estimated else ""
    rest = u.count - len(u.listed)
    more = f" and {about}{rest:,} more" if rest > 0 else ""
    # Each key inert here: a line break in one must not start a line of JUnit's text.
    return f"{about}{u.count:,} key(s) not in the manual's catalog: {', '.join(map(inert, u.listed))}{more}"


def summary_line(j: Judgement) -> str:
    s = j.summary
    tail = f", {s.uncovered} metric(s) with steps no expectation covers" if s.uncovered else ""
    tail += f", {s.problems} reading error(s)" if s.problems else ""
    nothing = f"; nothing was judged: {s.nothing_judged}; this is no pass" if s.nothing_judged else ""
    return f"{s.passed} pass, {s.failed} fail, {s.errors} error, {s.not_judged} not judged{tail}{nothing}"


def uncovered_words(u: Uncovered) -> str:
    """'steps 200-299 are covered by no expectation (100 of 300 steps)'."""
    one = u.count == 1
    more = " and more" if sum(s.last - s.first + 1 for s in u.steps) < u.count else ""
    return (
        f"step{'' if one else 's'} {ranges(u.steps)}{more} {'is' if one else 'are'} covered by no expectation "
        f"({num(u.count)} of {num(u.of)} steps)"
    )


def uncovered_lines(j: Judgement) -> list[str]:
    """The judged metrics with steps no expectation covers: nothing goes unjudged without a word."""
    out = [f"  {u.metric}: {uncovered_words(u)}" for u in j.uncovered[:UNCOVERED_SHOWN]]
    if len(j.uncovered) > UNCOVERED_SHOWN:
        out.append(f"  and {num(len(j.uncovered) - UNCOVERED_SHOWN)} more metrics; --format json lists them")
    return out


def skipped(j: Judgement) -> list[NotJudged]:
    """What of the profile's expectations was not judged (not the metrics without a range, nor unknown keys)."""
    return [n for n in j.not_judged if n.expectation is not None]


def not_judged_lines(j: Judgement) -> list[str]:
    """What was not judged, for people: the metrics with no range counted in one line (a shipped
    profile ranges a few of a catalog's 150 metrics, and 125 lines of them buried the verdicts), the
    rest listed up to NOT_JUDGED_SHOWN lines. --format json lists each of them."""
    unranged = [n for n in j.not_judged if n.no_range]
    others = [n for n in j.not_judged if not n.no_range]
    out = []
    if unranged:
        logged = sum(bool(n.logged) for n in unranged)
        one = len(unranged) == 1
        seen = (
            ("logged by the run" if logged else "not logged by the run")
            if one
            else (f"{num(logged)} of them logged by the run" if logged else "none of them logged by the run")
        )
        out.append(
            f"  {num(len(unranged))} metric{'' if one else 's'} {'has' if one else 'have'} no range in the profile "
            f"({seen}); --format json lists {'it' if one else 'them'}"
        )
    for n in others[:NOT_JUDGED_SHOWN]:
        where = f" (expectation {n.expectation})" if n.expectation is not None else ""
        out.append(f"  {n.metric}{where}: {n.reason}")
    if len(others) > NOT_JUDGED_SHOWN:
        out.append(f"  and {num(len(others) - NOT_JUDGED_SHOWN)} more; --format json lists them")
    u = j.unknown_keys
    if u.count > len(u.listed):
        about = "about " if u.estimated else ""
        out.append(f"  and {about}{num(u.count - len(u.listed))} more keys not in the manual's catalog")
    return out


def text(j: Judgement) -> str:
    out = headline(j)
    out += [result_line(r) for r in j.results]
    if j.not_judged:
        out.append("not judged:")
        out += not_judged_lines(j)
    if j.uncovered:
        out.append("steps no expectation covers (nothing judged them):")
        out += uncovered_lines(j)
    out += [problem_line(p) for p in j.problems]
    out.append(summary_line(j))
    # Keys and paths come from the run's files: a newline or an escape sequence in one must not
    # forge a line or drive the terminal.
    return "\n".join(inert(line) for line in out) + "\n"


def problem_line(p: Problem) -> str:
    """A reading problem as every command prints a finding: `path:line:col: severity: message [MM504]`."""
    return f"{p.path}:{p.line}:{p.col}: {p.severity}: {p.message} [{p.code}]"


def _problem_title(p: Problem) -> str:
    """A GitHub annotation's title, as diagnostics.report titles a finding: `MM504 corrupt-line`."""
    code = CODES.get(p.code)
    return code.title if code else p.code


def _x(text: str) -> str:
    """Text for JUnit: each line inert (control characters escaped), the line breaks kept."""
    return xml_chars("\n".join(inert(line) for line in text.split("\n")))


def _gd(text: str) -> str:
    return inert(github_data(text))


def _gp(text: str) -> str:
    return inert(github_property(text))


def junit(j: Judgement) -> str:
    """One test case per metric and expectation; reading problems are one more case."""
    import xml.etree.ElementTree as ET  # only for --format junit, not at every start of judge

    s = j.summary
    errors = s.errors + (1 if s.problems else 0) + (1 if s.nothing_judged else 0)
    skips = skipped(j)
    tests = str(len(j.results) + len(skips) + 3 + (1 if s.nothing_judged else 0))
    root = ET.Element(
        "testsuites",
        name="metrics-manual judge",
        tests=tests,
        failures=str(s.failed),
        errors=str(errors),
        skipped=str(len(skips)),
        time="0",
    )
    suite = ET.SubElement(
        root,
        "testsuite",
        name=_x(f"profile {j.profile}"),
        tests=tests,
        failures=str(s.failed),
        errors=str(errors),
        skipped=str(len(skips)),
        time="0",
    )
    props = ET.SubElement(suite, "properties")
    for name, value in (
        ("profile", j.profile),
        ("paths", " ".join(j.run.paths)),
        ("formats", " ".join(j.run.formats)),
        ("excluded_steps", ranges(j.run.excluded_steps)),
        ("unknown_keys", f"{j.unknown_keys.count}"),
    ):
        ET.SubElement(props, "property", name=name, value=_x(value))
    for r in j.results:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=_x(r.metric),
            name=_x(f"[{r.expectation}] {r.kind}: {r.expected}"),
            time="0",
        )
        if r.verdict != "pass":
            tag = "failure" if r.verdict == "fail" else "error"
            el = ET.SubElement(case, tag, message=_x(r.reason), type=r.verdict)
            el.text = _x(f"{r.metric}{former(r)}: expected {r.expected}\n{r.reason}" + (f"\n{r.url}" if r.url else ""))
        else:
            ET.SubElement(case, "system-out").text = _x(r.reason + former(r))
    for n in skips:  # an expectation (or some of its steps) not judged: a skipped case, with why
        case = ET.SubElement(
            suite, "testcase", classname=_x(n.metric), name=_x(f"[{n.expectation}] not judged"), time="0"
        )
        ET.SubElement(case, "skipped", message=_x(n.reason))
    if s.nothing_judged:
        case = ET.SubElement(suite, "testcase", classname="run", name="something was judged", time="0")
        why = f"nothing was judged: {s.nothing_judged}; this is no pass"
        ET.SubElement(case, "error", message=_x(why), type="error").text = _x(why)
    # Steps no expectation covers are no failure, but nothing judged them: CI dashboards show them.
    case = ET.SubElement(suite, "testcase", classname="run", name="steps no expectation covers", time="0")
    ET.SubElement(case, "system-out").text = _x(
        "\n".join(f"{u.metric}: {uncovered_words(u)}" for u in j.uncovered)
        or "none: an expectation covers every step of every judged metric"
    )
    # Keys the manual lacks are no failure (a newer Miles logs more), but CI dashboards show them.
    case = ET.SubElement(suite, "testcase", classname="run", name="keys not in the manual's catalog", time="0")
    ET.SubElement(case, "system-out").text = _x(unknown_line(j) or "none: the catalog documents every key")
    case = ET.SubElement(suite, "testcase", classname="run", name="the run's files read cleanly", time="0")
    errs = [p for p in j.problems if p.severity == "error"]
    if errs:
        ET.SubElement(case, "error", message=_x(f"{len(errs)} reading error(s)"), type="error").text = _x(
            "\n".join(problem_line(p) for p in errs)
        )
    warns = [problem_line(p) for p in j.problems if p.severity != "error"]
    if warns:
        ET.SubElement(case, "system-err").text = _x("\n".join(warns))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def github(j: Judgement) -> str:
    """Workflow commands: an error or warning per result that did not pass, and per reading problem."""
    out = []
    renamed: dict[str, Result] = {}
    for r in j.results:
        if r.logged_as:
            renamed.setdefault(r.metric, r)
        if r.verdict == "pass":
            continue
        title = _gp(f"{r.metric} {r.verdict}")
        out.append(f"::error title={title}::{_gd(f'{r.metric}{former(r)}: expected {r.expected}; {r.reason}')}")
    for key, r in renamed.items():
        title = _gp(f"{key} read under its former name")
        names = ", ".join(r.logged_as)
        out.append(f"::notice title={title}::{_gd(f'the run logged {key} as {names} (renamed since): read as {key}')}")
    skips = skipped(j)
    for n in skips[:NOT_JUDGED_SHOWN]:
        title = _gp(f"{n.metric} not judged")
        out.append(f"::notice title={title}::{_gd(f'{n.metric} (expectation {n.expectation}): {n.reason}')}")
    if len(skips) > NOT_JUDGED_SHOWN:
        rest = f"and {len(skips) - NOT_JUDGED_SHOWN} more expectations not judged; --format json lists them"
        out.append(f"::notice title=not judged::{_gd(rest)}")
    for u in j.uncovered[:UNCOVERED_SHOWN]:
        title = _gp(f"{u.metric}: steps no expectation covers")
        out.append(f"::warning title={title}::{_gd(f'{u.metric}: {uncovered_words(u)}')}")
    if len(j.uncovered) > UNCOVERED_SHOWN:
        rest = f"and {len(j.uncovered) - UNCOVERED_SHOWN} more metrics with steps no expectation covers"
        out.append(f"::warning title=steps no expectation covers::{_gd(rest)}")
    if unknown := unknown_line(j):
        out.append(f"::warning title=keys not in the manual::{_gd(unknown)}")
    if j.summary.nothing_judged:
        out.append(f"::error title=nothing judged::{_gd(f'nothing was judged: {j.summary.nothing_judged}')}")
    for p in j.problems:
        props = f"file={_gp(p.path)},line={p.line},col={p.col},title={_gp(_problem_title(p))}"
        out.append(f"::{p.severity} {props}::{_gd(p.message)}")
    out.append(f"::notice title=metrics-manual judge::{_gd(summary_line(j))}")
    return "\n".join(out) + "\n"


__all__ = ["render", "OUTPUTS", "text", "junit", "github", "ranges"]
