"""Every kind of finding, once: a stable code, a short name, what it means and how to fix it.

A finding names its kind by one of the constants below (`Finding(..., code=UNKNOWN_FIELD)`);
the command decides what to do by kind (`code.rebuild`), never by a message's words, and
docs/findings.md lists this registry. A code never changes meaning once released: retire it
(`retired=`, no constant, so no command reports it again, and its id is never given again)
and add a new one instead.

Hundreds: 1 the source's fields, 2 the source's YAML, 3 templates and the site's set-up,
4 generated files (build and check), 5 run files (judge, derive, captures), 6 coverage, 7 history,
9 the command.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, order=True)
class Code:
    """One kind of finding. Findings compare and sort by the code alone."""

    id: str  # MM101: stable, what tools match on
    name: str = field(compare=False)  # unknown-field: the same, for people
    summary: str = field(compare=False)  # what it means, one sentence
    hint: str = field(compare=False)  # how to fix it, one sentence
    example: str = field(compare=False)  # a message as the command prints it
    rebuild: bool = field(default=False, compare=False)  # `metrics-manual build` fixes it
    retired: str = field(default="", compare=False)  # why no command reports it any more, and what does instead

    def __str__(self) -> str:
        return self.id

    @property
    def title(self) -> str:
        """How an annotation titles its findings: `MM504 corrupt-line`."""
        return f"{self.id} {self.name}"


CODES: dict[str, Code] = {}


def _code(
    id: str, name: str, summary: str, hint: str, example: str, *, rebuild: bool = False, retired: str = ""
) -> Code:
    if id in CODES or any(c.name == name for c in CODES.values()):
        raise AssertionError(f"finding code {id} {name} registered twice")  # pragma: no cover - import-time guard
    CODES[id] = code = Code(id, name, summary, hint, example, rebuild, retired)
    return code


# --- 1: the source's fields (ranges/ read as YAML, held to the model) ---------------------------
UNKNOWN_FIELD = _code(
    "MM101",
    "unknown-field",
    "A mapping has a field the model does not know, or a known field in the wrong place.",
    "Fix the spelling (the message suggests the closest field) or move the field where it belongs.",
    "ranges/catalog.yaml:12:7: error: unknown field 'meanng'; did you mean 'meaning'?",
)
MISSING_FIELD = _code(
    "MM102",
    "missing-field",
    "A required field is missing.",
    "Add the field; docs/schema/ has every field with its description.",
    "ranges/profiles/lab.yaml:3:1: error: missing field 'title'",
)
UNKNOWN_KIND = _code(
    "MM103",
    "unknown-kind",
    "An expectation's `kind` is none of the range kinds.",
    "Use one of the kinds the message lists (band, median, exact, presence, corridor).",
    "ranges/profiles/lab.yaml:20:13: error: unknown kind 'range'; expected one of: 'band', 'median', 'exact', 'presence', "
    "'corridor'",
)
WRONG_TYPE = _code(
    "MM104",
    "wrong-type",
    "A value has the wrong type: text where a number belongs, a list where a mapping belongs.",
    "Write the value in the type the message names; numbers are written without quotes.",
    "ranges/profiles/lab.yaml:21:12: error: min: expected a number, got the string '0.1'; remove the quotes",
)
INVALID_VALUE = _code(
    "MM105",
    "invalid-value",
    "A value breaks a rule of the model: a band with min above max, blank text, a key of the wrong form.",
    "Change the value as the message says.",
    "ranges/profiles/lab.yaml:21:7: error: min 2.0 is above max 1.0",
)
DUPLICATE_ID = _code(
    "MM106",
    "duplicate-id",
    "Two sections, metrics or profiles share an id or key.",
    "Give one of them another id, or merge the two.",
    "ranges/catalog.yaml:40:14: error: metric 'train/loss' is already in the catalog (section 'train')",
)
ANCHOR_CLASH = _code(
    "MM107",
    "anchor-clash",
    "Two metrics, sections or notes would get the same anchor on the reference page.",
    "Choose another id or key so each anchor is unique.",
    "ranges/profiles/lab.yaml:50:9: error: note id 'origins' gives the anchor 's-ref-origins', which the table of "
    "where the keys come from already has; choose another id",
)
GAUGE_CLASH = _code(
    "MM115",
    "gauge-clash",
    "Two metric keys give the same Prometheus gauge name (Miles turns / and - into _ and @ into _at_): the alert "
    "rules and the dashboard cannot tell the two apart.",
    "Rename one of the keys so their gauge names differ.",
    "ranges/catalog.yaml:40:13: error: 'train/x_at_y_z' and 'train/x@y-z' give the same Prometheus gauge "
    "'miles_metric_train_x_at_y_z'; rename one",
)
UNKNOWN_REFERENCE = _code(
    "MM108",
    "unknown-reference",
    "A profile names a metric, section, source or note that is not declared.",
    "Declare it first (metrics in ranges/catalog.yaml, sources and notes in the profile) or fix the name.",
    "ranges/profiles/lab.yaml:14:3: error: unknown metric 'train/los'; add it to ranges/catalog.yaml first (a key of your fork: to ranges/catalogs/TEAM.yaml); "
    "did you mean 'train/loss'?",
)
PAST_THE_RUN = _code(
    "MM109",
    "past-the-run",
    "An expectation covers more steps than the profile's run has.",
    "Shorten the expectation's steps, or correct setup.steps.",
    "ranges/profiles/lab.yaml:30:14: error: 500 steps is more than the 200 steps of the setup",
)
NOT_A_SOURCE_FILE = _code(
    "MM110",
    "not-a-source-file",
    "A file under ranges/ is neither the catalog, a team catalog nor a profile.",
    "Move the file out of ranges/, or rename a profile (a team catalog: its team's id) to end in .yaml.",
    "ranges/notes.txt:1:1: error: not part of the source: ranges/ holds catalog.yaml, coverage.yaml, "
    "ranges/profiles/ and ranges/catalogs/; move this file elsewhere",
)
COVERAGE_STALE = _code(
    "MM111",
    "coverage-stale",
    "ranges/coverage.yaml was checked against another Miles commit than the catalog reads.",
    "Run `metrics-manual coverage --miles PATH` on the catalog's commit and update ranges/coverage.yaml.",
    "ranges/coverage.yaml:3:9: error: checked against Miles 0123456789ab but ranges/catalog.yaml reads Miles at "
    "31f1ca961a94; run `metrics-manual coverage --miles PATH` and update this file",
)
COVERAGE_CONTRADICTS = _code(
    "MM112",
    "coverage-contradicts",
    "ranges/coverage.yaml calls a key undocumented that the catalog documents, or the other way round.",
    "Remove the entry from ranges/coverage.yaml, or move it to the list it belongs in.",
    "ranges/coverage.yaml:12:11: error: 'train/grad_norm' is documented in ranges/catalog.yaml",
)
_code(
    "MM113",
    "lab-words-not-found",
    "A metric's `lab_vs_code` quotes lab words that are neither in its `meaning` nor in a profile's range of it.",
    "Quote the lab's words verbatim as the metric's meaning or a profile's range in words says them "
    "(a range reads as the page shows it: '0 at step 0, in a healthy run').",
    "ranges/catalog.yaml:40:16: error: train/ppo_kl: the lab's words 'zero at step 0' are not in its meaning nor "
    "in a profile's range of it; quote them verbatim",
    retired="No command reports it any more: the lab's words are a record of what the lab's page wrote, not of "
    "today's range, so a maintainer's range edit is one edit. tests/source/test_lab_words.py holds each quote to "
    "the lab's page (tests/fixtures/lab/lab-metrics-page.md).",
)
NOT_LOGGED_WITH_RANGE = _code(
    "MM114",
    "not-logged-with-range",
    "A profile gives a range to a key the catalog marks `not_logged`: no run can show it, so no range can hold.",
    "Remove the range from the profile, or, if the key is logged after all, remove `not_logged` from the catalog.",
    "ranges/profiles/lab.yaml:30:3: error: perf/critic_train_time is not logged at the catalog's commit "
    "(ranges/catalog.yaml:120:21); a range for it can never hold: remove it",
)
READ_AT_CATALOG_COMMIT = _code(
    "MM116",
    "read-at-catalog-commit",
    "An origin's `read_at` names the catalog's own commit: an origin without `read_at` is read at that commit, so "
    "the field says nothing and looks like a flag not cleared.",
    "Remove `read_at` from the origin.",
    "ranges/catalog.yaml:30:20: error: train/grad_norm: read_at names the catalog's commit 31f1ca961a94; an "
    "origin without read_at is read there: remove it",
)

NO_STEP_KEY = _code(
    "MM117",
    "no-step-key",
    "A documented key's namespace has no step key: judge and derive place a value at the step of its namespace's "
    "step key, so no value of the key could be read.",
    "Add the namespace under `step_keys` in the file the message names, with the step key its records carry "
    "(`moe: train/step`).",
    "ranges/catalogs/moe-team.yaml:12:15: error: moe/expert_utilization: its namespace 'moe' has no step key, so no "
    "value of it could be placed at its step: add `moe: STEP_KEY` under step_keys in ranges/catalogs/moe-team.yaml "
    "(the step key its records carry, such as train/step or rollout/step)",
)
STEP_KEY_CLASH = _code(
    "MM118",
    "step-key-clash",
    "A team catalog gives a namespace another step key than the catalog (or another team catalog) gives it.",
    "Remove the team's entry for the namespace, or give it the same step key.",
    "ranges/catalogs/moe-team.yaml:8:10: error: namespace 'train' has the step key train/step in "
    "ranges/catalog.yaml; a namespace has one step key: remove this one, or write train/step",
)
PLACEHOLDER_MEANING = _code(
    "MM119",
    "placeholder-meaning",
    "A metric's meaning is the placeholder `derive --add-keys` writes for a key it adds: the pages show it as is "
    "(a warning; the source still loads).",
    "Write what the value means in the metric's `meaning`, and where the fork computes it in its `origin`.",
    "ranges/catalogs/moe-team.yaml:14:18: warning: train/load_balancing_loss: its meaning is derive's placeholder; "
    "write what the value means (the pages show it)",
)
BAD_REFERENCE = _code(
    "MM120",
    "bad-reference",
    "A corridor's reference cannot be used: its source is no pinned capture inside the project (a `sha256`, a "
    "relative path, no symlink), or the capture has no clean line for the metric (each step once and in order, "
    "each value a finite number).",
    "Point `reference.source` at a capture source with a `sha256` under captures/, and fix or derive the "
    "capture again (`metrics-manual derive --kind corridor`).",
    "captures/lab/reference.jsonl:3:1: error: the reference of rollout/raw_reward (ranges/profiles/lab.yaml:20:19) "
    "is not a finite number at step 12 (NaN): a reference is finite at each of its steps",
)

# --- 2: the source's YAML ------------------------------------------------------------------------
INVALID_YAML = _code(
    "MM201",
    "invalid-yaml",
    "The file is not valid YAML, or holds more than one document.",
    "Fix the syntax at the line and column given; one file holds one document.",
    "ranges/catalog.yaml:7:3: error: invalid YAML: while parsing a block mapping expected <block end>, but found '-'",
)
UNREADABLE_FILE = _code(
    "MM202",
    "unreadable-file",
    "A file cannot be read: missing permission, not a regular file, too large, or a link out of the project.",
    "Make it a regular, readable file inside the project.",
    "ranges/profiles/lab.yaml:1:1: error: not a regular file but a named pipe; ranges/ holds only YAML files",
)
NOT_UTF8 = _code(
    "MM203",
    "not-utf8",
    "A source file or template is not UTF-8 text.",
    "Save the file as UTF-8.",
    "ranges/catalog.yaml:4:18: error: file is not UTF-8 (byte 0xe9); save it as UTF-8",
)
NOT_A_MAPPING = _code(
    "MM204",
    "not-a-mapping",
    "A source file is empty or its top is not a mapping of fields.",
    "Write the file as a mapping (`field: value` lines) at the top level.",
    "ranges/profiles/lab.yaml:1:1: error: the file must hold a YAML mapping at the top",
)
YAML_TAG = _code(
    "MM205",
    "yaml-tag",
    "A value or key carries a YAML tag (`!!str`, `!foo`); the source constructs nothing from tags.",
    "Remove the tag; quote the value if it is text.",
    "ranges/catalog.yaml:9:12: error: YAML tag '!!python/object' is not allowed; only plain strings, numbers, "
    "booleans, lists and mappings are",
)
ANCHOR_ALIAS = _code(
    "MM206",
    "anchor-alias",
    "The file uses a YAML anchor or alias (`&name`, `*name`).",
    "Write the value out where it is used.",
    "ranges/profiles/lab.yaml:12:9: error: anchors and aliases (&name, *name) are not supported here; write the value out",
)
MERGE_KEY = _code(
    "MM207",
    "merge-key",
    "The file uses a YAML merge key (`<<`).",
    "Write the merged values out.",
    "ranges/profiles/lab.yaml:12:5: error: merge keys (<<) are not supported here; write the values out",
)
DUPLICATE_KEY = _code(
    "MM208",
    "duplicate-key",
    "A mapping has the same key twice; YAML would keep only the last.",
    "Remove one of the two, or merge them.",
    "ranges/catalog.yaml:15:7: error: duplicate key 'unit' (first defined at line 12, column 7)",
)
KEY_NOT_TEXT = _code(
    "MM209",
    "key-not-text",
    "A mapping key is a number, boolean, null or collection instead of text.",
    "Quote the key.",
    "ranges/profiles/lab.yaml:8:5: error: mapping keys must be plain strings, not a int; quote the key",
)
NUMBER_FORM = _code(
    "MM210",
    "number-form",
    "A number is written in a form YAML 1.1 reads as another value (octal, hexadecimal, binary, base 60, underscores).",
    "Write the number as a plain decimal (12, -3, 0.35, 1.0e-3), or quote it if it is text.",
    "ranges/profiles/lab.yaml:21:12: error: min: '010' reads as an octal number (8) in YAML 1.1; write it without "
    "the leading zero, or quote it if it is text",
)
DECIMAL_COMMA = _code(
    "MM211",
    "decimal-comma",
    "A number is written with a decimal comma, which YAML reads as two values.",
    "Write a decimal point, or quote the value if it is text.",
    "ranges/profiles/lab.yaml:21:12: error: min: '0,35' looks like a number with a decimal comma; write 0.35, or "
    "quote it if it is text",
)
NON_FINITE = _code(
    "MM212",
    "non-finite-number",
    "A number is infinite or not a number (.inf, .nan); ranges are finite.",
    "Write a finite number, or leave the bound out.",
    "ranges/profiles/lab.yaml:21:12: error: max: '.inf' is not a finite number; ranges must be finite",
)
YAML11_BOOLEAN = _code(
    "MM213",
    "yaml11-boolean",
    "A word such as yes, no, on or off, which YAML 1.1 reads as a boolean.",
    "Write true or false, or quote the word if it is text.",
    "ranges/catalog.yaml:9:14: error: optional: 'yes' reads as a boolean (true) in YAML 1.1; write true, or "
    "quote it if it is text",
)
DATE_VALUE = _code(
    "MM214",
    "date-value",
    "A value YAML reads as a date.",
    "Quote it to make it text.",
    "ranges/profiles/lab.yaml:4:10: error: '2026-11-30' reads as a date; quote it to make it a string",
)
YAML11_SYMBOL = _code(
    "MM215",
    "yaml11-symbol",
    "A plain `=` or `<<` as a value, which YAML 1.1 gives meanings of their own.",
    "Quote the value.",
    "ranges/catalog.yaml:9:14: error: unit: '=' has a meaning of its own in YAML 1.1 (!!value); quote it",
)
TOO_DEEP = _code(
    "MM216",
    "too-deep",
    "The data nests deeper than any source needs.",
    "Flatten the data; the source nests only a few levels.",
    "ranges/catalog.yaml:70:90: error: the data nests deeper than 64 levels; a source needs only a few",
)
FORBIDDEN_CHARACTER = _code(
    "MM217",
    "forbidden-character",
    "The file holds a character YAML forbids (a control character such as NUL or \\x01, DEL, a non-character), "
    "a byte order mark past its start, or a line break only YAML 1.1 reads as one (NEL, U+2028, U+2029).",
    "Remove the character, or write it as an escape (\\x01, \\u2028) inside double quotes.",
    "ranges/profiles/lab.yaml:2:12: error: the character \\x01 (a control character) is not allowed in YAML, "
    "not even inside quotes; remove it, or write the escape \\x01 inside double quotes",
)

# --- 3: templates and the site's set-up ----------------------------------------------------------
TEMPLATE_ERROR = _code(
    "MM301",
    "template-error",
    "A page template does not parse or fails while rendering.",
    "Fix the template at the line given; templates/macros.md.j2 holds the shared phrases.",
    "templates/pages/reference.md.j2:14:1: error: template error: TemplateSyntaxError: unexpected '}'",
)
TEMPLATES_MISSING = _code(
    "MM302",
    "templates-missing",
    "The folder of page templates is missing.",
    "Restore templates/pages/ from version control.",
    "templates/pages:1:1: error: folder is missing: the page templates live there",
)
SITE_CONFIG = _code(
    "MM303",
    "site-config",
    "mkdocs.yml cannot be read.",
    "Restore mkdocs.yml or make it readable.",
    "mkdocs.yml:1:1: error: cannot read it: [Errno 2] No such file or directory: 'mkdocs.yml'",
)

# --- 4: generated files (build, check) -----------------------------------------------------------
GENERATED_MISSING = _code(
    "MM401",
    "generated-missing",
    "A file that build makes is missing.",
    "Run `metrics-manual build`.",
    "docs/export/lab.json:1:1: error: generated file is missing; run `metrics-manual build`",
    rebuild=True,
)
GENERATED_OUT_OF_DATE = _code(
    "MM402",
    "generated-out-of-date",
    "A generated file (or the list of them) differs from what ranges/ and templates/ make now.",
    "Run `metrics-manual build`; never edit generated files by hand.",
    "docs/reference/index.md:120:1: error: generated file is out of date; run `metrics-manual build`",
    rebuild=True,
)
HAND_EDITED = _code(
    "MM403",
    "hand-edited",
    "A generated file was edited by hand since build wrote it; build overwrites such edits.",
    "Make the change in ranges/ or templates/ instead, then run `metrics-manual build`.",
    "docs/profiles/lab.md:3:1: error: generated file was edited by hand; edit ranges/ or templates/ instead and "
    "run `metrics-manual build`",
    rebuild=True,
)
STRAY_GENERATED = _code(
    "MM404",
    "stray-generated",
    "A file build made earlier that it no longer makes (a removed profile's page).",
    "Run `metrics-manual build` to remove it.",
    "docs/profiles/old.md:1:1: error: stray generated file: build no longer makes it; run `metrics-manual build` "
    "to remove it",
    rebuild=True,
)
STRAY_EDITED = _code(
    "MM405",
    "stray-edited",
    "A file build no longer makes, edited since build wrote it, so build keeps it.",
    "Delete the file yourself if it is not needed.",
    "docs/profiles/old.md:1:1: error: stray file: build no longer makes it, and it was edited since build wrote "
    "it, so build keeps it; delete it yourself if it is not needed",
)
MANIFEST_UNREADABLE = _code(
    "MM406",
    "manifest-unreadable",
    "The list of generated files (docs/.generated.json) is not a JSON object; build rewrites it.",
    "Run `metrics-manual build`; it writes a new list.",
    "docs/.generated.json:1:1: warning: not valid JSON ('Expecting value: line 1 column 1 (char 0)'); build rewrites it",
)
MANIFEST_ENTRY_IGNORED = _code(
    "MM407",
    "manifest-entry-ignored",
    "An entry of the list of generated files points outside docs/, through a symlink, or has no digest.",
    "Nothing to do: build never touches that path and rewrites the list.",
    "docs/.generated.json:1:1: warning: entry '../ranges/catalog.yaml' is ignored: outside docs/; build never touches it",
)
WRITE_REFUSED = _code(
    "MM408",
    "write-refused",
    "A generated file's place cannot be written safely (a symlink on the way).",
    "Replace the symlink with a real folder or file.",
    "docs/export/lab.json:1:1: error: build will not write here: docs/export is a symlink",
)
FOREIGN_EXPORT = _code(
    "MM409",
    "foreign-export",
    "A file in the export folder that build does not make; readers would take it for an export.",
    "Move the file out of docs/export/.",
    "docs/export/mine.json:1:1: error: file in the export folder that build does not make; move it out of "
    "docs/export/ (build never deletes a file it did not write)",
)
UNKNOWN_METRIC_IN_PAGE = _code(
    "MM410",
    "unknown-metric-in-page",
    "A page names, in a code span, a metric key that is not in the catalog.",
    "Fix the key, or add the metric to ranges/catalog.yaml.",
    "docs/judging.md:40:5: error: unknown metric 'train/los': not in ranges/catalog.yaml; did you mean 'train/loss'?",
)
REFERENCE_DISAGREES = _code(
    "MM411",
    "reference-disagrees",
    "The reference page, read back, says something other than ranges/.",
    "Run `metrics-manual build`; if it persists, the reference template drops or alters a fact.",
    "docs/reference/metrics/a.md:1:1: error: reference page disagrees with ranges/: sections ['b'] instead of ['a']",
)
CAPTURE_MISSING = _code(
    "MM412",
    "capture-missing",
    "A profile's capture source names a file that is not in the repository.",
    "Restore the capture, or remove the source from the profile.",
    "ranges/profiles/lab.yaml:9:11: error: capture captures/lab/seed-1.jsonl is missing",
)
CAPTURE_CHANGED = _code(
    "MM413",
    "capture-changed",
    "A capture's SHA-256 no longer matches the one its source records.",
    "Restore the capture, or derive the ranges again from the new one.",
    "ranges/profiles/lab.yaml:10:13: error: capture captures/lab/seed-1.jsonl changed: its SHA-256 no longer "
    "matches; restore it or derive the ranges again",
)
CAPTURE_DISAGREES = _code(
    "MM414",
    "capture-disagrees",
    "An expectation fails against the very capture it cites as its source.",
    "Correct the range, or derive it again from the capture.",
    "ranges/profiles/lab.yaml:20:7: error: train/loss 0.1 to 2: its own capture 'seed-1' gives fail: 3 of 200 "
    "steps out of range",
)

# --- 5: run files (judge, derive, captures) -------------------------------------------------------
NO_SUCH_RUN_FILE = _code(
    "MM501",
    "no-such-run-file",
    "A run path given on the command line does not exist.",
    "Check the path.",
    "dump/events:1:1: error: no such file or folder",
)
NO_RUN_FILES = _code(
    "MM502",
    "no-run-files",
    "A folder given as a run holds no metrics file of a known form.",
    "Point at the folder of the run's metrics files, in a form judge reads (docs/judging.md lists them).",
    # The forms tried are the registry's (runs/forms.py), named in full by the message itself.
    "dump:1:1: warning: no metrics file of a known form in this folder (tried: events, dashboard, ...; "
    "name the form with --input-format)",
)
UNKNOWN_RUN_FORM = _code(
    "MM503",
    "unknown-run-form",
    "A run file's form cannot be told from its content, or --input-format names no form.",
    "Name the form with --input-format (`metrics-manual judge --help` lists the forms).",
    "notes.txt:1:1: error: not a metrics file of a known form (tried: events, dashboard, ...; "
    "name the form with --input-format)",
)
CORRUPT_LINE = _code(
    "MM504",
    "corrupt-line",
    "A line or record of a run file cannot be parsed; it was skipped.",
    "Repair or remove the line; the rest of the file was read.",
    "dump/events/metrics.jsonl:17:30: error: corrupt line: expecting ',' delimiter; it was skipped",
)
CUT_LAST_LINE = _code(
    "MM505",
    "cut-last-line",
    "The last line or record of a run file is cut short, as when the run is still writing it; it was skipped.",
    "Nothing, if the run is still going; else the file was truncated.",
    "dump/events/metrics.jsonl:200:1: warning: the last line is cut (the run may still be writing this file); "
    "it was skipped and the last step counts as unfinished",
)
NOT_A_RECORD = _code(
    "MM506",
    "not-a-record",
    "A line parses but is not a record of the file's form (no 'metrics' object, not [step, value]).",
    "Repair the line; the rest of the file was read.",
    "dashboard.jsonl:4:1: error: not a dashboard record: no 'metrics' object",
)
MISSING_STEP = _code(
    "MM507",
    "missing-step",
    "A metric is logged without the step key that places its values; they were skipped.",
    "Log the metric's step key (the catalog's step_keys) with it.",
    "dump/events/metrics.jsonl:3:1: warning: train/loss is logged without its step key train/step; such values "
    "were skipped",
)
NOT_A_NUMBER = _code(
    "MM508",
    "not-a-number",
    "A metric's value in a run file is not a finite number (a string, null, a bool, out of float range); every "
    "expectation of that metric is an error.",
    "Repair the value, or exclude its step (--exclude-steps) if the run is known to be bad there.",
    "dashboard.jsonl:5:1: warning: train/loss: not a number at step 4: '1e9' (an error of its expectations)",
)
UNREADABLE_RUN = _code(
    "MM509",
    "unreadable-run",
    "A run file cannot be read as its form at all.",
    "Check the file's permissions and form (--input-format).",
    "run.csv:1:1: error: cannot read as wandb-csv: line contains NUL",
)

LINE_TOO_LONG = _code(
    "MM510",
    "line-too-long",
    "A line of a run file is longer than the reader's cap (64 MB); it was skipped unread.",
    "Repair the file; a metrics line is never that long.",
    "dump/events/main.jsonl:7:1: error: a line longer than 64 MB; it was skipped (see Limits)",
)
NOT_A_STEP = _code(
    "MM511",
    "not-a-step",
    "A step key's value is not an integer from 0 to 2^63-1; the record was skipped.",
    "Repair the record's step.",
    "dashboard.jsonl:9:1: error: train/step is 9223372036854775808, not a step (an integer from 0 to 2^63-1); "
    "the record was skipped",
)
INVALID_KEY = _code(
    "MM512",
    "invalid-key",
    "A key in a run file is not valid Unicode (a lone surrogate escape); the line was skipped.",
    "Repair the key.",
    "dump/events/main.jsonl:3:1: error: a key that is not valid Unicode (a lone surrogate): 'train/x\\ud800'; "
    "the line was skipped",
)
FILE_NAME_NOT_UTF8 = _code(
    "MM513",
    "file-name-not-utf8",
    "A run file's name is not UTF-8; it was read, and is shown with \\x escapes.",
    "Rename the file.",
    "dump/metrics-\\xff.jsonl:1:1: error: the file name is not UTF-8 (shown with \\x escapes); it was read",
)
STEPS_NOT_LOGGED = _code(
    "MM514",
    "steps-not-logged",
    "A step key the run counts step by step (train/step, or two steps of it logged in a row) has no record at steps "
    "between its first and its last (a deleted, lost or unreadable record). The run went through them: every "
    "expectation covering them is an error there (a warning). Past ten times the steps the run logged they "
    "are not filled in: an error of the run.",
    "Give the file that holds those steps, exclude them (--exclude-steps) if the run is known to lack them, or "
    "repair the step that jumps.",
    "dump/dashboard.jsonl:1:1: warning: rollout/step: no record at 1 step: 20 (the run logged 47 steps from 0 "
    "to 47, step by step); a value is missing there for every metric of it",
)
NOT_A_RUN_FILE = _code(
    "MM515",
    "not-a-run-file",
    "A run path given on the command line is neither a regular file nor a folder (a named pipe, a device, a "
    "socket); it is not read, so judge never waits on a pipe.",
    "Give the run's files or folders; to judge what a pipe carries, write it to a file first.",
    "dump/metrics.fifo:1:1: error: not a regular file or folder but a named pipe; it was not read",
)
FOLDED_LINES = _code(
    "MM518",
    "folded-lines",
    "A console log's metric line ends in Ray's `[repeated Nx across cluster]`: Ray printed one line for several "
    "alike lines of other processes (RAY_DEDUP_LOGS), whose values are not in the log. The line shown was read.",
    "Run with RAY_DEDUP_LOGS=0 so that every process's lines are printed, or judge the run's event log.",
    "run.log:412:1: warning: Ray folded 3 alike lines of other processes into this metric line (RAY_DEDUP_LOGS); "
    "their values are not in the log",
)

# 520 on: what derive found in the ranges it writes.
ZERO_WIDTH_BAND = _code(
    "MM520",
    "zero-width-band",
    "derive wrote a band whose min equals its max (the runs gave one value at every step it covers): a healthy run "
    "whose value varies at all fails it.",
    "If the metric is constant by design, make it an exact expectation (kind: exact, at: every_step); else derive "
    "the band again from more runs.",
    "ranges/profiles/lab.yaml:40:7: warning: train/pg_clipfrac [0]: the band 0 to 0 has no width (all 36 values were "
    "0): a healthy run whose value varies at all will fail it; if train/pg_clipfrac is constant by design, make it an "
    "exact expectation (kind: exact, value: 0, at: every_step), else derive it again from more runs",
)

# --- 6: the catalog held against a Miles checkout (coverage) -----------------------------------
UNDOCUMENTED_KEY = _code(
    "MM601",
    "undocumented-key",
    "Miles logs a key that the catalog does not document.",
    "Document the key in ranges/catalog.yaml, or name it in ranges/coverage.yaml with why it stands apart.",
    "miles/backends/training_utils/log_utils.py:88:1: error: train/new_metric is logged here but not documented in "
    "ranges/catalog.yaml",
)
NO_LONGER_LOGGED = _code(
    "MM602",
    "no-longer-logged",
    "The catalog documents a key that Miles no longer logs.",
    "Remove the metric from ranges/catalog.yaml, or name it in ranges/coverage.yaml with why.",
    "ranges/catalog.yaml:1:1: error: train/old_metric is documented but Miles no longer logs it",
)
FILE_NOT_SCANNED = _code(
    "MM604",
    "file-not-scanned",
    "A Python file of the checkout the scan did not read (it does not parse, nests too deep, is larger than the "
    "cap, is a link or not a regular file): the keys it logs are not seen, so they may show as not logged.",
    "Repair or replace the file in the checkout (a Miles file at the catalog's commit parses); a key the file "
    "logs, found missing, is why.",
    "miles/utils/broken.py:1:12: warning: not read by the scan: does not parse as Python (invalid syntax "
    "(broken.py, line 1)); the keys it logs are not seen",
)
_code(
    "MM603",
    "origin-moved",
    "A metric's origin (file or function) in the catalog is not where Miles logs it any more.",
    "Update the metric's origin in ranges/catalog.yaml.",
    "ranges/catalog.yaml:1:1: error: train/grad_norm: miles/utils.py log_step: no function or class of that name "
    "in the file",
    retired="No command reports it any more: a file that is not in the checkout is MM611 and a symbol its file does "
    "not define is MM612, each at the catalog field to correct (MM603 named the catalog's first line, matched only "
    "the last part of a `Class.method`, and repeated what those two report).",
)
# The catalog's evidence (an origin's or named_at's path, symbol, line and evidence) held against the checkout.
EVIDENCE_PATH_MISSING = _code(
    "MM611",
    "evidence-path-missing",
    "An origin or named_at names a file that is not in the Miles checkout.",
    "Find where the code went (git log --follow in Miles) and update path, symbol, line and evidence.",
    "ranges/catalog.yaml:30:17: error: train/grad_norm: origin: miles/backends/model.py is not in the checkout",
)
EVIDENCE_SYMBOL_MISSING = _code(
    "MM612",
    "evidence-symbol-missing",
    "An origin or named_at names a symbol that no def, async def or class of its file defines (`Class.method`).",
    "Write the name of the function or class that holds the evidence line, as `Class.method` for a method.",
    "ranges/catalog.yaml:31:19: error: train/grad_norm: origin: 'train_step' is not defined in "
    "miles/backends/model.py; did you mean 'train_one_step'?",
)
EVIDENCE_MOVED = _code(
    "MM613",
    "evidence-moved",
    "An evidence line is in its file, but at another line than the catalog states.",
    "Set `line` to the line the message names (the code around it may have changed: read it again).",
    "ranges/catalog.yaml:32:17: error: train/grad_norm: origin: the evidence moved from line 120 to line 123 of "
    "miles/backends/model.py",
)
EVIDENCE_CHANGED = _code(
    "MM614",
    "evidence-changed",
    "An evidence line is nowhere in its file: the code changed, so the entry must be read again.",
    "Read the code again, correct the entry if the computation changed, and copy the new line and its number.",
    "ranges/catalog.yaml:33:21: error: train/grad_norm: origin: the evidence is not in miles/backends/model.py "
    "any more; line 120 reads 'grad_norm = clip(optimizer.step())'",
)
EVIDENCE_OUTSIDE_SYMBOL = _code(
    "MM615",
    "evidence-outside-symbol",
    "An evidence line lies outside the function or class the entry names.",
    "Name the symbol that holds the evidence line, or quote a line of the symbol.",
    "ranges/catalog.yaml:31:19: error: train/grad_norm: origin: line 200 of miles/backends/model.py lies outside "
    "'train_step' (lines 100-180)",
)
NOT_VERIFIED = _code(
    "MM616",
    "not-verified",
    "An origin or named_at carries no evidence (`line` and `evidence`): nothing checks it against the code.",
    "Read the code at the catalog's commit and add the line that shows the computation or the key, with its number.",
    "ranges/catalog.yaml:29:11: warning: train/grad_norm: origin: no evidence (line and evidence), so it is not "
    "verified against the code",
)
CHECKOUT_NOT_AT_COMMIT = _code(
    "MM617",
    "checkout-not-at-commit",
    "The Miles checkout is not at the commit the catalog reads (or its commit is unknown).",
    "Check out the catalog's commit; when bumping the commit, re-read the entries the other findings name, then "
    "set code.commit.",
    "ranges/catalog.yaml:2:90: error: the checkout is at 0123456789ab but the catalog reads Miles at "
    "31f1ca961a94: the findings that follow are what moved between the two",
)
CHECKOUT_MODIFIED = _code(
    "MM618",
    "checkout-modified",
    "The Miles checkout is at the catalog's commit, but some of its files differ from that commit (changed, "
    "deleted, or Python files the commit does not hold): the scan and the evidence read them as they are.",
    "Hold the catalog against a clean checkout (git stash, or a fresh worktree at the commit).",
    "ranges/catalog.yaml:2:90: warning: 2 file(s) of the checkout differ from its commit 31f1ca961a94 "
    "(miles/utils/misc.py, miles/utils/broken.py): the scan and the evidence read them as they are, not as "
    "Miles has them at that commit",
)
NOT_RE_READ = _code(
    "MM619",
    "not-re-read",
    "The Miles code of an entry changed after it was last read (its evidence line changed, its symbol is gone, "
    "its symbol's code changed, or its key is no longer logged): `coverage --write` keeps the entry as it was read, "
    "with `read_at`, and it stays flagged until a person reads it again.",
    "Read the lines of the diff the work list shows, correct the entry (computed, logged, path, symbol, line, "
    "evidence) as the code at the catalog's commit has it, and remove its read_at.",
    "ranges/catalog.yaml:40:20: error: train/grad_norm: not yet re-read at Miles 0123456789ab (last read at "
    "31f1ca961a94): the code of 'train_step' in miles/backends/megatron_utils/model.py changed, though its "
    "evidence line did not",
)
LOGGED_OMITS_BACKEND = _code(
    "MM620",
    "logged-omits-backend",
    "An entry's origins live under one training backend's folder only (miles/backends/megatron_utils/ or "
    "fsdp_utils/), but its `logged` does not name that backend: a reader of the other backend looks for the key "
    "in vain.",
    "Say in `logged` which backend logs the key (e.g. 'by the Megatron backend only'), after reading whether the "
    "other backend logs it too (then name both).",
    "ranges/catalog.yaml:812:19: error: perf/train_time: logged does not name the Megatron backend, yet its "
    "origins live only under miles/backends/megatron_utils/",
)

# --- 7: history (diff and the Changes page read ranges/ at git revisions) ----------------------
NO_CATALOG_AT_REVISION = _code(
    "MM701",
    "no-catalog-at-revision",
    "The git revision given to `diff` has no ranges/catalog.yaml.",
    "Name a revision of this project's history that has its ranges (a commit, a branch or a tag).",
    "0123456789ab:ranges/catalog.yaml:1:1: error: no catalog at this revision",
)
UNSAFE_TREE_ENTRY = _code(
    "MM702",
    "unsafe-tree-entry",
    "A revision's ranges/ holds a tree entry whose name would place a file outside ranges/ ('..', '.', an empty "
    "name) or that cannot be copied out as a file; the revision's ranges are not read.",
    "Name another revision; a commit made by git itself never holds such an entry (it takes a crafted tree).",
    "0123456789ab:ranges/../../escaped.yaml:1:1: error: a tree entry named '..' would be written outside ranges/; "
    "this revision's ranges are not read",
)


# --- 9: the command ----------------------------------------------------------------------------
USAGE = _code(
    "MM901",
    "usage",
    "The command was asked for something that does not exist: a profile, a project root, an option's value.",
    "Correct the command line; `metrics-manual COMMAND --help` lists the options.",
    "-:1:1: error: no ranges/ folder in /tmp or any folder above it; run inside a project or pass --root DIR; "
    "outside a project, judge a run with an exported profile: --profile FILE (as `metrics-manual export` writes it)",
)
WRITE_FAILED = _code(
    "MM902",
    "write-failed",
    "A file could not be written (a read-only folder, a symlink, a device); the old files stand.",
    "Make the place writable and a real folder, then run the command again.",
    "-:1:1: error: cannot write docs/reference/index.md: Permission denied; nothing was changed",
)
MISSING_EXTRA = _code(
    "MM903",
    "missing-extra",
    "Reading a run's form, or writing a TensorBoard log folder, needs an optional package that is not installed.",
    "Install the extra the message names, e.g. pip install 'metrics-manual[tensorboard]'.",
    "-:1:1: error: reading TensorBoard event files needs the tensorboard extra: pip install "
    "'metrics-manual[tensorboard]'",
)
NOT_A_PROFILE_FILE = _code(
    "MM904",
    "not-a-profile-file",
    "What --profile names is not an exported profile judge can read: a folder or a pipe, another form of "
    "export (CSV, alert rules, a Grafana dashboard), a source profile, or not JSON or YAML at all.",
    "Give a profile id inside the project, or the .json or .yaml file `metrics-manual export --format json` "
    "(or yaml) writes.",
    "lab-gb10.csv:1:1: error: a CSV export cannot be judged against; judge takes an exported profile in JSON or "
    "YAML (the .json or .yaml that `metrics-manual export` writes)",
)
