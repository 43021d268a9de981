"""Markdown and HTML for the dataset pages; the only module of the chapter that returns page text.

Everything here renders values from :mod:`gpukb.datasets.tables` and :mod:`gpukb.datasets.catalog`; nothing is typed
in by hand. The interactive table is plain HTML that ``docs/javascripts/catalog-table.js`` makes sortable and
filterable in the browser, with no request to any other host.
"""

from __future__ import annotations

import html

from gpukb.datasets import tables
from gpukb.datasets.catalog import STATUSES, Dataset, Paper, Resource, load
from gpukb.datasets.problems import problems as chapter_problems
from gpukb.problems import markdown as problems_markdown
from gpukb.tables import markdown_table

#: Shown for a figure that no source read states.
MISSING = "—"

#: Columns whose cells sort as numbers.
_NUMERIC = {"year", "subjects", "EEG channels", "rate (Hz)", "sessions", "images", "persons", "persons / image"}

_STATUS_WORDS = {
    "verified": "every stored figure was read in a listed source",
    "corrected": "real, but a widely shared summary got something wrong",
    "unconfirmed": "no primary source found; listed only as a claim",
}


def _text(cell: object) -> str:
    return MISSING if cell is None else str(cell)


def _md(text: str) -> str:
    """Escape free text from the data files for inline Markdown (emphasis, links, HTML and table pipes)."""
    out = text.replace("\\", "\\\\").replace("<", "&lt;").replace(">", "&gt;")
    for ch in "*_[]`|":
        out = out.replace(ch, "\\" + ch)
    return " ".join(out.split())


def _link(url: str, label: str, title: str | None = None) -> str:
    attrs = f' title="{html.escape(title)}"' if title else ""
    return f'<a href="{html.escape(url)}"{attrs}>{html.escape(label)}</a>'


def _sources_html(entry: Dataset | Paper | Resource) -> str:
    return ", ".join(_link(url, kind, title) for kind, title, url in tables.sources_of(entry)) or MISSING


def catalog_html(domain: str) -> str:
    """The domain's dataset table as HTML, ready for the browser script: one row per entry, a status and a sources
    column, the dataset name linking to its card.

    Raises:
        ValueError: For an unknown domain.
    """
    cat = load(domain)
    headers, rows = tables.dataset_table(domain, cat.datasets)
    head = "".join(
        f'<th data-type="{"number" if h in _NUMERIC else "text"}">{html.escape(h)}</th>' for h in [*headers, "sources"]
    )
    body = []
    for entry, row in zip(cat.datasets, rows, strict=True):
        cells = []
        for header, cell in zip(headers, row, strict=True):
            sort = f' data-sort="{html.escape(str(cell))}"' if header in _NUMERIC and cell is not None else ""
            if header == "dataset":
                content = f'<a href="#{entry.id}">{html.escape(str(cell))}</a>'
            elif header == "status":
                word = html.escape(str(cell))
                content = word if cell == "verified" else f"<strong>{word}</strong>"
            elif isinstance(cell, int) and header in _NUMERIC and header != "year":
                content = f"{cell:,}"  # thousands separated; the sort key is data-sort
            else:
                content = html.escape(_text(cell))
            cells.append(f"<td{sort}>{content}</td>")
        cells.append(f"<td>{_sources_html(entry)}</td>")
        body.append(f'<tr data-status="{entry.status}" data-id="{entry.id}">{"".join(cells)}</tr>')
    return (
        f'<div class="gpukb-catalog" data-domain="{domain}">\n'
        f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n" + "\n".join(body) + "\n</tbody>\n</table>\n</div>"
    )


def status_markdown(domains: tuple[str, ...] | None = None) -> str:
    """Entries per domain and verdict, as a Markdown table, followed by what each verdict means."""
    catalogs = None if domains is None else {d: load(d) for d in domains}
    headers, rows = tables.status_counts(catalogs)
    legend = "\n".join(f"- **{s}**: {_STATUS_WORDS[s]}." for s in STATUSES)
    return markdown_table(headers, rows) + "\n\n" + legend


def _facts_rows(entry: Dataset) -> list[tuple[str, str]]:
    facts = entry.facts
    out = [(k, getattr(entry, k)) for k in ("task", "modality") if getattr(entry, k) is not None]
    if facts is not None:
        for name, field in type(facts).model_fields.items():
            label = field.description or name.replace("_", " ")
            raw = getattr(facts, name)
            if raw is None:
                continue
            if isinstance(raw, dict):
                raw = ", ".join(f"{k} {v}" for k, v in raw.items())
            elif isinstance(raw, list):
                raw = ", ".join(raw)
            elif isinstance(raw, bool):
                raw = "yes" if raw else "no"
            elif isinstance(raw, float) and raw.is_integer():
                raw = int(raw)
            out.append((label.replace("sampling rate hz", "sampling rate (Hz)"), str(raw)))
    for name in ("year", "license", "access"):
        if getattr(entry, name) is not None:
            out.append((name, str(getattr(entry, name))))
    return out


def _card(entry: Dataset) -> str:
    lines = [f"### {_md(entry.name)} {{ #{entry.id} }}", ""]
    v = entry.verification
    badge = f"**{v.status}**, checked {v.checked.isoformat()}"
    if entry.aliases:
        badge += " · also known as " + ", ".join(f"`{a}`" for a in entry.aliases)
    lines += [badge, ""]
    lines += ["| figure | value |", "|---|---|"]
    lines += [f"| {label} | {_md(text)} |" for label, text in _facts_rows(entry)]
    links = []
    if entry.homepage:
        links.append(f"[homepage]({entry.homepage})")
    if entry.doi:
        links.append(f"[doi:{entry.doi}](https://doi.org/{entry.doi})")
    if entry.arxiv:
        links.append(f"[arXiv:{entry.arxiv}](https://arxiv.org/abs/{entry.arxiv})")
    if links:
        lines.append(f"| links | {' · '.join(links)} |")
    if entry.paper:
        lines.append(f"| paper | {_md(entry.paper)} |")
    lines.append("")
    if entry.note:
        lines += [_md(entry.note), ""]
    if v.sources:
        lines += ["Sources read:", ""]
        for s in v.sources:
            said = f": {_md(s.said)}" if s.said else ""
            lines.append(f"- {s.kind}: [{_md(s.title)}]({s.url}){said}")
        lines.append("")
    if v.notes_said:
        title = "What a widely shared summary said" if v.status != "unconfirmed" else "The claim, as circulated"
        lines += [f'??? warning "{title}"', "", f"    {_md(v.notes_said)}", ""]
    return "\n".join(lines)


def cards_markdown(domain: str) -> str:
    """One card per dataset: figures, links, note, the sources read and, collapsed, what a summary claimed."""
    return "\n".join(_card(e) for e in load(domain).datasets)


def papers_markdown(domain: str = "eeg") -> str:
    """The cited papers with their claimed results and verdicts, and a note per paper."""
    cat = load(domain)
    if not cat.papers:
        return "No papers are cited for this domain."
    headers, rows = tables.paper_table(domain)
    cells = [[_md(_text(c)) if c is not None else MISSING for c in row] for row in rows]
    notes = "\n".join(f"- *{_md(p.title)}*: {_md(p.note)}" for p in cat.papers if p.note)
    return markdown_table(headers, cells) + ("\n\n" + notes if notes else "")


def resources_markdown(domain: str = "eeg") -> str:
    """Libraries and archives with what they do for the catalog, and their sources."""
    cat = load(domain)
    out = []
    for r in cat.resources:
        where = f"[{_md(r.name)}]({r.homepage})" if r.homepage else _md(r.name)
        facts = [r.kind, *(x for x in (r.version, r.license) if x)]
        text = f"- **{where}** ({_md('; '.join(facts))}; {r.verification.status})"
        if r.note:
            text += f": {_md(r.note)}"
        sources = ", ".join(f"[{_md(s.title)}]({s.url})" for s in r.verification.sources)
        if sources:
            text += f" Source: {sources}."
        out.append(text)
    return "\n".join(out)


def worked_problems() -> str:
    """The chapter's worked problems, each answer computed now and folded away (:mod:`gpukb.datasets.problems`)."""
    return problems_markdown(chapter_problems())
