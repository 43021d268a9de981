"""Every table the About pages render (page layer ``gpukb.site.pages``), read back by header and checked cell by
cell against what it claims to show, read independently: the committed GPU test run and the results files read
raw with ``json``, the fuzz budget and the mutation runs read with ``tomllib`` (the score recomputed), the lint's
rules against the refused cases of its own tests, the corruptions against the tests that apply them.

(The inventory of checked tables is tests/site/test_page_tables.py; this is the About chapter's check module.)
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import tomllib
from collections.abc import Callable
from functools import cache
from typing import Any, get_args

import pytest

from gpukb import chapters
from gpukb.site import pages
from tests.helpers import ROOT, markdown_tables

DATA = ROOT / "src" / "gpukb" / "data"


@cache
def _toml(name: str) -> dict[str, Any]:
    return tomllib.loads((DATA / name).read_text(encoding="utf-8"))


def _code(cell: str) -> str:
    assert cell.startswith("`"), cell
    assert cell.endswith("`"), cell
    return cell[1:-1]


def check_gpu_test_run(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = json.loads((DATA / "results" / "site" / "gpu-tests-h100.json").read_text(encoding="utf-8"))
    assert [(_code(r["test"]), r["outcome"]) for r in table] == [(t["node"], t["outcome"]) for t in raw["tests"]]
    for row, test in zip(table, raw["tests"], strict=True):
        assert row["seconds"] == f"{test['seconds']:.1f}"  # exact: the record's value rounded to one decimal
    counted: dict[str, int] = {}
    for t in raw["tests"]:
        counted[t["outcome"]] = counted.get(t["outcome"], 0) + 1
    line = markdown.split("\n\n")[1]
    counts = line.split(". Measured on")[0].split(", ")
    said = {o: int(n) for n, o in (c.split(" ", 1) for c in counts)}
    assert said == counted, (said, counted)
    gpu = raw["run"]["gpu"]
    assert f"Measured on an {gpu['name']} ({gpu['sm_count']} SMs, driver {gpu['driver']})" in line
    assert f"on {raw['run']['date']}" in line


def _committed_kinds() -> dict[str, list[str]]:
    """Record ids by the kind their raw JSON states, from every file under results/."""
    out: dict[str, list[str]] = {}
    for path in sorted((DATA / "results").rglob("*.json")):
        kind = json.loads(path.read_text(encoding="utf-8"))["kind"]
        out.setdefault(kind, []).append(path.relative_to(DATA / "results").with_suffix("").as_posix())
    return out


def check_schema_table(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    committed = _committed_kinds()
    shown_kinds = set()
    for row in table:
        name, link = re.fullmatch(r"\[([^\]]+)\]\(([^)]+)\)", row["schema"]).groups()
        assert link == f"../../schemas/{name}", row
        module, cls = _code(row["model"]).split(":")
        model = getattr(importlib.import_module(module), cls)
        records = [] if row["committed records"] == "–" else [_code(c) for c in row["committed records"].split(", ")]
        if name.startswith("results-"):
            kind = name.removeprefix("results-").removesuffix(".json")
            shown_kinds.add(kind)
            assert row["describes"] == f"a results file of kind `{kind}`"
            assert get_args(model.model_fields["kind"].annotation) == (kind,), row  # the model reads that kind
            assert sorted(records) == sorted(committed.get(kind, [])), row
            continue
        assert name == f"data-{cls.lower()}.json"
        assert records == []
        for table_name, file in re.findall(
            r"(?:an entry of `\[\[(\w+)\]\]` in|the whole of) `([^`]+)`", row["describes"]
        ):
            raw = _toml(file)  # the file exists and parses
            assert not table_name or isinstance(raw.get(table_name), list), (row, file, table_name)
        assert re.findall(r"`([^`]+\.toml)`", row["describes"]), row
    assert set(committed) <= shown_kinds, "a committed record whose kind has no schema"


def check_lint_rules(markdown: str, kwargs: dict[str, Any]) -> None:
    """Every rule the page names is one the lint's own tests see refused (tests/site/test_fences.py's cases and
    tests, tests/site/test_includes.py's include targets); and every such rule is on the page."""
    from tests.site import test_fences, test_includes

    (table,) = markdown_tables(markdown)
    rules = [_code(row["rule"]) for row in table]
    refused = {rule for _, rule, _, _ in test_fences.BAD.values()}
    marks = next(m for m in test_includes.test_include_targets_are_refused.pytestmark if m.name == "parametrize")
    refused |= {rule for _, rule in marks.args[1]}
    tests = {name for name in dir(test_fences) if name.startswith("test_")}
    by_test = {"notebook-markdown": "test_code_in_a_notebook_markdown_cell_is_refused",
               "notebook-untested": "test_a_notebook_no_test_names_is_refused",
               "page-suffix": "test_every_page_suffix_mkdocs_renders_is_read"}  # fmt: skip
    refused |= {rule for rule, test in by_test.items() if test in tests}
    assert sorted(rules) == sorted(refused)
    from gpukb.site.fences import RULES  # the lint's own list: each rule next to its own description

    assert {_code(row["rule"]): row["refuses"] for row in table} == {r: " ".join(t.split()) for r, t in RULES.items()}


def check_fuzz_budget(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _toml("fuzz.toml")
    assert [row["what is fuzzed"] for row in table] == [t["name"] for t in raw["target"]]
    for row, target in zip(table, raw["target"], strict=True):
        assert int(row["examples per test"].replace(",", "")) == target["examples"]
        assert row["deadline per example"] == f"{target['deadline_ms']:,} ms"
        assert row["inputs"] == " ".join(target["inputs"].split())
        assert (ROOT / "tests" / "fuzz" / target["test"]).is_file(), target["test"]
    assert f"killed after {raw['subprocess_timeout_s']} s" in markdown
    assert f"about {raw['suite_seconds']} s" in markdown


def _then(scope: list[str]) -> set[str]:
    """A run's files with each ``pages.py`` standing for the per-page modules it was split into since."""
    found = set(scope)
    for f in scope:
        if f.endswith("/pages.py"):
            found |= {p.relative_to(ROOT).as_posix() for p in (ROOT / f.removesuffix(".py")).glob("*.py")}
    return found


def check_mutation_score(markdown: str, kwargs: dict[str, Any]) -> None:
    per_chapter, *run_tables, survivors = markdown_tables(markdown)
    raw = _toml("mutation.toml")
    assert f"Tool: {raw['tool']}, run as `{raw['command']}`" in markdown
    # each chapter's last run: the last run of each chapter named in the file, after the last whole-scope run
    last: dict[str | None, dict[str, Any]] = {}
    for r in raw["run"]:
        last[r.get("chapter")] = r
    expected = [last[None]] + [r for c, r in last.items() if c is not None]
    planned = [row for row in per_chapter if row["run"] == "not run yet"]  # declared parts no run has mutated yet
    for row in planned:
        assert list(row.values())[2:] == ["–"] * 8, row
        files = chapters.resolve("gpukb.site.mutation_scope:parts")()[row["chapter"]][0]
        assert not any(set(files) & _then(r["scope"]) for r in raw["run"]), row
    per_chapter = per_chapter[: len(per_chapter) - len(planned)]
    assert [row["run"] for row in per_chapter] == [r["id"] for r in expected]
    for row, r in zip(per_chapter, expected, strict=True):
        if "chapter" in r:
            assert row["chapter"] == r["chapter"]
        else:  # the chapters whose declared files the whole run mutated
            named = [c.name for c in chapters.chapters() if set(c.mutation) & _then(r["scope"])]
            alone = [n for n in named if n in last]  # run on their own since: named apart
            rest = [n for n in named if n not in alone]  # once every chapter was run alone, none is named first
            said = (f"{', '.join(rest)} and the argument checks" if rest else "the argument checks") + ", in one run"
            assert row["chapter"] == said + (f" ({', '.join(alone)}: since run alone, below)" if alone else "")
        assert row["date"] == r["date"].isoformat()
        assert (int(row["mutants"]), int(row["killed (timeouts too)"]), int(row["survived"]),
                int(row["no test calls it"]), int(row["timeouts"]), int(row["not reached"])) == (
            r["mutants"], r["killed"] + r["timeout"], r["survived"], r["no_tests"], r["timeout"],
            r.get("not_reached", 0))  # fmt: skip
        assert row["score"] == f"{100 * (r['killed'] + r['timeout']) / r['mutants']:.1f}%", row
    scopes = re.findall(r"^Mutated: (.*)\.$", markdown, flags=re.MULTILINE)
    assert len(scopes) == len(run_tables)
    rows = []  # each table row with the files its table says were mutated
    for scope, table in zip(scopes, run_tables, strict=True):
        rows += [(row, [_code(s) for s in scope.split(", ")]) for row in table]
    assert [row["run"] for row, _ in rows] == [r["id"] for r in raw["run"]]
    for (row, scope), r in zip(rows, raw["run"], strict=True):
        assert scope == r["scope"], row["run"]
        assert row["date"] == r["date"].isoformat()
        assert [_code(t) for t in row["tests selected"].split(", ")] == r["tests"]
        killed = r["killed"] + r["timeout"]  # mutmut counts a timeout as killed
        not_reached = r.get("not_reached", 0)  # a run stopped part way: never ran, not killed
        assert r["mutants"] == r["killed"] + r["survived"] + r["no_tests"] + r["timeout"] + not_reached
        counts = (row["mutants"], row["killed (timeouts too)"], row["survived"], row["no test calls it"],
                  row["not reached"])  # fmt: skip
        assert tuple(map(int, counts)) == (r["mutants"], killed, r["survived"], r["no_tests"], not_reached)
        score = 100 * killed / r["mutants"]
        assert row["score"] == f"{score:.1f}%", (row, score)
    ids = ", ".join(f"`{r['id']}`" for r in expected)
    assert f"Survivors of the last runs ({ids})" in markdown
    assert [(row["run"], row["kind"], int(row["survived"]), row["what they change"]) for row in survivors] == [
        (s["run"], s["kind"], s["survived"], " ".join(s["why"].split())) for s in raw.get("survivor", [])
    ]
    for row, s in zip(survivors, raw.get("survivor", []), strict=True):
        shown = [f"gpukb.{_code(f)}" for f in row["functions (in gpukb)"].split(", ")]
        assert shown == s["functions"], row["kind"]
    for r in expected:  # every survivor of each last run is listed
        assert sum(int(row["survived"]) for row in survivors if row["run"] == r["id"]) == r["survived"], r["id"]
    for kind in {s["kind"] for s in raw.get("survivor", [])}:
        assert f"- **{kind}**: " in markdown  # each kind is explained


def check_data_corruptions(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    tree = ast.parse((ROOT / "tests" / "site" / "test_data_files.py").read_text(encoding="utf-8"))
    defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    from gpukb.site.breaking import CORRUPTIONS  # the list the tests read: each test next to its corruption

    assert {_code(row["test"]): row["corruption"] for row in table} == CORRUPTIONS
    for row in table:
        assert _code(row["test"]) in defined, row  # the test that applies the corruption exists
    files = re.findall(r"`([^`]+\.toml)`", markdown.split("Data files:")[1])
    assert sorted(files) == sorted(p.relative_to(DATA).as_posix() for p in DATA.rglob("*.toml"))


#: Each About page function that renders a table, and the check of its cells.
def check_chapter_table(markdown: str, kwargs: dict[str, Any]) -> None:
    """One row per chapter package under src/gpukb with a declaration (found by reading the files, not through
    gpukb.chapters), linked to the page it declares, in declared order."""
    (table,) = markdown_tables(markdown)
    declared = []
    for init in sorted((ROOT / "src" / "gpukb").glob("*/__init__.py")):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["CHAPTER"]:
                fields = {k.arg: ast.literal_eval(k.value) for k in node.value.keywords if k.arg in _SHOWN}
                if fields.get("package") != "gpukb.site":
                    declared.append(fields)
    declared.sort(key=lambda f: (f.get("position", 100), f["name"]))
    start = {f["name"]: f.get("start", "index.md").removesuffix("index.md").removesuffix(".md") for f in declared}
    expected = [(f"[{f['title']}]({f['name']}/{start[f['name']]})", f["summary"]) for f in declared]
    assert [(r["chapter"], r["what it answers"]) for r in table] == expected
    assert len(table) >= 9


_SHOWN = ("name", "title", "summary", "start", "position", "package")


def check_errata_summary(markdown: str, kwargs: dict[str, Any]) -> None:
    """One row per entry of errata.toml (read raw), grouped in chapter order: its id and anchor, its claim, the start
    of its truth, its chapter's title; the menu lists exactly the chapters that have entries."""
    import html as html_lib

    rows = re.findall(
        r'<tr data-status="([\w-]+)" data-id="([\w-]+)"><td><a href="#([\w-]+)">(.*?)</a></td><td>(.*?)</td>'
        r"<td>(.*?)</td></tr>",
        markdown,
    )
    entries = _toml("errata.toml")["erratum"]
    assert len(rows) == len(entries) > 50
    by_id = {e["id"]: e for e in entries}
    titles = {c.name: c.title for c in chapters.chapters()}
    seen_topics: list[str] = []
    for topic, row_id, anchor, claim, truth, title in rows:
        entry = by_id[row_id]
        assert anchor == row_id
        assert topic == entry["topic"]
        assert html_lib.unescape(claim) == entry["claim"]
        assert entry["truth"].startswith(html_lib.unescape(truth))
        assert html_lib.unescape(title) == titles[topic]
        if not seen_topics or seen_topics[-1] != topic:
            assert topic not in seen_topics, f"{topic} rows are not together"
            seen_topics.append(topic)
    assert [t for t in titles if t in seen_topics] == seen_topics  # chapter order


def check_glossary(markdown: str, kwargs: dict[str, Any]) -> None:
    """One row per entry of glossary.toml (read raw), sorted by term: its anchor, term, definition, a link to the
    page it names (relative to the glossary's address) labelled with that page's chapter, and its source."""
    import html as html_lib

    rows = re.findall(
        r'<tr id="([\w-]+)" data-status="([\w-]+)"><td><strong>(.*?)</strong></td><td>(.*?)</td>'
        r'<td><a href="(.*?)">(.*?)</a></td><td>(.*?)</td></tr>',
        markdown,
    )
    entries = sorted(_toml("glossary.toml")["term"], key=lambda e: e["term"].lower())
    assert len(rows) == len(entries) >= 100
    titles = {c.name: c.title for c in chapters.chapters()}
    for (row_id, chapter, term, definition, href, label, source), entry in zip(rows, entries, strict=True):
        assert (row_id, html_lib.unescape(term)) == (entry["id"], entry["term"])
        assert html_lib.unescape(definition) == entry["definition"]
        # each address is a link's target; the visible text keeps the source's words (its label, or the host)
        assert re.findall(r'href="([^"]+)"', source) == re.findall(
            r"https?://[^\s<>\"]+?(?=[.,;)]?(?:\s|$))", entry["source"]
        )
        assert entry["source"].startswith(re.sub(r"<[^>]+>", "", html_lib.unescape(source)).split(" http")[0][:20])
        page, _, anchor = entry["page"].partition("#")
        assert chapter == page.split("/")[0]
        address = "../" + page.removesuffix("index.md").removesuffix(".md")  # a folder's index is the folder
        assert href == address.rstrip("/") + "/" + (f"#{anchor}" if anchor else "")
        assert html_lib.unescape(label).startswith(titles[chapter])


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "glossary": check_glossary,
    "chapter_table": check_chapter_table,
    "errata_summary": check_errata_summary,
    "gpu_test_run": check_gpu_test_run,
    "schema_table": check_schema_table,
    "lint_rules": check_lint_rules,
    "fuzz_budget": check_fuzz_budget,
    "mutation_score": check_mutation_score,
    "data_corruptions": check_data_corruptions,
}


def test_a_miscounted_mutation_score_fails_the_check() -> None:
    markdown = pages.mutation_score()
    (after,) = re.findall(r"\| after \|.*", markdown)
    wrong = re.sub(r"\d+\.\d%", "99.9%", after)
    with pytest.raises(AssertionError):
        check_mutation_score(markdown.replace(after, wrong), {})
