"""A batch of small GEMMs three ways (and a CUDA graph of the loop): same results, right counts."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from gpukb.gemm.batched import VARIANTS, agreement, counts, make_batch, variant  # noqa: E402
from gpukb.measuring.counting import gemm_bytes, gemm_flops  # noqa: E402
from gpukb.measuring.timing import captured  # noqa: E402


def test_variants_compute_the_same_products() -> None:
    batch = make_batch(torch, 12, 5, 7, 3, torch.float64)
    expected = torch.stack([batch.a[i] @ batch.b[i] for i in range(12)])
    shared = batch.a @ batch.b_shared
    for name in ("loop", "bmm"):
        batch.out.fill_(float("nan"))  # poison: every element must be written
        assert torch.allclose(variant(torch, batch, name)(), expected, rtol=1e-12, atol=1e-12)
    for name in VARIANTS:
        batch.out.fill_(float("nan"))
        assert torch.allclose(variant(torch, batch, name, shared=True)(), shared, rtol=1e-12, atol=1e-12)


def test_agreement_reports_each_variant() -> None:
    diffs = agreement(torch, make_batch(torch, 8, 16, 16, 16, torch.float32))
    assert set(diffs) == {"loop", "loop, shared B", "one_gemm"}
    assert all(0 <= d < 1e-4 for d in diffs.values())


def test_counts_follow_gemm_counts() -> None:
    batch = make_batch(torch, 10, 4, 6, 8, torch.float32)
    assert counts(batch, "fp32") == (10 * gemm_flops(4, 6, 8), 10 * gemm_bytes(4, 6, 8, 4))
    # Shared B is read once: the batch is one (10·4)×8 by 8×6 product.
    assert counts(batch, "bf16", shared=True) == (10 * gemm_flops(4, 6, 8), gemm_bytes(40, 6, 8, 2))


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="batch must be an int ≥ 1; got 0"):
        make_batch(torch, 0, 2, 2, 2, torch.float32)
    with pytest.raises(ValueError, match=r"unknown variant 'gemm'.*'loop', 'bmm', 'one_gemm'"):
        variant(torch, make_batch(torch, 2, 2, 2, 2, torch.float32), "gemm")


@pytest.mark.gpu
def test_a_captured_loop_replays_the_products() -> None:
    batch = make_batch(torch, 64, 32, 32, 32, torch.bfloat16, device="cuda")
    reference = variant(torch, batch, "bmm")().clone()
    replay = captured(torch, variant(torch, batch, "loop"))
    batch.out.fill_(float("nan"))
    replay()
    torch.cuda.synchronize()
    assert not batch.out.isnan().any()
    assert torch.allclose(batch.out.float(), reference.float(), rtol=1e-2, atol=1e-2)
