"""The GEMM figures' numbers: tile counts by hand, and the pipelined loop's schedule obeys its rules."""

from __future__ import annotations

import pytest

from gpukb.gemm.figures import pipeline_schedule, tiling_counts
from gpukb.gemm.triton.configs import DEFAULT_CONFIGS


def test_tiling_counts() -> None:
    config = DEFAULT_CONFIGS["bfloat16"]
    c = tiling_counts(config, 2048, 2048, 2048)
    assert (c.tiles_m, c.tiles_n, c.k_steps) == (2048 // 128, 2048 // 256, 2048 // 64)
    assert c.flop_per_element == pytest.approx(2 * 128 * 256 * 64 / ((128 + 256) * 64))
    assert tiling_counts(config, 129, 257, 65).tiles == 2 * 2  # partial tiles count


@pytest.mark.parametrize("stages", [1, 2, 3, 4, 6])
def test_schedule_rules(stages: int) -> None:
    latency, steps = 3.0, 10
    s = pipeline_schedule(stages, steps, latency)
    for p in s:
        assert p.buffer == p.step % stages
        assert p.landed == p.load_start + latency
        assert p.compute_start >= p.landed
        if p.step >= stages:  # the buffer is free only once the product that used it is done
            assert p.load_start >= s[p.step - stages].compute_start + 1
        if p.step:
            assert p.compute_start >= s[p.step - 1].compute_start + 1
            assert p.load_start >= s[p.step - 1].load_start + 1
    end = s[-1].compute_start + 1
    if stages > latency:  # deep enough: the tensor cores never wait after the first load
        assert end == latency + steps
    else:
        assert end > latency + steps


def test_schedule_refuses_nonsense() -> None:
    with pytest.raises(ValueError, match="num_stages"):
        pipeline_schedule(0, 4)
    with pytest.raises((TypeError, ValueError)):
        pipeline_schedule(2, 4, latency=float("nan"))


def test_figures_refuse_what_they_do_not_draw() -> None:
    from gpukb.attention.figures import flash_figure
    from gpukb.cuda.figures import launch_layout
    from gpukb.distributed.figures import fsdp_figure

    with pytest.raises(TypeError, match="Config"):
        tiling_counts("128x256x64", 1, 1, 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="head_dim"):
        flash_figure(head_dim=96)
    with pytest.raises(ValueError, match="n must be"):
        launch_layout(n=0)
    with pytest.raises(ValueError, match="units"):
        fsdp_figure(units=0)
