"""``gpukb gemm-types``: does a GEMM library accept this combination of types, and where is that written."""

from __future__ import annotations

import argparse

from gpukb.gemm.types import LIBRARIES, QUERY_FIELDS, check, rows_table, sources_of, table
from gpukb.tables import text_table

EPILOG = """examples:
  gpukb gemm-types --lib hipblaslt --a fp8 --b bf8 --d bf16              every encoding and architecture
  gpukb gemm-types --lib hipblaslt --a fp8 --b bf8 --d bf16 --arch MI300X
  gpukb gemm-types --lib cublaslt --a e4m3 --b e5m2 --d bf16 --arch H100
  gpukb gemm-types --lib cublaslt --list                                 the whole table

Types take any name: canonical (e4m3fnuz, bf16, int8), a library's (HIP_R_8F_E4M3_FNUZ, CUDA_R_16BF,
float8_e5m2) or the library's own word (hipBLASLt's fp8 and bf8; cuBLAS's fp8 means E4M3 or E5M2).
Exit status 2 when the library accepts no such combination; the message lists the nearest ones."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``gemm-types`` subcommand."""
    parser = sub.add_parser(
        "gemm-types",
        help="check a combination of GEMM types against hipBLASLt's or cuBLASLt's table",
        description="Look a combination of A, B, C, D, compute, scale and bias types up in a library's type table.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--lib", required=True, type=str.lower, choices=LIBRARIES, help="the library")
    for name in QUERY_FIELDS:
        label = f"type of {name.upper()}" if len(name) == 1 else f"{name} type" if name != "arch" else "architecture"
        parser.add_argument(f"--{name}", metavar=name.upper(), help=f"{label} (default: any)")
    parser.add_argument("--list", action="store_true", help="print the library's whole table")
    parser.set_defaults(handler=run, parser=parser)


def run(args: argparse.Namespace) -> int:
    """Print the matching rows and their sources; usage errors and unsupported combinations exit with status 2."""
    parser: argparse.ArgumentParser = args.parser
    tab = table(args.lib)
    given = {name: getattr(args, name) for name in QUERY_FIELDS if getattr(args, name) is not None}
    if args.list and given:
        parser.error("--list prints the whole table; give it without type arguments")
    try:
        rows = list(tab.rows) if args.list else check(args.lib, **given)
        arch = tab.resolve_arch(given["arch"]) if "arch" in given else None
        meanings = [line for n in ("a", "b", "c", "d") if n in given for line in _ambiguous(tab, given[n], arch)]
        meanings = list(dict.fromkeys(meanings))
    except (ValueError, TypeError) as err:
        parser.error(str(err))
    print(f"{tab.title} {tab.function}: {len(rows)} combination{'s' * (len(rows) != 1)}")
    for line in meanings:
        print(f"  {line}")
    print(text_table(*rows_table(rows, arch=arch)))
    print("\nsources:")
    for src in sources_of(rows):
        print(f"  [{src.id}] {src.citation()}")
    return 0


def _ambiguous(tab, name: str, arch: str | None) -> list[str]:
    """What a name means when it stands for several types on ``arch`` (hipBLASLt's fp8, cuBLAS's fp8)."""
    lines = tab.meanings(name, arch)
    return lines if len(lines) > 1 else []
