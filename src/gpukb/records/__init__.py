"""Recorded results: how a run is described, written, found and read back. The one home for results files.

A benchmark script runs on one skeleton, :mod:`gpukb.records.script`: it parses the command line, describes the run
(:func:`describe_run`) before anything is measured, hands the script the one timer, and writes the record (a model
of its kind, see :data:`KINDS`) with :func:`write`. Pages and tests read committed files with :func:`load` by id
and state where they came from with :func:`measured_on`.
"""

from gpukb.records.run import (
    ClockReading,
    Gpu,
    Run,
    Versions,
    clock_reading,
    clock_text,
    command_line,
    describe_run,
    finished,
    measured_on,
    measured_table,
)
from gpukb.records.store import (
    KINDS,
    MAX_ID_LENGTH,
    RESULTS_DIR_VARIABLE,
    Record,
    folder_for,
    json_schemas,
    load,
    model_for,
    parse,
    read,
    record_ids,
    rerecord_option,
    results_dir,
    write,
)

__all__ = [
    "KINDS",
    "MAX_ID_LENGTH",
    "RESULTS_DIR_VARIABLE",
    "ClockReading",
    "Gpu",
    "Record",
    "Run",
    "Versions",
    "clock_reading",
    "clock_text",
    "command_line",
    "describe_run",
    "finished",
    "folder_for",
    "json_schemas",
    "load",
    "measured_on",
    "measured_table",
    "model_for",
    "parse",
    "read",
    "record_ids",
    "rerecord_option",
    "results_dir",
    "write",
]
