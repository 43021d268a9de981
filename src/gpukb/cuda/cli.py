"""``gpukb cuda``: occupancy of a launch configuration, and the thread indices of a small launch."""

from __future__ import annotations

import argparse

from gpukb.cuda import limits
from gpukb.cuda.indexing import launch_table
from gpukb.cuda.occupancy import occupancy, occupancy_table
from gpukb.tables import text_table

EPILOG = """examples:
  gpukb cuda occupancy --cc 9.0 --threads 256 --registers 64
  gpukb cuda occupancy --cc 8.0 --registers 40 --dynamic-shared 65536 --sweep
  gpukb cuda threads --grid 3 2 --block 4 3"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``cuda`` subcommand."""
    parser = sub.add_parser(
        "cuda",
        help="occupancy of a kernel launch; thread indices of a launch",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    inner = parser.add_subparsers(dest="cuda_command", metavar="WHAT")
    occ = inner.add_parser("occupancy", help="active blocks per SM and the limiting resource")
    occ.add_argument("--cc", default="9.0", choices=limits.known(), help="compute capability (default 9.0)")
    occ.add_argument("--threads", type=int, default=None, help="threads per block (default 256)")
    occ.add_argument("--registers", type=int, required=True, help="registers per thread")
    occ.add_argument("--static-shared", type=int, default=0, help="static shared memory per block, bytes")
    occ.add_argument("--dynamic-shared", type=int, default=0, help="dynamic shared memory per block, bytes")
    occ.add_argument("--cluster", type=int, default=None, help="blocks per cluster (compute capability 9.0)")
    occ.add_argument("--sweep", action="store_true", help="show block sizes 64 to 1024 instead of --threads")
    threads = inner.add_parser("threads", help="every thread of a small launch and its indices")
    threads.add_argument("--grid", type=int, nargs="+", required=True, help="blocks per grid, 1 to 3 numbers")
    threads.add_argument("--block", type=int, nargs="+", required=True, help="threads per block, 1 to 3 numbers")
    parser.set_defaults(handler=run, parser=parser)


def run(args: argparse.Namespace) -> int:
    """Run ``gpukb cuda``; returns the exit status."""
    try:
        if args.cuda_command == "occupancy":
            if args.sweep:
                given = [name for name, value in (("--threads", args.threads), ("--cluster", args.cluster))
                         if value is not None]  # fmt: skip
                if given:
                    raise ValueError(f"--sweep shows block sizes 64 to 1024 without clusters; it takes no "
                                     f"{' or '.join(given)}")  # fmt: skip
                print(text_table(*occupancy_table(args.cc, args.registers, args.static_shared, args.dynamic_shared)))
                return 0
            occ = occupancy(
                args.cc,
                256 if args.threads is None else args.threads,
                args.registers,
                args.static_shared,
                args.dynamic_shared,
                cluster_size=args.cluster,
            )
            print(
                f"{occ.active_blocks} blocks/SM, {occ.active_warps} of {occ.max_warps} warps "
                f"({occ.occupancy:.0%}), limited by {', '.join(occ.limiting)}"
            )
            print(
                text_table(
                    ["resource", "blocks/SM"], [[k, "no limit" if v is None else v] for k, v in occ.limits.items()]
                )
            )
            return 0
        if args.cuda_command == "threads":
            print(text_table(*launch_table(tuple(args.grid), tuple(args.block))))
            return 0
    except (ValueError, TypeError) as err:
        args.parser.error(str(err))
    args.parser.print_help()
    return 2
