"""The limits data file: it parses, bad copies are refused with the field named, and its Hopper entry equals what
the H100 reported (the recorded ``cudaGetDeviceProperties``)."""

from __future__ import annotations

import json
import tomllib

import pytest

from gpukb.cuda import limits
from tests.helpers import ROOT

TEXT = (ROOT / "src/gpukb/data/cuda/limits.toml").read_text(encoding="utf-8")


def test_the_file_parses_with_every_capability_from_7_0_to_9_0() -> None:
    table = limits.parse(TEXT)
    assert limits.known() == ["7.0", "7.2", "7.5", "8.0", "8.6", "8.7", "8.9", "9.0"]
    assert table.checked == "2026-11-23"
    raw = tomllib.loads(TEXT)
    for entry in raw["capability"]:
        cap = limits.capability(entry["cc"])
        assert cap.shared_per_sm == entry["shared_per_sm"]
        # Ampere and later reserve 1 KiB per block, and opt-in per block is the SM's capacity less that 1 KiB.
        reserve = 1024 if float(entry["cc"]) >= 8.0 else 0
        assert cap.reserved_shared_per_block == reserve
        assert cap.shared_per_block_optin == cap.shared_per_sm - reserve
        assert cap.shared_allocation_unit == (128 if reserve else 256)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "max_blocks_per_sm = 32\nregisters_per_sm = 65536\nregisters_per_block = 65536\n"
            "max_registers_per_thread = 255\n"
            "register_allocation_unit = 256\nregister_sub_partitions = 4\nshared_per_sm = 233472",
            'max_blocks_per_sm = "32"\nregisters_per_sm = 65536\nregisters_per_block = 65536\n'
            "max_registers_per_thread = 255\nregister_allocation_unit = 256\nregister_sub_partitions = 4\n"
            "shared_per_sm = 233472",
            r"capability entry 1 \(9.0\): max_blocks_per_sm: Input should be a valid integer",
        ),
        ('cc = "8.9"', 'cc = "9.0"', r"capability entry 2 \(9.0\): cc '9.0' repeats entry 1"),
        ("shared_per_block_optin = 232448", "shared_per_block_optin = 233000", "exceeds shared_per_sm"),
        (
            "carveouts_kib = [0, 8, 16, 32, 64, 100, 132, 164, 196, 228]",
            "carveouts_kib = [0, 8, 228, 16]",
            "carveouts_kib must rise strictly",
        ),
        (
            'sources = ["guide", "occupancy", "runtime"]\n# --8<-- [end:entry]',
            'sources = ["guide", "nowhere"]\n# --8<-- [end:entry]',
            r"unknown sources \['nowhere'\]",
        ),
        ('name = "Hopper (H100, H200, GH200)"', 'name = "Hopper"\nwarps = 3', "warps: Extra inputs are not permitted"),
        ('checked = "2026-11-23"', 'checked = "2026-11-23"\nextra = 1', r"unknown top-level keys \['extra'\]"),
    ],
)
def test_bad_copies_are_refused(old: str, new: str, message: str) -> None:
    assert old in TEXT
    with pytest.raises(ValueError, match=message):
        limits.parse(TEXT.replace(old, new, 1))


def test_hopper_entry_equals_the_recorded_h100() -> None:
    record = json.loads((ROOT / "src/gpukb/data/results/cuda/device-h100.json").read_text(encoding="utf-8"))
    props = record["properties"]
    cap = limits.capability(f"{props['major']}.{props['minor']}")
    assert cap.cc == "9.0"
    assert props["sharedMemPerMultiprocessor"] == cap.shared_per_sm
    assert props["sharedMemPerBlockOptin"] == cap.shared_per_block_optin
    assert props["sharedMemPerBlock"] == cap.shared_per_block
    assert props["reservedSharedMemPerBlock"] == cap.reserved_shared_per_block
    assert props["regsPerMultiprocessor"] == cap.registers_per_sm
    assert props["regsPerBlock"] == cap.registers_per_block
    assert props["maxThreadsPerBlock"] == cap.max_threads_per_block
    assert props["maxThreadsPerMultiProcessor"] == cap.max_threads_per_sm
    assert props["maxBlocksPerMultiProcessor"] == cap.max_blocks_per_sm
    assert props["warpSize"] == cap.warp_size


def test_unknown_and_malformed_capabilities() -> None:
    with pytest.raises(ValueError, match=r"'10.0' is not in cuda/limits.toml"):
        limits.capability("10.0")
    with pytest.raises(TypeError, match="got 9"):
        limits.capability(9)
    assert limits.capability((8, 6)).max_warps_per_sm == 48


def test_launch_limits_equal_what_the_h100_reported() -> None:
    """The [launch] table (block and grid sizes every launch function checks) against cudaGetDeviceProperties."""
    props = json.loads((ROOT / "src/gpukb/data/results/cuda/device-h100.json").read_text(encoding="utf-8"))[
        "properties"
    ]
    launch = limits.launch()
    assert " x ".join(map(str, launch.max_block_dim)) == props["maxThreadsDim"] == "1024 x 1024 x 64"
    assert " x ".join(map(str, launch.max_grid_dim)) == props["maxGridSize"] == "2147483647 x 65535 x 65535"
    assert launch.max_threads_per_block == props["maxThreadsPerBlock"] == 1024
    assert all(limits.capability(cc).max_threads_per_block == 1024 for cc in limits.known())


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("max_block_dim = [1024, 1024, 64]", "max_block_dim = [1024, 64]", r"\[launch\]: max_block_dim: List should"),
        ("max_threads_per_block = 1024\nmax_grid_dim", "max_threads_per_block = 512\nmax_grid_dim",
         r"capability 9.0: max_threads_per_block 1024 differs from \[launch\] max_threads_per_block 512"),
        ('max_grid_dim = [2147483647, 65535, 65535]\nsources = ["guide"]',
         'max_grid_dim = [2147483647, 65535, 65535]\nsources = ["nowhere"]', r"launch: unknown sources \['nowhere'\]"),
    ],
)  # fmt: skip
def test_bad_launch_tables_are_refused(old: str, new: str, message: str) -> None:
    assert old in TEXT
    with pytest.raises(ValueError, match=message):
        limits.parse(TEXT.replace(old, new, 1))


def test_a_copy_without_sources_and_errors_naming_the_file_given() -> None:
    """A file with no ``[sources]`` refuses every source it cites (none is known); errors name the file the text
    came from, whichever it is."""
    start, end = TEXT.index("[sources.guide]"), TEXT.index("[launch]")
    with pytest.raises(ValueError, match=r"^other\.toml: launch: unknown sources \['guide'\]; known: \[\]"):
        limits.parse(TEXT[:start] + TEXT[end:], "other.toml")
    with pytest.raises(ValueError, match=r"^other\.toml\b.*unknown top-level keys \['extra'\]"):
        limits.parse("extra = 1\n" + TEXT, "other.toml")
    with pytest.raises(ValueError, match=r"^other\.toml\b.*capability entry 1 \(9\.0\): max_blocks_per_sm"):
        limits.parse(TEXT.replace("max_blocks_per_sm = 32\n", 'max_blocks_per_sm = "32"\n', 1), "other.toml")
