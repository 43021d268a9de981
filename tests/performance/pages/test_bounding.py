"""The bounding page's tables checked: arithmetic intensities recomputed from operation and byte counts made here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.helpers import markdown_tables
from tests.performance.pages import H100, _ceilings, _figures, _raw, _rounds


def check_intensity(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _raw(H100)
    v100 = _figures("v100-sxm2")
    v100_ridge = v100["fp16_tensor"]["value"] * 1e12 / (v100["memory_bandwidth"]["value"] * 1e9)
    rates, bw = _ceilings(H100, raw)
    h100_ridge = rates["bf16"] * 1e12 / (bw * 1e9)
    headers = list(table[0])
    assert headers[4] == f"limit on V100 (ridge {v100_ridge:.0f})"
    assert headers[5] == f"limit on this H100 (ridge {h100_ridge:.0f})"
    # FP16 (2 bytes): a linear layer x(m×1024)·W(1024×4096) reads x and W and writes y, 2·m·4096·1024 FLOPs;
    # a unit-stride 3×3 max pool makes 8 comparisons per output (the max of 9 values) and, per output, reads one
    # new input and writes one output; ReLU reads and writes one element
    expected = {
        "linear layer, 1024 → 4096, batch 512": (2 * 512 * 4096 * 1024, 2 * (512 * 1024 + 1024 * 4096 + 512 * 4096)),
        "linear layer, 1024 → 4096, batch 1": (2 * 1 * 4096 * 1024, 2 * (1 * 1024 + 1024 * 4096 + 1 * 4096)),
        "3×3 max pooling, unit stride (8 comparisons per output)": (8, 2 + 2),
        "ReLU (per element)": (1, 2 + 2),
    }
    assert [row["operation"] for row in table] == list(expected)
    for row in table:
        flops, nbytes = expected[row["operation"]]
        assert int(row["FLOPs"].replace(",", "")) == flops, row
        assert int(row["bytes"].replace(",", "")) == nbytes, row
        assert _rounds(row["FLOP/B"], flops / nbytes, 2)
        assert row[headers[4]] == ("compute" if flops / nbytes > v100_ridge else "memory")
        assert row[headers[5]] == ("compute" if flops / nbytes > h100_ridge else "memory")


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "intensity_table": check_intensity,
}
