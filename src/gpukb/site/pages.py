"""The About chapter's page layer: the only code that returns Markdown for the errata and verification pages.

Each function loads what it renders (the errata data file, the committed GPU test run by id), so a page calls it
with no path: ``from gpukb.site.pages import errata; print(errata())``.
"""

from __future__ import annotations

import html
import json
import re

from gpukb import chapters
from gpukb import errata as errata_data
from gpukb import glossary as glossary_data
from gpukb.records import load, measured_table, record_ids
from gpukb.site.gpu_tests import RECORD_ID, GpuTestRun
from gpukb.site.schemas import schemas
from gpukb.site.snippet_runs import recorded_output
from gpukb.tables import html_with_links, markdown_table


def _first_sentence(text: str) -> str:
    """A text's first sentence (up to the first full stop followed by a space and a capital), for a summary."""
    match = re.search(r"(?<=[a-z0-9)%])\.\s+(?=[A-Z])", text)
    return text[: match.start() + 1] if match else text


def errata_summary(entries: list[errata_data.Erratum] | None = None) -> str:
    """The errata in one table to scan and filter: each claim (linked to its entry), the first sentence of what is
    true, and its chapter; a menu keeps one chapter (``docs/javascripts/catalog-table.js``)."""
    entries = errata_data.load() if entries is None else entries
    titles = {c.name: c.title for c in chapters.chapters()}
    order = {topic: i for i, topic in enumerate(errata_data.topics())}
    chosen = sorted(entries, key=lambda e: order[e.topic])
    used = [t for t in errata_data.topics() if any(e.topic == t for e in chosen)]
    menu = json.dumps([["", "any chapter"], *[[t, titles[t]] for t in used]])
    body = "\n".join(
        f'<tr data-status="{e.topic}" data-id="{e.id}"><td><a href="#{e.id}">{html.escape(e.claim)}</a></td>'
        f"<td>{html.escape(_first_sentence(e.truth))}</td><td>{html.escape(titles[e.topic])}</td></tr>"
        for e in chosen
    )
    return (
        f'<div class="gpukb-catalog" data-menu=\'{html.escape(menu, quote=True)}\' data-menu-label="Chapter" '
        'data-noun="claims" data-placeholder="Filter: any word of a claim or its correction">\n'
        "<table>\n<thead><tr><th>the claim</th><th>what is true</th><th>chapter</th></tr></thead>\n<tbody>\n"
        + body
        + "\n</tbody>\n</table>\n</div>"
    )


def errata(entries: list[errata_data.Erratum] | None = None) -> str:
    """The errata as the errata page shows them: one section each, with an anchor, grouped by chapter.

    Args:
        entries: The entries to render; the project's (``gpukb.errata.load()``) when omitted.
    """
    entries = errata_data.load() if entries is None else entries
    titles = {c.name: c.title for c in chapters.chapters()}
    out = []
    for topic in errata_data.topics():
        chosen = [e for e in entries if e.topic == topic]
        if not chosen:
            continue
        out.append(f"## {titles[topic]} {{ #{topic} }}\n")
        for e in chosen:
            out.append(f"### {e.id} {{ #{e.id} }}\n")
            out.append(f"**A claim you may meet** in {e.claimed_in}: {e.claim}\n")
            out.append(f"**What is true:** {e.truth}\n")
            out.append(f"**Decided by:** `{e.test}`  \n**Source:** {e.source}\n")
    return "\n".join(out)


# --8<-- [start:gpu-test-run]
def gpu_test_run(record_id: str = RECORD_ID) -> str:
    """The committed GPU test run: a table of its test cases, a line with the counts, and where it ran."""
    run = load(record_id, expect=GpuTestRun)
    rows = [[f"`{t.node}`", t.outcome, f"{t.seconds:.1f}"] for t in run.tests]
    line = ", ".join(f"{n} {outcome}" for outcome, n in run.counts().items() if n)
    return measured_table(["test", "outcome", "seconds"], rows, run.run, f"{line}. ")
    # --8<-- [end:gpu-test-run]


def schema_table() -> str:
    """Every published JSON Schema: a link to it, what it describes and the model that reads it; and, for each
    results kind, the committed records of that kind.

    The link is written as the browser resolves it from the built page (``contributing/schemas/``): the output of a
    render block is not rewritten by MkDocs the way links in the page's own Markdown are.
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


# --- "How we try to break this site" (docs/contributing/breaking.md) --------------------------------------------------


def lint_rules() -> str:
    """What the fence lint refuses, from its own rule list, and where includes may come from."""
    from gpukb.site.fences import RULES
    from gpukb.site.includes import INCLUDE_ROOTS

    table = markdown_table(["rule", "refuses"], [[f"`{rule}`", what] for rule, what in RULES.items()])
    roots = " and ".join(f"`{r}`" for r in INCLUDE_ROOTS)
    return (
        f"{table}\n\nIncludes come from {roots} and nowhere else: a test or a bench script is described in prose "
        "with its path, never shown.\n"
    )


def fuzz_budget() -> str:
    """The fuzz budget (``gpukb/data/fuzz.toml``): what is fuzzed, how many examples, the time bounds."""
    from gpukb.site.breaking import fuzz_budget as load_budget

    budget = load_budget()
    rows = [[t.name, f"{t.examples:,}", f"{t.deadline_ms:,} ms", t.inputs] for t in budget.target]
    table = markdown_table(["what is fuzzed", "examples per test", "deadline per example", "inputs"], rows)
    return (
        f"{table}\n\nThe console script is also run as a real process for the inputs that used to hang, killed after "
        f"{budget.subprocess_timeout_s} s. The whole fuzz suite is sized to take about {budget.suite_seconds} s on a "
        "2-core CI machine."
    )


def mutation_score() -> str:
    """The mutation runs (``gpukb/data/mutation.toml``): the score of each chapter's last run, one table per set of
    mutated files with the score of each run, and the survivors of the last runs."""
    from gpukb.site.breaking import SURVIVOR_KINDS, MutationRun, mutation

    m = mutation()
    counts = ["mutants", "killed (timeouts too)", "survived", "no test calls it", "not reached", "score"]

    def numbers(r: MutationRun) -> list[object]:
        return [r.mutants, r.killed + r.timeout, r.survived, r.no_tests, r.not_reached, f"{r.score:.1%}"]

    def mutated(files: tuple[str, ...], run: MutationRun) -> bool:
        """Whether the run mutated any of the files, where they were then (a page layer split into one module per
        page since was one ``pages.py``)."""
        return any(f in run.scope or re.sub(r"/pages/\w+\.py$", "/pages.py", f) in run.scope for f in files)

    def chapter(r: MutationRun) -> str:
        if r.chapter is not None:
            return r.chapter
        named = [c.name for c in chapters.chapters() if mutated(c.mutation, r)]
        alone = {x.chapter for x in m.run if x.chapter is not None}  # chapters run on their own since
        rest = [n for n in named if n not in alone]
        text = f"{', '.join(rest)} and the argument checks" if rest else "the argument checks"
        text += ", in one run"
        since = [n for n in named if n in alone]
        return text + (f" ({', '.join(since)}: since run alone, below)" if since else "")

    from gpukb.site.mutation_scope import parts

    whole = [r for r in m.run if r.chapter is None]
    ran = {r.chapter for r in m.run} | {n for n, (files, _) in parts().items() if mutated(files, whole[-1])}
    not_run = [name for name in parts() if name not in ran]  # declared, not mutated yet: shown, not hidden
    per_chapter = markdown_table(
        ["chapter", "run", "date", *counts[:-1], "timeouts", counts[-1]],
        [[chapter(r), r.id, str(r.date), *numbers(r)[:-1], r.timeout, numbers(r)[-1]] for r in m.last_runs()]
        + [[name, "not run yet", *["–"] * 8] for name in not_run],
    )
    headers = ["run", "date", "tests selected", *counts]
    scopes: dict[tuple[str, ...], list[list[object]]] = {}  # runs grouped by what they mutated, in order
    for r in m.run:
        scopes.setdefault(tuple(r.scope), []).append(
            [r.id, str(r.date), ", ".join(f"`{t}`" for t in r.tests), *numbers(r)]
        )  # fmt: skip
    groups = "\n\n".join(
        f"Mutated: {', '.join(f'`{s}`' for s in scope)}.\n\n{markdown_table(headers, rows)}"
        for scope, rows in scopes.items()
    )
    survivors = markdown_table(
        ["run", "kind", "survived", "what they change", "functions (in gpukb)"],
        [[s.run, s.kind, s.survived, s.why, ", ".join(f"`{f.removeprefix('gpukb.')}`" for f in s.functions)]
         for s in m.survivor],
    )  # fmt: skip
    kinds = "\n".join(f"- **{kind}**: {meaning}" for kind, meaning in SURVIVOR_KINDS.items())
    last = ", ".join(f"`{r.id}`" for r in m.last_runs())
    return (
        f"Tool: {m.tool}, run as `{m.command}`.\n\nThe score of each chapter, from its last run:\n\n{per_chapter}\n\n"
        f"Every run, by the files it mutated:\n\n{groups}\n\n"
        "The score is killed over all mutants; it compares runs over the same files only. "
        f"Survivors of the last runs ({last}), by why they survive:\n\n{kinds}\n\n{survivors}"
    )


def data_corruptions() -> str:
    """The corruptions every data file is put through, and the files."""
    from importlib import resources

    from gpukb.site.breaking import CORRUPTIONS

    data = resources.files("gpukb.data")
    toml = sorted(p.name for p in data.iterdir() if p.name.endswith(".toml"))
    toml += sorted(f"{d.name}/{p.name}" for d in data.iterdir() if d.is_dir() for p in d.iterdir()
                   if p.name.endswith(".toml"))  # fmt: skip
    table = markdown_table(["corruption", "test"], [[what, f"`{test}`"] for test, what in CORRUPTIONS.items()])
    files = ", ".join(f"`{name}`" for name in toml)
    return f"{table}\n\nData files: {files}, and every committed record under `results/`."


def gpu_snippet_output(snippet: str) -> str:
    """The output ``snippet`` printed on the H100, read from its record (``gpukb.site.snippet_runs``), as a text block
    followed by the GPU, versions and date it ran with: shown under a snippet whose build-time run is the CPU's."""
    stdout, where = recorded_output(snippet)
    return f"```text\n{stdout.rstrip()}\n```\n\n{where.replace('Measured on', 'Run on', 1)}"


def chapter_table() -> str:
    """The home page's table of chapters, from their declarations (:mod:`gpukb.chapters`): title linked to the
    chapter's first page (its address relative to the home page: MkDocs leaves links in build-time output as they
    are), and what it answers. The site's own pages (About) are left to the navigation."""
    rows = [
        [f"[{c.title}]({c.name}/{c.start.removesuffix('index.md').removesuffix('.md')})", c.summary]
        for c in chapters.chapters()
        if c.package != "gpukb.site"
    ]
    return markdown_table(["chapter", "what it answers"], rows)


def _page_label(page: str, titles: dict[str, str]) -> str:
    """``"cuda/execution.md"`` → ``"CUDA: execution"`` (the chapter's title and the page's name)."""
    chapter, _, rest = page.partition("/")
    name = rest.partition("#")[0].removesuffix(".md")
    return titles[chapter] if name == "index" else f"{titles[chapter]}: {name.replace('-', ' ')}"


def glossary(terms: tuple[glossary_data.Term, ...] | None = None) -> str:
    """The glossary as one table to filter (by any word, or by the chapter of the page that shows a term) and sort:
    each term with its anchor, its definition, the page that shows it at work and its primary source. Links are
    relative to the glossary page's own address (``glossary/``)."""
    terms = glossary_data.load() if terms is None else terms
    titles = {c.name: c.title for c in chapters.chapters()}
    ordered = sorted(terms, key=lambda t: t.term.lower())
    used = [c for c in titles if any(t.page.split("/")[0] == c for t in ordered)]
    menu = json.dumps([["", "any chapter"], *[[c, titles[c]] for c in used]])
    rows = []
    for t in ordered:
        chapter, _, rest = t.page.partition("/")
        page, _, anchor = rest.partition("#")
        folder = f"../{chapter}/" if page == "index.md" else f"../{chapter}/{page.removesuffix('.md')}/"
        href = folder + (f"#{anchor}" if anchor else "")
        rows.append(
            f'<tr id="{t.id}" data-status="{chapter}"><td><strong>{html.escape(t.term)}</strong></td>'
            f"<td>{html.escape(t.definition)}</td>"
            f'<td><a href="{href}">{html.escape(_page_label(t.page, titles))}</a></td>'
            f"<td>{html_with_links(t.source)}</td></tr>"
        )
    return (
        f'<div class="gpukb-catalog" data-menu=\'{html.escape(menu, quote=True)}\' data-menu-label="Chapter" '
        'data-noun="terms" data-placeholder="Filter: a term or any word of its definition">\n'
        "<table>\n<thead><tr><th>term</th><th>what it means</th><th>shown in</th><th>source</th></tr></thead>\n"
        "<tbody>\n" + "\n".join(rows) + "\n</tbody>\n</table>\n</div>"
    )
