"""The convolution-algorithm figure's numbers, against torch's unfold (im2col) and the Winograd count."""

from __future__ import annotations

import pytest

from gpukb.cudnn.figures import algorithm_counts


def test_counts_of_res2_3x3() -> None:
    torch = pytest.importorskip("torch")
    c = algorithm_counts("res2-3x3")
    x = torch.empty(32, 64, 56, 56, device="meta")
    cols = torch.nn.functional.unfold(x, kernel_size=3, padding=1)  # (N, C·R·S, Ho·Wo)
    assert c.columns_shape == (cols.shape[1], cols.shape[0] * cols.shape[2])
    assert c.weight_shape == (64, cols.shape[1])
    assert c.macs_per_output == cols.shape[1]
    assert c.columns_bytes == cols.numel() * 2
    assert c.input_bytes == x.numel() * 2
    assert (c.winograd_mults, c.direct_mults) == ((2 + 3 - 1) ** 2, 2 * 2 * 3 * 3)


def test_refuses_what_it_does_not_draw() -> None:
    with pytest.raises(ValueError, match="no layer"):
        algorithm_counts("res9")
    with pytest.raises(ValueError, match="3×3"):
        algorithm_counts("conv1")
