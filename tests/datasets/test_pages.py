"""The page layer: every entry, status and source link reaches the HTML and Markdown; nothing names the notes."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

from gpukb.datasets import pages
from gpukb.datasets.catalog import load
from tests.helpers import ROOT


class _Rows(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict] = []
        self.headers: list[str] = []
        self._cell: list[str] | None = None
        self._in_th = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "tr" and "data-id" in attrs:
            self.rows.append({"id": attrs["data-id"], "status": attrs["data-status"], "cells": [], "links": []})
        elif tag == "td" and self.rows:
            self._cell = []
            self.rows[-1]["cells"].append(self._cell)
        elif tag == "th":
            self._in_th = True
            self.headers.append("")
        elif tag == "a" and self.rows and self._cell is not None:
            self.rows[-1]["links"].append(attrs["href"])

    def handle_endtag(self, tag):
        if tag == "td":
            self._cell = None
        elif tag == "th":
            self._in_th = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        elif self._in_th:
            self.headers[-1] += data


def test_catalog_html_has_a_row_per_entry_with_status_and_source_links() -> None:
    eeg = load("eeg")
    parser = _Rows()
    parser.feed(pages.catalog_html("eeg"))
    assert parser.headers[-2:] == ["status", "sources"]
    assert [r["id"] for r in parser.rows] == [d.id for d in eeg.datasets]
    for row, entry in zip(parser.rows, eeg.datasets, strict=True):
        assert row["status"] == entry.status
        assert "".join(row["cells"][0]) == entry.name
        status_col = parser.headers.index("status")
        assert "".join(row["cells"][status_col]) == entry.status
        assert row["links"][0] == f"#{entry.id}"
        assert row["links"][1:] == [s.url for s in entry.verification.sources]


def test_numeric_cells_carry_their_sort_key() -> None:
    text = pages.catalog_html("eeg")
    assert '<td data-sort="109">109</td>' in text  # EEGMMIDB's subjects
    assert '<th data-type="number">subjects</th>' in text
    assert '<th data-type="text">task</th>' in text


def test_large_counts_are_shown_with_separators_and_sorted_by_value() -> None:
    people = load("people")
    coco = next(d for d in people.datasets if d.people is not None and (d.people.instances or 0) >= 10_000)
    text = pages.catalog_html("people")
    shown = f"{coco.people.instances:,}"
    assert f'<td data-sort="{coco.people.instances}">{shown}</td>' in text
    assert "," in shown
    years = {d.year for d in people.datasets if d.year is not None}
    assert all(f'<td data-sort="{y}">{y}</td>' in text for y in years)  # a year is not a count


def test_cards_have_an_anchor_sources_and_a_collapsed_claim() -> None:
    eeg = load("eeg")
    cards = pages.cards_markdown("eeg")
    for entry in eeg.datasets:
        assert f"{{ #{entry.id} }}" in cards
        for source in entry.verification.sources:
            assert f"]({source.url})" in cards
    assert cards.count('??? warning "What a widely shared summary said"') == sum(
        1 for d in eeg.datasets if d.status == "corrected"
    )
    assert cards.count('??? warning "The claim, as circulated"') == sum(
        1 for d in eeg.datasets if d.status == "unconfirmed"
    )


def test_free_text_is_escaped_for_markdown() -> None:
    assert pages._md("a_b*c [x] <y> |z|") == "a\\_b\\*c \\[x\\] &lt;y&gt; \\|z\\|"


def test_papers_and_resources_render_every_entry() -> None:
    eeg = load("eeg")
    text = pages.papers_markdown("eeg")
    for p in eeg.papers:
        assert pages._md(p.title) in text
        assert p.claimed in text
    text = pages.resources_markdown("eeg")
    for r in eeg.resources:
        assert pages._md(r.name) in text


def test_status_markdown_counts_and_explains() -> None:
    text = pages.status_markdown(("eeg",))
    assert "| eeg | datasets |" in text
    for status in ("verified", "corrected", "unconfirmed"):
        assert f"- **{status}**:" in text


def test_pages_never_name_the_notes() -> None:
    rendered = pages.catalog_html("eeg") + pages.cards_markdown("eeg") + pages.papers_markdown("eeg")
    written = "".join((ROOT / "docs" / "datasets" / name).read_text() for name in ("index.md", "eeg.md", "people.md"))
    for text in (html.unescape(rendered), written):
        # "SEED" is a dataset; what must not appear is the notes' folder, file names or the phrase itself.
        assert not re.search(r"seeds/|seed files?\b|the notes\b|000_f9967|notes_said", text, flags=re.IGNORECASE)


def test_the_pages_render_through_the_page_layer_only() -> None:
    # Each exec block holds only imports from gpukb and print() calls, as the handbook asks.
    for name in ("index.md", "eeg.md", "people.md"):
        text = (ROOT / "docs" / "datasets" / name).read_text()
        blocks = re.findall(r"```python exec=\"on\"[^\n]*\n(.*?)```", text, flags=re.S)
        assert blocks, name
        for block in blocks:
            if block.lstrip().startswith("--8<--"):
                continue
            for line in block.strip().splitlines():
                assert line.startswith(("from gpukb.", "print(")), (name, line)
