"""The source's fields in words, from the model's own JSON Schema: the page "The source, field by field".

Read from the same schema that editors use, so the page cannot drift from what
`validate` accepts.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from metrics_manual.model.schema import (
    COMMIT_PATTERN,
    METRIC_KEY_PATTERN,
    NAMESPACE_PATTERN,
    SLUG_PATTERN,
    URL_PATTERN,
    Catalog,
    Coverage,
    Profile,
    TeamCatalog,
)

# Patterns of the model, in words (the schema only has the regex).
_PATTERNS = {
    SLUG_PATTERN: "id (a-z, 0-9, -)",
    COMMIT_PATTERN: "commit hash",
    URL_PATTERN: "URL",
    NAMESPACE_PATTERN: "namespace",
    METRIC_KEY_PATTERN: "metric key",
}


@dataclass(frozen=True)
class FieldDoc:
    name: str
    type: str  # in words, with links to other tables as their anchor: "list of [Section](#section)"
    required: bool
    description: str
    example: str  # YAML-ish flow text, or ""


@dataclass(frozen=True)
class ModelDoc:
    name: str  # the table's title: the place in the file
    anchor: str
    summary: str
    fields: tuple[FieldDoc, ...]


def _type(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if "const" in schema:
        return f"`{schema['const']}`"
    if "enum" in schema:
        return "one of " + ", ".join(f"`{v}`" for v in schema["enum"])
    for union in ("anyOf", "oneOf"):
        if union in schema:
            parts = [_type(s, defs) for s in schema[union] if s.get("type") != "null"]
            if parts == ["whole number", "number"]:
                return "number"
            return " or ".join(dict.fromkeys(parts))
    kind = schema.get("type")
    if kind == "array":
        return "list of " + _type(schema.get("items", {}), defs)
    if kind == "object":
        values: dict[str, Any] = schema.get("additionalProperties") or next(
            iter(schema.get("patternProperties", {}).values()), {}
        )
        keys = next(iter(schema.get("patternProperties", {})), None) or schema.get("propertyNames", {}).get("pattern")
        key_words = _PATTERNS.get(keys, "key") if keys else "key"
        return f"mapping of {key_words} to " + (_type(values, defs) if values else "value")
    if kind == "string":
        return _PATTERNS.get(schema.get("pattern", ""), "text")
    if kind == "integer":
        if schema.get("exclusiveMinimum") == 0:
            return "whole number > 0"
        return "whole number ≥ 0" if schema.get("minimum") == 0 else "whole number"
    if kind == "number":
        return "number"
    if kind == "boolean":
        return "true or false"
    return "value"


def _example(field: dict[str, Any]) -> str:
    examples = field.get("examples")
    if not examples:
        return ""
    return " or ".join(json.dumps(e, ensure_ascii=False) if not isinstance(e, str) else e for e in examples)


def _model_doc(name: str, schema: dict[str, Any], defs: dict[str, Any], title: str) -> ModelDoc:
    required = set(schema.get("required", ()))
    fields = tuple(
        FieldDoc(field, _type(spec, defs), field in required, spec.get("description", ""), _example(spec))
        for field, spec in schema.get("properties", {}).items()
        if not spec.get("readOnly")  # filled by the loader, never written (a reference's points)
    )
    return ModelDoc(title, name.lower(), schema.get("description", ""), fields)


def field_reference() -> list[ModelDoc]:
    """Every table of the page: the catalog, a profile, coverage and a team catalog, then each part they hold,
    in the order met."""
    out: list[ModelDoc] = []
    for model, title in (
        (Catalog, "ranges/catalog.yaml"),
        (Profile, "ranges/profiles/<id>.yaml"),
        (Coverage, "ranges/coverage.yaml"),
        (TeamCatalog, "ranges/catalogs/<team>.yaml"),
    ):
        schema = _schema(model)
        defs = schema.get("$defs", {})
        out.append(_model_doc(model.__name__, schema, defs, title))
        for name in _order(schema, defs):
            if all(doc.anchor != name.lower() for doc in out):
                out.append(_model_doc(name, defs[name], defs, name))
    return out


@functools.cache  # a fact of the code, built once a process (the page is rendered on every build); read only
def _schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema(mode="validation")


def _order(schema: dict[str, Any], defs: dict[str, Any]) -> list[str]:
    """Names of the definitions in the order a reader meets them, depth first from the top."""
    seen: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                name = ref.rsplit("/", 1)[-1]
                if name not in seen:
                    seen.append(name)
                    walk(defs[name])
            for key, value in node.items():
                if key not in ("$defs", "discriminator"):
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk({k: v for k, v in schema.items() if k != "$defs"})
    return seen
