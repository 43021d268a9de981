"""The datasheet table: well formed, sourced, dense rates derived right, and the notes' spec mistakes decided."""

from __future__ import annotations

import pytest

from gpukb.bench import specs

TABLE = specs.load()


def test_every_figure_has_a_known_source_and_status() -> None:
    assert TABLE.checked
    for gpu in TABLE.gpus.values():
        assert gpu.evidence, gpu.id  # where the figures were read, since most are not confirmed first-hand
        for figure in gpu.figures.values():
            assert figure.source in TABLE.sources
            assert figure.status in specs.STATUSES
            assert TABLE.sources[figure.source].url.startswith("https://")


def test_sparse_rates_are_halved() -> None:
    h100 = TABLE.gpu("h100-sxm5")
    assert h100.figure("bf16_tensor").value == 1979
    assert h100.figure("bf16_tensor").sparsity
    assert h100.figure("bf16_tensor").dense == 989.5
    assert h100.figure("fp32").dense == 67  # published without sparsity: unchanged


def test_device_names_find_their_gpu() -> None:
    assert TABLE.for_device("NVIDIA H100 80GB HBM3").id == "h100-sxm5"
    assert TABLE.for_device("NVIDIA H100 PCIe").id == "h100-pcie"
    assert TABLE.for_device("NVIDIA A100-SXM4-80GB").id == "a100-sxm4-80gb"
    assert TABLE.for_device("Tesla V100-SXM2-16GB").id == "v100-sxm2"
    assert TABLE.for_device("NVIDIA GeForce RTX 4090") is None


def test_a_variant_inherits_its_base_figures() -> None:
    a100_80 = TABLE.gpu("a100-sxm4-80gb")
    assert a100_80.figure("memory_bandwidth").value == 2039
    assert a100_80.figure("bf16_tensor") == TABLE.gpu("a100-sxm4-40gb").figure("bf16_tensor")


def test_peak_rates_follow_units_times_clock() -> None:
    # Peak = units × operations per clock × boost clock; a figure that disagrees would be mistyped.
    v100, a100 = TABLE.gpu("v100-sxm2"), TABLE.gpu("a100-sxm4-40gb")
    v100_hz = v100.figure("boost_clock").value * 1e6
    assert 5120 * 2 * v100_hz / 1e12 == pytest.approx(v100.figure("fp32").value, rel=0.005)
    assert 2560 * 2 * v100_hz / 1e12 == pytest.approx(v100.figure("fp64").value, rel=0.005)
    a100_hz = a100.figure("boost_clock").value * 1e6
    sms = a100.figure("sm_count").value
    assert sms * 4 * 256 * 2 * a100_hz / 1e12 == pytest.approx(a100.figure("fp16_tensor").value, rel=0.005)


def test_v100_tensor_rate_follows_the_clock() -> None:
    # 640 tensor cores × 64 FMA per clock × 2 FLOP: 125 TFLOP/s at the final 1530 MHz boost clock, 120 at the
    # 1455 MHz of the May 2017 launch table; the notes quote both without saying why they differ.
    v100 = TABLE.gpu("v100-sxm2")
    assert pytest.approx(v100.figure("fp16_tensor").value, rel=0.005) == 640 * 64 * 2 * 1530e6 / 1e12
    assert pytest.approx(120, rel=0.01) == 640 * 64 * 2 * 1455e6 / 1e12


def test_v100_memory_sizes() -> None:
    # The notes' V100 table says "82GB / 100GB HBM2"; V100 boards have 16 or 32 GB, and the same slide's
    # Summit node, 96 GB of HBM2 over 6 GPUs, is 16 GB each.
    memory = TABLE.gpu("v100-sxm2").figure("memory")
    assert memory.value == 32
    assert "16 GB" in memory.note
    assert 96 / 6 == 16


def test_dgx_a100_totals() -> None:
    # The notes: "TF32 TC: 312 × 8 = 2.5 PFLOPS" and "(155.3 TF TC)" for FP64 tensor cores.
    a100 = TABLE.gpu("a100-sxm4-40gb")
    assert 8 * a100.figure("tf32_tensor").dense == 1248  # dense TF32 is 156 per GPU: 1.25 PFLOP/s
    assert 8 * a100.figure("fp16_tensor").dense == 2496  # 2.5 PFLOP/s is the FP16/BF16 dense total
    assert "312 with sparsity" in a100.figure("tf32_tensor").note  # 312 is TF32 with 2:4 sparsity
    assert 8 * a100.figure("fp64_tensor").dense == 156
    assert 8 * a100.figure("fp64").dense == pytest.approx(77.6)


def _minimal(**figure) -> dict:
    entry = dict(gpu="g", quantity="fp32", value=1.0, source="s", status="confirmed")
    entry.update(figure)
    return {
        "checked": "2026-01-01",
        "sources": {"s": {"title": "t", "url": "https://example.org"}},
        "gpu": [{"id": "g", "name": "G", "architecture": "A"}],
        "figure": [{k: v for k, v in entry.items() if v is not None}],
    }


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"gpu": "nope"}, r"unknown gpu; gpus: \['g'\]"),
        ({"quantity": "fp4"}, "unknown quantity; allowed:"),
        ({"status": "probably"}, r"status 'probably'; allowed: \['confirmed', 'secondary', 'unconfirmed'\]"),
        ({"source": "blog"}, r"source 'blog'; sources: \['s'\]"),
        ({"value": 0}, "positive number; got 0"),
    ],
)
def test_malformed_figures_are_refused(change, message) -> None:
    with pytest.raises(ValueError, match=message):
        specs.parse(_minimal(**change))


def test_a_figure_listed_twice_is_refused() -> None:
    data = _minimal()
    data["figure"].append(dict(data["figure"][0]))
    with pytest.raises(ValueError, match="listed twice"):
        specs.parse(data)


def test_unknown_quantities_and_gpus_are_named() -> None:
    with pytest.raises(ValueError, match="unknown quantity 'speed'"):
        TABLE.gpu("h100-sxm5").figure("speed")
    with pytest.raises(KeyError, match="no GPU 'b200'"):
        TABLE.gpu("b200")
