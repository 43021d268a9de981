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


def test_every_row_of_the_html_catalog_is_laid_out_exactly() -> None:
    """Each row of each domain's catalog rebuilt from the table rows and the sources: sort keys on numeric cells
    that have a value only, a status in bold unless verified, a missing figure as the dash, the sources linked with
    their titles and separated by commas; the rows one per line inside the table."""
    from gpukb.datasets import tables

    numeric = {"year", "subjects", "EEG channels", "rate (Hz)", "sessions", "images", "persons", "persons / image"}
    for domain in ("eeg", "people"):
        cat = load(domain)
        headers, rows = tables.dataset_table(domain, cat.datasets)
        text = pages.catalog_html(domain)
        body = text.split("<tbody>\n", 1)[1]
        assert text.startswith(f'<div class="gpukb-catalog" data-domain="{domain}">\n<table>\n<thead><tr><th ')
        assert body.endswith("\n</tbody>\n</table>\n</div>")
        shown = body.removesuffix("\n</tbody>\n</table>\n</div>").split("\n")
        assert len(shown) == len(cat.datasets)
        for line, entry, row in zip(shown, cat.datasets, rows, strict=True):
            cells = []
            for header, cell in zip(headers, row, strict=True):
                sort = f' data-sort="{html.escape(str(cell))}"' if header in numeric and cell is not None else ""
                if header == "dataset":
                    content = f'<a href="#{entry.id}">{html.escape(str(cell))}</a>'
                elif header == "status":
                    content = cell if cell == "verified" else f"<strong>{cell}</strong>"
                elif cell is None:
                    content = pages.MISSING
                elif isinstance(cell, int) and header in numeric and header != "year":
                    content = f"{cell:,}"
                else:
                    content = html.escape(str(cell))
                cells.append(f"<td{sort}>{content}</td>")
            links = [
                f'<a href="{html.escape(s.url)}"' + (f' title="{html.escape(s.title)}"' if s.title else "")
                + f">{html.escape(s.kind)}</a>"
                for s in entry.verification.sources
            ]  # fmt: skip
            cells.append(f"<td>{', '.join(links) or pages.MISSING}</td>")
            assert line == f'<tr data-status="{entry.status}" data-id="{entry.id}">{"".join(cells)}</tr>', entry.id


def test_the_cards_papers_resources_and_legend_are_laid_out_exactly() -> None:
    """The parts around the figures, rebuilt line by line: a card's heading, badge (aliases as code, comma-separated),
    blank lines that keep Markdown's blocks apart, sources with what each said; the papers' notes under their
    table; one line per resource with its facts, status and sources; the legend, one verdict a line."""
    eeg = load("eeg")
    cards = pages.cards_markdown("eeg").split("\n### ")
    assert len(cards) == len(eeg.datasets)
    for card, entry in zip(cards, eeg.datasets, strict=True):
        lines = card.removeprefix("### ").split("\n")
        v = entry.verification
        badge = f"**{v.status}**, checked {v.checked.isoformat()}"
        if entry.aliases:
            badge += " · also known as " + ", ".join(f"`{a}`" for a in entry.aliases)
        assert lines[:5] == [f"{pages._md(entry.name)} {{ #{entry.id} }}", "", badge, "", "| figure | value |"]
        if v.sources:
            start = lines.index("Sources read:")
            said = [f": {pages._md(s.said)}" if s.said else "" for s in v.sources]
            assert lines[start - 1 : start + 2 + len(v.sources) + 1] == [
                "",
                "Sources read:",
                "",
                *(f"- {s.kind}: [{pages._md(s.title)}]({s.url}){w}" for s, w in zip(v.sources, said, strict=True)),
                "",
            ]
        if v.notes_said:
            at = next(i for i, line in enumerate(lines) if line.startswith("??? warning"))
            assert lines[at + 1 : at + 4] == ["", f"    {pages._md(v.notes_said)}", ""]
        if entry.note:
            assert f"\n\n{pages._md(entry.note)}\n\n" in "\n".join(lines)
    notes = [f"- *{pages._md(p.title)}*: {pages._md(p.note)}" for p in eeg.papers if p.note]
    assert pages.papers_markdown().endswith("|\n\n" + "\n".join(notes))  # the EEG domain by default
    if not load("people").papers:
        assert pages.papers_markdown("people") == "No papers are cited for this domain."
    resources = pages.resources_markdown().split("\n")
    assert len(resources) == len(eeg.resources)
    for line, r in zip(resources, eeg.resources, strict=True):
        where = f"[{pages._md(r.name)}]({r.homepage})" if r.homepage else pages._md(r.name)
        facts = "; ".join([r.kind, *(x for x in (r.version, r.license) if x)])
        assert line.startswith(f"- **{where}** ({pages._md(facts)}; {r.verification.status})")
        if r.verification.sources:
            linked = ", ".join(f"[{pages._md(s.title)}]({s.url})" for s in r.verification.sources)
            assert line.endswith(f" Source: {linked}.")
    legend = pages.status_markdown(("eeg",)).split("\n\n")[-1].split("\n")
    assert [line.split("**")[1] for line in legend] == ["verified", "corrected", "unconfirmed"]


def test_markdown_escaping_doubles_a_backslash() -> None:
    assert pages._md("a\\b") == "a\\\\b"


def test_the_catalog_head_and_the_status_legend_are_laid_out_exactly() -> None:
    from gpukb.datasets import tables
    from gpukb.tables import markdown_table

    headers, _ = tables.dataset_table("eeg")
    numeric = {"year", "subjects", "EEG channels", "rate (Hz)", "sessions"}
    head = "".join(f'<th data-type="{"number" if h in numeric else "text"}">{html.escape(h)}</th>'
                   for h in [*headers, "sources"])  # fmt: skip
    assert f"<thead><tr>{head}</tr></thead>" in pages.catalog_html("eeg")
    legend = "\n".join(f"- **{s}**: {pages._STATUS_WORDS[s]}." for s in ("verified", "corrected", "unconfirmed"))
    assert pages.status_markdown(("eeg",)) == markdown_table(*tables.status_counts({"eeg": load("eeg")})) + (
        "\n\n" + legend
    )
