"""The one typed model of the source: a metric catalog and profiles of expected values.

The same classes validate ranges/*.yaml, generate its JSON Schema and describe
the exported profiles, so the three can never disagree.
"""
from __future__ import annotations

import re
from typing import Annotated, Literal, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, model_validator

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _one_line(text: str) -> str:
    # Text lands in table cells, CSV fields and alert annotations: line breaks and control
    # characters would break or garble them (PyYAML even mangles U+0085 on output).
    if _CONTROL.search(text):
        raise ValueError("text must be one line without control characters; fold long text with >-")
    return text


Text = Annotated[str, StringConstraints(min_length=1), AfterValidator(_one_line)]
Slug = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")]
MetricKey = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*(/[A-Za-z0-9_@.\-]+)+(/\*)?$")]
Url = Annotated[str, StringConstraints(pattern=r"^https?://[^\s()<>`|]+$")]
Commit = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{7,40}$")]
PositiveInt = Annotated[int, Field(gt=0)]
Number = Union[int, float]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=True)


# --- the catalog -------------------------------------------------------------------


class Origin(Strict):
    """Where the Miles code emits a metric, as read from the source named in the catalog."""

    path: Text = Field(description="File in the Miles repository, or the library that emits it.")
    symbol: Text | None = Field(None, description="Function or timer inside that file.")
    computed: Text = Field(description="How the value is computed.")
    logged: Text = Field(description="When the value is logged.")


class Metric(Strict):
    key: MetricKey = Field(description="The logged key, or a family pattern ending in /*.")
    name: Text | None = Field(None, description="How a family is called in prose; defaults to its key.")
    members: list[MetricKey] = Field(default_factory=list, description="For a family: the keys it stands for.")
    meaning: Text
    unit: Text | None = None
    origin: Origin | None = None

    @model_validator(mode="after")
    def _family(self) -> "Metric":
        if self.key.endswith("/*") != bool(self.members):
            raise ValueError("a family key ends in /* and lists its members; a plain key has no members")
        return self

    @property
    def anchor(self) -> str:
        return metric_anchor(self.key)

    @property
    def label(self) -> str:
        return self.name or self.key


class Section(Strict):
    id: Slug
    title: Text
    metrics: list[Metric] = Field(min_length=1)

    @property
    def anchor(self) -> str:
        return f"s-ref-{self.id}"


class CodeRepository(Strict):
    repository: Text = Field(description="owner/name of the repository.")
    url: Url | None = None
    branch: Text
    commit: Commit
    date: Text | None = None


class Catalog(Strict):
    title: Text
    code: CodeRepository = Field(description="The code the metric origins were read from.")
    step_keys: dict[Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*$")], MetricKey] = Field(
        default_factory=dict, description="Namespace of keys -> the key that holds their step."
    )
    sections: list[Section] = Field(min_length=1)


def metric_anchor(key: str) -> str:
    """A stable HTML id from a metric key: 'train/grad_norm' -> 'm-train-grad_norm'."""
    slug = re.sub(r"[^a-z0-9_]+", "-", key.removesuffix("/*").lower()).strip("-")
    return f"m-{slug}"


# --- a profile ---------------------------------------------------------------------


class Hardware(Strict):
    count: PositiveInt
    name: Text


class Setup(Strict):
    framework: Text
    model: Text
    dataset: Text
    hardware: Hardware
    prompts_per_step: PositiveInt
    answers_per_prompt: PositiveInt
    token_limit: PositiveInt = Field(description="Most tokens an answer may have.")
    steps: PositiveInt = Field(description="Steps of each run.")


class CaptureSource(Strict):
    kind: Literal["capture"]
    path: Text
    keys: list[Text] = Field(min_length=1, description="The keys inside the capture file.")


class LogSource(Strict):
    kind: Literal["log"]
    path: Text


class CodeSource(Strict):
    kind: Literal["code"]
    repository: Text
    url: Url | None = None
    branch: Text
    commit: Commit
    parts: list[Text] = Field(min_length=1, description="Which code: loss, metric, evaluation ...")
    note: Text | None = None


Source = Annotated[Union[CaptureSource, LogSource, CodeSource], Field(discriminator="kind")]
SourceId = Slug


class Window(Strict):
    first: PositiveInt = Field(description="Only the first N steps of the run.")


class AtStep(Strict):
    step: Annotated[int, Field(ge=0)]


class _Expectation(Strict):
    condition: Text | None = Field(None, description="When the expectation holds, in words.")
    sources: list[SourceId] = Field(default_factory=list, description="Ids of the profile's sources.")


class Band(_Expectation):
    kind: Literal["band"]
    min: Number | None = None
    max: Number | None = None
    steps: PositiveInt | None = Field(None, description="Per-step values over this many steps.")
    window: Window | None = None

    @model_validator(mode="after")
    def _bounds(self) -> "Band":
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


class Median(_Expectation):
    kind: Literal["median"]
    value: Number
    steps: PositiveInt = Field(description="The median is over this many steps.")
    tolerance: Annotated[Number, Field(gt=0)] | None = Field(
        None, description="Relative tolerance a run's median may differ by (0.05 = 5%), when the source gives one; "
        "metrics-manual judge uses --rtol otherwise.")


class Exact(_Expectation):
    kind: Literal["exact"]
    value: Number
    at: Literal["every_step", "every_run"] | AtStep

    def contains(self, value: float) -> bool:
        return value == self.value


class Presence(_Expectation):
    kind: Literal["presence"]
    at: Literal["every_step"] = "every_step"


Expectation = Annotated[Union[Band, Median, Exact, Presence], Field(discriminator="kind")]


class SectionNote(Strict):
    text: Text
    see: Slug | None = Field(None, description="Id of a note of this profile that says more.")


class Note(Strict):
    id: Slug = Field(description="Its anchor on the reference page is s-ref-<id>.")
    title: Text
    paragraphs: list[Text] = Field(min_length=1)
    sources: list[SourceId] = Field(default_factory=list)

    @property
    def anchor(self) -> str:
        return f"s-ref-{self.id}"


class ProfileInfo(Strict):
    id: Slug
    title: Text
    summary: Text = Field(description="Where the numbers come from and what they hold for.")
    advice: Text = Field(description="How a reader builds ranges of their own.")
    setup: Setup
    sources: dict[SourceId, Source] = Field(min_length=1)
    section_notes: dict[Slug, SectionNote] = Field(default_factory=dict)
    notes: list[Note] = Field(default_factory=list)


class Profile(ProfileInfo):
    expectations: dict[MetricKey, list[Expectation]] = Field(default_factory=dict)



# --- an exported profile -------------------------------------------------------------

SCHEMA_VERSION: Literal[1] = 1


class MetricExport(Strict):
    key: MetricKey
    name: Text | None = None
    members: list[MetricKey] = Field(default_factory=list)
    section: Slug
    section_title: Text
    meaning: Text
    unit: Text | None = Field(None, description="The unit of the metric and of every number of its expectations.")
    url: Text | None = Field(None, description="The metric's anchor in the manual.")
    expectations: list[Expectation] = Field(default_factory=list)


class ProfileExport(Strict):
    """One profile with the catalog entries of its metrics: what tools load."""

    schema_version: Literal[1]
    profile: ProfileInfo
    metrics: list[MetricExport]

    def metric(self, key: str) -> MetricExport:
        for m in self.metrics:
            if m.key == key or key in m.members:
                return m
        raise KeyError(key)

    def expected(self, key: str) -> list[Band | Median | Exact | Presence]:
        """What `key` is expected to be on this profile's setup ([] when it has no range)."""
        return list(self.metric(key).expectations)

    def to_profile(self) -> Profile:
        return Profile(
            **{k: getattr(self.profile, k) for k in ProfileInfo.model_fields},
            expectations={m.key: m.expectations for m in self.metrics if m.expectations},
        )
