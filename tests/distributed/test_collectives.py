"""The ring collectives simulated in numpy, and nccl-tests' bandwidth arithmetic."""

from __future__ import annotations

import numpy as np
import pytest

from gpukb.distributed import collectives as c


@pytest.mark.parametrize("p", [1, 2, 3, 4, 8])
def test_ring_all_reduce_sums_and_sends_2_p_minus_1_over_p(p) -> None:
    rng = np.random.default_rng(p)
    arrays = [rng.standard_normal(24 * p).astype(np.float64) for _ in range(p)]
    result = c.ring_all_reduce(arrays)
    for out in result.outputs:
        np.testing.assert_allclose(out, np.sum(arrays, axis=0), rtol=1e-12)
    size = arrays[0].nbytes
    assert result.steps == 2 * (p - 1)
    assert result.bytes_sent_per_rank == [2 * (p - 1) * size // p] * p


def test_reduce_scatter_and_all_gather_halves() -> None:
    p = 4
    arrays = [np.arange(8, dtype=np.float32) * (r + 1) for r in range(p)]
    rs = c.ring_reduce_scatter(arrays)
    total = np.sum(arrays, axis=0)
    assert [o.tolist() for o in rs.outputs] == [np.split(total, p)[(r + 1) % p].tolist() for r in range(p)]
    assert rs.bytes_sent_per_rank == [(p - 1) * arrays[0].nbytes // p] * p
    ag = c.ring_all_gather(rs.outputs)
    assert all(o.tolist() == total.tolist() for o in ag.outputs)
    assert ag.bytes_sent_per_rank == rs.bytes_sent_per_rank


def test_bus_factors_are_performance_md() -> None:
    # doc/PERFORMANCE.md: AllReduce 2(n-1)/n, ReduceScatter and AllGather (n-1)/n, Broadcast and Reduce 1
    assert c.bus_factor("all_reduce", 8) == 1.75
    assert c.bus_factor("reduce_scatter", 8) == c.bus_factor("all_gather", 8) == 0.875
    assert c.bus_factor("broadcast", 8) == c.bus_factor("reduce", 8) == 1
    assert c.bus_factor("all_reduce", 1) == 0  # one rank moves nothing
    algbw, busbw = c.bandwidths("all_reduce", 1 << 30, 0.01, 2)
    assert algbw == (1 << 30) / 0.01
    assert busbw == algbw


def test_traffic_table() -> None:
    headers, rows = c.ring_traffic_table(4096, [2, 4, 8])
    assert headers[0] == "ranks p"
    assert [r[2] for r in rows] == [r[3] for r in rows] == [4096, 6144, 7168]


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: c.ring_all_reduce([np.ones(5), np.ones(5)]), ValueError, "not divisible by the 2 ranks"),
        (lambda: c.ring_all_reduce([np.ones(4), np.ones(6)]), ValueError, "same length"),
        (lambda: c.ring_all_reduce(np.ones(4)), TypeError, "list of 1-D numpy arrays"),
        (lambda: c.bus_factor("all_to_one", 2), ValueError, "unknown op 'all_to_one'"),
        (lambda: c.bandwidths("all_reduce", 1024, 0.0, 2), ValueError, "seconds must be positive"),
        (lambda: c.bandwidths("all_reduce", 0, 1.0, 2), ValueError, "^size_bytes must be an int ≥ 1; got 0"),
        (lambda: c.ring_traffic_table(4098, [2]), ValueError, "multiple of 4"),
    ],
)
def test_bad_input(call, error, match) -> None:
    with pytest.raises(error, match=match):
        call()


def test_alpha_beta_fit() -> None:
    """The fit recovers α and B from times the model made, and refuses times that do not grow with the size."""
    sizes = [2**k for k in range(10, 31, 2)]
    times = [c.alpha_beta_time(s, 30e-6, 300e9, 0.5) for s in sizes]
    alpha, bandwidth = c.fit_alpha_beta(sizes, times, 0.5)
    assert alpha == pytest.approx(30e-6, rel=1e-9)
    assert bandwidth == pytest.approx(300e9, rel=1e-9)
    # S½ = α·B/f: there the fixed cost is exactly half of the time
    half = 30e-6 * 300e9 / 0.5
    assert c.alpha_beta_time(half, 30e-6, 300e9, 0.5) == pytest.approx(2 * 30e-6)
    with pytest.raises(ValueError, match="do not grow with the size"):
        c.fit_alpha_beta([1024, 2048, 4096], [3e-5, 2e-5, 1e-5], 1.0)
    with pytest.raises(ValueError, match="need two or more sizes with one time each; got 1 sizes, 1 times"):
        c.fit_alpha_beta([1024], [3e-5], 1.0)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: c.bus_factor("all_reduce", 0), ValueError, "ranks must be an int ≥ 1; got 0"),
        (lambda: c.ring_all_reduce(np.ones(4)), TypeError, "arrays must be a list of 1-D numpy arrays, one per rank; "
                                                           "got ndarray$"),
        (lambda: c.ring_all_reduce([]), ValueError, "number of ranks must be an int ≥ 1; got 0"),
        (lambda: c.ring_reduce_scatter([np.ones(4)] * 2, trace=3), TypeError,
         r"trace must be a list to append the steps to, or None; got 3 \(int\)"),
        (lambda: c.ring_all_gather([np.ones(4)] * 2, trace=3), TypeError,
         r"trace must be a list to append the steps to, or None; got 3 \(int\)"),
        (lambda: c.ring_traffic_table(0, [2]), ValueError, "size_bytes must be an int ≥ 1; got 0"),
        (lambda: c.ring_traffic_table(8, "24"), TypeError, r"ranks must be a list of rank counts; got '24' \(str\)"),
        (lambda: c.ring_traffic_table(8, 5), TypeError, r"ranks must be a list of rank counts; got 5 \(int\)"),
        (lambda: c.ring_traffic_table(12, [2]), ValueError, "3 float32 elements are not divisible by 2 ranks$"),
        (lambda: c.ring_traffic_table(8, [2, 0]), ValueError, r"ranks\[1\] must be an int ≥ 1, ≤ 1024; got 0"),
        (lambda: c.ring_traffic_table(8, [1025]), ValueError, r"ranks\[0\] must be an int ≥ 1, ≤ 1024; got 1025"),
        (lambda: c.ring_traffic_table(6, [2]), ValueError, r"size_bytes must be a multiple of 4 \(float32 elements\)"),
        (lambda: c.alpha_beta_time(8, -1.0, 1e9, 1.0), ValueError, "alpha must be ≥ 0.0; got -1.0"),
        (lambda: c.alpha_beta_time(8, 1.0, 1e9, 0.0), ValueError, "factor must be positive; got 0.0"),
        (lambda: c.alpha_beta_time(-8, 1.0, 1e9, 1.0), ValueError, "size_bytes must be ≥ 0.0; got -8"),
        (lambda: c.alpha_beta_time(8, 1.0, 0.0, 1.0), ValueError, "bus_bandwidth must be positive; got 0.0"),
        (lambda: c.fit_alpha_beta([0, 2, 3], [1, 2, 3], 1.0), ValueError, "size must be positive; got 0"),
        (lambda: c.fit_alpha_beta([1, 2, 3], [1, 0, 3], 1.0), ValueError, "seconds must be positive; got 0"),
        (lambda: c.fit_alpha_beta([1, 2, 3], [1, 2, 3], 0.0), ValueError, "factor must be positive; got 0.0"),
        # constant times: a zero slope is no bandwidth (it was an infinite one), like a falling one
        (lambda: c.fit_alpha_beta([1, 2, 3], [1.0, 1.0, 1.0], 1.0), ValueError,
         "the times do not grow with the size: no bandwidth to fit$"),
    ],
)  # fmt: skip
def test_each_refusal_names_its_argument(call, error, message) -> None:
    with pytest.raises(error, match=f"^{message}"):
        call()


def test_the_edges_the_models_take() -> None:
    """A size of 0 costs α alone; two sizes are enough for a fit (the line through them); one rank sends nothing."""
    assert c.alpha_beta_time(0, 30e-6, 300e9, 0.5) == 30e-6
    sizes = [2**20, 2**30]
    alpha, bandwidth = c.fit_alpha_beta(sizes, [c.alpha_beta_time(s, 20e-6, 100e9, 1.5) for s in sizes], 1.5)
    assert (alpha, bandwidth) == (pytest.approx(20e-6, rel=1e-9), pytest.approx(100e9, rel=1e-9))
    assert c.ring_traffic_table(16, [1])[1] == [[1, 0, 0, 0, "0"]]
