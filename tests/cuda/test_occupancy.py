"""The occupancy calculator: worked cases computed by hand, the refusals, and agreement with the CUDA driver on the
recorded H100 grid of real kernels."""

from __future__ import annotations

import json

import pytest

from gpukb.cuda.limits import capability
from gpukb.cuda.occupancy import carveout, occupancy, occupancy_table
from tests.helpers import ROOT, exactly


@pytest.mark.parametrize(
    ("cc", "threads", "regs", "static", "dynamic", "blocks", "limiting"),
    [
        # 8 warps; 1024 regs/warp -> 16 warps per quarter of the 64K file -> 64 warps -> 8 blocks; 1 KiB reserve
        # -> 233472 // 1024 = 228 blocks by shared memory.
        ("9.0", 256, 32, 0, 0, 8, ("warps", "registers")),
        ("9.0", 128, 128, 0, 0, 4, ("registers",)),  # 4096/warp -> 4 warps per quarter -> 16 warps -> 4 blocks
        ("9.0", 256, 32, 0, 100 * 1024, 2, ("shared memory",)),  # 103424 B per block -> 2 in 233472
        ("9.0", 64, 16, 0, 0, 32, ("warps", "blocks")),  # 2 warps: 64 // 2 = 32 = the block limit
        ("9.0", 32, 16, 0, 0, 32, ("blocks",)),  # 1 warp: 64 by warps, but 32 blocks at most
        ("8.0", 256, 40, 0, 0, 6, ("registers",)),  # 1280/warp -> 12 warps per quarter -> 48 warps -> 6 blocks
        ("8.0", 256, 33, 0, 0, 6, ("registers",)),  # 33 x 32 = 1056 rounds up to 1280 as well
        ("8.6", 1024, 16, 0, 0, 1, ("warps",)),  # 32 warps of 48: 1 block, 67 %
        ("7.5", 512, 32, 0, 0, 2, ("warps",)),  # 16 warps of Turing's 32; registers would allow 64 warps
        ("7.0", 256, 32, 1000, 0, 8, ("warps", "registers")),  # 1000 B rounds to 1024 (256-byte unit, no reserve)
        ("7.0", 128, 32, 40 * 1024, 0, 2, ("shared memory",)),  # 40960 B: 98304 // 40960 = 2
        ("8.9", 128, 32, 0, 0, 12, ("warps",)),  # 48 warps // 4 = 12 (registers 16, blocks 24)
        ("9.0", 1024, 64, 0, 0, 1, ("registers",)),  # 2048/warp x 32 warps = 65536: exactly one block
    ],
)
def test_worked_cases(cc, threads, regs, static, dynamic, blocks, limiting) -> None:
    occ = occupancy(cc, threads, regs, static, dynamic)
    assert occ.active_blocks == blocks
    assert occ.limiting == limiting
    assert occ.active_warps == blocks * -(-threads // 32)
    assert occ.occupancy == occ.active_warps / capability(cc).max_warps_per_sm


def test_allocation_details() -> None:
    occ = occupancy("9.0", 96, 33, 1000, 100)
    assert occ.warps_per_block == 3
    assert occ.registers_per_block == 3 * 1280
    assert occ.shared_per_block == 2176  # 1000 + 100 + 1024 = 2124 -> next multiple of 128
    assert occ.limits["shared memory"] == 233472 // 2176
    assert occupancy((9, 0), 256, 0).limits["registers"] is None  # no registers, no register limit
    assert occupancy("7.0", 256, 0).limits["shared memory"] is None  # no shared memory and no reserve before 8.0


def test_carveout_preference() -> None:
    cap = capability("9.0")
    assert carveout(cap, 1024) == 233472  # default: the largest carveout
    assert carveout(cap, 1024, 50) == 132 * 1024  # 50 % of 228 KiB = 114 KiB, rounded up to the 132 KiB step
    assert carveout(cap, 140 * 1024, 50) == 164 * 1024  # too small for one block: the smallest step that holds it
    assert carveout(cap, 1024, 0) == 8 * 1024  # 0 % -> 0 KiB, but a block needs 1 KiB -> 8 KiB
    occ = occupancy("9.0", 256, 32, 0, 30 * 1024, carveout_percent=50)
    assert occ.shared_per_sm == 132 * 1024
    assert occ.active_blocks == 132 * 1024 // (31 * 1024)
    with pytest.raises(ValueError, match="0 to 100 percent; got 101"):
        carveout(cap, 1024, 101)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(threads=1025, registers=32), "1025 threads per block exceeds the limit of 1024"),
        (dict(threads=256, registers=256), "256 registers per thread exceeds the limit of 255"),
        # 65 x 32 = 2080 -> 2304 (9 x 256) per warp, x 32 warps
        (
            dict(threads=1024, registers=65),
            r"need 73728 registers per block \(2304 per warp.* limit of 65536 registers",
        ),
        (dict(threads=288, registers=255), r"9 warps counted as 12"),
        (dict(threads=256, registers=32, dynamic_shared=232449), "exceed the opt-in limit of 232448 bytes"),
        (dict(threads=256, registers=32, static_shared=49153), "limit of 49152 bytes .* for static allocations"),
        (dict(threads=256, registers=32, dynamic_shared=64 * 1024, opt_in=False), "default limit of 49152 bytes"),
        (dict(threads=256, registers=32, cluster_size=9), "cluster size 9 exceeds the portable .* limit of 8"),
        (dict(threads=256, registers=32, cluster_size=17, nonportable_cluster=True), "non-portable limit of 16"),
        (dict(threads=512, registers=32, kernel_max_threads=256), "exceeds the kernel's maxThreadsPerBlock of 256"),
        (dict(threads=0, registers=32), "threads per block must be an int ≥ 1; got 0"),
    ],
)
def test_impossible_launches_name_the_limit(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        occupancy("9.0", **kwargs)


def test_other_refusals() -> None:
    with pytest.raises(ValueError, match=r"clusters need compute capability 9\.0 or later; got 8\.0"):
        occupancy("8.0", 256, 32, cluster_size=2)
    with pytest.raises(ValueError, match=r"compute capability '6.1' is not in .* known: \['7.0'"):
        occupancy("6.1", 256, 32)
    with pytest.raises(TypeError, match=r"threads per block must be an int ≥ 1; got 256\.0 \(float\)"):
        occupancy("9.0", 256.0, 32)
    with pytest.raises(TypeError, match="compute capability must be"):
        occupancy(9.0, 256, 32)
    assert occupancy("9.0", 256, 32, cluster_size=8).active_blocks == 8  # a valid cluster leaves the SM count alone
    assert occupancy("8.6", 256, 32, dynamic_shared=99 * 1024).active_blocks == 1  # 99 KiB opt-in on 8.6


def test_occupancy_table_shows_refusals() -> None:
    headers, rows = occupancy_table("9.0", 128, block_sizes=(128, 1024))
    assert headers[0] == "threads/block"
    assert rows[0][:4] == [128, 4, 16, "25%"]
    assert rows[1][1] == 0
    assert rows[1][4].startswith("cannot launch: 1024 threads at 128 registers")


def _recorded() -> dict:
    return json.loads((ROOT / "src/gpukb/data/results/cuda/occupancy-h100.json").read_text(encoding="utf-8"))


def test_the_calculator_equals_the_driver_on_every_recorded_configuration() -> None:
    """Every launch of the recorded H100 grid (real kernels, the driver's cuOccupancyMaxActiveBlocksPerMultiprocessor)
    gets the driver's block count from the calculator, or a ValueError exactly where the driver says 0."""
    data = _recorded()
    assert data["compute_capability"] == "9.0"
    assert len(data["rows"]) >= 200
    regs = {k["num_regs"] for k in data["kernels"]}
    assert len(regs) >= 8
    assert min(regs) < 32
    assert max(regs) > 128
    assert {k["shared_size_bytes"] for k in data["kernels"]} >= {0, 12288, 49152}
    for row in data["rows"]:
        k = data["kernels"][row["kernel"]]
        try:
            mine = occupancy("9.0", row["block_size"], k["num_regs"], k["shared_size_bytes"], row["dynamic_smem"])
            got = mine.active_blocks
        except ValueError:
            got = 0
        assert got == row["runtime_blocks"], (k["name"], row)


def test_launch_bounds_rows_are_refused_where_the_driver_still_answers() -> None:
    """The driver's occupancy API ignores a kernel's own maxThreadsPerBlock (``__launch_bounds__``); a launch above
    it fails (tests/cuda/test_gpu.py). With ``kernel_max_threads`` the calculator refuses exactly those rows."""
    data = _recorded()
    refused = 0
    for row in data["rows"]:
        k = data["kernels"][row["kernel"]]
        over = row["block_size"] > k["max_threads_per_block"]
        try:
            occupancy(
                "9.0",
                row["block_size"],
                k["num_regs"],
                k["shared_size_bytes"],
                row["dynamic_smem"],
                kernel_max_threads=k["max_threads_per_block"],
            )
            assert not over
        except ValueError:
            assert over or row["runtime_blocks"] == 0
            refused += over and row["runtime_blocks"] > 0
    assert refused == sum(1 for r in data["rows"] if r["calculator_blocks"] is None and r["runtime_blocks"] > 0)


def test_occupancy_table_rows_by_hand() -> None:
    """Hopper by hand: 256 threads are 8 warps; at 32 registers 1,024 per warp, 16 warps per quarter of the 64K file;
    12 KiB static + 64 KiB dynamic (opt-in) + the 1 KiB reserve = 78,848 B, 2 per 233,472 B."""
    headers, rows = occupancy_table("9.0", 32, 12 * 1024, 64 * 1024, block_sizes=(256,))
    assert headers == ["threads/block", "blocks/SM", "warps/SM", "occupancy", "limited by"]
    assert rows == [[256, 2, 16, "25%", "shared memory"]]
    assert occupancy_table("9.0", 32, block_sizes=(256,))[1] == [[256, 8, 64, "100%", "warps, registers"]]
    # the limits are inclusive: one thread per block (32 blocks of 1 warp), 0 and 255 registers per thread
    assert occupancy_table("9.0", 0, block_sizes=(1,))[1] == [[1, 32, 32, "50%", "blocks"]]
    # 255 × 32 rounds up to 8,192 registers per warp: 2 warps per quarter of the file
    assert occupancy_table("9.0", 255, block_sizes=(32,))[1] == [[32, 8, 8, "12%", "registers"]]
    refused = occupancy_table("9.0", 128, block_sizes=(1024,))[1][0]
    assert refused[:4] == [1024, 0, 0, "0%"]


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "message"),
    [
        (("9.0", -1), {}, ValueError, "registers per thread must be an int ≥ 0; got -1"),
        (
            ("9.0", 256),
            {},
            ValueError,
            "256 registers per thread exceeds the limit of 255 (compute capability 9.0) at every block size",
        ),
        (("9.0", 32, -1), {}, ValueError, "static shared memory must be an int ≥ 0; got -1"),
        (("9.0", 32, 0, -1), {}, ValueError, "dynamic shared memory must be an int ≥ 0; got -1"),
        (("9.0", 32), {"block_sizes": ()}, TypeError, "block_sizes must be a non-empty tuple of ints; got () (tuple)"),
        (
            ("9.0", 32),
            {"block_sizes": {64}},
            TypeError,
            "block_sizes must be a non-empty tuple of ints; got {64} (set)",
        ),
        (("9.0", 32), {"block_sizes": (64, 0)}, ValueError, "block_sizes[1] must be an int ≥ 1, ≤ 1024; got 0"),
        (("9.0", 32), {"block_sizes": (1025,)}, ValueError, "block_sizes[0] must be an int ≥ 1, ≤ 1024; got 1025"),
    ],
)
def test_occupancy_table_refuses_what_no_block_size_changes(args, kwargs, error, message) -> None:
    with pytest.raises(error, match=exactly(message)):
        occupancy_table(*args, **kwargs)


@pytest.mark.parametrize(
    ("needed", "percent", "capacity_kib"),
    [
        (0, 0, 0),  # 0 % of 228 KiB is exactly the 0 KiB step
        (0, 100, 228),  # 100 % is allowed: the whole 228 KiB
        (0, 44, 132),  # 44 % of 233,472 B = 102,727 B: just over the 100 KiB step, so 132 KiB
        (64 * 1024, 0, 64),  # too small a preference: the smallest step that holds the block, exactly 64 KiB
    ],
)
def test_carveout_steps_worked_by_hand(needed: int, percent: int, capacity_kib: int) -> None:
    """Hopper's carveouts are 0, 8, 16, 32, 64, 100, 132, 164, 196, 228 KiB; a preference rounds up to one."""
    assert carveout(capability("9.0"), needed, percent) == capacity_kib * 1024


@pytest.mark.parametrize("bad", [True, 1.5, "5"])
def test_carveout_preference_must_be_an_int(bad: object) -> None:
    with pytest.raises(TypeError, match=r"^carveout preference must be an int percent; got "):
        carveout(capability("9.0"), 0, bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((1024, 256), {}, r"^256 registers per thread exceeds the limit of 255 \(compute capability 9\.0\)$"),
        ((128, 32), {"kernel_max_threads": 0}, r"^kernel_max_threads must be an int ≥ 1; got 0"),
        # 224 registers × 32 lanes = 7,168 per warp; 9 warps are counted as 12 (4 sub-partitions): 86,016 > 65,536
        ((288, 224), {}, r"need 86016 registers per block \(7168 per warp, 9 warps counted as 12\)"),
        ((1024, 255), {}, r"need 262144 registers per block \(8192 per warp, 32 warps\)"),
        ((128, 32), {"dynamic_shared": 300000, "opt_in": False}, r"^300000 bytes .* exceed the opt-in limit"),
        ((128, 32), {"dynamic_shared": 232448, "opt_in": False}, r"^232448 bytes .* exceed the default limit"),
    ],
)
def test_refused_launches_say_why(args: tuple[int, int], kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        occupancy("9.0", *args, **kwargs)  # type: ignore[arg-type]


def test_a_block_of_one_thread_under_a_kernel_limit_of_one() -> None:
    result = occupancy((9, 0), 1, 32, kernel_max_threads=1)
    assert (result.cc, result.threads_per_block, result.warps_per_block) == ("9.0", 1, 1)


def test_a_cluster_of_one_block_is_allowed() -> None:
    """A cluster may hold a single block (the guide's minimum is 1); 0 is refused."""
    assert occupancy("9.0", 128, 32, cluster_size=1).active_blocks == occupancy("9.0", 128, 32).active_blocks
    with pytest.raises(ValueError, match=r"cluster size"):
        occupancy("9.0", 128, 32, cluster_size=0)
    with pytest.raises(ValueError, match=r"portable \(allow 16 with cudaFuncAttributeNonPortableClusterSizeAllowed\)"):
        occupancy("9.0", 128, 32, cluster_size=9)
