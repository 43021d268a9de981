"""The memory calculator against the ZeRO paper's figure 1 and Korthikanti et al.'s per-layer count."""

from __future__ import annotations

import pytest

from gpukb.distributed import memory
from gpukb.distributed.model import ModelConfig, transformer


def test_zero_paper_figure_1() -> None:
    # 7.5B parameters, 64 GPUs, K = 12: baseline 120 GB, P_os 31.4 GB, P_os+g 16.6 GB, P_os+g+p 1.9 GB
    psi, n = 7.5e9, 64
    gb = {s: memory.state_bytes_per_param(s, n)["total"] * psi / 1e9 for s in ("ddp", "zero1", "zero2", "zero3")}
    assert gb["ddp"] == 120
    assert round(gb["zero1"], 1) == 31.4
    assert round(gb["zero2"], 1) == 16.6
    assert round(gb["zero3"], 2) == 1.88


def test_stage_formulas() -> None:
    for n in (1, 2, 8, 64):
        assert memory.state_bytes_per_param("zero1", n)["total"] == pytest.approx(4 + 12 / n)
        assert memory.state_bytes_per_param("zero2", n)["total"] == pytest.approx(2 + 14 / n)
        assert memory.state_bytes_per_param("zero3", n)["total"] == pytest.approx(16 / n)
        assert memory.state_bytes_per_param("fsdp2", n)["total"] == pytest.approx(16 / n)
    # on one rank every scheme keeps 16 bytes per parameter
    assert {memory.state_bytes_per_param(s, 1)["total"] for s in memory.SCHEMES} == {16}


def test_states_table_rows() -> None:
    headers, rows = memory.states_table(64)
    assert headers[0] == "scheme"
    assert [r[0] for r in rows] == list(memory.SCHEMES)
    assert dict((r[0], r[-1]) for r in rows)["zero2"] == "16.6"


def test_fsdp2_transients_by_mode() -> None:
    # unsharded param + unsharded grad (param_dtype) + reduce-scatter input (reduce_dtype)
    assert memory.fsdp2_unit_transient_bytes_per_param(None, None) == 12  # FULL
    assert memory.fsdp2_unit_transient_bytes_per_param("bfloat16", "float32") == 8  # DEFAULT
    assert memory.fsdp2_unit_transient_bytes_per_param("bfloat16", "bfloat16") == 6  # PURE
    assert memory.fsdp2_unit_transient_bytes_per_param("bfloat16", None) == 6


def test_korthikanti_without_dropout() -> None:
    # sbh(34 + 5as/h) with 16-bit activations; dropout accounts for sbh(2 + 3as/h) of it
    b, s, h, a = 8, 1024, 768, 12
    ours = memory.block_activation_bytes(b, s, h, a, 2, stats_bytes=0)  # without the LayerNorm statistics
    assert ours == memory.korthikanti_bytes(b, s, h, a) - (2 * s * b * h + 3 * a * s * s * b)


def test_parameter_count_matches_the_module() -> None:
    for config in (ModelConfig.tiny(), ModelConfig(vocab=100, seq=8, hidden=16, heads=2, layers=3)):
        assert config.parameter_count() == sum(p.numel() for p in transformer(config).parameters())
    assert ModelConfig.gpt_small().parameter_count() == 111_008_256


def test_model_activation_parts() -> None:
    c = ModelConfig.gpt_small()
    off = memory.model_activation_bytes(c, 8, 2, checkpointing=False)
    on = memory.model_activation_bytes(c, 8, 2, checkpointing=True)
    assert off["recompute"] == 0
    assert on["recompute"] == memory.block_activation_bytes(8, c.seq, c.hidden, c.heads, 2)
    assert on["blocks"] == c.layers * 8 * c.seq * c.hidden * 2
    assert off["head"] == on["head"]
    assert off["total"] > 3 * on["total"]


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: memory.state_bytes_per_param("zero4", 8), ValueError, r"unknown scheme 'zero4'; choose one of"),
        (lambda: memory.state_bytes_per_param("ddp", 0), ValueError, "world_size must be an int ≥ 1; got 0"),
        (lambda: memory.block_activation_bytes(8, 0, 768, 12, 2), ValueError, "seq must be an int ≥ 1"),
        (lambda: memory.fsdp2_unit_transient_bytes_per_param("int8", None), ValueError, "unknown param_dtype"),
        (lambda: ModelConfig(hidden=10, heads=4), ValueError, "hidden 10 is not divisible by heads 4"),
        # a model torch cannot hold was accepted: 10^100 layers gave a 10^106-parameter count and its memory
        (lambda: ModelConfig(layers=10**100), ValueError, r"layers must be an int ≥ 1, ≤ 9223372036854775807; got 10"),
        (lambda: ModelConfig(layers=2**62), ValueError, r"=4611686018427387904\) would have 3.27e\+25 parameters"),
        (lambda: ModelConfig(seq=2**40), ValueError, r"would have 1.45e\+25 attention scores per sequence; torch"),
        (lambda: ModelConfig(vocab=1.5), TypeError, r"vocab must be an int ≥ 1, ≤ 9223372036854775807; got 1.5 "),
        (lambda: ModelConfig(heads=True), TypeError, r"heads must be an int .*; got True \(bool\)"),
    ],
)
def test_bad_input(call, error, match) -> None:
    with pytest.raises(error, match=match):
        call()


def test_the_largest_model_torch_can_hold_is_accepted() -> None:
    """The bound is the model's parameter count, not a cap on each size: a model of exactly 2^63 - 1 parameters
    or scores per sequence is taken (its memory is then exact), one more is refused."""
    from gpukb.distributed.model import MAX_ELEMENTS

    def count(vocab: int, seq: int, layers: int) -> int:
        return ModelConfig(vocab=vocab, seq=seq, hidden=1, heads=1, layers=layers).parameter_count()

    block = count(1, 1, 2) - count(1, 1, 1)  # with hidden 1, each vocab entry adds 2, each position 1
    layers = (MAX_ELEMENTS - count(1, 1, 1)) // block + 1
    rest = MAX_ELEMENTS - count(1, 1, layers)
    h = 1
    top = ModelConfig(vocab=1 + rest // 2, seq=1 + rest % 2, hidden=h, heads=1, layers=layers)
    assert top.parameter_count() == MAX_ELEMENTS
    with pytest.raises(ValueError, match=r"would have 9\.22e\+18 parameters"):
        ModelConfig(vocab=1 + rest // 2, seq=2 + rest % 2, hidden=h, heads=1, layers=layers)
    assert memory.training_memory(top, 1, "ddp", 1).states == 16 * MAX_ELEMENTS


# --- training_memory: the calculator's function ------------------------------------------------------------------


def test_training_memory_adds_states_and_activations() -> None:
    config = ModelConfig()
    ddp = memory.training_memory(config, 8, "ddp", 4)
    n = config.parameter_count()
    assert (ddp.parameters, ddp.states, ddp.params, ddp.optimizer) == (n, 16 * n, 2 * n, 12 * n)
    assert isinstance(ddp.states, int)  # unsharded bytes per parameter stay exact ints
    acts = memory.model_activation_bytes(config, 8, 2, False)
    assert (ddp.blocks, ddp.head, ddp.recompute) == (acts["blocks"], acts["head"], 0)
    assert ddp.peak == ddp.states + acts["total"]
    fsdp = memory.training_memory(config, 8, "fsdp2", 2, "FULL", checkpointing=True)
    assert fsdp.states == 8 * n
    assert fsdp.activation_bytes == 4
    assert fsdp.recompute == memory.block_activation_bytes(8, config.seq, config.hidden, config.heads, 4)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("fsdp2", 2, None), "scheme 'fsdp2' needs a mixed_precision mode"),
        (("fsdp2", 2, "HALF"), "unknown mixed_precision 'HALF'"),
        (("zero2", 2, "PURE"), "mixed_precision applies to scheme 'fsdp2' only"),
        (("zero4", 2, None), "unknown scheme 'zero4'"),
        (("ddp", 0, None), "world_size must be an int ≥ 1; got 0"),
    ],
)
def test_training_memory_refuses(args, message) -> None:
    scheme, world, mode = args
    with pytest.raises(ValueError, match=message):
        memory.training_memory(ModelConfig.tiny(), 2, scheme, world, mode)
    with pytest.raises(TypeError, match="config must be a ModelConfig"):
        memory.training_memory({"hidden": 8}, 2, "ddp", 1)


# --- each refusal names the argument it refuses (a message naming another, or none, sends a user to the wrong one) --


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        *((lambda i=i: memory.korthikanti_bytes(*(0 if j == i else 8 for j in range(4))), ValueError,
           f"{name} must be an int ≥ 1; got 0") for i, name in enumerate(("batch", "seq", "hidden", "heads"))),
        (lambda: memory.states_table(8, float("nan")), ValueError, "parameters must be a finite number; got nan"),
        *((lambda i=i: memory.checkpointed_block_bytes(*(0 if j == i else 8 for j in range(4))), ValueError,
           f"{name} must be an int ≥ 1; got 0")
          for i, name in enumerate(("batch", "seq", "hidden", "element_bytes"))),
        *((lambda i=i: memory.block_activation_bytes(*(0 if j == i else 8 for j in range(5))), ValueError,
           f"{name} must be an int ≥ 1; got 0")
          for i, name in enumerate(("batch", "seq", "hidden", "heads", "element_bytes"))),
        (lambda: memory.block_activation_bytes(1, 2, 8, 2, 2, stats_bytes=-1), ValueError,
         "stats_bytes must be an int ≥ 0; got -1"),
        (lambda: memory.block_activation_bytes(1, 2, 8, 2, 2, attention="flash"), ValueError,
         r"unknown attention 'flash'; choose one of \['written-out', 'fused'\]"),
        (lambda: memory.fsdp2_unit_transient_bytes_per_param("bfloat16", "int8"), ValueError,
         "unknown reduce_dtype 'int8'"),
        (lambda: memory.model_activation_bytes(ModelConfig.tiny(), 1, 2, "yes"), TypeError,
         "checkpointing must be True or False; got 'yes' \\(str\\)"),
        (lambda: memory.model_activation_bytes(ModelConfig.tiny(), 1, 0, False), ValueError,
         "element_bytes must be an int ≥ 1; got 0"),
        (lambda: memory.model_activation_bytes(ModelConfig.tiny(), 1, 2, False, -1), ValueError,
         "stats_bytes must be an int ≥ 0; got -1"),
        (lambda: memory.activation_element_bytes("zero9", None), ValueError, "unknown scheme 'zero9'; choose one of"),
        (lambda: memory.training_memory(ModelConfig.tiny(), 0, "ddp", 1), ValueError,
         "batch must be an int ≥ 1; got 0"),
        (lambda: memory.training_memory(ModelConfig.tiny(), 1, "ddp", 1, checkpointing=1), TypeError,
         "checkpointing must be True or False; got 1 \\(int\\)"),
        (lambda: memory.training_memory(3, 1, "ddp", 1), TypeError, r"config must be a ModelConfig; got 3 \(int\)"),
    ],
)  # fmt: skip
def test_refusals_name_the_argument(call, error, message) -> None:
    with pytest.raises(error, match=f"^{message}"):
        call()


# --- the head and the sum of the parts, with every term of a size no other term can mimic --------------------------


@pytest.mark.parametrize("stats", [0, 4, 8])
def test_model_activation_head_and_total(stats: int) -> None:
    """The head's bytes, part by part as the docstring lists them, for a model whose sizes are distinct primes' worth
    apart; and the total with checkpointing, where the recomputed block is counted once on top of the inputs kept."""
    config = ModelConfig(vocab=97, seq=5, hidden=12, heads=3, layers=2)
    b, s, h, v, e = 3, config.seq, config.hidden, config.vocab, 2
    ln_out = 2 * (b * s * h) * e  # final LayerNorm input and output
    ln_stats = 2 * (b * s) * stats  # its mean and reciprocal standard deviation
    log_softmax = (b * s * v) * 4  # float32, whatever the activations' dtype
    indices = (s + b * s) * 8  # int64 positions and the contiguous copy of the targets
    head = ln_out + ln_stats + log_softmax + indices
    block = memory.block_activation_bytes(b, s, h, config.heads, e, stats_bytes=stats)
    assert block == e * (16 * b * s * h + config.heads * b * s * s) + 4 * b * s * stats
    on = memory.model_activation_bytes(config, b, e, checkpointing=True, stats_bytes=stats)
    assert on == {
        "blocks": 2 * e * b * s * h,
        "recompute": block,
        "head": head,
        "total": 2 * e * b * s * h + block + head,
    }
    off = memory.model_activation_bytes(config, b, e, checkpointing=False, stats_bytes=stats)
    assert off == {"blocks": 2 * block, "recompute": 0, "head": head, "total": 2 * block + head}


def test_training_memory_splits_the_states_by_scheme() -> None:
    """Params, grads and optimizer each from the ZeRO paper's counts (2, 2, 12 B with mixed precision; FSDP2 keeps
    4 + 4 + 8 B of float32), sharded over the ranks where the scheme shards them."""
    config = ModelConfig.tiny()
    n = config.parameter_count()
    for scheme, world, (params, grads, optimizer) in (
        ("zero2", 4, (2, 2 / 4, 12 / 4)),
        ("zero3", 4, (2 / 4, 2 / 4, 12 / 4)),
        ("fsdp2", 8, (4 / 8, 4 / 8, 8 / 8)),
    ):
        mode = "PURE" if scheme == "fsdp2" else None
        m = memory.training_memory(config, 2, scheme, world, mode)
        assert (m.params, m.grads, m.optimizer) == pytest.approx((params * n, grads * n, optimizer * n))
        assert m.states == pytest.approx((params + grads + optimizer) * n)


def test_a_fused_block_keeps_one_float32_log_sum_exp_per_row() -> None:
    """scaled_dot_product_attention keeps a·b·s float32 values for backward in place of the a·b·s² probabilities."""
    b, s, h, a, e = 3, 7, 10, 5, 2
    rest = e * 16 * b * s * h + 4 * b * s * 4
    assert memory.block_activation_bytes(b, s, h, a, e, attention="fused") == rest + 4 * a * b * s
    assert memory.block_activation_bytes(b, s, h, a, e, attention="written-out") == rest + e * a * b * s * s
