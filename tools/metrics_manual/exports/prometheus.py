"""A profile as Prometheus alerting rules over the gauges a live Miles run exports (--use-prometheus).

A kind a gauge cannot judge honestly (a median, presence, a corridor) has no rule, and the file says why.
"""

from __future__ import annotations

import re
from typing import Any, assert_never

from metrics_manual.exports.yaml_text import to_yaml_text
from metrics_manual.model.gauges import gauge_name, no_gauge
from metrics_manual.model.kinds import some_steps
from metrics_manual.model.phrase import describe
from metrics_manual.model.schema import (
    AtStep,
    Band,
    Corridor,
    EveryStep,
    Exact,
    Expectation,
    FirstSteps,
    ListedSteps,
    Median,
    Presence,
    ProfileExport,
    Span,
    Window,
)


def _promql_number(v: int | float) -> str:
    return repr(v)


# A rule for some steps only waits this long: Miles sets a log() call's metrics before its step key
# (the key is added to the dict last), so a scrape in the middle of the call pairs a step's values
# with the step before it, until the next scrape. `for` at least the scrape interval lets that pass.
STEP_RULE_FOR = "1m"


def _alert_name(key: str, suffix: str) -> str:
    words = re.split(r"[^A-Za-z0-9]+", key)
    return "Miles" + "".join(w[:1].upper() + w[1:] for w in words if w) + suffix


def why_no_alert_rule(e: Expectation) -> str | None:
    """Why no alerting rule can judge `e` honestly, or None when one can (see `_alert`)."""
    match e:
        case Band() | Exact():
            return None
        case Median():
            return "a median over steps: Prometheus keeps scrapes, not steps (a longer step would count more), and the median is known only after its last step"
        case Presence():
            return "presence: a gauge keeps its last value when a step logs nothing, so a missing log looks logged"
        case Corridor():
            return (
                f"a corridor: its bounds change at each of the {len(e.reference.points):,} steps of its reference, and "
                "PromQL has no table to look a step's bounds up in; a comparison per step joined on the step gauge "
                "would make a rule as long as the reference. Judge the logs with metrics-manual judge, or open the "
                "TensorBoard export, which draws the bounds at each step"
            )
        case _:
            assert_never(e)


def _alert(e: Expectation, gauge: str) -> tuple[str, str, str]:
    """The PromQL expression that fires when `gauge` breaks `e` (or is not a finite number), the
    alert name's suffix and its verb."""
    match e:
        case Band():
            low = f"{gauge} < {_promql_number(e.min)}" if e.min is not None else f"{gauge} == -Inf"
            high = f"{gauge} > {_promql_number(e.max)}" if e.max is not None else f"{gauge} == +Inf"
            return f"{low} or {high} or {gauge} != {gauge}", "OutOfRange", "left its range"  # x != x: NaN
        case Exact():  # NaN and the infinities differ from any value
            return f"{gauge} != {_promql_number(e.value)}", "NotExpected", "differs from its expected value"
        case Median() | Presence() | Corridor():
            raise ValueError(f"no alerting rule for a {e.kind}: {why_no_alert_rule(e)}")
        case _:
            assert_never(e)


def _steps_filter(span: Span, step_gauge: str) -> tuple[str, str] | None:
    """The PromQL filter on the step key's gauge that keeps the steps `span` covers, and the alert
    name's words for them; None when it covers every step (no filter).

    The step's number, as Miles logs it: a run resumed at step 100 is past the first 48 steps."""
    match span:
        case Window(first=n) | FirstSteps(count=n):
            return f"{step_gauge} < {n}", f"InFirst{n}Steps"
        case AtStep(step=n):
            return f"{step_gauge} == {n}", f"AtStep{n}"
        case ListedSteps():  # only a corridor covers them, and no rule judges a corridor (why_no_alert_rule)
            raise ValueError("no alerting rule filters a reference's steps")
        case EveryStep():
            return None
        case _:
            assert_never(span)


def _rule_expr(e: Band | Exact, key: str, step_keys: dict[str, str]) -> tuple[str, str, str, bool] | str:
    """The rule's expression, alert name suffix and verb, and whether it is joined with the step's
    gauge; or why `key` can have no rule."""
    if why := no_gauge(key):
        return why
    expr, suffix, verb = _alert(e, gauge_name(key))
    step_key = step_keys.get(key.split("/", 1)[0])
    kept = _steps_filter(e.span, gauge_name(step_key or ""))
    if kept is None:
        return expr, suffix, verb, False
    if step_key is None:
        return f"{some_steps(e.span)}, and the catalog names no step key for its namespace"
    if why := no_gauge(step_key):
        return f"{some_steps(e.span)}, and its step key {step_key} has {why}"
    where, words = kept
    # PromQL's `and` binds tighter than `or`: the band's alternatives in parentheses.
    return f"({expr}) and on(run_name) {where}", suffix + words, verb, True


def _go_literal(text: str) -> str:
    # Annotations are Go templates: a literal '{{' from the source must not start an action.
    return text.replace("{{", '{{ "{{" }}')


def to_prometheus(doc: ProfileExport) -> str:
    rules: list[dict[str, Any]] = []
    left_out: list[str] = []
    names: dict[str, int] = {}
    for m in doc.metrics:
        if m.members:  # a family's gauges are its members; a family range would need one rule each
            keys = m.members
        else:
            keys = [m.key]
        for e in m.expectations:
            text = describe(e, m.unit, sources=True)
            why = why_no_alert_rule(e)
            if why:
                left_out.append(f"{m.key}: {text} ({why})")
                continue
            assert isinstance(e, Band | Exact)  # why_no_alert_rule: the others have no rule
            for key in keys:
                made = _rule_expr(e, key, doc.step_keys)
                if isinstance(made, str):
                    left_out.append(f"{key}: {text} ({made})")
                    continue
                expr, suffix, verb, joined = made
                name = _alert_name(key, suffix)
                names[name] = names.get(name, 0) + 1
                if names[name] > 1:
                    name += str(names[name])
                meaning, title, expected = (_go_literal(t) for t in (m.meaning, doc.profile.title, text))
                annotations = {
                    "summary": f"{_go_literal(key)} {verb} on run {{{{ $labels.run_name }}}}",
                    "description": f"{_go_literal(key)} ({meaning}) is {{{{ $value }}}}; profile {doc.profile.id} ({title}) expects {expected}.",
                    "profile": doc.profile.id,
                    "expected": expected,
                }
                if m.url:
                    annotations["manual_url"] = m.url
                rule: dict[str, Any] = {"alert": name, "expr": expr}
                if joined:
                    rule["for"] = STEP_RULE_FOR
                rule["labels"] = {"severity": "warning", "profile": doc.profile.id, "metric": key}
                rule["annotations"] = annotations
                rules.append(rule)
    head = [
        f"# Prometheus alerting rules for a live Miles run (--use-prometheus), profile {doc.profile.id}.",
        "# Generated by `metrics-manual export`; regenerate, do not edit.",
        "# A rule fires while a metric's gauge is outside its range or not a finite number.",
        "# A range for some steps only (the first N steps, one step) is joined on run_name with the gauge of the",
        "# metric's step key, which Miles sets in the same log() call, after the metrics. Such a rule waits",
        f"# `for: {STEP_RULE_FOR}`: a scrape in the middle of that call (a step's values beside the number of the",
        "# step before) must not fire it.",
        "# Not judged here, since no rule can judge them honestly:"
        if left_out
        else "# Every expectation of the profile has a rule.",
        *(f"# - {line}" for line in left_out),
    ]
    body = to_yaml_text({"groups": [{"name": f"metrics-manual-{doc.profile.id}", "rules": rules}]})
    return "\n".join(head) + "\n" + body
