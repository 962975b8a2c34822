"""A model's JSON Schema as the text of a published file: the source's, the export's, the verdict's and the diff's."""

from __future__ import annotations

import json

from pydantic import BaseModel


def schema_text(model: type[BaseModel], title: str) -> str:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **model.model_json_schema(mode="validation"),
        "title": title,
    }
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
