"""Reentrant against non-reentrant activation checkpointing in the installed torch: memory held for backward,
recomputation, and every behaviour in which the two differ (or in which a reader may expect them to)."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import CheckpointImpl, checkpoint_wrapper
from torch.utils.checkpoint import checkpoint

from gpukb.distributed.checkpointing import Measurement, checkpointed, live_bytes, memory_table
from gpukb.distributed.memory import block_activation_bytes
from gpukb.distributed.model import block

B, S, H, A, L = 2, 16, 32, 4, 3


@pytest.fixture(scope="module")
def measured():
    """``measure`` of each implementation on L blocks (the table the page renders, computed once per session)."""
    _, rows = memory_table()  # its defaults are B, S, H, A, L
    return {impl: Measurement(impl, after, peak, calls) for impl, after, peak, calls in rows}


def test_checkpointing_keeps_only_block_inputs(measured) -> None:
    block_output = B * S * H * 4
    full = block_activation_bytes(B, S, H, A, 4)
    # without checkpointing: every block's activations (block i+1's input is block i's output), less the first
    # input (made outside the mode), plus the last output (saved by the loss) and the scalar loss
    assert measured["none"].after_forward == L * full - block_output + block_output + 4
    for impl in ("reentrant", "non-reentrant"):
        assert measured[impl].after_forward == L * block_output + 4  # each block's output = next block's input


def test_checkpointing_lowers_the_peak(measured) -> None:
    assert measured["reentrant"].peak < measured["none"].peak
    assert measured["non-reentrant"].peak < measured["none"].peak


def test_each_checkpointed_block_runs_forward_twice(measured) -> None:
    assert measured["none"].forward_calls == L
    assert measured["reentrant"].forward_calls == measured["non-reentrant"].forward_calls == 2 * L


def test_non_reentrant_stops_recomputing_early() -> None:
    steps = []

    def f(t):
        a = t.exp()  # saves its output: the only tensor backward needs
        steps.append("exp")
        b = a * 2  # a scalar multiply and an add save nothing
        steps.append("mul")
        return b + 1

    x = torch.randn(4, requires_grad=True)
    counts = {}
    for impl in ("reentrant", "non-reentrant"):
        steps.clear()
        checkpointed(f, impl)(x).sum().backward()
        counts[impl] = len(steps)
    assert counts == {"reentrant": 4, "non-reentrant": 2}  # 2 in forward; reentrant reruns all, non-reentrant none


def test_autograd_grad_works_only_non_reentrant() -> None:
    torch.manual_seed(0)
    lin = nn.Linear(4, 4)
    x = torch.randn(2, 4, requires_grad=True)
    (want,) = torch.autograd.grad(lin(x).tanh().sum(), x)
    (got,) = torch.autograd.grad(checkpoint(lambda t: lin(t).tanh(), x, use_reentrant=False).sum(), x)
    torch.testing.assert_close(got, want)
    with pytest.raises(
        RuntimeError, match=r"use_reentrant=True, torch.utils.checkpoint is incompatible with \.grad\(\)"
    ):
        torch.autograd.grad(checkpoint(lambda t: lin(t).tanh(), x, use_reentrant=True).sum(), x)


def test_keyword_arguments() -> None:
    x = torch.randn(3, requires_grad=True)
    scaled = checkpoint(lambda t, scale: t * scale, x, scale=2.0, use_reentrant=False)
    torch.testing.assert_close(scaled, x * 2)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(lambda t, scale: t * scale, x, scale=2.0, use_reentrant=True)

    class Scale(nn.Module):
        def forward(self, t, scale):
            return t * scale

    # checkpoint_wrapper packs keyword arguments into positional ones for the reentrant variant
    wrapped = checkpoint_wrapper(Scale(), checkpoint_impl=CheckpointImpl.REENTRANT)
    torch.testing.assert_close(wrapped(x, scale=3.0), x * 3)


def test_inputs_that_do_not_require_grad() -> None:
    torch.manual_seed(0)
    lin = nn.Linear(4, 4)
    x = torch.randn(2, 4)  # a batch: no requires_grad
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = checkpoint(lambda t: lin(t), x, use_reentrant=True)
    assert not out.requires_grad  # the parameters get no gradient through a reentrant checkpoint
    assert any("None of the inputs have requires_grad=True" in str(w.message) for w in caught)
    out = checkpoint(lambda t: lin(t), x, use_reentrant=False)
    out.sum().backward()
    torch.testing.assert_close(lin.weight.grad, torch.ones(4, 1) * x.sum(0))


@pytest.mark.parametrize("reentrant", [True, False])
def test_nested_checkpoints_work_in_both(reentrant) -> None:
    torch.manual_seed(0)
    lin = nn.Linear(4, 4)
    calls = {"inner": 0}

    def inner(t):
        calls["inner"] += 1
        return lin(t).tanh()

    def outer(t):
        return checkpoint(inner, t, use_reentrant=reentrant).sin()

    x = torch.randn(2, 4, requires_grad=True)
    (want,) = torch.autograd.grad(lin(x).tanh().sin().sum(), x)
    checkpoint(outer, x, use_reentrant=reentrant).sum().backward()
    torch.testing.assert_close(x.grad, want)
    assert calls["inner"] == 3  # forward, the outer recomputation, the inner recomputation


def test_not_passing_use_reentrant_warns_and_runs_reentrant() -> None:
    x = torch.randn(3, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        checkpoint(lambda t: t * 2, x)
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert len(messages) == 1
    assert messages[0].startswith("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly.")
    # the message still promises an exception "Starting in PyTorch 2.9"; this torch (≥ 2.9) only warns
    assert "Starting in PyTorch 2.9" in messages[0]
    assert tuple(int(p) for p in torch.__version__.split(".")[:2]) >= (2, 9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="Unexpected keyword arguments"):  # so the default is reentrant
            checkpoint(lambda t, scale: t * scale, x, scale=2.0)


def test_checkpoint_wrapper_defaults_to_non_reentrant() -> None:
    wrapped = checkpoint_wrapper(nn.Linear(2, 2))
    assert wrapped.checkpoint_impl is CheckpointImpl.NO_REENTRANT


def test_block_activation_formula_is_exact_in_float32() -> None:
    torch.manual_seed(0)
    blk = block(H, A)
    x = torch.randn(B, S, H, requires_grad=True)
    mode = live_bytes()
    with mode:
        y = blk(x)
        live = mode.live
    # alive after forward: what the block saves, less its input (made outside the mode), plus its output
    assert live - y.untyped_storage().nbytes() + x.untyped_storage().nbytes() == block_activation_bytes(B, S, H, A, 4)


def test_block_activation_formula_in_bfloat16_on_the_cpu() -> None:
    torch.manual_seed(0)
    blk = block(H, A).to(torch.bfloat16)
    x = torch.randn(B, S, H, dtype=torch.bfloat16, requires_grad=True)
    mode = live_bytes()
    with mode:
        y = blk(x)
        live = mode.live
    # the CPU's layer norm keeps its statistics in bfloat16 (2 bytes) for bfloat16 input
    saved = live - y.untyped_storage().nbytes() + x.untyped_storage().nbytes()
    assert saved == block_activation_bytes(B, S, H, A, 2, stats_bytes=2)


@pytest.mark.parametrize(("dtype", "element", "stats"), [(torch.float32, 4, 4), (torch.bfloat16, 2, 2)])
def test_a_fused_attention_block_keeps_no_softmax(dtype, element, stats) -> None:
    """With scaled_dot_product_attention the block keeps a float32 log-sum-exp per row (a·b·s values), not the
    a·b·s² probabilities: the formula's "fused" count, to the byte, on the CPU."""
    torch.manual_seed(0)
    blk = block(H, A, attention="fused").to(dtype)
    x = torch.randn(B, S, H, dtype=dtype, requires_grad=True)
    mode = live_bytes()
    with mode:
        y = blk(x)
        live = mode.live
    saved = live - y.untyped_storage().nbytes() + x.untyped_storage().nbytes()
    assert saved == block_activation_bytes(B, S, H, A, element, stats_bytes=stats, attention="fused")
    written_out = block_activation_bytes(B, S, H, A, element, stats_bytes=stats)
    assert written_out - saved == A * B * S * S * element - A * B * S * 4
    with pytest.raises(ValueError, match=r"unknown attention 'flash'; choose one of \['written-out', 'fused'\]"):
        block(H, A, attention="flash")


def test_bad_impl() -> None:
    with pytest.raises(
        ValueError, match=r"unknown impl 'fast'; choose one of \['none', 'reentrant', 'non-reentrant'\]"
    ):
        checkpointed(lambda t: t, "fast")
