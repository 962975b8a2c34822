"""One profile as tools see it, and the site's address its links go under.

Kept apart from build.py so `judge` and `export` start without the site's modules.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import Finding, SourceError, UsageError
from metrics_manual.exports.document import export_document
from metrics_manual.model.schema import ProfileExport
from metrics_manual.source.load import Manual, did_you_mean, load_manual


class _SiteConfig(yaml.SafeLoader):
    """mkdocs.yml as MkDocs reads it for site_url: `!ENV` resolved, any other tag read as nothing."""


def _env(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    # MkDocs' !ENV (pyyaml_env_tag): `!ENV NAME`, or `!ENV [NAME, OTHER, default]` whose last item is the default.
    if isinstance(node, yaml.ScalarNode):
        names, default = [loader.construct_scalar(node)], None
    elif isinstance(node, yaml.SequenceNode) and node.value:
        *names, default = [loader.construct_object(n) for n in node.value]
        if not names:
            names, default = [default], None
    else:
        return None
    for name in names:
        value = os.environ.get(str(name))
        if value is not None:
            return yaml.safe_load(value) if value else value
    return default


def _other_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> None:
    return None


_SiteConfig.add_constructor("!ENV", _env)
_SiteConfig.add_multi_constructor("", _other_tag)
_SiteConfig.add_multi_constructor("tag:yaml.org,2002:python/", _other_tag)


NO_SITE_URL = (
    "note: site_url is unset in mkdocs.yml (set SITE_URL to where the manual is published): "
    "the exports and the site leave the manual's address out"
)


def site_url(root: Path) -> str | None:
    """site_url of mkdocs.yml as MkDocs reads it (`!ENV [SITE_URL, ...]` included; INHERIT through MkDocs)."""
    path = root / "mkdocs.yml"
    if not path.is_file():
        return None
    try:
        config = yaml.load(path.read_bytes(), Loader=_SiteConfig)  # noqa: S506 - a SafeLoader subclass
    except (OSError, yaml.YAMLError) as exc:
        raise SourceError([Finding("mkdocs.yml", 1, 1, f"cannot read it: {exc}", code=codes.SITE_CONFIG)]) from None
    if isinstance(config, dict) and "INHERIT" in config:
        return _site_url_through_mkdocs(path)
    url = config.get("site_url") if isinstance(config, dict) else None
    return url if isinstance(url, str) and url else None


def _site_url_through_mkdocs(path: Path) -> str | None:
    """A config that inherits another: MkDocs' own loader merges them (a tenth of a second to import)."""
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.exceptions import ConfigurationError
    from mkdocs.utils.yaml import get_yaml_loader, yaml_load

    try:
        with path.open("rb") as fh:
            config = yaml_load(fh, loader=get_yaml_loader(config=MkDocsConfig(config_file_path=str(path))))
    except (OSError, ConfigurationError) as exc:
        raise SourceError([Finding("mkdocs.yml", 1, 1, f"cannot read it: {exc}", code=codes.SITE_CONFIG)]) from None
    url = config.get("site_url")
    return url if isinstance(url, str) and url else None


def exported_profile(root: Path, profile_id: str) -> tuple[Manual, ProfileExport]:
    """One profile as tools see it (its metrics from the catalog, links under site_url); UsageError if unknown."""
    manual = load_manual(root)
    ids = [p.id for p in manual.profiles]
    if profile_id not in ids:
        raise UsageError(
            f"unknown profile {profile_id!r}; profiles: {', '.join(ids) or 'none'}" + did_you_mean(profile_id, ids)
        )
    return manual, export_document(manual, manual.profile(profile_id), site_url(root))
