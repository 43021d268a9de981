"""``gpukb format``: what a number becomes in each format, what a bit pattern means, and the format list."""

from __future__ import annotations

import argparse
import re

from gpukb import arguments
from gpukb.formats import tables
from gpukb.formats.codec import ROUNDING_MODES, parse_bits
from gpukb.formats.spec import formats, get_format
from gpukb.tables import text_table

EPILOG = """examples:
  gpukb format 42.5                  the number in every format
  gpukb format 0.1 --formats fp32,bf16,e4m3
  gpukb format 0x63 --as e4m3        what one bit pattern means
  gpukb format --list                every format and its limits"""


# --8<-- [start:add-parser]
def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``format`` subcommand."""
    parser = sub.add_parser(
        "format",
        help="store a number in each floating-point format, or decode a bit pattern",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("value", nargs="?", help="a decimal number (42.5, 1e-3, inf, nan) or, with --as, 0x bits")
    parser.add_argument("--as", dest="as_format", metavar="FORMAT", help="decode VALUE as a bit pattern of FORMAT")
    parser.add_argument("--formats", help="comma-separated formats to show (default: all)")
    parser.add_argument("--rounding", choices=ROUNDING_MODES, help="how to round (default: nearest-even)")
    parser.add_argument("--saturate", action="store_true", help="clamp overflow to the largest finite value")
    parser.add_argument("--list", action="store_true", help="list the formats and their properties")
    parser.set_defaults(handler=run, parser=parser)
    # --8<-- [end:add-parser]
    # argparse takes only -1 and -1.5 for negative numbers (Python < 3.13): let -1e-5, -inf and -nan through
    # as VALUE too, instead of refusing them as unknown options.
    if hasattr(parser, "_negative_number_matcher"):
        parser._negative_number_matcher = re.compile(r"^-\.?\d|^-(inf|infinity|nan|snan)$", re.IGNORECASE)


def _refuse_with(parser: argparse.ArgumentParser, option: str, args: argparse.Namespace, what: str) -> None:
    """Refuse the options that ``option`` would silently ignore."""
    ignored = [
        name
        for name, present in (
            ("VALUE", option == "--list" and args.value is not None),
            ("--as", option == "--list" and args.as_format is not None),
            ("--formats", args.formats is not None),
            ("--rounding", args.rounding is not None),
            ("--saturate", args.saturate),
        )
        if present
    ]
    if ignored:
        parser.error(f"{option} {what}; it takes no {', '.join(ignored)}")


def _format_names(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",")]
    if not any(names):
        raise ValueError(f"--formats needs format names separated by commas, got {text!r}")
    if "" in names:
        raise ValueError(f"--formats has an empty name in {text!r}; separate names by single commas")
    return names


def run(args: argparse.Namespace) -> int:
    parser: argparse.ArgumentParser = args.parser
    try:
        if args.list:
            _refuse_with(parser, "--list", args, "prints every format")
            print(text_table(*tables.properties_table()))
            print()
            print(text_table(*tables.names_table()))
            return 0
        if args.value is None:
            parser.error("give a VALUE, or --list")
        if args.as_format is not None:
            _refuse_with(parser, "--as", args, "decodes one bit pattern of one format")
            fmt = get_format(arguments.text("--as", args.as_format, max_length=100))
            print(text_table(*tables.pattern_table(parse_bits(args.value), fmt.name)))
            return 0
        names = _format_names(args.formats) if args.formats is not None else list(formats())
        headers, rows = tables.value_table(
            args.value, names, rounding=args.rounding or "nearest-even", saturate=args.saturate
        )
        print(text_table(headers, rows))
        return 0
    except (ValueError, TypeError) as err:
        parser.error(str(err))
