"""Fuzz, chapter by chapter: every public function of the cuda, cudnn, attention, sequences, distributed and
parallelism libraries (and the site's shared helpers and the GEMM sweep's shape draw), driven with NaN,
infinities, negative, zero, huge, bool, string and None in place of each numeric argument. Each call, within a
time bound, either raises ``ValueError``/``TypeError`` whose message names the value
it was given, or returns a result that an independent formula (or invariant) confirms. The inputs are explicit
lists, not drawn: the same on every run, and every one is tried (about 3,700 calls, in about two seconds).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from gpukb import tables
from gpukb.attention import costs, flash, gluon_forward, kernel, reference, training
from gpukb.cuda import host_memory, indexing, occupancy, overlap
from gpukb.cudnn import cnn, convolution, descriptors
from gpukb.distributed import collectives, memory
from gpukb.gemm.triton import model_shapes
from gpukb.measuring import stats
from gpukb.parallelism import communication, experts, pipeline, traffic
from gpukb.parallelism import memory as parallel_memory
from gpukb.parallelism import model as parallel_model
from gpukb.parallelism.pages import context as context_page
from gpukb.parallelism.pages import experts as experts_page
from gpukb.parallelism.pages import fsdp_tp as fsdp_tp_page
from gpukb.parallelism.pages import pipeline as pipeline_page
from gpukb.parallelism.pages import tensor as tensor_page
from gpukb.performance import ceilings
from gpukb.sequences import bleu, embedding, lstm, rnn, seq2seq
from tests.fuzz.common import attempt
from tests.helpers import size_text

#: What goes in place of each numeric argument.
BAD = [math.nan, -math.nan, math.inf, -math.inf, np.float64("nan"), -1, 0, 10**30, -(10**30), 2**31, True, False,
       np.bool_(True), "3", "nan", None, 2.5, 1e308, -0.0, b"1", [1]]  # fmt: skip
#: How long one call may take, in seconds.
BOUND_S = 5.0


def names(message: str, value: object) -> bool:
    """Whether an error message shows the value it refuses (as repr, str, with thousands separators, or a list
    as the tuple it was read into)."""
    if isinstance(value, bool | np.bool_):
        return str(bool(value)) in message
    if isinstance(value, float | np.floating) and math.isnan(value):
        return "nan" in message.lower()
    if isinstance(value, float | np.floating) and math.isinf(value):
        return "inf" in message
    if isinstance(value, int) and abs(value) >= 10**15:
        return str(value)[:15] in message or f"{value:,}"[:15] in message
    shown = {repr(value), str(value)}
    if isinstance(value, list):  # read as a tuple, or element by element
        shown.add(repr(tuple(value)))
        if all(f" {v}" in message for v in value):
            return True
    if isinstance(value, int):
        shown.add(f"{value:,}")
    if isinstance(value, float):
        shown |= {f"{value:g}", repr(float(value))}
    return any(s in message for s in shown)


@dataclass
class Case:
    """A function, a valid call, the arguments to drive, and the check a returned result must pass."""

    function: Callable[..., Any]
    kwargs: dict[str, Any]
    check: Callable[..., bool]
    drive: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return getattr(self.function, "__qualname__", str(self.function))


X = np.arange(24, dtype=float).reshape(2, 3, 4) / 10
DEFAULT_SCALE = 1 / math.sqrt(X.shape[-1])


def _x(v):
    """The x component of a size or index given as an int or a list of up to three."""
    return v[0] if isinstance(v, list) else v


def _attention(q, k, v, scale, causal=False):
    s = scale * q @ np.swapaxes(k, -1, -2)
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    w = np.exp(s - s.max(-1, keepdims=True))
    return (w / w.sum(-1, keepdims=True)) @ v


def _ints(*values) -> bool:
    """Whether every value is an int proper (a bool or a float of integral value is not)."""
    return all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in values)


def _real(value) -> bool:
    """Whether ``value`` is a finite real number (a bool is not)."""
    real = isinstance(value, int | float | np.number) and not isinstance(value, bool | np.bool_)
    return real and math.isfinite(value)


def _torch():
    import torch

    return torch


def _layer_norm(x, eps):
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)


def _bmi(b, d, t, g):
    b, d, t, g = (tuple(v) + (0 if v is b or v is t else 1,) * (3 - len(v)) for v in (b, d, t, g))
    return (b[0] + b[1] * g[0] + b[2] * g[0] * g[1]) * d[0] * d[1] * d[2] + t[0] + t[1] * d[0] + t[2] * d[0] * d[1]


CASES: dict[str, list[Case]] = {
    "cuda": [
        Case(indexing.global_index_1d, dict(block_idx=1, block_dim=32, thread_idx=3),
             lambda r, block_idx, block_dim, thread_idx: r == _x(block_idx) * _x(block_dim) + _x(thread_idx)),
        Case(lambda bx, by, tx, dx: indexing.global_coordinates((bx, by), (dx, 3), (tx, 1)),
             dict(bx=1, by=1, tx=2, dx=4), lambda r, bx, by, tx, dx: r == (bx * dx + tx, by * 3 + 1, 0)),
        Case(lambda bx, gx, dz: indexing.linear_index((bx, 1), (4, 3, dz), (2, 1), (gx, 2)), dict(bx=1, gx=3, dz=1),
             lambda r, bx, gx, dz: r == (1 * 3 + 1) * gx * 4 + bx * 4 + 2),
        Case(lambda bx, gx, tz, dz: indexing.block_major_index((bx, 1), (4, 3, dz), (2, 1, tz), (gx, 2)),
             dict(bx=1, gx=3, tz=0, dz=2),
             lambda r, bx, gx, tz, dz: r == _bmi((bx, 1), (4, 3, dz), (2, 1, tz), (gx, 2))),
        Case(lambda gx, gz, bx, bz: indexing.launch_table((gx, 2, gz), (bx, 3, bz)), dict(gx=3, gz=1, bx=4, bz=1),
             lambda r, gx, gz, bx, bz: len(r[1]) == gx * 2 * gz * bx * 3 * bz
             and ("z" in r[0][0]) == (gz > 1 or bz > 1)),
        Case(indexing.blocks_for, dict(n=50000, threads_per_block=256),
             lambda r, n, threads_per_block: r == -(-n // threads_per_block)),
        Case(occupancy.occupancy, dict(cc="9.0", threads=256, registers=64, static_shared=0, dynamic_shared=0),
             lambda r, **kw: 0 <= r.active_warps <= r.max_warps
             and r.active_warps == r.active_blocks * r.warps_per_block),
        Case(occupancy.occupancy_table, dict(cc="9.0", registers=64, static_shared=0, dynamic_shared=0),
             lambda r, **kw: [row[0] for row in r[1]] == [64, 128, 256, 512, 1024]),
        Case(lambda a, b: overlap.sequential_time([a, 2.0], [1.0, b], [0.5, 0.5]), dict(a=1.0, b=1.0),
             lambda r, a, b: math.isclose(r, a + b + 4.0)),
        Case(lambda a, b: overlap.pipeline_bound([a, 2.0], [1.0, b], [0.5, 0.5]), dict(a=1.0, b=1.0),
             lambda r, a, b: max(a + 2, 1 + b, 1) <= r <= a + b + 4.0),
        Case(lambda chunk, start, end: overlap.engine_lanes([("H2D", chunk, start, end)]),
             dict(chunk=0, start=1.0, end=2.0),
             lambda r, chunk, start, end: r == {"H2D": [(chunk, start, end)], "kernel": [], "D2H": []}),
        Case(host_memory.check_managed_size, dict(nbytes=1 << 20, free_bytes=1 << 30, share=0.5),
             lambda r, nbytes, free_bytes, share: r == nbytes <= share * free_bytes),
    ],
    "cudnn": [
        Case(lambda c, w: descriptors.tensor((1, c, 5, w), fmt="NHWC"), dict(c=64, w=4),
             lambda r, c, w: r.strides == (c * 5 * w, 1, w * c, c)),
        Case(lambda c: descriptors.packed_strides((2, c, 3, 4), "NCHW"), dict(c=64),
             lambda r, c: r == (c * 12, 12, 4, 1)),
        Case(lambda i, s: descriptors.offset((0, i, 0, 0), (1280, s, 4, 1)), dict(i=1, s=20),
             lambda r, i, s: r == i * s),
        Case(lambda c, s: descriptors.overlapping((1, c, 5, 4), (1280, s, 4, 1)), dict(c=64, s=20),
             lambda r, c, s: isinstance(r, bool)),
        Case(lambda c: descriptors.layout_grid((1, c, 2, 2), "NHWC"), dict(c=3),
             lambda r, c: r.shape == (1, c, 2, 2) and sorted(r.ravel()) == list(range(4 * c))),
        Case(convolution.output_size, dict(size=224, filter_size=7, pad=3, stride=2, dilation=1),
             lambda r, size, filter_size, pad, stride, dilation: r
             == (size + 2 * pad - (filter_size - 1) * dilation - 1) // stride + 1 >= 1),
        Case(convolution.conv_descriptor, dict(pad=1, stride=2, dilation=1, groups=1),
             lambda r, pad, stride, dilation, groups: (r.pad, r.stride, r.groups)
             == ((pad,) * 2, (stride,) * 2, groups)),
        Case(lambda pad, stride, c: convolution.output_dims((1, c, 8, 8), (2, c, 3, 3),
                                                            convolution.conv_descriptor(pad, stride)),
             dict(pad=1, stride=1, c=3),
             lambda r, pad, stride, c: r == (1, 2, *((8 + 2 * pad - 3) // stride + 1,) * 2)),
        Case(lambda size, stride: cnn.max_pool_nhwc(np.ones((1, 4, 4, 2)), size, stride), dict(size=2, stride=2),
             lambda r, size, stride: r.shape == (1, (4 - size) // stride + 1, (4 - size) // stride + 1, 2)),
    ],
    "attention": [
        # the Gluon kernel's CPU-side checks: anything but a tensor raised AttributeError (q.device)
        Case(lambda q: gluon_forward.gluon_refusal(q), dict(q=_torch().zeros(1)),  # a CPU tensor: why not
             lambda r, q: isinstance(q, _torch().Tensor) and isinstance(r, str)),
        Case(lambda block_n: gluon_forward.GluonConfig(block_n=block_n), dict(block_n=128),
             lambda r, block_n: _ints(block_n) and block_n in (64, 128)),
        Case(lambda num_stages, consumers: gluon_forward.GluonConfig(num_stages=num_stages, consumers=consumers),
             dict(num_stages=2, consumers=1),
             lambda r, num_stages, consumers: _ints(num_stages, consumers) and 1 <= num_stages <= 4
             and 1 <= consumers <= 2),
        Case(gluon_forward.key_blocks, dict(q_start=0, q_rows=128, kv_len=1024, offset=0, block_n=128, causal=True),
             lambda r, q_start, q_rows, kv_len, offset, block_n, causal: _ints(q_start, q_rows, kv_len, offset, block_n)
             and isinstance(causal, bool | np.bool_)
             and r[0] == max(-(-min(q_start + q_rows + offset if causal else kv_len, kv_len) // block_n), 1)),
        Case(costs.attention_costs, dict(batch=4, heads=32, q_len=1024, kv_len=1024, head_dim=128, kv_heads=8),
             lambda r, batch, heads, q_len, kv_len, head_dim, kv_heads: r.flops
             == 4 * batch * heads * q_len * kv_len * head_dim and r.score_bytes == 2 * batch * heads * q_len * kv_len),
        Case(costs.kv_cache_bytes, dict(layers=32, batch=1, seq=8192, kv_heads=8, head_dim=128),
             lambda r, layers, batch, seq, kv_heads, head_dim: r == 2 * layers * batch * seq * kv_heads * head_dim * 2),
        Case(costs.costs_table, dict(batch=4, heads=32, head_dim=128), lambda r, **kw: len(r[1]) == 6),
        Case(costs.kv_cache_table, dict(layers=32, heads=32, head_dim=128, seq=8192, batch=1),
             lambda r, **kw: len(r[1]) >= 2),
        Case(costs.dot_product_statistics, dict(d=16, samples=100, keys=8, seed=0),
             lambda r, **kw: all(math.isfinite(v) for v in r.values())),
        Case(lambda scale: reference.attention(X, X, X, scale=scale)[0], dict(scale=0.5),
             lambda r, scale: np.allclose(r, _attention(X, X, X, scale))),
        Case(lambda scale: reference.scaled_dot_product_attention(X, X, X, causal=True, scale=scale), dict(scale=0.5),
             lambda r, scale: np.allclose(r, _attention(X, X, X, DEFAULT_SCALE if scale is None else scale, True))),
        Case(reference.causal_mask, dict(q_len=3, kv_len=4),
             lambda r, q_len, kv_len: (r == np.tril(np.ones((q_len, kv_len or q_len), bool))).all()),
        Case(lambda n, max_len: reference.padding_mask([1, n], max_len), dict(n=2, max_len=3),
             lambda r, n, max_len: r.shape == (2, 1, 1, max_len) and r[1].sum() == n),
        Case(lambda eps: reference.layer_norm(X, np.ones(4), np.zeros(4), eps=eps), dict(eps=1e-5),
             lambda r, eps: np.allclose(r, _layer_norm(X, eps))),
        Case(lambda axis: reference.softmax(X, axis=axis), dict(axis=-1),
             lambda r, axis: np.allclose(r.sum(axis=axis), 1)),
        Case(lambda block: flash.online_softmax(X[0], block)[0], dict(block=2),
             lambda r, block: np.allclose(r, reference.softmax(X[0]))),
        Case(lambda tolerance: training.steps_in_agreement([1.0, 2.0], [1.0, 2.5], tolerance), dict(tolerance=0.01),
             lambda r, tolerance: r == (2 if tolerance >= 0.2 else 1) and _real(tolerance) and tolerance > 0),
        Case(kernel.FlashConfig, dict(block_m=32, block_n=16, num_warps=4, num_stages=2),
             lambda r, block_m, block_n, num_warps, num_stages: (r.block_m, r.block_n, r.num_warps, r.num_stages)
             == (block_m, block_n, num_warps, num_stages) and _ints(block_m, block_n, num_warps, num_stages)
             and block_m <= 1024),  # a Triton tile holds at most 2^20 elements
        Case(lambda block: kernel.BackwardConfig(block, 16, 16, block), dict(block=32),
             lambda r, block: r.block_m1 == r.block_n2 == block and _ints(block) and block <= 1024),
        Case(kernel.default_config, dict(head_dim=64, causal=False),
             lambda r, head_dim, causal: r in (kernel.INTERPRETER_CONFIG, kernel.DEFAULT_CONFIGS[(head_dim, causal)])),
        Case(lambda block_m, block_n, scale: flash.flash_forward(X, X, X, block_m, block_n, scale=scale)[0],
             dict(block_m=2, block_n=2, scale=0.5),
             lambda r, block_m, block_n, scale: np.allclose(r, _attention(X, X, X, DEFAULT_SCALE if scale is None
                                                                          else scale))),
    ],
    "sequences": [
        Case(lambda vocab_size: embedding.token_ids([0, 1, 2], vocab_size), dict(vocab_size=5),
             lambda r, vocab_size: list(r) == [0, 1, 2]),
        Case(lambda vocab_size: embedding.one_hot([0, 1, 2], vocab_size), dict(vocab_size=5),
             lambda r, vocab_size: r.shape == (3, vocab_size) and (r.argmax(1) == [0, 1, 2]).all()),
        Case(lambda n, seed: seq2seq.bottleneck_rows((2, n), seed), dict(n=5, seed=0),
             lambda r, n, seed: [row[0] for row in r[1]] == [2, n]),
        Case(lambda max_order: bleu.ngrams(["a", "b", "c"], max_order), dict(max_order=4),
             lambda r, max_order: r == Counter(tuple("abc"[i : i + k]) for k in range(1, min(max_order, 3) + 1)
                                                for i in range(4 - k))),
        Case(lambda smooth_value: bleu.corpus_bleu(["a b c d"], [["a b c d"]], smooth="floor",
                                                   smooth_value=smooth_value), dict(smooth_value=0.1),
             lambda r, smooth_value: math.isclose(r.score, 100)),
        Case(lambda smooth_value: bleu.sentence_bleu("a b c x", ["a b c d"], smooth="add-k", smooth_value=smooth_value),
             dict(smooth_value=1), lambda r, smooth_value: 0 <= r.score <= 100),
        Case(rnn.RNNParams.random, dict(input_size=3, hidden_size=4, seed=0),
             lambda r, input_size, hidden_size, seed: r.weight_ih.shape == (hidden_size, input_size)),
        Case(lstm.LSTMParams.random, dict(input_size=3, hidden_size=4, seed=0),
             lambda r, input_size, hidden_size, seed: r.weight_ih.shape == (4 * hidden_size, input_size)),
        Case(seq2seq.Seq2Seq.random, dict(vocab_size=12, embed=8, hidden=16, seed=0, scale=0.3),
             lambda r, vocab_size, embed, hidden, seed, scale: r.embedding.shape == (vocab_size, embed)),
    ],
    "distributed": [
        Case(memory.state_bytes_per_param, dict(scheme="zero3", world_size=8),
             lambda r, scheme, world_size: math.isclose(r["total"], 16 / world_size)),
        Case(memory.states_table, dict(world_size=8, parameters=7.5e9),
             lambda r, world_size, parameters: len(r[1]) == len(memory.SCHEMES)
             and float(r[1][0][-1]) == float(f"{16 * parameters / 1e9:.3g}")),
        Case(memory.block_activation_bytes, dict(batch=1, seq=128, hidden=64, heads=4, element_bytes=2, stats_bytes=4),
             lambda r, batch, seq, hidden, heads, element_bytes, stats_bytes: r
             == element_bytes * (16 * batch * seq * hidden + heads * batch * seq**2) + 4 * batch * seq * stats_bytes),
        Case(memory.checkpointed_block_bytes, dict(batch=1, seq=128, hidden=64, element_bytes=2),
             lambda r, batch, seq, hidden, element_bytes: r == element_bytes * batch * seq * hidden),
        Case(memory.korthikanti_bytes, dict(batch=1, seq=128, hidden=64, heads=4),
             lambda r, batch, seq, hidden, heads: r == seq * batch * hidden * 34 + 5 * heads * seq**2 * batch),
        Case(collectives.bus_factor, dict(op="all_reduce", ranks=8), lambda r, op, ranks: r == 2 * (ranks - 1) / ranks),
        Case(collectives.bandwidths, dict(op="all_gather", size_bytes=1 << 20, seconds=1e-3, ranks=8),
             lambda r, op, size_bytes, seconds, ranks: math.isclose(r[0], size_bytes / seconds)
             and math.isclose(r[1], r[0] * (ranks - 1) / ranks)),
        Case(lambda size_bytes, p: collectives.ring_traffic_table(size_bytes, [2, p]), dict(size_bytes=1 << 10, p=4),
             lambda r, size_bytes, p: [row[2] for row in r[1]] == [int(2 * (q - 1) * size_bytes // q) for q in (2, p)]),
    ],
    "parallelism": [
        Case(pipeline.bubble_fraction, dict(stages=4, micro_batches=8),
             lambda r, stages, micro_batches: r == Fraction(stages - 1, micro_batches + stages - 1)),
        Case(pipeline.interleaved_bubble_fraction, dict(stages=4, micro_batches=8, chunks=2),
             lambda r, stages, micro_batches, chunks: r == Fraction(stages - 1, chunks * micro_batches + stages - 1)),
        Case(lambda stages, micro_batches, stage: pipeline.in_flight("1F1B", stages, micro_batches, stage),
             dict(stages=4, micro_batches=8, stage=1),
             lambda r, stages, micro_batches, stage: r == min(micro_batches, stages - stage)),
        Case(lambda stages, micro_batches: pipeline.schedule_order("1F1B", stages, micro_batches),
             dict(stages=3, micro_batches=5),
             lambda r, stages, micro_batches: len(r) == stages
             and all(o.count("F") == o.count("B") == micro_batches for o in r)),
        Case(lambda forward, backward: pipeline.replay(pipeline.schedule_order("GPipe", 2, 2), forward, backward),
             dict(forward=1, backward=2),
             lambda r, forward, backward: r.bubble == Fraction(1, 3)),  # (p − 1)/(m + p − 1) for any t_f, t_b
        Case(parallel_memory.state_bytes_per_gpu, dict(parameters=1000, tp=2, pp=2, dp=2),
             lambda r, parameters, tp, pp, dp: r == Fraction(16 * parameters, tp * pp)),
        Case(lambda seq, batch, hidden, heads, tp: parallel_memory.activation_bytes_per_layer(seq, batch, hidden,
                                                                                                heads, tp),
             dict(seq=128, batch=1, hidden=64, heads=4, tp=2),
             lambda r, seq, batch, hidden, heads, tp: r
             == Fraction(seq * batch * hidden * (10 + 24 * Fraction(1, tp) + 5 * Fraction(heads * seq, hidden * tp)))),
        Case(communication.tensor_parallel, dict(batch=1, seq=128, hidden=64, tp=2, element_bytes=2, layers=3),
             lambda r, batch, seq, hidden, tp, element_bytes, layers: [(t.kind, t.count, t.whole_bytes, t.ranks)
                                                                       for t in r]
             == [("all_reduce", 4 * layers, batch * seq * hidden * element_bytes, tp)]),
        Case(lambda whole_bytes, ranks: traffic.ring_sent_bytes("all_reduce", whole_bytes, ranks),
             dict(whole_bytes=1024, ranks=4),
             lambda r, whole_bytes, ranks: r == 2 * (ranks - 1) * whole_bytes // ranks
             and 2 * (ranks - 1) * whole_bytes % ranks == 0),
        Case(lambda to_others: communication.Traffic("x", "all_to_all", 3, 1024, 4, to_others),
             dict(to_others=100), lambda r, to_others: (to_others is None or (_ints(to_others) and to_others >= 0))
             and r.sent_bytes == 3 * (3 * 1024 // 4 if to_others is None else to_others)),
        Case(lambda n: experts.load(_torch().tensor([[0, 1], [1, 2]]), n), dict(n=4),
             lambda r, n: r == [1, 2, 1] + [0] * (n - 3)),
        Case(lambda to_others: traffic.ring_sent_bytes("all_reduce", 1024, 4, to_others), dict(to_others=None),
             lambda r, to_others: to_others is None and r == 1536),  # to_others applies to an all-to-all only
        # seeds: torch read 2.5 as 2, True as 1 and "3" as 3, and raised OverflowError for infinity
        Case(lambda seed: experts.moe(8, 4, 2, seed), dict(seed=0),
             lambda r, seed: _ints(seed) and 0 <= seed < 2**64 and tuple(r.w1.shape) == (4, 8, 16)),
        Case(lambda seed: parallel_model.block(parallel_model.BlockShape(), seed), dict(seed=0),
             lambda r, seed: _ints(seed) and 0 <= seed < 2**64),
        Case(parallel_model.block, dict(shape=parallel_model.BlockShape()),  # anything else: AttributeError
             lambda r, shape: isinstance(shape, parallel_model.BlockShape)),
        Case(parallel_model.mlp, dict(hidden=16, seed=0), lambda r, hidden, seed: _ints(hidden, seed)
             and hidden >= 1 and 0 <= seed < 2**64 and tuple(r.w1.weight.shape) == (4 * hidden, hidden)),
        Case(experts.imbalance, dict(counts=[1, 2, 3]),  # 10^400 rows overflowed a float mean
             lambda r, counts: r == Fraction(max(counts) * len(counts), sum(counts))),
        Case(lambda big: experts.imbalance([big, 0]), dict(big=4), lambda r, big: _ints(big) and big > 0 and r == 2),
        Case(communication.sent_bytes, dict(traffic=communication.tensor_parallel(1, 8, 16, 2)),  # [1]: AttributeError
             lambda r, traffic: r == sum(t.sent_bytes for t in traffic)),
        Case(communication.collective_counts, dict(traffic=communication.tensor_parallel(1, 8, 16, 2)),
             lambda r, traffic: r == {"all_reduce": 4}),
        # the page layer's diagrams and tables: a million ranks drew for minutes, an int for a list of counts
        # raised a bare "not iterable", router_load passed every argument unchecked to torch
        Case(context_page.ring_svg, dict(cp=4), lambda r, cp: "<svg" in r),
        Case(fsdp_tp_page.mesh_svg, dict(dp=2, tp=2), lambda r, dp, tp: "<svg" in r),
        Case(pipeline_page.pipeline_svg, dict(stages=2, micro_batches=2),
             lambda r, stages, micro_batches: "<svg" in r),
        Case(tensor_page.tensor_parallel_svg, dict(tp=2), lambda r, tp: "<svg" in r),
        Case(pipeline_page.bubble_markdown, dict(stages=(2,), micro_batches=(4,)),
             lambda r, stages, micro_batches: r.count("\n") == 1 + len(stages) * len(micro_batches)),
        Case(experts_page.router_load, dict(tokens=16, hidden=4, experts=4, top_k=2, seed=0),
             lambda r, tokens, hidden, experts, top_k, seed: sum(r) == tokens * top_k and len(r) == experts),
    ],
    "performance": [  # a zero bandwidth divided by zero, a NaN rate gave a NaN ridge
        Case(ceilings.measured_ridge, dict(ceilings={"bf16": 700.0, "bandwidth": 3000.0}, dtype="fp8"),
             lambda r, ceilings, dtype: isinstance(ceilings, dict) and r is None),  # no fp8 rate: no ridge
        Case(lambda rate, bandwidth: ceilings.measured_ridge({"bf16": rate, "bandwidth": bandwidth}, "bf16"),
             dict(rate=700.0, bandwidth=3000.0),
             lambda r, rate, bandwidth: _real(rate) and _real(bandwidth) and rate > 0 and bandwidth > 0
             and r == rate * 1e3 / bandwidth),
    ],
    "measuring": [  # summarize(3) was a bare "'int' object is not iterable"; [10^400] overflowed
        Case(stats.summarize, dict(samples=[1.0, 2.0, 4.0]),
             lambda r, samples: isinstance(samples, list) and r.median == float(np.median(samples))),
        Case(lambda sample: stats.summarize([sample]), dict(sample=2.0),
             lambda r, sample: _real(sample) and sample >= 0 and r.median == float(sample) == r.min == r.max),
        Case(stats.median_interval, dict(samples=[float(i) for i in range(8)], confidence=0.95),
             lambda r, samples, confidence: r[:2] == (0.0, 7.0) and r[2] >= confidence),
        Case(lambda sample: stats.median_interval([sample] * 8), dict(sample=2.0),
             lambda r, sample: _real(sample) and r[:2] == (float(sample), float(sample))),
    ],
    "shared": [
        Case(tables.bytes_text, dict(nbytes=3 * 2**20),
             lambda r, nbytes: _real(nbytes) and nbytes >= 0 and r == size_text(nbytes)),
        Case(model_shapes.draw, dict(seed=29, count=3),
             lambda r, seed, count: len(r) == count and r == model_shapes.draw(seed, count)),
    ],
}  # fmt: skip


@pytest.mark.parametrize(
    ("chapter", "case"),
    [(chapter, case) for chapter, cases in CASES.items() for case in cases],
    ids=[f"{chapter}-{case.name}-{i}" for chapter, cases in CASES.items() for i, case in enumerate(cases)],
)
def test_every_argument_refuses_what_it_does_not_model_or_answers_right(chapter: str, case: Case) -> None:
    result, err = attempt(case.function, **case.kwargs, bound_s=BOUND_S)
    assert err is None, f"the valid call itself: {err}"
    assert case.check(result, **case.kwargs), f"the valid call itself: {result!r}"
    failures = []
    for param in case.drive or list(case.kwargs):
        if isinstance(case.kwargs[param], str):  # names: fuzzed by test_names and the CLI tests
            continue
        for bad in BAD:
            kwargs = {**case.kwargs, param: bad}
            result, err = attempt(case.function, **kwargs, bound_s=BOUND_S)
            if err is not None:
                if not names(str(err), bad):
                    failures.append(f"{param}={bad!r}: {type(err).__name__} does not show the value: {err}")
            elif not case.check(result, **kwargs):
                failures.append(f"{param}={bad!r}: returned {result!r:.120}, which the check refutes")
    assert not failures, "\n".join(failures)
