"""The page "How we try to break this site" renders the lists the breaking tests read: the lint's rules, the fuzz
budget, the mutation runs, the data corruptions; each table is read back and checked against its source."""

from __future__ import annotations

import ast
import itertools

import pytest

from gpukb.site import pages
from gpukb.site.breaking import CORRUPTIONS, fuzz_budget, mutation, parse_mutation
from gpukb.site.fences import RULES
from tests.helpers import ROOT, markdown_tables


def test_the_page_shows_every_lint_rule() -> None:
    table = markdown_tables(pages.lint_rules())[0]
    assert {row["rule"].strip("`"): row["refuses"] for row in table} == RULES


def test_the_page_shows_the_fuzz_budget() -> None:
    budget = fuzz_budget()
    (table,) = markdown_tables(pages.fuzz_budget())
    assert [row["what is fuzzed"] for row in table] == [t.name for t in budget.target]
    assert [int(row["examples per test"].replace(",", "")) for row in table] == [t.examples for t in budget.target]
    assert [int(row["deadline per example"].removesuffix(" ms").replace(",", "")) for row in table] == [
        t.deadline_ms for t in budget.target
    ]
    assert f"{budget.suite_seconds} s" in pages.fuzz_budget()


def test_every_fuzz_target_is_a_test_module_and_every_module_has_a_budget() -> None:
    modules = sorted(p.name for p in (ROOT / "tests" / "fuzz").glob("test_*.py"))
    budgeted = sorted(t.test for t in fuzz_budget().target)
    assert set(budgeted) <= set(modules)
    source = {m: (ROOT / "tests" / "fuzz" / m).read_text(encoding="utf-8") for m in modules}
    uses_budget = [m for m in modules if f'fuzz_settings("{m}")' in source[m]]
    assert sorted(uses_budget) == budgeted


def test_the_page_shows_the_mutation_runs() -> None:
    m = mutation()
    per_chapter, *run_tables, survivors = markdown_tables(pages.mutation_score())
    ran = [row for row in per_chapter if row["run"] != "not run yet"]
    assert [row["run"] for row in ran] == [r.id for r in m.last_runs()]
    rows = [row for table in run_tables for row in table]
    assert [row["run"] for row in rows] == [r.id for r in m.run]
    assert len(run_tables) == len({tuple(r.scope) for r in m.run})  # one table per set of mutated files
    for row, run in zip(rows, m.run, strict=True):
        assert int(row["mutants"]) == run.mutants
        assert int(row["killed (timeouts too)"]) == run.killed + run.timeout
        assert int(row["survived"]) == run.survived
        assert row["score"] == f"{(run.killed + run.timeout) / run.mutants:.1%}"
    for r in m.last_runs():
        assert sum(int(row["survived"]) for row in survivors if row["run"] == r.id) == r.survived, r.id


#: Files of the recorded runs that have moved since: a page layer split into one module per page (``folder/``: its
#: modules but ``__init__.py``; ``folder/*``: all of them), and its cell checks with it. A run's scope is compared in
#: the files' new places.
MOVED = {
    "src/gpukb/gemm/pages.py": "src/gpukb/gemm/pages/",
    "tests/gemm/test_page_tables.py": "tests/gemm/pages",
    "src/gpukb/performance/pages.py": "src/gpukb/performance/pages/*",
    "tests/performance/test_page_tables.py": "tests/performance/pages",
    "src/gpukb/formats/pages.py": "src/gpukb/formats/pages/*",
    "tests/formats/test_page_tables.py": "tests/formats/pages",
    "src/gpukb/sequences/pages.py": "src/gpukb/sequences/pages/*",
    "tests/sequences/test_page_tables.py": "tests/sequences/pages",
}
#: Test files a recorded run selected alone that are selected with their whole folder since (the Triton GEMM's host
#: side joined the GEMM chapter's part, with all of its tests).
WITH_THEIR_FOLDER = {"tests/gemm/triton/test_results.py": "tests/gemm/triton"}


def _now(paths: list[str]) -> list[str]:
    found = []
    for path in paths:
        new = MOVED.get(path) or WITH_THEIR_FOLDER.get(path, path)
        if new.endswith("/"):
            found += [p.relative_to(ROOT).as_posix() for p in (ROOT / new).glob("*.py") if p.name != "__init__.py"]
        elif new.endswith("/*"):  # with what its modules share
            found += [p.relative_to(ROOT).as_posix() for p in (ROOT / new[:-1]).glob("*.py")]
        else:
            found.append(new)
    return sorted(found)


def test_the_mutation_runs_improve_and_match_the_config() -> None:
    """Runs over the same files kill more each time; the whole scope's runs only widen it; a chapter's run mutates
    that chapter's declared files with its declared tests; together the last runs are what pyproject.toml's
    [tool.mutmut] runs."""
    import tomllib

    from gpukb.site.mutation_scope import scope as declared_scope

    m = mutation()
    assert m.run[0].id == "before"
    assert len({r.id for r in m.run}) == len(m.run) >= 2
    for scope in {tuple(r.scope) for r in m.run}:
        scores = [r.score for r in m.run if tuple(r.scope) == scope]
        assert scores == sorted(set(scores)), (scope, scores)
    whole = [r for r in m.run if r.chapter is None]
    for earlier, later in itertools.pairwise(whole):
        assert set(earlier.scope) <= set(later.scope), later.id  # the scope only grows
    last = m.last_runs()
    for r in last[1:]:  # each chapter's last run is its declared part (their order in pyproject means nothing)
        files, tests = declared_scope(r.chapter)
        assert (_now(r.scope), _now(r.tests)) == (sorted(files), sorted(tests)), r.id
    # the parts declared and not run yet are on the page as such (a part counts as run once a run mutated its files)
    from gpukb.site.mutation_scope import parts

    per_chapter = markdown_tables(pages.mutation_score())[0]
    not_run = {row["chapter"] for row in per_chapter if row["run"] == "not run yet"}
    mutated = {f for r in last for f in _now(r.scope)}
    assert not_run == {n for n, (files, _) in parts().items() if not set(files) & mutated}
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mutmut"]
    planned = {f for n in not_run for f in parts()[n][0]}
    assert sorted(config["only_mutate"]) == sorted(mutated | planned)
    tests = {t for r in last for t in _now(r.tests)} | {t for n in not_run for t in parts()[n][1]}
    assert sorted(config["pytest_add_cli_args_test_selection"]) == sorted(tests)
    assert all(not (ROOT / old).exists() for old in MOVED), "a moved file is back: drop it from MOVED"


def test_survivors_are_listed_for_the_last_runs_only() -> None:
    text = (ROOT / "src" / "gpukb" / "data" / "mutation.toml").read_text(encoding="utf-8")
    with pytest.raises(ValueError, match=r"survivors of run 'cell-checks': survivors are listed for the last runs"):
        parse_mutation(text.replace('run = "library-checks"', 'run = "cell-checks"', 1))
    with pytest.raises(ValueError, match=r"run 'library-checks': \d+ survivors listed by kind, but survived = 1199"):
        parse_mutation(text.replace("survived = 38\n", "survived = 39\n", 1))


def test_mutation_counts_must_add_up() -> None:
    text = (ROOT / "src" / "gpukb" / "data" / "mutation.toml").read_text(encoding="utf-8")
    with pytest.raises(ValueError, match=r"mutation\.toml: run entry 1 \(before\).*mutants"):
        parse_mutation(text.replace("mutants = ", "mutants = 1", 1))


def test_every_corruption_on_the_page_is_a_test() -> None:
    tree = ast.parse((ROOT / "tests" / "site" / "test_data_files.py").read_text(encoding="utf-8"))
    tests = {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}
    assert set(CORRUPTIONS) <= tests
    table = markdown_tables(pages.data_corruptions())[0]
    assert [row["test"].strip("`") for row in table] == list(CORRUPTIONS)


def test_the_page_is_in_the_contributing_tab() -> None:
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    contributing = text.split("  - Contributing:", 1)[1].split("\n  - ", 1)[0]
    assert "contributing/breaking.md" in contributing


def test_the_tests_the_page_names_exist() -> None:
    """Each test file, folder and test function the page says re-runs an attack is there."""
    import re

    text = (ROOT / "docs" / "contributing" / "breaking.md").read_text(encoding="utf-8")
    paths = set(re.findall(r"`(tests/[\w/.]*)`", text))
    assert {"tests/fuzz/", "tests/site/test_fences.py", "tests/site/test_table_mutations.py",
            "tests/site/test_data_files.py"} <= paths  # fmt: skip
    assert all((ROOT / p).exists() for p in paths), sorted(p for p in paths if not (ROOT / p).exists())
    for name in re.findall(r"`(test_\w+)`", text):  # the corruption table's tests are in test_data_files.py
        assert any(name in f.read_text(encoding="utf-8") for f in (ROOT / "tests").rglob("test_*.py")), name


def test_a_run_stopped_part_way_counts_the_mutants_it_never_ran_as_not_killed() -> None:
    import datetime

    from gpukb.site.breaking import MutationRun

    run = {"id": "x", "date": datetime.date(2026, 11, 27), "scope": ["a.py"], "tests": ["tests/t.py"], "mutants": 10}
    stopped = MutationRun(**run, killed=6, survived=1, no_tests=0, timeout=1, not_reached=2)
    assert stopped.score == 0.7  # (6 killed + 1 timeout) / 10: the 2 never run count against it
    with pytest.raises(ValueError, match=r"not_reached = 9, but mutants = 10"):
        MutationRun(**run, killed=6, survived=1, no_tests=0, timeout=1, not_reached=1)
