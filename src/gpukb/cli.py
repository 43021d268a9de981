"""The ``gpukb`` command line.

Each chapter adds a subcommand here; the work itself lives in the chapter's module.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from gpukb import __version__


def _info(args: argparse.Namespace) -> int:
    from gpukb import environment

    env = environment.collect()
    print(json.dumps(env.as_dict(), indent=2) if args.json else environment.as_text(env))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, with one subparser per subcommand."""
    parser = argparse.ArgumentParser(
        prog="gpukb", description="GPU KB: tested reference code for deep-learning systems."
    )
    parser.add_argument("--version", action="version", version=f"gpukb {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    info = sub.add_parser("info", help="versions of Python and the libraries, CUDA GPU and nvcc availability")
    info.add_argument("--json", action="store_true", help="print the report as JSON")
    info.set_defaults(handler=_info)

    # --8<-- [start:chapters]
    # Each chapter registers its own subcommand; the work lives in the chapter's package.
    from gpukb.bench import cli as bench_cli

    bench_cli.add_parser(sub)
    from gpukb.formats import cli as formats_cli

    formats_cli.add_parser(sub)
    from gpukb.gemm import cli as gemm_cli

    gemm_cli.add_parser(sub)
    from gpukb.datasets import cli as datasets_cli

    datasets_cli.add_parser(sub)
    from gpukb.cuda import cli as cuda_cli

    cuda_cli.add_parser(sub)
    from gpukb.attention import cli as attention_cli

    attention_cli.add_parser(sub)
    from gpukb.sequences import cli as sequences_cli

    sequences_cli.add_parser(sub)
    from gpukb.distributed import cli as distributed_cli

    distributed_cli.add_parser(sub)
    from gpukb.cudnn import cli as cudnn_cli

    cudnn_cli.add_parser(sub)
    # --8<-- [end:chapters]
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (2 for usage errors, as argparse does)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_usage(sys.stderr)
        print("gpukb: error: a command is required", file=sys.stderr)
        return 2
    return args.handler(args)
