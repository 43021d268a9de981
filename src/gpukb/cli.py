"""The ``gpukb`` command line.

Each chapter that declares a command line (``Chapter.cli``) adds its subcommand from its own ``cli`` module.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence

from gpukb import __version__, chapters


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
    # Each chapter that declares a subcommand registers it from its own package (gpukb.chapters).
    for chapter in chapters.chapters():
        if chapter.cli:
            importlib.import_module(f"{chapter.package}.cli").add_parser(sub)
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
