"""Every committed record came from a real run of one of the project's own commands.

A results file once held placeholder numbers written by a throwaway generator under /tmp, with a note saying so,
under a name that promised an H100 run; every test that reads records by their models passed. These checks read
each record's run description raw (json, not gpukb's models) and refuse that class of file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.helpers import ROOT

RESULTS = ROOT / "src" / "gpukb" / "data" / "results"
RECORDS = sorted(RESULTS.rglob("*.json"))

#: What a recorded run's command may be: a bench script of this repository, the recorded pytest run of the GPU
#: tests, or a gpukb module, each perhaps after environment assignments.
#: ``torchrun --nproc_per_node=N bench/x.py`` is what :func:`gpukb.records.command_line` writes under torchrun.
COMMAND = re.compile(
    r"^(?:[A-Z_]+=\S+ )*(?:torchrun(?: --\S+)* |(?:torchrun \S+ )?(?:python3?|torchrun)(?: -u)? )"
    r"(?:bench/[a-z0-9_]+\.py|-m (?:pytest|gpukb(?:\.[a-z_]+)*))(?: |$)"
)
PLACEHOLDER = re.compile(r"\b(fake|placeholder|dummy|made[- ]up)\b", re.IGNORECASE)


def _run(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))["run"]


def test_records_are_found() -> None:
    assert len(RECORDS) >= 20


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: p.relative_to(RESULTS).as_posix())
def test_the_run_is_one_of_the_projects_commands(path: Path) -> None:
    command = _run(path)["command"]
    assert COMMAND.match(command), f"{command!r} is not a bench script, the GPU test run or a gpukb module"
    program = command.split(" bench/")[0]
    assert "/tmp/" not in program, command


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: p.relative_to(RESULTS).as_posix())
def test_no_note_calls_the_data_a_placeholder(path: Path) -> None:
    notes = " ".join(_run(path).get("notes") or [])
    assert not PLACEHOLDER.search(notes), notes


@pytest.mark.parametrize(
    "path", [p for p in RECORDS if re.search(r"h[12]00", p.stem)], ids=lambda p: p.relative_to(RESULTS).as_posix()
)
def test_a_record_named_for_a_gpu_ran_on_that_gpu(path: Path) -> None:
    gpu = _run(path)["gpu"]
    named = re.search(r"h[12]00", path.stem).group(0).upper()
    assert gpu is not None, f"{path.name} is named for the {named} but its run had no GPU"
    assert named in gpu["name"], f"{path.name} is named for the {named} but ran on {gpu['name']}"


@pytest.mark.parametrize(
    ("command", "ok"),
    [
        ("python bench/cuda_memory.py /root/out/x.json", True),
        ("PYTHONPATH=src python3 bench/formats_gpu.py out.json", True),
        ("python3 -m pytest -p no:cacheprovider -m gpu", True),
        ("python /tmp/cudafake/gen.py", False),
        ("python scratch.py", False),
    ],
)
def test_the_command_rule_itself(command: str, ok: bool) -> None:
    assert bool(COMMAND.match(command)) is ok
