"""What the built site links to and what its tables hold, read from the HTML of ``mkdocs build --strict``.

The strict build checks the links MkDocs sees in a page's Markdown. It does not see links inside raw HTML or in the
output of markdown-exec blocks (the pages' tables and notes rendered by the page layers), which the browser resolves
against the built page's URL. So the built site is checked as a browser would follow it: every internal ``href``
and ``src`` of every page names a file of the site, and every ``#anchor`` an ``id`` on the page it points to.
"""

from __future__ import annotations

import re
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest

#: Attributes that point at another resource.
LINK_ATTRIBUTES = {("a", "href"), ("link", "href"), ("script", "src"), ("img", "src"), ("source", "src")}
#: Schemes that leave the site (checked by no test here; the browser test blocks requests to other hosts).
EXTERNAL = ("http:", "https:", "mailto:", "data:", "javascript:", "tel:")


class _Page(HTMLParser):
    """The ids of one page, its links, and the cells of its article's tables (text, and text outside links)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.cells: list[tuple[str, str]] = []
        self._cell: list[str] | None = None
        self._cell_plain: list[str] | None = None
        self._in_link = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for key in ("id", "name"):
            if values.get(key) and (key == "id" or tag == "a"):
                self.ids.add(values[key])
        for element, attribute in LINK_ATTRIBUTES:
            if tag == element and values.get(attribute) is not None:
                self.links.append(values[attribute])
        if tag in ("td", "th"):
            self._cell, self._cell_plain = [], []
        if tag == "a":
            self._in_link += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.cells.append(("".join(self._cell).strip(), "".join(self._cell_plain or []).strip()))
            self._cell = self._cell_plain = None
        if tag == "a" and self._in_link:
            self._in_link -= 1

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
            if not self._in_link:
                self._cell_plain.append(data)


@cache
def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _url(site: Path, page: Path) -> str:
    """The URL path a page is served at: ``gemm/type-tables/index.html`` -> ``/gemm/type-tables/``."""
    rel = page.relative_to(site).as_posix()
    return "/" + (rel[: -len("index.html")] if rel.endswith("index.html") else rel)


def _target(site: Path, url_path: str) -> Path | None:
    """The file a URL path serves, as a static server would (a folder serves its index.html); None if none."""
    candidate = site / unquote(url_path).lstrip("/")
    if candidate.is_dir():
        candidate = candidate / "index.html"
    return candidate if candidate.is_file() else None


def broken_links(site: Path) -> list[str]:
    """Every internal link of every page of ``site`` that names no file, or an anchor that is not on its page."""
    problems = []
    for page in sorted(site.rglob("*.html")):
        base = _url(site, page)
        for href in sorted(set(_parse(page).links)):
            if not href or href.startswith(EXTERNAL) or href.startswith("//"):
                continue
            parts = urlsplit(urljoin(base, href))
            target = _target(site, parts.path)
            where = f"{page.relative_to(site)}: {href}"
            if target is None:
                problems.append(f"{where} -> no file {parts.path}")
            elif parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in _parse(target).ids:
                problems.append(f"{where} -> no id {parts.fragment!r} on {target.relative_to(site)}")
    return problems


def test_every_internal_link_and_anchor_resolves(built_site) -> None:
    site, _ = built_site
    problems = broken_links(site)
    assert problems == [], f"{len(problems)} broken links:\n" + "\n".join(problems)


def test_the_checker_finds_a_broken_link_and_a_missing_anchor(tmp_path: Path) -> None:
    """The checker itself, on a two-page site: a good link, a link to a missing page, one to a missing anchor."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "index.html").write_text(
        '<a href="../b/#here">ok</a><a href="../c/">gone</a><a href="../b/#nowhere">no anchor</a>'
        '<a href="https://example.org/">external</a><a href="#top" id="top">self</a>'
    )
    (tmp_path / "b" / "index.html").write_text('<h2 id="here">b</h2>')
    assert broken_links(tmp_path) == [
        "a/index.html: ../b/#nowhere -> no id 'nowhere' on b/index.html",
        "a/index.html: ../c/ -> no file /c/",
    ]


# --- tables ----------------------------------------------------------------------------------------------------

#: A cell that starts like a Markdown list item: list lines written straight under a table (no blank line between)
#: are read as more rows of the table.
_LIST_ROW = re.compile(r"^([-*+]|\d+\.)\s")


def stray_cells(site: Path) -> list[str]:
    """Table cells of every page that hold Markdown that was meant to be something else: a list item, or a URL
    that is not a link's target (raw ``http...`` text outside any ``<a>``)."""
    problems = []
    for page in sorted(site.rglob("*.html")):
        for text, plain in _parse(page).cells:
            if _LIST_ROW.match(text):
                problems.append(f"{page.relative_to(site)}: cell starts like a list item: {text[:80]!r}")
            elif re.search(r"https?://\w", plain):
                problems.append(f"{page.relative_to(site)}: raw URL in a cell: {plain[:80]!r}")
    return problems


def test_rendered_tables_hold_no_stray_list_rows_or_raw_urls(built_site) -> None:
    site, _ = built_site
    problems = stray_cells(site)
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize(
    ("markdown", "found"),
    [
        ("| a | b |\n|---|---|\n| 1 | 2 |\n- source: https://example.org/", True),  # the FP8 names table's old bug
        ("| a | b |\n|---|---|\n| 1 | 2 |\n\n- source: [title](https://example.org/)", False),
    ],
)
def test_the_table_check_finds_a_list_read_as_rows(tmp_path: Path, markdown: str, found: bool) -> None:
    import markdown as md

    (tmp_path / "index.html").write_text(md.markdown(markdown, extensions=["tables"]))
    assert bool(stray_cells(tmp_path)) is found
