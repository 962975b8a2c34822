"""Edit a profile file in place: only the numbers and sources that change differ.

The round-trip edit itself (comments, key order, style and indentation kept) is source/yaml_edit.py;
this module adds what is a profile's: its numbers written so YAML 1.1 reads them, its sources and
expectations, and a new profile's file.
"""

from __future__ import annotations

from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.representer import RoundTripRepresenter

from metrics_manual.exports.yaml_text import yaml_float
from metrics_manual.source.yaml_edit import Indent, YamlEdit, append, dump, text_scalar, yaml_writer


class Number(float):
    """A float written in a form both YAML 1.1 (PyYAML, our reader) and 1.2 read as that float.

    ruamel writes 1e-05, which YAML 1.1 reads as a string: the mantissa needs a dot and
    the exponent a sign (1.0e-05).
    """

    def yaml_text(self) -> str:
        return yaml_float(float(self))


def _represent_number(rep: RoundTripRepresenter, value: Number) -> Any:
    return rep.represent_scalar("tag:yaml.org,2002:float", value.yaml_text())


def yaml_number(value: float | int) -> int | float:
    """The value as it should be written: whole numbers as integers, others as Number."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if float(value).is_integer() and abs(value) < 1e15:
        return int(value)
    return Number(value)


def _writer(indent: Indent) -> YAML:
    y = yaml_writer(indent)
    y.representer.add_representer(Number, _represent_number)
    return y


class ProfileFile(YamlEdit):
    """One profile file, loaded for editing; `text()` is the file with the edits made."""

    def writer(self, indent: Indent) -> YAML:
        return _writer(indent)

    def scalar(self, value: Any) -> Any:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return yaml_number(value)
        return super().scalar(value)

    def set_source(self, sid: str, values: dict[str, Any]) -> None:
        sources = self.child(self.data, "sources", CommentedMap)
        if sid in sources and isinstance(sources[sid], CommentedMap):
            self.update(sources[sid], values)
            return
        flow = bool(sources) and all(isinstance(s, CommentedMap) and s.fa.flow_style() for s in sources.values())
        append(sources, sid, self.node(values, flow))

    def set_expectation(self, key: str, index: int, values: dict[str, Any]) -> None:
        """Update expectation `index` of `key`, or append one when index is past the end."""
        expectations = self.child(self.data, "expectations", CommentedMap)
        items = self.child(expectations, key, CommentedSeq)
        if (
            index < len(items)
            and isinstance(items[index], CommentedMap)
            and values.get("kind", items[index].get("kind")) != items[index].get("kind")
        ):
            items[index] = self.node(_of_kind(items[index], values), bool(items[index].fa.flow_style()))
        elif index < len(items):
            self.update(items[index], values)
        else:
            append(items, len(items), self.node(values, True))


def _of_kind(old: CommentedMap, values: dict[str, Any]) -> dict[str, Any]:
    """An expectation whose kind the edit changes, written anew in the usual order: its kind and its
    values, then its condition and sources (the old ones where the edit gives none)."""
    fields = {**{k: old[k] for k in ("condition", "sources") if k in old}, **values}
    ordered = {k: v for k, v in fields.items() if k not in ("condition", "sources")}
    ordered |= {k: fields[k] for k in ("condition", "sources") if k in fields}
    return {k: v for k, v in ordered.items() if v is not None}


NEW_FILE_INDENT = (2, 4, 2)  # the layout of the profiles people write: `  - ` under a key


def _new_node(value: Any, flow: bool = False) -> Any:
    """Plain data -> ruamel nodes for a new file: mappings in block style at the top, `flow` below."""
    if isinstance(value, dict):
        m = CommentedMap({k: _new_node(v, True) for k, v in value.items() if v is not None})
        if flow:
            m.fa.set_flow_style()
        return m
    if isinstance(value, list):
        s = CommentedSeq([_new_node(v, True) for v in value])
        s.fa.set_flow_style()
        return s
    if isinstance(value, str):
        return text_scalar(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return yaml_number(value)
    return value


def new_file_text(head: str, sections: dict[str, Any]) -> str:
    """A new profile file: the `head` comment line, then each top-level key; a mapping of mappings
    (setup, sources) in block style with its values on one line each."""
    data = CommentedMap()
    for key, value in sections.items():
        if isinstance(value, dict) and any(isinstance(v, dict) for v in value.values()):
            data[key] = CommentedMap({k: _new_node(v, True) for k, v in value.items() if v is not None})
        else:
            data[key] = _new_node(value)
    return f"# {head}\n" + dump(_writer(NEW_FILE_INDENT), data)
