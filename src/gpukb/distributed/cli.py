"""``gpukb distributed``: translate an fsdp_config, and the memory calculator, from the shell."""

from __future__ import annotations

import argparse
import json

from gpukb.distributed import memory
from gpukb.tables import text_table

EPILOG = """examples:
  gpukb distributed plan '{"mixed_precision": "PURE", "activation_checkpointing": true}'
  gpukb distributed memory --world-size 64 --params 7.5e9"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``distributed`` subcommand."""
    parser = sub.add_parser(
        "distributed",
        help="FSDP configs translated to torch objects, and the memory of data-parallel training",
        description="Translate a Composer-style fsdp_config; bytes per parameter under DDP, ZeRO and FSDP.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    p = actions.add_parser("plan", help="what an fsdp_config (a JSON object) sets")
    p.add_argument("config", help='a JSON object, e.g. \'{"mixed_precision": "PURE"}\'')
    m = actions.add_parser("memory", help="model-state bytes per parameter and per rank for each scheme")
    m.add_argument("--world-size", type=int, default=8, help="number of ranks (default 8)")
    m.add_argument("--params", type=float, default=7.5e9, help="number of parameters (default 7.5e9)")
    parser.set_defaults(handler=run, parser=parser)


def run(args: argparse.Namespace) -> int:
    """Run the action; bad input exits with status 2 and a message naming what was wrong."""
    parser: argparse.ArgumentParser = args.parser
    try:
        if args.action == "plan":
            from gpukb.distributed.fsdp_config import describe, plan

            try:
                config = json.loads(args.config)
            except json.JSONDecodeError as err:
                raise ValueError(f"config is not JSON: {err}") from None
            p = plan(config)
            headers, rows = describe([p])
            print(text_table(headers, rows))
            print(f"\nFSDP2: fully_shard(..., {', '.join(f'{k}={v!r}' for k, v in p.fully_shard_kwargs().items())})")
        else:
            headers, rows = memory.states_table(args.world_size, args.params)
            print(text_table(headers, rows))
    except (ValueError, TypeError) as err:
        parser.error(str(err))
    return 0
