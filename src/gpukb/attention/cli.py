"""``gpukb attention``: the cost of an attention pass and the size of a KV cache, from the command line."""

from __future__ import annotations

import argparse

from gpukb.attention.costs import attention_costs, kv_cache_bytes
from gpukb.tables import text_table

EPILOG = """examples:
  gpukb attention cost --batch 4 --heads 32 --seq 4096 --head-dim 128 --causal
  gpukb attention kv-cache --layers 32 --kv-heads 8 --head-dim 128 --seq 8192 --batch 16"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``attention`` subcommand."""
    parser = sub.add_parser(
        "attention",
        help="operations and bytes of one attention pass; bytes of a KV cache",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("what", choices=("cost", "kv-cache"), help="what to compute")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--heads", type=int, default=32, help="query heads (cost)")
    parser.add_argument("--kv-heads", type=int, default=None, help="key/value heads (default: --heads)")
    parser.add_argument("--seq", type=int, default=4096, help="tokens (query and key length for cost)")
    parser.add_argument("--head-dim", type=int, default=128)
    parser.add_argument("--layers", type=int, default=None, help="layers (kv-cache; default 32)")
    parser.add_argument("--causal", action="store_true", help="causal mask (cost)")
    parser.add_argument("--dtype", default="bf16", help="element type: bf16, fp16, fp8, fp32 ...")
    parser.set_defaults(handler=run, parser=parser)


def run(args: argparse.Namespace) -> int:
    """Print the requested numbers; bad arguments are a usage error (status 2)."""
    try:
        if args.what == "cost" and args.layers is not None:
            raise ValueError("--layers counts the layers of a KV cache; cost is one attention pass and takes none")
        if args.what == "kv-cache" and args.causal:
            raise ValueError("--causal changes the work of a pass (cost); a KV cache holds the same bytes either way")
        if args.what == "cost":
            c = attention_costs(args.batch, args.heads, args.seq, args.seq, args.head_dim, args.kv_heads,
                                args.causal, args.dtype)  # fmt: skip
            rows = [["GFLOP (two matrix products)", f"{c.flops / 1e9:.1f}"],
                    ["MB moved, fused (Q, K, V, O once)", f"{c.io_bytes / 1e6:.1f}"],
                    ["MB of one score matrix", f"{c.score_bytes / 1e6:.1f}"],
                    ["FLOP per byte, fused", f"{c.intensity:.0f}"],
                    ["FLOP per byte, scores through memory", f"{c.unfused_intensity:.1f}"]]  # fmt: skip
        else:
            kv = args.kv_heads if args.kv_heads is not None else args.heads
            n = kv_cache_bytes(
                32 if args.layers is None else args.layers, args.batch, args.seq, kv, args.head_dim, args.dtype
            )
            rows = [["bytes", f"{n:,}"], ["GiB", f"{n / 2**30:.3f}"]]
    except (TypeError, ValueError) as err:
        args.parser.error(str(err))
    print(text_table(["quantity", "value"], rows))
    return 0
