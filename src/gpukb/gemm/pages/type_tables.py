"""The type tables page (docs/gemm/type-tables.md): which type combinations hipBLASLt and cuBLASLt
accept, rendered from the data files (:mod:`gpukb.gemm.types`, :mod:`gpukb.gemm.type_tables`).
"""

from __future__ import annotations

from collections.abc import Sequence

from gpukb.gemm import type_tables
from gpukb.gemm.types import sources_of, table
from gpukb.tables import markdown_table


def type_answers() -> str:
    """The quick answers: each common combination on MI300X, MI355X and H100."""
    return markdown_table(*type_tables.answers_table())


def type_library(library: str, groups: Sequence[str] | None = None) -> str:
    """A library's table, one section per vendor table (group): caption, table, conditions and notes, sources.

    Args:
        library: ``"hipblaslt"`` or ``"cublaslt"``.
        groups: Group ids to render, in this order (default: all, in table order).
    """
    tab = table(library)
    out = []
    for gid, rows in type_tables.group_rows(library, groups):
        title, compact, note = tab.groups[gid]
        headers, cells, caption = type_tables.group_table(rows, compact)
        out.append(f"**{title}** ({len(rows)} combinations)" + (f": {'; '.join(caption)}." if caption else "."))
        out.append("")
        out.append(markdown_table(headers, cells))
        out.append("")
        constraints = {r.constraints for r in rows if r.constraints}
        extra = [*(f"Conditions: {c}." for c in sorted(constraints)), *([note] if note else [])]
        extra += sorted({r.note for r in rows if r.note and r.note != note})
        cited = ", ".join(f"[{s.id}]({s.url})" for s in sources_of(rows))
        out.append(" ".join([*extra, f"Sources: {cited}."]))
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def type_sources(library: str) -> str:
    """The library's sources as a list: id, title, version, repository path and commit, date checked."""
    lines = []
    for src in table(library).sources.values():
        where = f" `{src.path}` at `{src.commit[:12]}`." if src.path and src.commit else ""
        lines.append(f"- **{src.id}**: [{src.title}]({src.url}). {src.version}.{where} Checked {src.checked}.")
    return "\n".join(lines) + "\n"


def type_compute(library: str) -> str:
    """The library's compute types: id, enumerator, accumulator, what A and B are rounded to."""
    return markdown_table(*type_tables.compute_table(library))


def type_architectures() -> str:
    """Every architecture of both tables, with the names it answers to and what its FP8 is."""
    return markdown_table(*type_tables.arch_table())


def type_names() -> str:
    """The canonical type names the tables use, with the format and the HIP and CUDA names behind each."""
    return markdown_table(*type_tables.names_table())


def type_comparison() -> str:
    """hipBLASLt and cuBLASLt side by side: a count, then every combination with where each library has it."""
    total, both, only = type_tables.comparison_counts()
    summary = (
        f"{total} combinations without block scaling: {both} in both libraries, "
        + ", ".join(f"{n} only in {t}" for t, n in only.items())
        + "."
    )
    return summary + "\n\n" + markdown_table(*type_tables.comparison_table())


def type_notes_errata() -> str:
    """Claims of a widely shared explanation of hipBLASLt's types: claim, truth, deciding test, errata link.

    Each is a collapsed note, so the page states its facts first and the corrections stay out of the way. MkDocs
    does not rewrite links in markdown-exec's output, so the link is the URL the browser resolves from the built
    page (``/gemm/type-tables/``), not a path to a ``.md`` file; tests/site/test_links.py checks it resolves.
    """
    out = []
    for e in type_tables.notes_errata():
        out.append(f'??? note "A claim you may meet: {e.claim}"')
        out.append(f"    {e.truth}")
        out.append("")
        out.append(f"    Decided by `{e.test}`; [errata entry](../../about/errata/#{e.id}).")
        out.append("")
    return "\n".join(out)
