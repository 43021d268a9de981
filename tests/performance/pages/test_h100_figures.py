"""The H100 page's figures read back from the matplotlib figure each draws (taken before it becomes SVG): every line
and point against the sweep read raw (``json``) and the datasheet read with ``tomllib``, the axes, the labels and
the legend. Drawing details (sizes, fonts, the legend's corner) are left to the eye."""

from __future__ import annotations

from typing import Any

import matplotlib.colors
import numpy as np
import pytest

import gpukb.figures
from gpukb.performance.pages import h100 as page
from gpukb.performance.results import H100_SWEEP, H200_SWEEP
from tests.performance.pages import H100, PEAK_OF, _ceilings, _dense, _gbps, _raw, _raw_of, _record, _tflops, variant


def _drawn(draw, *args) -> Any:
    """The axes a figure function drew, taken at the call that would turn them into SVG."""
    import matplotlib.pyplot as plt

    drawn = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gpukb.figures, "to_svg", lambda fig: drawn.append(fig) or "")
        draw(*args)
    (fig,) = drawn
    plt.close(fig)
    (ax,) = fig.axes
    return ax


def _lines(ax) -> dict[str, Any]:
    return {line.get_label(): line for line in ax.get_lines()}


def _legend(ax) -> list[str]:
    return [text.get_text() for text in ax.get_legend().get_texts()]


def _same_colour(a: Any, b: Any) -> bool:
    return matplotlib.colors.to_rgba(a) == matplotlib.colors.to_rgba(b)


def _xy(line) -> list[tuple[float, float]]:
    return list(zip(np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float), strict=True))


def _base(axis) -> float:
    return axis.get_transform().base


def test_gemm_figure_plots_each_types_square_products() -> None:
    ax = _drawn(page.gemm_figure)
    raw = _raw(H100)
    squares = {d: sorted((r["m"], _tflops(r["m"], r["n"], r["k"], r["ms"]["median"])) for r in raw["gemm"]
                         if r["dtype"] == d and r["sweep"] == "square" and r["ms"] is not None)
               for d in ("fp32", "tf32", "fp16", "bf16", "fp8")}  # fmt: skip
    lines = _lines(ax)
    assert list(lines) == [d for d, points in squares.items() if points] == _legend(ax)
    for dtype, line in lines.items():
        assert np.allclose(_xy(line), squares[dtype], rtol=1e-9), dtype
        assert line.get_marker() == "o", dtype  # the measured sizes, not a curve between them
    assert (ax.get_xscale(), _base(ax.xaxis)) == ("log", 2)  # sizes double
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("N (M = N = K)", "TFLOP/s (median)")
    assert ax.get_title() == f"Matrix products on {raw['run']['gpu']['name']}"


def _copy_points(raw: dict[str, Any]) -> list[tuple[int, float]]:
    return sorted({(r["bytes"], r["gbps"]) for r in raw["copy"] if r["method"] == "memcpy" and r["dtype"] == "uint8"})


@pytest.mark.parametrize("unknown_gpu", [False, True])
def test_copy_figure_plots_the_copies_the_datasheet_and_l2(unknown_gpu: bool) -> None:
    if unknown_gpu:  # a GPU the datasheet file lacks: no datasheet line, the rest as before
        record, kwargs = variant(H100, lambda raw: raw["run"]["gpu"].update(name="Imaginary GPU"))
        ax = _drawn(page.copy_figure, record)
    else:
        kwargs = {}
        ax = _drawn(page.copy_figure)
    raw = _raw_of(kwargs)
    lines = _lines(ax)
    copies = lines.pop("copy_ (memcpy), L2 flushed")
    points = _copy_points(raw)
    assert [x for x, _ in _xy(copies)] == [n for n, _ in points]
    for (_, y), r in zip(_xy(copies), sorted(points), strict=True):  # each rate is its median time's
        time = next(c["ms"]["median"] for c in raw["copy"] if (c["bytes"], c["gbps"]) == r)
        assert y == pytest.approx(_gbps(r[0], time), rel=1e-6)
    assert copies.get_marker() == "o"
    l2 = lines.pop("L2 size")
    assert list(l2.get_xdata()) == [raw["run"]["gpu"]["l2_bytes"]] * 2
    assert l2.get_linestyle() == ":"
    assert _same_colour(l2.get_color(), "grey")
    bandwidth = _dense(raw["run"]["gpu"]["name"], "memory_bandwidth")
    if bandwidth is None:
        assert lines == {}
    else:
        (label, sheet), = lines.items()  # fmt: skip
        assert label == f"datasheet {bandwidth[0]:g} GB/s"
        assert list(sheet.get_ydata()) == [bandwidth[0]] * 2
        assert sheet.get_linestyle() == "--"
        assert _same_colour(sheet.get_color(), "grey")
    assert _legend(ax) == [line.get_label() for line in ax.get_lines()]
    assert (ax.get_xscale(), _base(ax.xaxis)) == ("log", 2)
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("bytes copied", "GB/s (read + write)",
                                                                  "Device memory copies")  # fmt: skip


def _roofline_points(raw: dict[str, Any]) -> dict[str, list[tuple[float, float]]]:
    """The operations a roofline shows, at their intensities (FLOP per byte moved once), from the raw record."""
    gemm = [(n / 3, _tflops(n, n, n, r["ms"]["median"]))  # 2n³ FLOPs over 3n² bf16 elements of 2 bytes
            for r in raw["gemm"] if r["sweep"] == "square" and r["dtype"] == "bf16" and r["ms"] is not None
            for n in [r["m"]]]  # fmt: skip
    attention = []
    for r in raw["attention"]:
        if r["backend"] == "flash" and r["ms"] is not None and r["head_dim"] == 128 and not r["causal"]:
            flops = 4 * r["batch"] * r["heads"] * r["seq"] ** 2 * r["head_dim"]
            moved = 4 * r["batch"] * r["heads"] * r["seq"] * r["head_dim"] * 2  # Q, K, V read, O written
            attention.append((flops / moved, flops / (r["ms"]["median"] * 1e-3) / 1e12))
    kernels = [(r["flops"] / r["bytes"], r["flops"] / (r["kernel_ms"]["median"] * 1e-3) / 1e12)
               for r in raw["kernels"] if r["flops"] and r["bytes"]]  # fmt: skip
    return {"bf16 GEMM (square sizes)": gemm, "flash attention, d=128": attention, "project kernels": kernels}


def _without_fp32(raw: dict[str, Any]) -> None:
    raw["gemm"] = [r for r in raw["gemm"] if r["dtype"] != "fp32"]


@pytest.mark.parametrize("which", ["h100", "h200", "no fp32", "unknown gpu"])
def test_roofline_figure_draws_the_ceilings_and_the_measured_operations(which: str) -> None:
    if which in ("h100", "h200"):
        record = H100_SWEEP if which == "h100" else H200_SWEEP
        kwargs: dict[str, Any] = {"record": record}
    else:
        change = _without_fp32 if which == "no fp32" else lambda raw: raw["run"]["gpu"].update(name="Imaginary GPU")
        record, kwargs = variant(H100, change)
    ax = _drawn(page.roofline_figure, record)
    raw = _raw_of(kwargs)
    device = raw["run"]["gpu"]["name"]
    rates, bandwidth = _ceilings(_record(kwargs), raw)
    sheet_bw = _dense(device, "memory_bandwidth")
    lines = _lines(ax)
    expected = []
    for dtype in ("bf16", "fp32"):
        roofs = {}
        if dtype in rates:
            roofs["measured"] = (rates[dtype], bandwidth)
        peak = _dense(device, PEAK_OF[dtype])
        if peak is not None and sheet_bw is not None:
            roofs["datasheet"] = (peak[0], sheet_bw[0])
        for kind, (rate, gbps) in roofs.items():
            line = lines[f"{kind} roof, {dtype}"]
            x, y = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
            assert (x[0], x[-1]) == pytest.approx((0.1, 1e4))  # intensities from 0.1 to 10,000 FLOP/B
            assert np.allclose(np.diff(np.log10(x)), np.log10(x[1] / x[0]))
            assert x[1] / x[0] < 1.1
            assert np.allclose(y, np.minimum(rate, gbps * 1e9 * x / 1e12), rtol=1e-9), (kind, dtype)
            assert line.get_linestyle() == ("--" if kind == "datasheet" else "-"), line.get_label()
            expected.append(line.get_label())
        if len(roofs) == 2:  # a type's two roofs share its colour
            assert _same_colour(lines[f"measured roof, {dtype}"].get_color(),
                                lines[f"datasheet roof, {dtype}"].get_color())  # fmt: skip
    assert sorted(lines) == sorted(expected)
    colours = {dtype: next(line.get_color() for label, line in lines.items() if label.endswith(dtype))
               for dtype in ("bf16", "fp32") if any(label.endswith(dtype) for label in lines)}  # fmt: skip
    assert len({matplotlib.colors.to_hex(c) for c in colours.values()}) == len(colours)  # and the types differ
    points = {c.get_label(): c for c in ax.collections}
    expected_points = {label: pts for label, pts in _roofline_points(raw).items() if pts}
    assert sorted(points) == sorted(expected_points)
    for label, drawn in points.items():
        assert np.allclose(sorted(map(tuple, drawn.get_offsets())), sorted(expected_points[label]), rtol=1e-9), label
        assert drawn.get_zorder() > max(line.get_zorder() for line in ax.get_lines())  # points above the roofs
    markers = {label: tuple(map(tuple, c.get_paths()[0].vertices.round(6))) for label, c in points.items()}
    assert len(set(markers.values())) == len(markers)  # each kind of operation its own marker
    assert set(_legend(ax)) == set(lines) | set(points)
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
    assert ax.get_xlabel() == "arithmetic intensity (FLOP per byte of device memory)"
    assert ax.get_ylabel() == "TFLOP/s"
    assert ax.get_title() == f"Roofline of {device}"
