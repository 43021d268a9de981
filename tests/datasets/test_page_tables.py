"""Every table the dataset pages render, read back by header and checked cell by cell against the catalog files
read with ``tomllib`` (not through gpukb's models): the verdict counts recounted, the papers table's cells and
every dataset card's figures compared with the entry they claim to show.
"""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest

from gpukb.datasets import pages
from tests.helpers import ROOT, markdown_tables

DATA = ROOT / "src" / "gpukb" / "data" / "datasets"
STATUSES = ("verified", "corrected", "unconfirmed")
NONE = "—"


@cache
def _raw(domain: str) -> dict[str, Any]:
    return tomllib.loads((DATA / f"{domain}.toml").read_text(encoding="utf-8"))


def _plain(cell: str) -> str:
    """A cell's text with the page's Markdown escapes undone."""
    return re.sub(r"\\([\\*_\[\]`|])", r"\1", cell).replace("&lt;", "<").replace("&gt;", ">")


def _words(text: str) -> str:
    return " ".join(str(text).split())


def check_status(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    args = kwargs.get("args") or ()
    domains = list(args[0]) if args and args[0] is not None else sorted(p.stem for p in DATA.glob("*.toml"))
    assert list(table[0]) == ["domain", "entries", *STATUSES, "total"]
    expected = []
    for domain in domains:
        raw = _raw(domain)
        for key, label in (("dataset", "datasets"), ("paper", "papers"), ("resource", "libraries and archives")):
            entries = raw.get(key, [])
            if entries:
                counts = Counter(e["verification"]["status"] for e in entries)
                expected.append([domain, label, *(str(counts[s]) for s in STATUSES), str(len(entries))])
    assert [list(row.values()) for row in table] == expected
    for row in table:
        assert sum(int(row[s]) for s in STATUSES) == int(row["total"]), row


def check_papers(markdown: str, kwargs: dict[str, Any]) -> None:
    domain = (kwargs.get("args") or ("eeg",))[0]
    raw = _raw(domain)
    tables = markdown_tables(markdown)
    if not raw.get("paper"):
        assert tables == []
        return
    (table,) = tables
    names = {d["id"]: d["name"] for d in raw["dataset"]}
    assert len(table) == len(raw["paper"])
    for row, paper in zip(table, raw["paper"], strict=True):
        assert _plain(row["title as cited"]) == _words(paper["title"])
        assert row["year"] == str(paper["year"])
        assert _plain(row["claimed"]) == _words(paper["claimed"])
        assert _plain(row["cited for"]) == (_words(names[paper["dataset"]]) if paper.get("dataset") else NONE), row
        assert row["status"] == paper["verification"]["status"]
        assert _plain(row["what the sources report"]) == _words(paper.get("reported", NONE)), row


def _fact_text(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(value)
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items())
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def check_cards(markdown: str, kwargs: dict[str, Any]) -> None:
    (domain,) = kwargs["args"]
    raw = {d["id"]: d for d in _raw(domain)["dataset"]}
    cards = re.split(r"^(?=### )", markdown, flags=re.M)[1:]
    ids = [re.match(r"### .* \{ #([\w-]+) \}", card).group(1) for card in cards]
    assert ids == list(raw)
    for card, entry_id in zip(cards, ids, strict=True):
        entry = raw[entry_id]
        (table,) = markdown_tables(card)
        assert list(table[0]) == ["figure", "value"]
        cells = {row["figure"]: _plain(row["value"]) for row in table}
        assert len(cells) == len(table), f"{entry_id}: a figure printed twice"
        expected = {k: _words(entry[k]) for k in ("task", "modality") if k in entry}
        for key, value in entry.get(domain, {}).items():
            label = "sampling rate (Hz)" if key == "sampling_rate_hz" else key.replace("_", " ")
            expected[label] = _words(_fact_text(value))
        expected |= {k: _words(str(entry[k])) for k in ("year", "license", "access") if k in entry}
        links = [f"[homepage]({entry['homepage']})"] if "homepage" in entry else []
        links += [f"[doi:{entry['doi']}](https://doi.org/{entry['doi']})"] if "doi" in entry else []
        links += [f"[arXiv:{entry['arxiv']}](https://arxiv.org/abs/{entry['arxiv']})"] if "arxiv" in entry else []
        if links:
            expected["links"] = " · ".join(links)
        if "paper" in entry:
            expected["paper"] = _words(entry["paper"])
        assert cells == expected, entry_id
        status = entry["verification"]["status"]
        assert f"**{status}**, checked {entry['verification']['checked'].isoformat()}" in card, entry_id


#: Each dataset page function that renders a table, and the check of its cells.
CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "status_markdown": check_status,
    "papers_markdown": check_papers,
    "cards_markdown": check_cards,
}


def test_a_changed_figure_fails_the_card_check() -> None:
    markdown = pages.cards_markdown("eeg")
    assert "| channels | 22 |" in markdown
    with pytest.raises(AssertionError):
        check_cards(markdown.replace("| channels | 22 |", "| channels | 23 |", 1), {"args": ("eeg",)})
