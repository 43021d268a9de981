"""``gpukb bench``: the performance chapter's subcommand (the work is in :mod:`gpukb.performance.runner`)."""

from __future__ import annotations

import argparse


def _bench(args: argparse.Namespace) -> int:
    from gpukb.performance import runner

    return runner.execute(args, args.bench_parser)


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``bench`` subcommand."""
    from gpukb.performance.runner import add_arguments

    bench = sub.add_parser(
        "bench",
        help="measure this GPU (matrix products, memory, host-device copies, attention) into a results file",
        description="Measure the CUDA GPU that is present and write a JSON results file; --show prints one.",
    )
    add_arguments(bench)
    bench.set_defaults(handler=_bench, bench_parser=bench)
