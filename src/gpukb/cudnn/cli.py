"""``gpukb cudnn``: the packed strides of a shape in every named format, and a convolution's output dims."""

from __future__ import annotations

import argparse

from gpukb.cudnn.convolution import conv_descriptor, output_dims
from gpukb.cudnn.descriptors import FORMATS, check_rank, tensor
from gpukb.tables import text_table

EPILOG = """examples:
  gpukb cudnn strides 1,64,5,4              packed strides of NCHW, NHWC and CHWN
  gpukb cudnn strides 2,8,3,5,4             the 5-D formats
  gpukb cudnn output 32,3,224,224 64,3,7,7 --pad 3 --stride 2
  gpukb cudnn output 2,6,11,9 4,3,3,3 --pad 1 --stride 2 --dilation 2 --groups 2"""


#: The convolution options of ``output`` and their defaults (``strides`` takes none of them).
OPTION_DEFAULTS = {"pad": 0, "stride": 1, "dilation": 1, "groups": 1}


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``cudnn`` subcommand."""
    parser = sub.add_parser("cudnn", help="cuDNN descriptors: packed strides of a layout, a convolution's output",
                            epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("what", choices=("strides", "output"), help="what to compute")
    parser.add_argument("dims", help="sizes in logical order, comma-separated (N,C,H,W or N,C,D,H,W)")
    parser.add_argument("filter", nargs="?", help="for output: the filter K,C/groups,R,S")
    for name, default in OPTION_DEFAULTS.items():
        parser.add_argument(f"--{name}", type=int, default=None, help=f"for output (default {default})")
    parser.set_defaults(handler=run, parser=parser)


def _dims(label: str, text: str) -> tuple[int, ...]:
    try:
        return tuple(int(v) for v in text.split(","))
    except ValueError:
        raise ValueError(f"{label} must be integers separated by commas, such as 1,64,5,4; got {text!r}") from None


def strides_rows(dims: tuple[int, ...]) -> tuple[list[str], list[list[str]]]:
    """(headers, rows): each named format of this rank and its packed strides in logical order."""
    check_rank(dims)
    if len(dims) not in FORMATS:
        raise ValueError(f"formats are named for 4-D and 5-D tensors; got {len(dims)} dimensions")
    return ["format", "strides"], [[fmt, str(tensor(dims, fmt=fmt).strides)] for fmt in FORMATS[len(dims)]]


def run(args: argparse.Namespace) -> int:
    parser: argparse.ArgumentParser = args.parser
    try:
        dims = _dims("DIMS", args.dims)
        if args.what == "strides":
            if args.filter is not None:
                parser.error("strides takes no FILTER")
            given = [f"--{name}" for name in OPTION_DEFAULTS if getattr(args, name) is not None]
            if given:
                parser.error(
                    f"strides packs a tensor; it takes no {', '.join(given)} (convolution options, for output)"
                )
            print(text_table(*strides_rows(dims)))
            return 0
        if args.filter is None:
            parser.error("output needs the FILTER dims K,C/groups,R,S")
        w = _dims("FILTER", args.filter)
        options = {name: default if getattr(args, name) is None else getattr(args, name)
                   for name, default in OPTION_DEFAULTS.items()}  # fmt: skip
        conv = conv_descriptor(**options, spatial=max(1, len(dims) - 2))
        print(f"output {output_dims(dims, w, conv)}")
        return 0
    except (ValueError, TypeError) as err:
        parser.error(str(err))
