"""A model's JSON Schema as the text of a published file: the source's, the export's, the verdict's and the diff's."""

from __future__ import annotations

import functools
import json
from typing import Any

from pydantic import BaseModel


# A model's schema is a fact of the code, made once a process: mkdocs serve builds on every save.
@functools.cache
def schema_text(model: type[BaseModel], title: str, *, written: bool = False) -> str:
    """The schema of `model`; `written`: of what a person writes (the source), so a field the loader
    fills (`readOnly`: a corridor's reference points, read from their capture) is left out."""
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **model.model_json_schema(mode="validation"),
        "title": title,
    }
    if written:
        for definition in schema.get("$defs", {}).values():
            filled = [k for k, v in definition.get("properties", {}).items() if v.get("readOnly")]
            for name in filled:
                del definition["properties"][name]
            if "required" in definition:
                definition["required"] = [r for r in definition["required"] if r not in filled]
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
