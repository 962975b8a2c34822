"""The one typed model of the source: a metric catalog and profiles of expected values.

The same classes validate ranges/*.yaml, generate its JSON Schema and describe
the exported profiles, so the three can never disagree.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from metrics_manual.model.keys import KeySet, is_pattern

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# Characters that change the order text shows in, or show nothing: bidi embeddings, overrides and isolates,
# the direction marks, zero-width spaces and joiners, the byte order mark. In a title or a meaning they would
# make a nav entry, an export or an alert annotation read otherwise than its source.
_INVISIBLE = re.compile("[\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def _one_line(text: str) -> str:
    # Text lands in table cells, CSV fields and alert annotations: line breaks and control
    # characters would break or garble them (PyYAML even mangles U+0085 on output).
    if _CONTROL.search(text):
        raise ValueError("text must be one line without control characters; fold long text with >-")
    if m := _INVISIBLE.search(text):
        raise ValueError(
            f"text must not hold U+{ord(m.group()):04X}, an invisible or direction-changing character "
            f"(at character {m.start() + 1} of the text); remove it"
        )
    if not text.strip():
        raise ValueError("text must not be blank")
    return text


Text = Annotated[str, StringConstraints(min_length=1), AfterValidator(_one_line)]
# The patterns of the model, once: the schemas carry them, and the field reference says them in words.
SLUG_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"
NAMESPACE_PATTERN = r"^[a-z][a-z0-9_]*$"
METRIC_KEY_PATTERN = r"^[a-z][a-z0-9_]*(/[A-Za-z0-9_@.\-]+)+(/\*)?$"
# A key or a pattern of keys: `{name}` holes stand for any text inside one segment (`eval/{dataset}`).
KEY_PATTERN_PATTERN = r"^[a-z][a-z0-9_]*(/([A-Za-z0-9_@.\-]|\{[a-z_]+\})+)+(/\*)?$"
URL_PATTERN = r"^https?://[^\s()<>`|]+$"
COMMIT_PATTERN = r"^[0-9a-f]{7,40}$"

Slug = Annotated[str, StringConstraints(pattern=SLUG_PATTERN)]
MetricKey = Annotated[str, StringConstraints(pattern=METRIC_KEY_PATTERN)]
KeyPattern = Annotated[str, StringConstraints(pattern=KEY_PATTERN_PATTERN)]
Url = Annotated[str, StringConstraints(pattern=URL_PATTERN)]
Commit = Annotated[str, StringConstraints(pattern=COMMIT_PATTERN)]
Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
PositiveInt = Annotated[int, Field(gt=0)]
# Each section has a page reference/metrics/<id>.md; index.md there is the map of every metric.
RESERVED_SECTION_ID = "index"


def _whole(value: int | float) -> int | float:
    # One rule for every output: 310.0 is the number 310 (pages, JSON, YAML and CSV all print 310).
    return int(value) if isinstance(value, float) and value.is_integer() and abs(value) < 2**53 else value


Number = Annotated[int | float, AfterValidator(_whole)]


class Strict(BaseModel):
    # defer_build: a model's validator is built when first used, not at import, so a command pays only
    # for the models it uses (judge of an exported profile never builds the source's).
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=True, defer_build=True)


# --- the catalog -------------------------------------------------------------------


def _line_field() -> Any:
    return Field(
        None,
        description="1-based line of `evidence` in that file at the catalog's `code` commit; with `evidence`.",
        examples=[123],
    )


def _evidence_field() -> Any:
    return Field(
        None,
        description="That line of the file, verbatim (whitespace at its ends aside), showing the computation "
        "or the key; with `line`. Left out: the place is not verified against the code.",
        examples=['log_dict[f"example/{key}"] = value'],
    )


def _both_or_neither(line: int | None, evidence: str | None) -> None:
    if (line is None) != (evidence is None):
        given, missing = ("line", "evidence") if evidence is None else ("evidence", "line")
        raise ValueError(
            f"{given} without {missing}: line and evidence go together (the 1-based line number and that "
            "line of the file, verbatim), or neither"
        )


class NamedAt(Strict):
    """The place in the Miles code that builds a key's name (a prefix over dict keys, a timer's name)."""

    path: Text = Field(description="File in the Miles repository.", examples=["miles/utils/example_utils.py"])
    symbol: Text = Field(
        description="Function or class inside that file (`Class.method` for a method).", examples=["log_example"]
    )
    line: PositiveInt | None = _line_field()
    evidence: Text | None = _evidence_field()

    @model_validator(mode="after")
    def _evidence(self) -> Self:
        _both_or_neither(self.line, self.evidence)
        return self

    @property
    def verified(self) -> bool:
        """Whether it carries evidence a command can check again (`coverage --miles`)."""
        return self.evidence is not None


class Rename(Strict):
    """A key the metric was logged as before Miles renamed it."""

    key: MetricKey = Field(description="The former key.", examples=["example/old_loss"])
    commit: Commit = Field(description="The Miles commit that renamed it.", examples=["0123abcd"])


class Origin(Strict):
    """Where the Miles code emits a metric, as read from the source named in the catalog."""

    path: Text = Field(
        description="File in the Miles repository (for a value a library computes: the Miles file that receives it).",
        examples=["miles/utils/example_utils.py"],
    )
    symbol: Text | None = Field(
        None,
        description="Function or class inside that file (`Class.method` for a method).",
        examples=["log_example"],
    )
    line: PositiveInt | None = _line_field()
    evidence: Text | None = _evidence_field()
    computed: Text = Field(description="How the value is computed.", examples=["mean over all samples"])
    logged: Text = Field(description="When the value is logged.", examples=["every rollout step"])
    named_at: NamedAt | None = Field(
        None, description="Where the key's name is built, when that is not where the value is computed."
    )
    read_at: Commit | None = Field(
        None,
        description="The Miles commit at which this origin (and its named_at) was last read, when the code that "
        "computes the key changed after it: `coverage --write` sets it and never advances it, and the page says the "
        "entry is not yet re-read. Its path, symbol, lines and evidence are that commit's. Left out: read at the "
        "catalog's `code` commit; remove it once the entry is read again at that commit.",
        examples=["0123abcd"],
    )

    @model_validator(mode="after")
    def _evidence(self) -> Self:
        _both_or_neither(self.line, self.evidence)
        return self

    @property
    def verified(self) -> bool:
        """Whether it carries evidence a command can check again (`coverage --miles`)."""
        return self.evidence is not None


class LabVsCode(Strict):
    """One place where the lab's words about a metric and what the code does disagree."""

    lab: Text = Field(
        description="The lab's words, verbatim as the lab's own metrics page says them: a record of what the lab "
        "wrote, not of today's range (tests/fixtures/lab/ keeps the page, and a test holds each quote to it).",
        examples=["the time the example waits"],
    )
    code: Text = Field(
        description="What the code at the catalog's `code` commit does, as read in the code.",
        examples=["the time outside the example block, waiting included"],
    )


Domain = Literal["any", "non-negative", "fraction"]
# Units of a quantity that cannot be negative: a duration, a count of tokens, steps or bytes.
NON_NEGATIVE_UNITS = frozenset(
    {"s", "sec", "second", "seconds", "ms", "us", "ns", "min", "h", "tokens", "token", "steps", "step"}
    | {"bytes", "b", "kb", "mb", "gb", "kib", "mib", "gib", "samples", "count"}
)
DOMAIN_BOUNDS: dict[Domain, tuple[float | None, float | None]] = {
    "any": (None, None),
    "non-negative": (0, None),
    "fraction": (0, 1),
}


def unit_domain(unit: str | None) -> Domain:
    """The domain a unit implies: fraction for `fraction`, non-negative for a time or a count, else any."""
    text = (unit or "").strip().lower()
    if text == "fraction":
        return "fraction"
    return "non-negative" if text in NON_NEGATIVE_UNITS else "any"


class Metric(Strict):
    """One logged key (or a family of keys): what it means and where the code emits it."""

    key: KeyPattern = Field(
        description="The logged key, a family ending in /* (with members), or a pattern with {name} holes.",
        examples=["example/loss", "example/{dataset}/score"],
    )
    name: Text | None = Field(
        None, description="How a family is called in prose; defaults to its key.", examples=["the example statistics"]
    )
    members: list[KeyPattern] = Field(
        default_factory=list,
        description="For a family: the keys (or patterns) it stands for.",
        examples=[["example/loss/mean", "example/loss/max"]],
    )
    meaning: Text = Field(description="What the value means, in a few words.", examples=["the loss of the example"])
    unit: Text | None = Field(
        None,
        description="Unit of the value and of every number of its ranges; none for a plain count, share or ratio.",
        examples=["s"],
    )
    origin: Origin | None = Field(
        None,
        description="Where the Miles code emits it, at the catalog's `code` commit (a team's key: where its fork "
        "does, at the team catalog's `code` commit).",
    )
    not_logged: Text | None = Field(
        None,
        description="Why no process logs this key at the catalog's `code` commit: the page says so, and no "
        "profile may give it a range.",
        examples=["the example timer runs in a process that never flushes its timers"],
    )
    lab_vs_code: list[LabVsCode] = Field(
        default_factory=list,
        description="Where the lab's words (its meaning, or a profile's range of it) and the code disagree.",
    )
    renamed_from: list[Rename] = Field(
        default_factory=list,
        description="Keys it was logged as before Miles renamed it: their anchors, search and judge lead here.",
    )
    domain: Domain | None = Field(
        None,
        description="The values the metric can take: fraction (0 to 1), non-negative, or any; `derive` keeps "
        "its bands inside. Left out: fraction for the unit fraction, non-negative for a unit of time, tokens, "
        "steps or bytes, else any.",
        examples=["non-negative"],
    )

    @model_validator(mode="after")
    def _family(self) -> Metric:
        if self.key.endswith("/*") and not self.members:
            raise ValueError("a family key ends in /* and lists its members")
        if self.members and not (self.key.endswith("/*") or is_pattern(self.key)):
            raise ValueError("a plain key has no members; a family key ends in /* or is a {name} pattern")
        return self

    @property
    def anchor(self) -> str:
        return metric_anchor(self.key)

    @property
    def old_anchors(self) -> list[str]:
        return [metric_anchor(r.key) for r in self.renamed_from]

    @property
    def value_domain(self) -> Domain:
        """The declared domain, else the one its unit implies."""
        return self.domain if self.domain is not None else unit_domain(self.unit)

    @property
    def label(self) -> str:
        return self.name or self.key


class Section(Strict):
    """A section of the reference page: a group of metrics."""

    id: Slug = Field(description="Stable id; its anchor on the reference page is s-ref-<id>.", examples=["my-section"])
    title: Text = Field(description="Heading of the section.", examples=["My section"])
    metrics: list[Metric] = Field(min_length=1, description="The metrics of the section, in reading order.")

    @field_validator("id")
    @classmethod
    def _not_index(cls, value: str) -> str:
        if value == RESERVED_SECTION_ID:
            raise ValueError(f"{value!r} is taken: the map of the metrics is reference/metrics/{value}.md")
        return value

    @property
    def anchor(self) -> str:
        return f"s-ref-{self.id}"


class CodeRepository(Strict):
    """A repository at one commit."""

    repository: Text = Field(description="owner/name of the repository.", examples=["owner/repository"])
    url: Url | None = Field(
        None,
        description="Web address of the repository; code paths link to files under it.",
        examples=["https://example.org/owner/repository"],
    )
    branch: Text = Field(description="Branch the code was read from.", examples=["main"])
    commit: Commit = Field(description="Commit the code was read at (7 to 40 hex digits).", examples=["0123abcd"])
    date: Text | None = Field(None, description="Date of that commit, as text.", examples=["2026-01-31"])


class Catalog(Strict):
    """The metric catalog: every metric the manual knows, by section."""

    title: Text = Field(description="Title of the reference page.", examples=["My metrics"])
    code: CodeRepository = Field(description="The code the metric origins were read from.")
    step_keys: dict[Annotated[str, StringConstraints(pattern=NAMESPACE_PATTERN)], MetricKey] = Field(
        default_factory=dict,
        description="Namespace of keys -> the key that holds their step.",
        examples=[{"example": "example/step"}],
    )
    sections: list[Section] = Field(min_length=1, description="The sections of the reference page, in order.")


class TeamCatalog(Strict):
    """A team's own keys: what its fork of Miles logs beyond Miles, in ranges/catalogs/<team>.yaml.

    The pages show each key as the team's, with its origin in the team's fork; `coverage` does not
    hold them against Miles' code. The file's name (without .yaml) is the team's id.
    """

    team: Text = Field(description="Whose keys these are, as the pages name them.", examples=["the MoE team"])
    code: CodeRepository = Field(description="The team's fork of Miles: the keys' origins are read there.")
    step_keys: dict[Annotated[str, StringConstraints(pattern=NAMESPACE_PATTERN)], MetricKey] = Field(
        default_factory=dict,
        description="Namespaces of the team's own keys -> the key that holds their step (the catalog's namespaces "
        "need none here).",
        examples=[{"moe": "train/step"}],
    )
    sections: list[Section] = Field(
        default_factory=list, description="The team's sections of the reference page, after the catalog's."
    )


# The meaning `derive --add-keys` writes for a key it adds: `validate` warns of it until a person writes one.
PLACEHOLDER_MEANING = "not written yet (derive --add-keys added it from the runs); say what the value means"


def metric_anchor(key: str) -> str:
    """A stable HTML id from a metric key: 'train/grad_norm' -> 'm-train-grad_norm'."""
    slug = re.sub(r"[^a-z0-9_]+", "-", key.removesuffix("/*").lower()).strip("-")
    return f"m-{slug}"


# --- coverage of Miles' keys ----------------------------------------------------------


class KnownKey(Strict):
    """A key (or pattern) the coverage check knows about, and why it stands apart."""

    key: KeyPattern = Field(description="The key or pattern.", examples=["example/{name}_time"])
    reason: Text = Field(description="Why, in words a maintainer can check.")


class Coverage(Strict):
    """What `metrics-manual coverage` found when the catalog was last checked against Miles' code."""

    commit: Commit = Field(description="The Miles commit the catalog was checked against.", examples=["0123abcd"])
    undocumented: list[KnownKey] = Field(
        default_factory=list, description="Keys Miles logs that the catalog does not document yet, and why."
    )
    not_visible: list[KnownKey] = Field(
        default_factory=list,
        description=(
            "Documented keys the static scan cannot see (named by run data, a custom function or a dynamic"
            " dispatch), and why; reported apart from the keys Miles no longer logs."
        ),
    )
    exceptions: list[KnownKey] = Field(
        default_factory=list, description="Strings the scan reads as keys that Miles never logs, and why."
    )


# --- a profile ---------------------------------------------------------------------


class Hardware(Strict):
    """The accelerators of the setup."""

    count: PositiveInt = Field(description="How many accelerators.", examples=[8])
    name: Text = Field(description="Which accelerator.", examples=["H100"])


class Setup(Strict):
    """The setup the ranges of a profile hold for."""

    framework: Text = Field(description="The RL framework the runs used.", examples=["Miles"])
    model: Text = Field(description="The model trained.", examples=["Qwen3-8B"])
    dataset: Text = Field(description="The prompts' dataset.", examples=["MATH"])
    hardware: Hardware = Field(description="What the runs ran on.")
    prompts_per_step: PositiveInt = Field(description="Prompts in each rollout step.", examples=[64])
    answers_per_prompt: PositiveInt = Field(description="Answers sampled per prompt.", examples=[4])
    token_limit: PositiveInt = Field(description="Most tokens an answer may have.", examples=[2048])
    steps: PositiveInt = Field(description="Steps of each run.", examples=[100])


class CaptureSource(Strict):
    """A file of captured metrics of runs."""

    kind: Literal["capture"] = Field(description="A file of captured run metrics.")
    path: Text = Field(
        description=(
            "Path of the capture file. With a `sha256` and a relative path inside the project, `check` holds the"
            " profile's ranges against it and the pages draw it; any other capture is neither checked nor drawn."
        ),
        examples=["captures/my-runs.json"],
    )
    keys: list[Text] = Field(
        min_length=1,
        description="The keys inside the capture file (for derived ranges: the run names).",
        examples=[["seed-1", "seed-2"]],
    )
    sha256: Sha256 | None = Field(
        None,
        description="SHA-256 of the file: `check` reports a capture in the project that no longer matches.",
        examples=["9e99701a1343d99346680bd3dc8a3826bcf2afffecc577221372d7885d95b1b0"],
    )
    code_commit: Commit | None = Field(
        None, description="The Miles commit the run was made with.", examples=["31f1ca96"]
    )
    skip_first: Annotated[int, Field(ge=0)] | None = Field(
        None,
        description="Warm-up steps of this run that its derived bands and medians leave out (a window keeps them).",
        examples=[2],
    )


class LogSource(Strict):
    """A log file the ranges or notes rest on."""

    kind: Literal["log"] = Field(description="A log file.")
    path: Text = Field(description="Path of the log file.", examples=["logs/train.log"])


class CodeSource(Strict):
    """The code the runs were made with."""

    kind: Literal["code"] = Field(description="The code the runs were made with.")
    repository: Text = Field(description="Name of the repository.", examples=["Miles"])
    url: Url | None = Field(
        None, description="Web address of the repository.", examples=["https://example.org/owner/repository"]
    )
    branch: Text = Field(description="Branch of the code.", examples=["main"])
    commit: Commit = Field(description="Commit of the code (7 to 40 hex digits).", examples=["0123abcd"])
    parts: list[Text] = Field(
        min_length=1, description="Which code: loss, metric, evaluation ...", examples=[["loss", "metric"]]
    )
    note: Text | None = Field(None, description="What a reader should know about this source.")


Source = Annotated[CaptureSource | LogSource | CodeSource, Field(discriminator="kind")]
SourceId = Slug


class Window(Strict):
    """A band that holds only in the first steps of a run."""

    first: PositiveInt = Field(description="Only the first N steps of the run.", examples=[3])


class AtStep(Strict):
    """One step of a run."""

    step: Annotated[int, Field(ge=0)] = Field(description="The step (0 is the first).", examples=[0])


# The steps of a run an expectation covers (its `span`): a window, the first N steps, one step,
# every step or the steps of a reference curve. Judge, derive and check slice a run by it in one
# place: model/kinds.py.


@dataclass(frozen=True)
class FirstSteps:
    """The run's first `count` steps (warm-up steps left out)."""

    count: int


@dataclass(frozen=True)
class EveryStep:
    """Every step the run reached (warm-up steps left out)."""


@dataclass(frozen=True)
class ListedSteps:
    """The steps a reference curve has (a corridor's), whatever the run reached: a warm-up the
    reference leaves out is left out of it, so none of them is dropped as warm-up."""

    steps: tuple[int, ...]


Span = Window | FirstSteps | AtStep | EveryStep | ListedSteps


class _Expectation(Strict):
    condition: Text | None = Field(
        None, description="When the expectation holds, in words.", examples=["with greedy decoding"]
    )
    sources: list[SourceId] = Field(
        default_factory=list,
        description="Ids of the profile's sources it comes from; none means all of them.",
        examples=[["my-runs"]],
    )


class Band(_Expectation):
    """Every per-step value lies in [min, max]."""

    kind: Literal["band"] = Field(description="Every per-step value lies from min to max (bounds included).")
    min: Number | None = Field(None, description="Lowest expected value; open when left out.", examples=[0.1])
    max: Number | None = Field(None, description="Highest expected value; open when left out.", examples=[2.5])
    steps: PositiveInt | None = Field(None, description="Per-step values over this many steps.", examples=[100])
    window: Window | None = Field(None, description="Holds only in the first steps of a run.")

    @model_validator(mode="after")
    def _bounds(self) -> Band:
        if self.min is None and self.max is None:
            raise ValueError("a band needs min, max or both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min {self.min} is above max {self.max}")
        if self.window and self.steps and self.window.first > self.steps:
            raise ValueError(f"window of the first {self.window.first} steps is longer than the {self.steps} steps")
        return self

    def contains(self, value: float) -> bool:
        """Whether one per-step value lies in the band (bounds included)."""
        return (self.min is None or value >= self.min) and (self.max is None or value <= self.max)

    @property
    def span(self) -> Span:
        """The steps it covers: its window, else its first `steps` steps, else every step."""
        if self.window is not None:
            return self.window
        return FirstSteps(self.steps) if self.steps is not None else EveryStep()


class Median(_Expectation):
    """The median of a run's per-step values."""

    kind: Literal["median"] = Field(description="The median of a run's per-step values.")
    value: Number = Field(description="The median.", examples=[12.5])
    steps: PositiveInt = Field(description="The median is over this many steps.", examples=[100])
    tolerance: Annotated[Number, Field(gt=0)] | None = Field(
        None,
        description="Relative tolerance a run's median may differ by (0.05 = 5%), when the source gives one; "
        "metrics-manual judge uses --rtol otherwise.",
        examples=[0.05],
    )

    @property
    def span(self) -> Span:
        return FirstSteps(self.steps)


class Exact(_Expectation):
    """An exact value at every step, in every run, or at one step."""

    kind: Literal["exact"] = Field(description="An exact value the metric must take.")
    value: Number = Field(description="The value.", examples=[0])
    at: Literal["every_step", "every_run"] | AtStep = Field(
        description="Where it holds: every_step, every_run, or {step: N} for one step.",
        examples=["every_step", {"step": 0}],
    )

    def contains(self, value: float) -> bool:
        return value == self.value

    @property
    def span(self) -> Span:
        """Its one step, else every step (every_run is judged at every step too)."""
        return self.at if isinstance(self.at, AtStep) else EveryStep()


class Presence(_Expectation):
    """The metric is logged at every step; its value has no range."""

    kind: Literal["presence"] = Field(description="The metric is logged; its value has no range.")
    at: Literal["every_step"] = Field("every_step", description="Logged at every step of its step key.")

    @property
    def span(self) -> Span:
        return EveryStep()


def _as_pair(value: object) -> object:
    # JSON and YAML write a point as a list, [step, value]: a pair of the model.
    return tuple(value) if isinstance(value, list) else value


ReferencePoint = Annotated[tuple[Annotated[int, Field(ge=0)], Number], BeforeValidator(_as_pair)]
Tolerance = Annotated[Number, Field(ge=0)]


class Reference(Strict):
    """A corridor's reference curve: one line of a pinned capture of the profile."""

    source: SourceId = Field(
        description="Id of the profile's capture source that holds the curve: its line "
        '`{"metric": <this key>, "series": [[step, value], ...]}`. The capture must be pinned (with a `sha256`) '
        "and inside the project; each value a finite number, each step once and in order.",
        examples=["reference"],
    )
    rolling_median: PositiveInt | None = Field(
        None,
        description="The curve is a rolling median over this many steps of the runs' per-step mean (derive "
        "writes it for a noisy key); left out: the runs' per-step mean, or the capture's values as they are.",
        examples=[5],
    )
    points: list[ReferencePoint] = Field(
        min_length=1,
        description="The curve, [step, value] at each of its steps in order. Read from the capture when the "
        "source is loaded (never written in ranges/); every export carries it.",
        examples=[[[0, 0.3], [1, 0.32]]],
        json_schema_extra={"readOnly": True},
    )

    @field_validator("points")
    @classmethod
    def _in_order(cls, points: list[tuple[int, float]]) -> list[tuple[int, float]]:
        for i in range(1, len(points)):
            if points[i][0] <= points[i - 1][0]:
                raise ValueError(f"step {points[i][0]} follows step {points[i - 1][0]}: each step once, in order")
        return points


class Corridor(_Expectation):
    """Each per-step value lies in a corridor around a reference curve, at the same step.

    Miles' metric-history gate's constraint (tests/ci/metric_history/constraints.py): a value
    passes when it lands in `[ref - band_down, ref + band_up]`, each side's band
    `max(rel * |ref|, abs_floor)`, scaled from the reference only.
    """

    kind: Literal["corridor"] = Field(
        description="Each per-step value lies in a corridor around a reference curve at the same step: from "
        "ref - max(rel_down * |ref|, abs_floor_down) to ref + max(rel_up * |ref|, abs_floor_up), bounds included."
    )
    reference: Reference = Field(description="The reference curve and where it comes from.")
    rel_up: Tolerance | None = Field(
        None, description="Above the reference: by at most this share of |ref| (0.1 = 10%).", examples=[0.1]
    )
    abs_floor_up: Tolerance | None = Field(
        None,
        description="Above the reference: by at most this much where the share is less (keeps a reference near 0 "
        "from a corridor of no width).",
        examples=[0.05],
    )
    rel_down: Tolerance | None = Field(None, description="Below the reference: by at most this share of |ref|.")
    abs_floor_down: Tolerance | None = Field(
        None, description="Below the reference: by at most this much where the share is less."
    )

    @model_validator(mode="after")
    def _both_sides(self) -> Corridor:
        for side in ("up", "down"):
            if getattr(self, f"rel_{side}") is None and getattr(self, f"abs_floor_{side}") is None:
                raise ValueError(
                    f"a corridor states rel_{side}, abs_floor_{side} or both: a side with neither has no width "
                    "and fails any value off the reference (Miles' gate asks the same)"
                )
        return self

    def bounds(self, ref: float) -> tuple[float, float]:
        """The corridor at a step whose reference is `ref`: (lowest, highest), both allowed."""
        up = max((self.rel_up or 0) * abs(ref), self.abs_floor_up or 0)
        down = max((self.rel_down or 0) * abs(ref), self.abs_floor_down or 0)
        return ref - down, ref + up

    @functools.cached_property
    def reference_at(self) -> dict[int, float]:
        """Step -> the reference's value there."""
        return dict(self.reference.points)

    @functools.cached_property
    def envelope(self) -> tuple[float, float]:
        """The lowest and highest value the corridor allows at any of its steps."""
        edges = [self.bounds(v) for _, v in self.reference.points]
        return min(lo for lo, _ in edges), max(hi for _, hi in edges)

    @functools.cached_property
    def span(self) -> Span:
        """The reference's steps."""
        return ListedSteps(tuple(self.reference_at))


Expectation = Annotated[Band | Median | Exact | Presence | Corridor, Field(discriminator="kind")]
EXPECTATION: TypeAdapter[Band | Median | Exact | Presence | Corridor] = TypeAdapter(
    Expectation, config=ConfigDict(defer_build=True)
)


class SectionNote(Strict):
    """A note on one section of the reference page, for one profile."""

    text: Text = Field(description="What holds for the whole section on this profile.")
    see: Slug | None = Field(None, description="Id of a note of this profile that says more.", examples=["my-notes"])


class Note(Strict):
    """A longer note: its own section of the reference page."""

    id: Slug = Field(description="Its anchor on the reference page is s-ref-<id>.", examples=["my-notes"])
    title: Text = Field(description="Heading of the note.", examples=["My notes"])
    paragraphs: list[Text] = Field(min_length=1, description="The note's text, one paragraph per item.")
    sources: list[SourceId] = Field(default_factory=list, description="Ids of the profile's sources it rests on.")

    @property
    def anchor(self) -> str:
        return f"s-ref-{self.id}"


class ProfileInfo(Strict):
    id: Slug = Field(description="Stable id: names its page and export files.", examples=["my-setup"])
    title: Text = Field(description="Title of the profile's page and column.", examples=["Two seeds on one H100"])
    order: int | None = Field(
        None,
        description="Where the profile stands among the others: lower first; profiles without an order follow, by id.",
        examples=[1],
    )
    summary: Text = Field(description="Where the numbers come from and what they hold for.")
    advice: Text = Field(description="How a reader builds ranges of their own.")
    setup: Setup = Field(description="The setup the ranges hold for.")
    sources: dict[SourceId, Source] = Field(min_length=1, description="Where the numbers come from, by id.")
    section_notes: dict[Slug, SectionNote] = Field(default_factory=dict, description="A note per section id.")
    notes: list[Note] = Field(default_factory=list, description="Longer notes, each a section of the reference page.")


class Profile(ProfileInfo):
    """A profile: one setup, where its numbers come from, and the expected values of its metrics."""

    expectations: dict[MetricKey, list[Expectation]] = Field(
        default_factory=dict,
        description=(
            "Per metric key of the catalog: its expectations on this setup (a band, median, exact value, presence "
            "or corridor)."
        ),
    )

    @property
    def references(self) -> set[str]:
        """Ids of the sources a corridor takes its reference curve from: curves, not runs (never judged or drawn
        as a run)."""
        return {e.reference.source for es in self.expectations.values() for e in es if isinstance(e, Corridor)}


# --- an exported profile -------------------------------------------------------------

SCHEMA_VERSION: Literal[1] = 1


class MetricExport(Strict):
    key: KeyPattern = Field(description="The metric key (a family ends in /*; a pattern has {name} holes).")
    name: Text | None = Field(None, description="How a family is called in prose.")
    members: list[KeyPattern] = Field(default_factory=list, description="For a family: the keys it stands for.")
    section: Slug = Field(description="Id of the metric's section.")
    section_title: Text = Field(description="Title of the metric's section.")
    meaning: Text = Field(description="What the value means.")
    unit: Text | None = Field(None, description="The unit of the metric and of every number of its expectations.")
    url: Text | None = Field(None, description="The metric's anchor in the manual.")
    not_logged: Text | None = Field(
        None,
        description="Why no process logs this key at the catalog's commit (the catalog's `not_logged`): no run "
        "shows it, so it has no expectations. Absent for a logged metric.",
    )
    renamed_from: list[Rename] = Field(
        default_factory=list,
        description="Keys it was logged as before Miles renamed it: judge reads a run's values under them as this key.",
    )
    expectations: list[Expectation] = Field(
        default_factory=list, description="Its expectations on this profile; empty when it has no range."
    )


class UnknownMetric(KeyError):
    """A key the profile's catalog does not document, asked of `ProfileExport.metric` or `expected`.
    A KeyError, as a mapping's lookup raises; its message says which key, and the closest known ones."""

    def __init__(self, key: str, profile: str, known: list[str]) -> None:
        import difflib

        super().__init__(key)
        self.key = key
        close = difflib.get_close_matches(key, known, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        self.message = f"{key!r} is not a metric of the catalog of profile {profile!r}{hint}"

    def __str__(self) -> str:  # KeyError's own repr()s its argument: say it in words instead
        return self.message


class ProfileExport(Strict):
    """One profile with the catalog entries of its metrics: what tools load."""

    schema_version: Literal[1] = Field(description="Version of this format; changes only when a reader must change.")
    profile: ProfileInfo = Field(description="The profile: setup, sources and notes.")
    step_keys: dict[str, MetricKey] = Field(
        default_factory=dict,
        description="Namespace of keys -> the key that holds their step (the catalog's): what judge needs to "
        "place a value at its step without the project.",
    )
    metrics: list[MetricExport] = Field(description="Every metric of the catalog, in the catalog's order.")

    @field_validator("schema_version", mode="before")
    @classmethod
    def _whole_number(cls, value: object) -> object:
        # A Literal matches by equality even in strict mode: true and 1.0 would pass as 1.
        if type(value) is not int:
            raise PydanticCustomError("int_type", "Input should be a valid integer")
        return value

    def metric(self, key: str) -> MetricExport:
        """The catalog entry of `key`: a metric, a member of a family, or a key a pattern such as
        `eval/{dataset}` stands for. UnknownMetric (a KeyError) when the catalog documents no such key."""
        documented = {k: m for m in self.metrics for k in (m.key, *m.members)}
        found = key if key in documented else KeySet(documented).match(key)
        if found is None:
            raise UnknownMetric(key, self.profile.id, list(documented))
        return documented[found]

    def renames(self) -> dict[str, str]:
        """Former key -> the key Miles logs it as now, for the plain keys (a family or pattern is not renamed
        value by value): `read_run(..., renames=...)` reads a run's old names as the new keys."""
        return {r.key: m.key for m in self.metrics if not m.members and not is_pattern(m.key) for r in m.renamed_from}

    def expected(self, key: str) -> list[Band | Median | Exact | Presence | Corridor]:
        """What `key` is expected to be on this profile's setup ([] when the catalog documents it and
        the profile gives it no range). UnknownMetric (a KeyError) for a key the catalog does not document."""
        return list(self.metric(key).expectations)

    def to_profile(self) -> Profile:
        return Profile(
            **{k: getattr(self.profile, k) for k in ProfileInfo.model_fields},
            expectations={m.key: m.expectations for m in self.metrics if m.expectations},
        )
