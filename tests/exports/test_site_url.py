"""site_url as MkDocs reads it, without importing MkDocs (judge and export start faster)."""

from __future__ import annotations

from pathlib import Path

import pytest

from metrics_manual.exports.profile import site_url

CASES = [
    ("site_url: https://a.example/\n", {}, "https://a.example/"),
    ("site_url: !ENV [SITE_URL, 'https://default.example/']\n", {}, "https://default.example/"),
    (
        "site_url: !ENV [SITE_URL, 'https://default.example/']\n",
        {"SITE_URL": "https://env.example/"},
        "https://env.example/",
    ),
    (
        "site_url: !ENV [FIRST, SECOND, 'https://d.example/']\n",
        {"SECOND": "https://second.example/"},
        "https://second.example/",
    ),
    ("site_url: !ENV SITE_URL\n", {}, None),
    ("site_url: !ENV SITE_URL\n", {"SITE_URL": "https://env.example/"}, "https://env.example/"),
    # Tags MkDocs configs use for extensions: read as nothing, never run.
    ("site_url: https://a.example/\nx: !!python/name:os.system\ny: !relative $config_dir\n", {}, "https://a.example/"),
    ("site_name: no url\n", {}, None),
]


@pytest.mark.parametrize(("text", "env", "want"), CASES)
def test_site_url_reads_as_mkdocs_does(tmp_path: Path, monkeypatch, text: str, env: dict, want: str | None) -> None:
    for name in ("SITE_URL", "FIRST", "SECOND"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "mkdocs.yml").write_text(text, "utf-8")
    assert site_url(tmp_path) == want
    # The same as MkDocs' own loader gives.
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.utils.yaml import get_yaml_loader, yaml_load

    path = tmp_path / "mkdocs.yml"
    with path.open("rb") as fh:
        config = yaml_load(fh, loader=get_yaml_loader(config=MkDocsConfig(config_file_path=str(path))))
    assert (config.get("site_url") or None) == want


def test_an_inherited_config_goes_through_mkdocs(tmp_path: Path) -> None:
    (tmp_path / "base.yml").write_text("site_name: base\nsite_url: https://base.example/\n", "utf-8")
    (tmp_path / "mkdocs.yml").write_text("INHERIT: base.yml\nsite_name: child\n", "utf-8")
    assert site_url(tmp_path) == "https://base.example/"
