"""The GPU test run behind the site: which ``gpu``-marked tests ran on the H100 and how they ended.

CI has no GPU, so the GPU tests are run on the H100 with ``pytest -m gpu --junitxml=REPORT.xml`` and the report is
turned into a results record (kind ``site.gpu-tests``) with the run's description::

    python -m gpukb.site.gpu_tests REPORT.xml src/gpukb/data/results/site/gpu-tests-h100.json --rerecord

(``--rerecord`` because that file exists: a committed record is replaced only on purpose, and only by one of the
same kind.)

``bench/gpu_tests_and_records.sh`` does both on the GPU machine. The committed record, id
``"site/gpu-tests-h100"``, is what the verification page renders and what the test suite compares itself with.
"""

from __future__ import annotations

import argparse
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import Field

from gpukb import arguments
from gpukb.records import Record, Run, describe_run, rerecord_option, write
from gpukb.schema import StrictModel

#: Id of the committed H100 run.
RECORD_ID = "site/gpu-tests-h100"

#: How a test case can end; "not collected" is a test module that failed to import (pytest reports it as a case).
Outcome = Literal["passed", "failed", "error", "skipped", "not collected"]

#: The outcomes in the order the page counts them.
OUTCOMES: tuple[Outcome, ...] = ("passed", "failed", "error", "skipped", "not collected")


class TestOutcome(StrictModel):
    """One test case of the run.

    Attributes:
        node: The pytest node id (``tests/x/test_y.py::test_z[param]``), or the module's path if not collected.
        outcome: How it ended.
        seconds: Its duration as pytest reported it.
    """

    __test__ = False  # not a pytest test class, whatever its name says

    node: str = Field(min_length=1)
    outcome: Outcome
    seconds: float = Field(ge=0)


class GpuTestRun(Record):
    """The ``gpu``-marked tests of one run on a GPU machine, case by case."""

    kind: Literal["site.gpu-tests"] = "site.gpu-tests"
    schema_version: Literal[1] = 1
    tests: list[TestOutcome]

    def counts(self) -> dict[str, int]:
        """How many cases ended each way, in the order of :data:`OUTCOMES` (zeros included)."""
        return {outcome: sum(t.outcome == outcome for t in self.tests) for outcome in OUTCOMES}


def read_junit(path: str | Path) -> list[TestOutcome]:
    """The test cases of a pytest JUnit XML file.

    Raises:
        FileNotFoundError: If there is no such file.
        ValueError: If it is not a regular file, not XML, or not a JUnit XML report (naming the file and what was
            found instead).
    """
    path = arguments.regular_file("JUnit report", path)
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as err:
        raise ValueError(f"{path}: not a JUnit XML report (not well-formed XML: {err})") from None
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    if not suites:
        raise ValueError(f"{path}: not a JUnit XML report (root element <{root.tag}>, no <testsuite>)")
    outcomes = []
    for case in (c for suite in suites for c in suite.iter("testcase")):
        if not case.get("classname"):  # pytest reports a module it could not import as a nameless case
            outcomes.append(TestOutcome(node=case.get("name", "").replace(".", "/") + ".py", outcome="not collected",
                                        seconds=0.0))  # fmt: skip
            continue
        node = f"{case.get('classname').replace('.', '/')}.py::{case.get('name')}"
        ended: Outcome = "passed"
        for tag, outcome in (("failure", "failed"), ("error", "error"), ("skipped", "skipped")):
            if case.find(tag) is not None:
                ended = outcome
        try:
            seconds = float(case.get("time", 0))
        except ValueError:
            raise ValueError(f"{path}: test case {node}: time {case.get('time')!r} is not a number") from None
        outcomes.append(TestOutcome(node=node, outcome=ended, seconds=seconds))
    return outcomes


def from_junit(path: str | Path, run: Run | None = None, command: str | None = None) -> GpuTestRun:
    """The record of a pytest JUnit XML report, with the run described by :func:`gpukb.records.describe_run`
    (this machine, now) unless ``run`` is given.

    Args:
        path: The JUnit XML file pytest wrote.
        run: The run's description; by default this machine's, now.
        command: The pytest command that wrote the report, for the default run description.

    Raises:
        FileNotFoundError: If there is no such file.
        ValueError: If it is not a JUnit XML report.
    """
    tests = read_junit(path)
    if run is None:
        run = describe_run(command=command, notes=[f"Test cases read from the JUnit XML report {Path(path).name}."])
    return GpuTestRun(run=run, tests=tests)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m gpukb.site.gpu_tests JUNIT.xml OUT.json [--command CMD] [--rerecord]``: write the record of a
    JUnit report. A bad report or an existing output file (without ``--rerecord``) is one line of error, status 2."""
    parser = argparse.ArgumentParser(prog="python -m gpukb.site.gpu_tests", description=main.__doc__)
    parser.add_argument("junit", help="the JUnit XML report of a pytest -m gpu run")
    parser.add_argument("output", help="the results file to write (JSON)")
    parser.add_argument("--command", help="the pytest command that wrote the report (recorded as the run's command)")
    rerecord_option(parser)
    args = parser.parse_args(argv)
    try:
        record = from_junit(args.junit, command=args.command)
        write(record, args.output, replace=args.rerecord)
    except (OSError, ValueError) as err:
        parser.error(str(err))
    counts = ", ".join(f"{n} {outcome}" for outcome, n in record.counts().items() if n)
    print(f"{args.output}: {len(record.tests)} test cases ({counts})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
