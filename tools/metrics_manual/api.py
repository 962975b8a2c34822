"""Load an exported profile for a tool of your own.

    from metrics_manual.api import load_profile
    profile = load_profile("lab-gb10.json")
    profile.expected("train/grad_norm")   # [Band(kind='band', min=0.35, max=4.95, ...)]
"""
from __future__ import annotations

import json
from pathlib import Path

import yaml
from pydantic import ValidationError

from .model import AtStep, Band, Exact, Median, MetricExport, Presence, ProfileExport

__all__ = ["load_profile", "ProfileExport", "MetricExport", "Band", "Median", "Exact", "Presence", "AtStep"]


def load_profile(path: str | Path) -> ProfileExport:
    """Read an exported profile (.json, .yaml or .yml) into typed objects; ValueError if it is not one."""
    path = Path(path)
    text = path.read_text("utf-8")
    try:
        data = yaml.safe_load(text) if path.suffix in (".yaml", ".yml") else json.loads(text)
        return ProfileExport.model_validate(data)
    except (ValueError, yaml.YAMLError, ValidationError, RecursionError) as exc:
        raise ValueError(f"{path}: not an exported metrics-manual profile: {exc}") from None
