"""The About chapter's page layer: the only code that returns Markdown for the errata and verification pages.

Each function loads what it renders (the errata data file, the committed GPU test run by id), so a page calls it
with no path: ``from gpukb.site.pages import errata; print(errata())``.
"""

from __future__ import annotations

from gpukb import errata as errata_data
from gpukb.records import load, measured_on, record_ids
from gpukb.site.gpu_tests import RECORD_ID, GpuTestRun
from gpukb.site.schemas import schemas
from gpukb.tables import markdown_table


def errata(entries: list[errata_data.Erratum] | None = None) -> str:
    """The errata as the errata page shows them: one section each, with an anchor, grouped by topic.

    Args:
        entries: The entries to render; the project's (``gpukb.errata.load()``) when omitted.
    """
    entries = errata_data.load() if entries is None else entries
    out = []
    for topic in errata_data.TOPICS:
        chosen = [e for e in entries if e.topic == topic]
        if not chosen:
            continue
        out.append(f"## {topic.capitalize()}\n")
        for e in chosen:
            out.append(f"### {e.id} {{ #{e.id} }}\n")
            out.append(f"**A claim you may meet** ({e.claimed_in}): {e.claim}\n")
            out.append(f"**What is true:** {e.truth}\n")
            out.append(f"**Decided by:** `{e.test}`  \n**Source:** {e.source}\n")
    return "\n".join(out)


# --8<-- [start:gpu-test-run]
def gpu_test_run(record_id: str = RECORD_ID) -> str:
    """The committed GPU test run: a table of its test cases, a line with the counts, and where it ran."""
    run = load(record_id, expect=GpuTestRun)
    rows = [[f"`{t.node}`", t.outcome, f"{t.seconds:.1f}"] for t in run.tests]
    line = ", ".join(f"{n} {outcome}" for outcome, n in run.counts().items() if n)
    return f"{markdown_table(['test', 'outcome', 'seconds'], rows)}\n\n{line}. {measured_on(run.run)}"
    # --8<-- [end:gpu-test-run]


def schema_table() -> str:
    """Every published JSON Schema: a link to it, what it describes and the model that reads it; and, for each
    results kind, the committed records of that kind.

    The link is written as the browser resolves it from the built page (``about/schemas/``): the output of a render
    block is not rewritten by MkDocs the way links in the page's own Markdown are.
    """
    ids_by_kind: dict[str, list[str]] = {}
    for record_id in record_ids():
        ids_by_kind.setdefault(load(record_id).kind, []).append(record_id)
    rows = []
    for schema in schemas():
        kind = schema.name.removeprefix("results-").removesuffix(".json")
        committed = ", ".join(f"`{i}`" for i in ids_by_kind.get(kind, [])) or "–"
        link = f"[{schema.name}](../../schemas/{schema.name})"
        rows.append([link, schema.describes, f"`{schema.model}`", committed])
    return markdown_table(["schema", "describes", "model", "committed records"], rows)
