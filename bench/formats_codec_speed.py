"""Time gpukb's vectorized numpy encode/decode against ml_dtypes' C++ casts on 10 million float32 values.

Usage: PYTHONPATH=src python bench/formats_codec_speed.py [OUTPUT.json] [--n N]

A CPU benchmark (numpy on one core): medians of repeated runs after a warm-up (the host clock of
``gpukb.measuring.timing``), on random normal data spread over many binades (never zeros), for each format ml_dtypes
also has. The goal is to stay within 5x of ml_dtypes.
"""

from __future__ import annotations

import argparse

import numpy as np

from gpukb.formats.arrays import decode_array, encode_array
from gpukb.formats.library_casts import ml_dtypes_type
from gpukb.formats.results import CodecSpeed
from gpukb.formats.spec import get_format
from gpukb.records.script import Script, main

#: Timed calls per median, after one untimed warm-up call.
REPEATS = 5


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--n", type=int, default=10_000_000, help="number of float32 values (default 10 million)")
    parser.add_argument("--formats", default="bf16,e4m3,e5m2,e4m3fnuz,e2m1", help="comma-separated formats")


def codec_speed(script: Script) -> CodecSpeed | None:
    timer = script.timer()  # the host clock: this is a CPU benchmark

    def median_seconds(fn) -> tuple[float, float]:
        """Median and spread (max - min) of ``REPEATS`` timed calls, in seconds, after one untimed warm-up call."""
        fn()
        ms = sorted(timer.time(fn, REPEATS))
        return float(np.median(ms)) / 1e3, (ms[-1] - ms[0]) / 1e3

    script.note(f"numpy on one CPU core: medians of {REPEATS} timed calls after one warm-up call.")
    n = script.args.n
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(n) * np.exp2(rng.integers(-8, 8, n))).astype(np.float32)
    rows = []
    for name in script.args.formats.split(","):
        fmt = get_format(name)
        target = ml_dtypes_type(fmt)
        bits = encode_array(x, fmt)
        ours_encode = median_seconds(lambda fmt=fmt: encode_array(x, fmt))
        ours_decode = median_seconds(lambda fmt=fmt, bits=bits: decode_array(bits, fmt))
        cast = x.astype(target)
        theirs_encode = median_seconds(lambda target=target: x.astype(target))
        theirs_decode = median_seconds(lambda cast=cast: cast.astype(np.float64))
        assert np.array_equal(bits, cast.view(bits.dtype)), f"{name}: encodings differ"
        row = {
            "format": name,
            "n": n,
            "gpukb_encode_s": ours_encode[0],
            "gpukb_encode_spread_s": ours_encode[1],
            "ml_dtypes_encode_s": theirs_encode[0],
            "gpukb_decode_s": ours_decode[0],
            "ml_dtypes_decode_s": theirs_decode[0],
            "encode_ratio": ours_encode[0] / theirs_encode[0],
            "decode_ratio": ours_decode[0] / theirs_decode[0],
            "round_trip_ratio": (ours_encode[0] + ours_decode[0]) / (theirs_encode[0] + theirs_decode[0]),
        }
        rows.append(row)
        print(
            f"{name:<9} encode {row['gpukb_encode_s'] * 1e3:7.1f} ms vs {row['ml_dtypes_encode_s'] * 1e3:6.1f} ms "
            f"({row['encode_ratio']:.1f}x)  decode {row['gpukb_decode_s'] * 1e3:7.1f} ms vs "
            f"{row['ml_dtypes_decode_s'] * 1e3:6.1f} ms ({row['decode_ratio']:.1f}x)  "
            f"round trip {row['round_trip_ratio']:.1f}x",
            flush=True,
        )
    return CodecSpeed(run=script.finished(), repeats=REPEATS, rows=rows)


if __name__ == "__main__":
    raise SystemExit(main(codec_speed, __doc__, arguments, output="optional", device="cpu"))
