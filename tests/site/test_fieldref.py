"""The page "The source, field by field" covers every field of the model, from its own schema."""

from __future__ import annotations

import inspect
from pathlib import Path

from pydantic import BaseModel

from metrics_manual.build import generate
from metrics_manual.model import schema as model
from metrics_manual.site.fieldref import field_reference


def source_models() -> list[type[BaseModel]]:
    exported = {model.MetricExport, model.ProfileExport, model.ProfileInfo, model.Strict, model._Expectation}
    return [
        c
        for _, c in inspect.getmembers(model, inspect.isclass)
        if issubclass(c, BaseModel) and c.__module__ == model.__name__ and c not in exported
    ]


def test_every_field_of_the_source_has_a_description() -> None:
    missing = [
        f"{c.__name__}.{name}" for c in source_models() for name, f in c.model_fields.items() if not f.description
    ]
    assert missing == []


def test_the_page_lists_every_field_with_its_description(tiny: Path) -> None:
    page = generate(tiny)[1]["docs/reference/source.md"]
    tables = {t.anchor: t for t in field_reference()}
    for cls in source_models():
        anchor = {"Catalog": "catalog", "Profile": "profile", "Coverage": "coverage"}.get(
            cls.__name__, cls.__name__.lower()
        )
        assert anchor in tables, cls.__name__
        assert f"{{#{anchor}}}" in page
        documented = {f.name: f for f in tables[anchor].fields}
        # A field the loader fills (readOnly: a reference's points, read from its capture) is never written.
        written = {n: i for n, i in cls.model_fields.items() if not (i.json_schema_extra or {}).get("readOnly")}
        assert set(documented) == set(written), cls.__name__
        for name, info in written.items():
            assert documented[name].required == info.is_required()
            assert f"| `{name}` | {documented[name].type} | {'yes' if info.is_required() else 'no'} |" in page
    assert "| `min` | number | no |" in page and "| `steps` | whole number > 0 | yes |" in page
