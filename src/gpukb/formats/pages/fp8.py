"""The page “FP8: E4M3, E5M2, OCP and FNUZ” (docs/formats/fp8.md): its tables, figures and text."""

from __future__ import annotations

from collections.abc import Iterable

from gpukb import tables as render
from gpukb.formats import tables
from gpukb.formats.results import GPU_CHECKS_ID, GpuChecks
from gpukb.formats.spec import name_sources
from gpukb.records import load, measured_table


def reinterpretation_table(patterns: Iterable[int], names: Iterable[str]) -> str:
    """The same bit patterns read as different formats."""
    return render.markdown_table(*tables.reinterpretation_table(patterns, names))


def names_table() -> str:
    """What each library calls each format, followed by the list of where those names were checked.

    A blank line separates the table from the list (without it, the list's lines would be read as table rows), and
    each source is a link.
    """

    def linked(source: str) -> str:
        title, sep, url = source.rpartition(": ")
        return f"[{title}]({url})" if sep and url.startswith(("http://", "https://")) else source

    sources = "\n".join(f"- {library}: {linked(source)}" for library, source in name_sources().items())
    return f"{render.markdown_table(*tables.names_table())}\n\n{sources}"


def cast_table(name: str, values: Iterable[float]) -> str:
    """float32 inputs cast to ``name`` by the format's rules and by the installed ml_dtypes and torch."""
    return render.markdown_table(*tables.cast_table(name, values))


def cuda_casts(record_id: str = GPU_CHECKS_ID) -> str:
    """How torch's recorded CUDA casts compared with the format rules, per format, and the E4M3 overflow probe."""
    record = load(record_id, expect=GpuChecks)
    rows = [
        [c.format, c.inputs, c.cuda_matches_rules, c.cuda_matches_saturating, c.cuda_matches_cpu] for c in record.casts
    ]
    table = render.markdown_table(
        ["format", "inputs", "CUDA = format rules", "CUDA = saturating rules", "CUDA = CPU"], rows
    )
    probe = record.e4m3_overflow
    probe_rows = [[value, probe.cuda[value], probe.cpu[value]] for value in probe.cuda]
    probe_headers = ["float32 input", "E4M3 on CUDA", "E4M3 on CPU"]
    return f"{table}\n\n" + measured_table(probe_headers, probe_rows, record.run, command=False)
