"""Render the model into Markdown pages with the Jinja templates under templates/.

Each template under templates/pages/ becomes one page under docs/ at the same
relative path; a path holding `[profile]` becomes one page per profile, `[section]` one page
per catalog section (so no page grows with the catalog).
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import CodeType
from typing import Any

import jinja2

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.codes import CODES
from metrics_manual.diagnostics.finding import Finding, SourceError
from metrics_manual.markdown import code, literal
from metrics_manual.model import kinds
from metrics_manual.model.domain import bounds
from metrics_manual.model.phrase import describe, describe_all, num, unit_name, words
from metrics_manual.model.schema import CodeRepository, Expectation, Metric, Profile, metric_anchor
from metrics_manual.model.tolerance import DEFAULT_RTOL
from metrics_manual.runs.run import Run
from metrics_manual.site.audit import audit
from metrics_manual.site.curves import page_context, reference_words
from metrics_manual.site.fieldref import field_reference
from metrics_manual.site.range_drawing import range_drawing
from metrics_manual.source.load import Manual
from metrics_manual.source.reader import byte_position

PAGES = "pages"


def _describe_md(expectations: Expectation | list[Expectation], unit: str | None) -> str:
    if isinstance(expectations, list):
        return describe_all(expectations, unit, literal)
    return describe(expectations, unit, literal)


def path_breaks(path: Any) -> str:
    """A file path as inline HTML text that a narrow column breaks only after a slash."""
    return "/<wbr>".join(literal(part) for part in str(path).split("/"))


def key_breaks(key: Any) -> str:
    """A metric key as inline HTML text that a narrow column breaks only after a slash or an underscore."""
    return "<wbr>".join(literal(part) for part in re.split(r"(?<=[/_])", str(key)) if part)


def code_url(code: CodeRepository, path: str, commit: str | None = None) -> str | None:
    """The file at the catalog's commit (or at `commit`: an origin's read_at), when the catalog names the
    repository's URL."""
    if not code.url:
        return None
    # The path is text from the source: quoted, so it stays one path inside the URL.
    return f"{code.url.rstrip('/')}/blob/{commit or code.commit}/{urllib.parse.quote(path, safe='/')}"


def attr(text: Any) -> str:
    """Text as the value of an HTML attribute in double quotes."""
    return literal(text).replace('"', "&#34;").replace("'", "&#39;")


def drawings(profiles: Sequence[Profile], metric: Metric) -> dict[str, str]:
    """Profile id -> the inline SVG of its ranges of one metric ('' when they have no number to place).

    Every profile's drawing has one axis, reaching the metric's domain and every profile's numbers:
    an entry shows the reader's profile first and the others folded, and unfolded they compare in
    a column, as one drawing of every profile did."""
    shared = [v for p in profiles for e in p.expectations.get(metric.key, []) for v in kinds.numbers(e)]
    domain = bounds(metric.value_domain)
    return {
        p.id: range_drawing([(p.title, e) for e in p.expectations.get(metric.key, [])], metric.unit, domain, shared)
        for p in profiles
    }


class _CompiledTemplates(jinja2.BytecodeCache):
    """Compiled templates kept for the life of the process, one per template name and source: Jinja
    compares the source's checksum on each load, so an edited template compiles anew, and a template of
    the same text in another project (each test's temp copy) does not. `mkdocs serve` rebuilds in one
    process, as the tests do: compiling the templates was nine tenths of a small build's time."""

    def __init__(self) -> None:
        self._code: dict[str, CodeType] = {}

    def get_cache_key(self, name: str, filename: str | None = None) -> str:
        return name

    def get_bucket(
        self, environment: jinja2.Environment, name: str, filename: str | None, source: str
    ) -> jinja2.bccache.Bucket:
        bucket = super().get_bucket(environment, name, filename, source)
        if bucket.code is not None and filename and bucket.code.co_filename != filename:
            bucket.code = _refiled(bucket.code, filename)  # errors and tracebacks name this project's file
        return bucket

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        code = self._code.get(bucket.key + bucket.checksum)
        if code is not None:
            bucket.code = code

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if bucket.code is not None:
            self._code[bucket.key + bucket.checksum] = bucket.code


def _refiled(code: CodeType, filename: str) -> CodeType:
    """The code object, and those nested in it (blocks, macros), as compiled from `filename`."""
    consts = tuple(_refiled(c, filename) if isinstance(c, CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


_COMPILED = _CompiledTemplates()


def environment(templates: Path) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates),
        bytecode_cache=_COMPILED,  # every environment is made with the options below, so their code is alike
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # the output is Markdown: text goes through the `md` filter instead
        keep_trailing_newline=True,
        # Markdown heading ids are written {#id}: Jinja comments move to {## ... ##}.
        comment_start_string="{##",
        comment_end_string="##}",
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        md=literal,
        num=num,
        words=words,
        code=code,
        describe=_describe_md,
        path=path_breaks,
        key=key_breaks,
        attr=attr,
        unit_name=unit_name,
        metric_anchor=metric_anchor,
        reference=lambda e, profile: reference_words(profile, e),
    )
    env.globals.update(code_url=code_url, drawings=drawings)
    return env


def template_error(exc: Exception, root: Path) -> SourceError:
    """Turn a Jinja error into a finding at the template's file and line."""
    name, line = getattr(exc, "filename", None), getattr(exc, "lineno", None)
    if name is None:  # a runtime error: Jinja rewrites the traceback to point into the template
        tb = exc.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename.endswith(".j2"):
                name, line = tb.tb_frame.f_code.co_filename, tb.tb_lineno
            tb = tb.tb_next
    try:
        shown = Path(name).resolve().relative_to(root.resolve()).as_posix() if name else "templates"
    except ValueError:
        shown = str(name)
    return SourceError(
        [Finding(shown, line or 1, 1, f"template error: {exc.__class__.__name__}: {exc}", code=codes.TEMPLATE_ERROR)]
    )


def _undecodable(templates: Path, root: Path) -> list[Finding]:
    """Which template files are not UTF-8 (Jinja's error does not say)."""
    out = []
    for file in sorted(p for p in templates.rglob("*") if p.is_file()):
        raw = file.read_bytes()
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line, col = byte_position(raw, exc.start)
            rel = file.relative_to(root).as_posix()
            out.append(Finding(rel, line, col, "template is not UTF-8; save it as UTF-8", code=codes.NOT_UTF8))
    return out


def render_pages(
    manual: Manual,
    root: Path,
    captured: Mapping[str, Mapping[str, Run]] | None = None,
    in_repo: Mapping[str, bool] | None = None,
) -> dict[str, str]:
    """Every generated page: path relative to root -> Markdown.

    `captured`: profile id -> its captured runs in the project (drawn as reference curves);
    `in_repo`: profile id -> whether its captures are in the project (said on its page).
    """
    templates = root / "templates"
    env = environment(templates)
    context = {
        "manual": manual,
        "catalog": manual.catalog,
        "profiles": manual.profiles,
        "fields": field_reference(),
        "coverage": manual.coverage,
        "audit": audit(manual.miles_catalog),  # the coverage page: Miles' own catalog, held against Miles
        "miles_catalog": manual.miles_catalog,
        "documented": manual.documented(),
        "default_rtol": DEFAULT_RTOL,  # the value checker's tolerance of a median, as judge's
        "finding_codes": list(CODES.values()),
    }
    context.update(page_context(manual, captured or {}, in_repo or {}))
    out: dict[str, str] = {}
    if not (templates / PAGES).is_dir():
        raise SourceError(
            [
                Finding(
                    f"templates/{PAGES}",
                    1,
                    1,
                    "folder is missing: the page templates live there",
                    code=codes.TEMPLATES_MISSING,
                )
            ]
        )
    try:
        for file in sorted((templates / PAGES).rglob("*.md.j2")):
            rel = file.relative_to(templates).as_posix()
            target = "docs/" + rel.removeprefix(PAGES + "/").removesuffix(".j2")
            template = env.get_template(rel)
            if "[profile]" in target:
                for profile in manual.profiles:
                    out[target.replace("[profile]", profile.id)] = template.render(context, profile=profile)
            elif "[section]" in target:
                for section in manual.catalog.sections:
                    out[target.replace("[section]", section.id)] = template.render(context, section=section)
            else:
                out[target] = template.render(context)
    except jinja2.TemplateError as exc:
        raise template_error(exc, root) from None
    except UnicodeDecodeError:
        raise SourceError(_undecodable(templates, root)) from None
    return out
