"""How the project tries to break its own promise, as data: the mutation runs (``gpukb/data/mutation.toml``), the
corruptions every data file is put through, and the fuzz budget (``gpukb/data/fuzz.toml``). ``gpukb.site.pages``
renders them on the page "How we try to break this site"; the tests that do the breaking read the same lists.
"""

from __future__ import annotations

import datetime
from functools import cache

from pydantic import Field, model_validator

from gpukb.data import data_text
from gpukb.schema import StrictModel, parse_toml, validate_document, validate_entries

MUTATION_FILE = "mutation.toml"

#: The corruptions tests/site/test_data_files.py applies to every data file under gpukb/data (TOML files and
#: committed records), by the test that applies it. Each must be refused with a ValueError naming what is wrong.
CORRUPTIONS = {
    "test_unknown_keys_are_refused": "a misspelt key, in an entry and at the top of the file",
    "test_duplicate_entries_are_refused": "an entry given twice (it would silently replace the first)",
    "test_wrong_types_are_refused": "a string where a list belongs (it would be split into characters), a list "
    "where a string belongs",
    "test_a_missing_field_is_named": "each field of an entry removed in turn: the message names the field",
    "test_records_are_read_strictly": "a committed record with a misspelt key, a missing field, a string in place "
    "of an object or list",
}


class MutationRun(StrictModel):
    """One run of the mutation tester.

    Attributes:
        id: ``before`` (the tests of the mutated modules only), then one id per later run (``after``: with the
            page-table checks added to kill survivors; ``cell-checks``: with every formats and GEMM table checked;
            ``library``: the scope widened to the number codec, argument parsing and two more page layers;
            ``library-checks``: with the tests that run showed missing; ``<chapter>``, ``<chapter>-checks``: one
            chapter's part of the scope, before and after the tests its survivors showed missing).
        date: When it ran.
        chapter: The chapter whose part of the scope alone the run mutated (``python -m
            gpukb.site.mutation_scope --chapter NAME`` writes it into the copy's ``pyproject.toml``); ``None`` for a
            run over the whole scope as it then was.
        scope: The files mutated (mutmut's ``only_mutate``).
        tests: The test files and folders the runner selected.
        mutants: Mutants generated.
        killed: Mutants some selected test failed on.
        survived: Mutants every selected test passed with.
        no_tests: Mutants in functions no selected test calls.
        timeout: Mutants that ran past the time limit (counted as killed by mutmut).
        not_reached: Mutants a run stopped part way never ran (counted as not killed: the score is a floor).
    """

    id: str
    date: datetime.date
    chapter: str | None = None
    scope: list[str] = Field(min_length=1)
    tests: list[str] = Field(min_length=1)
    mutants: int = Field(ge=0)
    killed: int = Field(ge=0)
    survived: int = Field(ge=0)
    no_tests: int = Field(ge=0)
    timeout: int = Field(ge=0)
    not_reached: int = Field(default=0, ge=0)

    @model_validator(mode="after")
    def _adds_up(self) -> MutationRun:
        counted = self.killed + self.survived + self.no_tests + self.timeout + self.not_reached
        if counted != self.mutants:
            raise ValueError(
                f"killed + survived + no_tests + timeout + not_reached = {counted}, but mutants = {self.mutants}"
            )
        return self

    @property
    def score(self) -> float:
        """Killed (timeouts included) over all mutants."""
        return (self.killed + self.timeout) / self.mutants if self.mutants else 0.0


#: Why mutants survive, as the survivor lists of the mutation data file group them.
SURVIVOR_KINDS = {
    "open": "changes what a page, the command line or the library gives and no test sees it: work to do",
    "figure": "a drawing detail of a figure (positions, colours, labels); no test reads the picture",
    "prose": "the wording of a sentence, heading or error message around the numbers, not a number",
    "equivalent": "cannot change any output for the arguments the pages pass and the data committed",
    "unreached": "code for data the committed records do not hold (refused rows, runs without clocks)",
    "unread": "survived a run that ended after the last reading: counted, listed by function, not yet read",
}


class Survivor(StrictModel):
    """Mutants of one run that survived for one reason (:data:`SURVIVOR_KINDS`), the functions they are in, how
    many, and what they change. The survivors listed are those of the last run over the whole scope and of each
    chapter's last run."""

    run: str
    kind: str
    functions: list[str] = Field(min_length=1)
    survived: int = Field(ge=1)
    why: str

    @model_validator(mode="after")
    def _known_kind(self) -> Survivor:
        if self.kind not in SURVIVOR_KINDS:
            raise ValueError(f"kind {self.kind!r} is none of {list(SURVIVOR_KINDS)}")
        return self


class Mutation(StrictModel):
    """The mutation testing of the library and the page layers: tool, command, runs, survivors of the last runs."""

    tool: str
    command: str
    run: list[MutationRun] = Field(min_length=1)
    survivor: list[Survivor] = Field(default_factory=list)

    @model_validator(mode="after")
    def _survivors_of_a_last_run(self) -> Mutation:
        last = {r.id for r in self.last_runs()}
        for s in self.survivor:
            if s.run not in last:
                raise ValueError(
                    f"survivors of run {s.run!r}: survivors are listed for the last runs only, {sorted(last)}"
                )
        for r in self.last_runs():
            listed = sum(s.survived for s in self.survivor if s.run == r.id)
            if listed != r.survived:  # every survivor of a last run is read and sorted by why it survives
                raise ValueError(f"run {r.id!r}: {listed} survivors listed by kind, but survived = {r.survived}")
        return self

    def last_runs(self) -> list[MutationRun]:
        """The last run over the whole scope, then each chapter's last run (in the order chapters were first run)."""
        last: dict[str | None, MutationRun] = {}
        for r in self.run:
            last[r.chapter] = r  # a dict keeps the order keys were first set in
        return [r for c, r in last.items() if c is None] + [r for c, r in last.items() if c is not None]


def parse_mutation(text: str, file: str = MUTATION_FILE) -> Mutation:
    """Validate the mutation data file.

    Raises:
        ValueError: Naming the file, the entry and the field for anything malformed, unknown or repeated.
    """
    data = parse_toml(text, file, ("tool", "command", "run", "survivor"))
    runs = validate_entries(MutationRun, data.get("run", []), file, "run", key="id")
    survivors = validate_entries(Survivor, data.get("survivor", []), file, "survivor", key="why")
    return validate_document(Mutation, {**data, "run": runs, "survivor": survivors}, file)


@cache
def mutation() -> Mutation:
    """The committed mutation data (``gpukb/data/mutation.toml``)."""
    return parse_mutation(data_text(MUTATION_FILE))


class FuzzTarget(StrictModel):
    """One fuzzed surface.

    Attributes:
        name: What is fuzzed, as the page names it.
        test: The test module under ``tests/fuzz``.
        examples: Hypothesis examples per test (``max_examples``).
        deadline_ms: Longest time one example may take, in milliseconds (Hypothesis ``deadline``).
        inputs: What the strategies generate.
    """

    name: str
    test: str = Field(pattern=r"^test_[a-z_]+\.py$")
    examples: int = Field(gt=0)
    deadline_ms: int = Field(gt=0)
    inputs: str


class FuzzBudget(StrictModel):
    """The fuzz budget (``gpukb/data/fuzz.toml``): every fuzzed surface and the time bounds of the suite."""

    subprocess_timeout_s: int = Field(gt=0)
    suite_seconds: int = Field(gt=0)
    target: list[FuzzTarget] = Field(min_length=1)

    def of(self, test: str) -> FuzzTarget:
        """The budget of one test module, by file name (``"test_numbers.py"``).

        Raises:
            ValueError: For a module with no budget (naming the ones there are).
        """
        for t in self.target:
            if t.test == test:
                return t
        raise ValueError(f"no fuzz target {test!r}; targets: {[t.test for t in self.target]}")


FUZZ_FILE = "fuzz.toml"


def parse_fuzz(text: str, file: str = FUZZ_FILE) -> FuzzBudget:
    """Validate the text of a fuzz budget file.

    Raises:
        ValueError: Naming the file, the target and the field.
    """
    data = parse_toml(text, file, ("subprocess_timeout_s", "suite_seconds", "target"))
    targets = validate_entries(FuzzTarget, data.get("target", []), file, "target", key="test")
    return validate_document(FuzzBudget, {**data, "target": targets}, file)


@cache
def fuzz_budget() -> FuzzBudget:
    """The committed fuzz budget (``gpukb/data/fuzz.toml``), validated."""
    return parse_fuzz(data_text(FUZZ_FILE))
