"""On a CUDA GPU: TF32 is FP32 inputs rounded to nearest-even 10-bit mantissas, and CUDA casts follow the rules."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gpu


def test_tf32_is_nearest_even_rounding_of_the_inputs() -> None:
    from gpukb.formats.gpu_checks import tf32_matmul_check

    result = tf32_matmul_check(n=1024)
    print(result)
    # Within FP32 accumulation error of the product of nearest-even-rounded inputs ...
    assert result["tf32_vs_nearest_even_inputs"] < 1e-5
    # ... much closer to it than to truncated inputs or to the exact product: TF32 is a math mode on FP32 data.
    assert result["tf32_vs_truncated_inputs"] > 10 * result["tf32_vs_nearest_even_inputs"]
    assert result["tf32_vs_exact"] > 10 * result["tf32_vs_nearest_even_inputs"]
    assert result["fp32_vs_exact"] < 1e-5


def test_cuda_casts_follow_the_format_rules() -> None:
    from gpukb.formats.gpu_checks import cuda_cast_check

    for record in cuda_cast_check():
        print(record)
        n = record["inputs"]
        follows_rules = record["cuda_matches_rules"] == n
        saturates = record["cuda_matches_saturating"] == n
        assert follows_rules or (record["format"] == "e4m3" and saturates), record
