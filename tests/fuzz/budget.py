"""The fuzz budget, as the fuzz tests use it: read from ``gpukb/data/fuzz.toml`` (the page renders the same file)."""

from __future__ import annotations

from gpukb.site.breaking import FuzzTarget, fuzz_budget

BUDGET = fuzz_budget()
#: The console script, run as a real process for the inputs that used to hang (seconds before it is killed).
SUBPROCESS_TIMEOUT_S = BUDGET.subprocess_timeout_s
#: What the whole fuzz suite should take on a 2-core CI machine, in seconds.
SUITE_SECONDS = BUDGET.suite_seconds


def target(test: str) -> FuzzTarget:
    """The budget of one test module, by file name (``"test_numbers.py"``)."""
    return BUDGET.of(test)
