"""The GPU test run behind the site: which ``gpu``-marked tests ran on the H100 and how they ended.

CI has no GPU, so the GPU tests are run on the H100 with ``pytest -m gpu --junitxml=...`` and the JUnit XML file
is committed under ``bench/results/``; the verification page renders it.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from gpukb.tables import markdown_table


@dataclass(frozen=True)
class TestOutcome:
    """One test case of the run."""

    node: str
    outcome: str  # "passed", "failed", "error", "skipped" or "not collected" (a module that failed to import)
    seconds: float


def read_junit(path: str | Path) -> list[TestOutcome]:
    """The test cases of a pytest JUnit XML file.

    Raises:
        ValueError: If the file is not a JUnit XML report (naming what was found instead).
    """
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    if not suites:
        raise ValueError(f"{path}: not a JUnit XML report (root element <{root.tag}>, no <testsuite>)")
    outcomes = []
    for case in (c for suite in suites for c in suite.iter("testcase")):
        if not case.get("classname"):  # pytest reports a module it could not import as a nameless case
            outcomes.append(TestOutcome(case.get("name", "").replace(".", "/") + ".py", "not collected", 0.0))
            continue
        node = f"{case.get('classname').replace('.', '/')}.py::{case.get('name')}"
        ended = "passed"
        for tag in ("failure", "error", "skipped"):
            if case.find(tag) is not None:
                ended = {"failure": "failed"}.get(tag, tag)
        outcomes.append(TestOutcome(node, ended, float(case.get("time", 0))))
    return outcomes


def summary_markdown(path: str | Path) -> str:
    """A table of the run's test cases and a line with the counts."""
    outcomes = read_junit(path)
    kinds = ("passed", "failed", "error", "skipped", "not collected")
    counts = {kind: sum(o.outcome == kind for o in outcomes) for kind in kinds}
    rows = [[f"`{o.node}`", o.outcome, f"{o.seconds:.1f}"] for o in outcomes]
    line = ", ".join(f"{n} {kind}" for kind, n in counts.items() if n)
    return f"{markdown_table(['test', 'outcome', 'seconds'], rows)}\n\n{line}."
