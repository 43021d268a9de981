"""The datasheet table: well formed, sourced, dense rates derived right, and the notes' spec mistakes decided."""

from __future__ import annotations

from importlib import resources
from typing import get_args

import pytest

from gpukb.performance import specs

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
    assert TABLE.for_device("NVIDIA H200").id == "h200-sxm"
    assert TABLE.for_device("NVIDIA B200").id == "b200-hgx"
    assert TABLE.for_device("AMD Instinct MI300X").id == "mi300x"


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


TEXT = resources.files("gpukb.data").joinpath(specs.FILE).read_text(encoding="utf-8")
#: The first figure entry of the file, as written.
FIRST_FIGURE = """[[figure]]
gpu = "v100-sxm2"
quantity = "sm_count"
value = 80
source = "ampere-whitepaper"
status = "secondary"
"""


def test_the_file_parses_to_the_loaded_table() -> None:
    assert FIRST_FIGURE in TEXT
    assert specs.parse(TEXT) == TABLE
    assert tuple(specs.QUANTITIES) == get_args(specs.Quantity)


def _corrupt(old: str, new: str) -> str:
    assert old in TEXT
    return TEXT.replace(old, new, 1)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # an unknown key
        (
            _corrupt(FIRST_FIGURE, FIRST_FIGURE + "colour = 'red'\n"),
            r"figure entry 1 \(v100-sxm2/sm_count\): colour: Extra inputs are not permitted",
        ),
        (
            _corrupt('checked = "2026-11-22"', 'checked = "2026-11-22"\nowner = "me"'),
            r"unknown top-level keys \['owner'\]",
        ),
        (
            _corrupt('architecture = "Volta"', 'architecture = "Volta"\nfab = "TSMC"'),
            r"gpu entry 1 \(v100-sxm2\): fab: Extra inputs are not permitted",
        ),
        # a wrong type
        (
            _corrupt(FIRST_FIGURE, FIRST_FIGURE.replace("value = 80", 'value = "80"')),
            r"figure entry 1 \(v100-sxm2/sm_count\): value: Input should be a valid number \(got '80'\)",
        ),
        (
            _corrupt(FIRST_FIGURE, FIRST_FIGURE + "sparsity = 1\n"),
            r"figure entry 1 \(v100-sxm2/sm_count\): sparsity: Input should be a valid boolean \(got 1\)",
        ),
        (
            _corrupt('device_names = ["V100-SXM2"]', 'device_names = "V100-SXM2"'),
            r"gpu entry 1 \(v100-sxm2\): device_names: Input should be a valid list",
        ),
        # a value outside its set or range
        (
            _corrupt(FIRST_FIGURE, FIRST_FIGURE.replace('quantity = "sm_count"', 'quantity = "fp4"')),
            r"figure entry 1 \(v100-sxm2/fp4\): quantity: Input should be 'sm_count', 'boost_clock'",
        ),
        (
            _corrupt(FIRST_FIGURE, FIRST_FIGURE.replace('status = "secondary"', 'status = "probably"')),
            r"status: Input should be 'confirmed', 'secondary' or 'unconfirmed' \(got 'probably'\)",
        ),
        (
            _corrupt(FIRST_FIGURE, FIRST_FIGURE.replace("value = 80", "value = 0")),
            r"figure entry 1 \(v100-sxm2/sm_count\): value: Input should be greater than 0 \(got 0\)",
        ),
        (
            _corrupt('url = "https://www.nvidia.co.uk', 'url = "http://www.nvidia.co.uk'),
            r"sources entry 3 \(volta-tensor-cores\): url: String should match pattern",
        ),
        # a missing field
        (
            _corrupt(FIRST_FIGURE, FIRST_FIGURE.replace('source = "ampere-whitepaper"\n', "")),
            r"figure entry 1 \(v100-sxm2/sm_count\): source: Field required",
        ),
        (_corrupt('name = "Tesla V100 SXM2"\n', ""), r"gpu entry 1 \(v100-sxm2\): name: Field required"),
        (_corrupt('checked = "2026-11-22"', ""), r"checked \(the date the figures were checked"),
        # a repeated entry
        (_corrupt(FIRST_FIGURE, FIRST_FIGURE + "\n" + FIRST_FIGURE), r"figure entry 2 \(v100-sxm2/sm_count\): key"),
        (_corrupt('id = "a100-sxm4-40gb"', 'id = "v100-sxm2"'), r"gpu entry 2 \(v100-sxm2\): id 'v100-sxm2' repeats"),
        # a reference to nothing
        (
            _corrupt(FIRST_FIGURE, FIRST_FIGURE.replace('gpu = "v100-sxm2"', 'gpu = "nope"')),
            r"figure entry 1 \(nope/sm_count\): gpu: unknown GPU 'nope'; gpus: \['v100-sxm2'",
        ),
        (
            _corrupt(FIRST_FIGURE, FIRST_FIGURE.replace('source = "ampere-whitepaper"', 'source = "blog"')),
            r"figure entry 1 \(v100-sxm2/sm_count\): source: unknown source 'blog'",
        ),
        (
            _corrupt('base = "a100-sxm4-40gb"', 'base = "a100"'),
            r"gpu entry 3 \(a100-sxm4-80gb\): base: unknown GPU 'a100'",
        ),
        # not TOML at all
        (_corrupt("[[gpu]]", "[[gpu]"), r"not valid TOML"),
    ],
)
def test_a_corrupted_spec_file_names_file_entry_and_field(text, message) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        specs.parse(text)
    assert str(caught.value).startswith("gpu_specs.toml: ")


def test_unknown_quantities_and_gpus_are_named() -> None:
    with pytest.raises(ValueError, match="unknown quantity 'speed'"):
        TABLE.gpu("h100-sxm5").figure("speed")
    with pytest.raises(KeyError, match="no GPU 'b300'"):
        TABLE.gpu("b300")


# --- the rows added from the vendors' own documents: H200, B200, MI300X -----------------------------------------
NEW_GPUS = ("h200-sxm", "b200-hgx", "mi300x")


@pytest.mark.parametrize("gpu_id", NEW_GPUS)
def test_every_new_figure_has_a_source_a_status_and_evidence(gpu_id: str) -> None:
    gpu = TABLE.gpu(gpu_id)
    assert gpu.figures, gpu_id
    assert len(gpu.evidence) > 200  # where each figure was read, and what could not be read
    for figure in gpu.figures.values():
        source = TABLE.sources[figure.source]
        assert figure.status in ("confirmed", "secondary")
        assert source.url.startswith("https://")
        # A vendor's own document is the named source of every new figure: NVIDIA's for NVIDIA, AMD's for AMD.
        vendor = "amd.com" if gpu_id == "mi300x" else "nvidia.com"
        assert vendor in source.url, (gpu_id, figure.quantity, source.url)


def test_nvidia_figures_read_only_in_copies_are_marked_secondary() -> None:
    # NVIDIA's H200 and HGX pages could not be read by this check: every figure from them stays secondary, and the
    # evidence names the copies read.
    for gpu_id in ("h200-sxm", "b200-hgx"):
        gpu = TABLE.gpu(gpu_id)
        assert {f.status for f in gpu.figures.values()} == {"secondary"}
        assert "could not be read" in gpu.evidence
    assert {f.status for f in TABLE.gpu("mi300x").figures.values()} == {"confirmed"}


def test_mi300x_rates_follow_cus_times_flops_per_clock_times_2100_mhz() -> None:
    # AMD's table gives FLOPS per clock per CU next to each peak; 304 CUs at 2.1 GHz reproduce every peak.
    mi300x = TABLE.gpu("mi300x")
    cus = mi300x.figure("sm_count").value
    per_clock = {
        "fp64": 128,
        "fp64_tensor": 256,
        "fp32": 256,
        "tf32_tensor": 1024,
        "fp16_tensor": 2048,
        "bf16_tensor": 2048,
        "fp8_tensor": 4096,
        "int8_tensor": 4096,
    }
    for quantity, flops in per_clock.items():
        assert cus * flops * 2100e6 / 1e12 == pytest.approx(mi300x.figure(quantity).value, abs=0.05), quantity
        assert not mi300x.figure(quantity).sparsity  # AMD publishes dense rates


def test_blackwell_and_h200_rates_are_stored_as_published_with_sparsity() -> None:
    b200, h200, h100 = TABLE.gpu("b200-hgx"), TABLE.gpu("h200-sxm"), TABLE.gpu("h100-sxm5")
    assert b200.figure("fp8_tensor").value == 9000
    assert b200.figure("fp8_tensor").dense == 4500
    assert b200.figure("bf16_tensor").dense == 2250
    assert b200.figure("fp8_tensor").dense == 2 * b200.figure("bf16_tensor").dense
    # The H200 is the H100's GH100 chip with more memory: the same published tensor rates, more bandwidth.
    for quantity in ("bf16_tensor", "fp8_tensor"):
        assert h200.figure(quantity).value == h100.figure(quantity).value
    assert h200.figure("memory_bandwidth").value > h100.figure("memory_bandwidth").value
    assert h200.figure("tf32_tensor") is None  # left out: no copy read gave it


def test_the_datasheet_page_renders_the_new_rows() -> None:
    from gpukb.performance.pages import datasheets as datasheets_page

    table = datasheets_page.spec_table()
    header = table.splitlines()[0]
    for gpu_id in NEW_GPUS:
        assert f"| {TABLE.gpu(gpu_id).name} |" in header
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]] for line in table.splitlines()[2:]}
    bf16 = rows["BF16 tensor core, dense (TFLOP/s)"]
    names = [c.strip() for c in header.split("|")[2:-1]]
    by_gpu = dict(zip(names, bf16, strict=True))
    assert by_gpu[TABLE.gpu("mi300x").name] == "1,307.4"  # confirmed: no mark
    assert by_gpu[TABLE.gpu("b200-hgx").name] == "2,250 †"  # 4,500 with sparsity, halved; read in copies
    assert by_gpu[TABLE.gpu("h200-sxm").name] == "989.5 †"
    sources = datasheets_page.spec_sources()
    for gpu_id in NEW_GPUS:
        for figure in TABLE.gpu(gpu_id).figures.values():
            assert TABLE.sources[figure.source].url in sources
        assert TABLE.gpu(gpu_id).name in sources
