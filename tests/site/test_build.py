"""The site builds with `mkdocs build --strict`, and the built pages carry what the build computed."""

from __future__ import annotations

import html
import os
import platform
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from gpukb.site import mkdocs_hooks
from tests.helpers import path_without_scripts


def _page(site, path: str) -> str:
    return (site / path / "index.html").read_text(encoding="utf-8")


def test_strict_build_has_no_warnings(built_site) -> None:
    _, log = built_site
    assert not re.search(r"^(WARNING|ERROR)", log, flags=re.MULTILINE), log


def test_the_hook_puts_this_environments_gpukb_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """``.venv/bin/mkdocs build`` in a shell that never activated the venv finds the venv's ``gpukb``."""
    scripts = str(Path(sys.executable).parent)
    bare = path_without_scripts()
    monkeypatch.setenv("PATH", bare)
    assert scripts not in os.environ["PATH"].split(os.pathsep)
    mkdocs_hooks.on_startup(command="build", dirty=False)
    assert os.environ["PATH"] == os.pathsep.join([scripts, bare])
    assert shutil.which("gpukb") == str(Path(scripts) / "gpukb")
    mkdocs_hooks.on_startup(command="build", dirty=False)  # twice (mkdocs serve): no second copy
    assert os.environ["PATH"].split(os.pathsep).count(scripts) == 1


def test_console_blocks_ran_without_the_venv_on_path(built_site) -> None:
    """``built_site`` builds with this environment's scripts taken off PATH; the ``gpukb`` blocks still ran."""
    site, _ = built_site
    text = html.unescape(re.sub(r"<[^>]+>", "", _page(site, "formats/anatomy")))
    assert re.search(r"\$ gpukb format 0x63 --as e4m3\s+format\s+bits\s+sign exponent mantissa", text)
    assert "command not found" not in text


def test_snippet_output_is_produced_at_build_time(built_site) -> None:
    site, _ = built_site
    html = _page(site, "formats/anatomy")
    # The mantissa field of 42.5 appears in the executed output, not only in the source.
    assert re.search(r"mantissa=01010100000000000000000", html)
    bits_of_0_1 = format(int(np.array(0.1, dtype=np.float32).view(np.uint32)) & 0x7FFFFF, "023b")
    assert f"mantissa={bits_of_0_1}" in html


def test_math_is_mathml_not_tex(built_site) -> None:
    site, _ = built_site
    html = _page(site, "formats/anatomy")
    assert html.count("<math") >= 8
    assert "arithmatex" not in html
    assert "\\(" not in html
    assert "\\frac" not in html


def test_verification_page_reports_this_build(built_site) -> None:
    site, _ = built_site
    html = _page(site, "about/verification")
    assert f"<td>{platform.python_version()}</td>" in html
    assert f"<td>{np.__version__}</td>" in html


def test_errata_page_renders_the_data(built_site) -> None:
    site, _ = built_site
    html = _page(site, "about/errata")
    assert 'id="fp32-formula-normal-only"' in html
    assert "tests/formats/test_decode.py::test_subnormals_have_no_implicit_leading_one" in html


def test_api_reference_is_generated(built_site) -> None:
    """One page per module (``gpukb.site.reference``), docstrings without source code."""
    site, _ = built_site
    for page, name in [
        ("reference/gpukb/formats/explain", "gpukb.formats.explain.explain"),
        ("reference/gpukb/environment", "gpukb.environment.collect"),
        ("reference/gpukb/errata", "gpukb.errata.load"),
    ]:
        html = _page(site, page)
        assert f'id="{name}"' in html, name
        assert "Source code in" not in html, page


def test_no_page_loads_assets_from_another_host(built_site) -> None:
    site, _ = built_site
    for page in site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        external = re.findall(r'<(?:script|link|img)[^>]+(?:src|href)="(https?://[^"]+)"', html)
        assert external == [], f"{page.relative_to(site)} loads {external}"


def test_the_schemas_are_published_and_linked(built_site) -> None:
    """Every schema is in the built site, equal to its model's, and the schemas page links to each one."""
    import json
    import re
    from urllib.parse import urljoin

    from gpukb.site.schemas import schemas

    site, _ = built_site
    page = (site / "contributing" / "schemas" / "index.html").read_text(encoding="utf-8")
    links = {urljoin("/contributing/schemas/", href) for href in re.findall(r'href="([^"]+\.json)"', page)}
    for schema in schemas():
        published = site / "schemas" / schema.name
        assert json.loads(published.read_text(encoding="utf-8")) == json.loads(schema.text)
        assert f"/schemas/{schema.name}" in links, schema.name


def test_a_committed_record_validates_against_its_published_schema(built_site) -> None:
    """The JSON Schema export describes the files: a committed record passes it, a broken copy does not."""
    import json

    import jsonschema

    from gpukb import records

    site, _ = built_site
    record = records.load("formats/codec-speed")
    schema = json.loads((site / "schemas" / f"results-{record.kind}.json").read_text(encoding="utf-8"))
    data = json.loads(record.model_dump_json())
    jsonschema.validate(data, schema)
    data["rows"][0]["n"] = "ten million"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema)


def test_the_footer_links_the_repository_when_the_build_knows_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Pages workflow's ``GITHUB_REPOSITORY`` becomes a plain footer link (no ``repo_url``: no API request)."""
    env = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "someone/gpukb"}
    assert mkdocs_hooks.repository_url(env) == "https://github.com/someone/gpukb"
    assert mkdocs_hooks.repository_url({}) is None
    assert mkdocs_hooks.repository_url({**env, "GITHUB_REPOSITORY": "not a repo"}) is None
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    config = mkdocs_hooks.on_config({"copyright": "Every code block runs."})
    assert config["copyright"].startswith("Every code block runs. ")
    assert '<a href="https://github.com/someone/gpukb">' in config["copyright"]
    monkeypatch.delenv("GITHUB_REPOSITORY")
    assert mkdocs_hooks.on_config({"copyright": "c"})["copyright"] == "c"
    mkdocs_yml = (Path(__file__).parents[2] / "mkdocs.yml").read_text(encoding="utf-8")
    assert not re.search(r"^repo_url:", mkdocs_yml, flags=re.MULTILINE)
