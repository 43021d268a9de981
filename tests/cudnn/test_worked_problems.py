"""The cuDNN chapter's worked problems, recomputed with torch and from the data files."""

from __future__ import annotations

import re
import tomllib

import numpy as np
import pytest

from tests.helpers import ROOT, h100_ceilings_json
from tests.worked_problems import answer, assert_shows, rendered_problems, working

torch = pytest.importorskip("torch")

DATA = ROOT / "src/gpukb/data"
LAYERS = tomllib.loads((DATA / "cudnn/resnet50_layers.toml").read_text("utf-8"))


@pytest.fixture  # per test (rendered once, then cached), so mutmut maps every test to the problems it reads
def problems() -> dict[str, str]:
    return rendered_problems("cudnn")


def _layer(name: str) -> dict:
    (layer,) = [x for x in LAYERS["layer"] if x["name"] == name]
    return layer


def _conv(layer: dict) -> tuple[tuple[int, ...], int]:
    """The output shape torch gives (on the meta device: no data) and the multiply-adds."""
    n = LAYERS["batch"]
    x = torch.empty(n, layer["c"], layer["hw"], layer["hw"], device="meta")
    w = torch.empty(layer["k"], layer["c"], layer["kernel"], layer["kernel"], device="meta")
    y = torch.nn.functional.conv2d(x, w, stride=layer["stride"], padding=layer["pad"])
    return tuple(y.shape), y.numel() * layer["c"] * layer["kernel"] ** 2


def test_stem_output(problems: dict[str, str]) -> None:
    shape, macs = _conv(_layer("conv1"))
    text = answer(problems["stem-output"])
    assert text.startswith(f"({', '.join(map(str, shape))})")
    assert_shows(text, 2 * macs / 1e9, macs / 1e9, rel=0.01)
    layer = _layer("conv1")
    side = (layer["hw"] + 2 * layer["pad"] - layer["kernel"]) // layer["stride"] + 1
    assert shape[2] == side
    assert working(problems["stem-output"])[0].startswith(
        f"Each spatial side: ({layer['hw']} + 2·{layer['pad']} − {layer['kernel']}) // {layer['stride']} + 1 = {side} "
    )
    assert "(https://arxiv.org/abs/1512.03385)" in problems["stem-output"]  # the layer's shape is the paper's
    taps = layer["c"] * layer["kernel"] ** 2  # 3·7·7
    assert f"= {taps} products: {macs:,}; FLOPs twice that." in working(problems["stem-output"])[1]


def test_nhwc_offset(problems: dict[str, str]) -> None:
    t = torch.empty(32, 64, 56, 56).to(memory_format=torch.channels_last)
    index = (1, 3, 2, 5)
    text = answer(problems["nhwc-offset"])
    assert f"({', '.join(f'{s:,}' for s in t.stride())})" in text
    offset = sum(i * s for i, s in zip(index, t.stride(), strict=True))
    nchw = sum(i * s for i, s in zip(index, torch.empty(32, 64, 56, 56).stride(), strict=True))
    assert f"; offset {offset:,} (NCHW would put it at {nchw:,})." in text  # exact: one w step is 64 of 208,195
    assert "N, C, H, W = 32, 64, 56, 56 is stored NHWC" in problems["nhwc-offset"]
    assert "n = 1, c = 3, h = 2, w = 5?" in problems["nhwc-offset"]
    sn, sc, sh, sw = t.stride()
    steps = working(problems["nhwc-offset"])
    assert steps[0].endswith(
        f"stride_C = {sc}, stride_W = C = {sw}, stride_H = W·C = {sh:,}, stride_N = H·W·C = {sn:,}."
    )
    assert steps[2] == f"Offset Σ index·stride = 1·{sn:,} + 3·{sc} + 2·{sh:,} + 5·{sw} = {offset:,}."


def test_winograd(problems: dict[str, str]) -> None:
    m, r = 2, 3  # F(m×m, r×r): (m + r − 1)² products per tile against m²·r² for the direct sum
    products, direct = (m + r - 1) ** 2, m * m * r * r
    assert answer(problems["winograd"]).startswith(f"{products} instead of {direct}: {direct / products:.2f}× fewer")
    error = re.search(r"matches the direct sum to (\S+)\.$", working(problems["winograd"])[-1])[1]
    assert float(error) < 1e-12  # float64 rounding, not a wrong tile
    # The tile is drawn with seed 0, so the printed error is reproducible: the direct sum, written out here.
    from gpukb.cudnn.convolution import winograd_tile

    rng = np.random.default_rng(0)
    d, g = rng.standard_normal((4, 4)), rng.standard_normal((3, 3))
    direct_sum = np.array([[(d[i : i + 3, j : j + 3] * g).sum() for j in range(2)] for i in range(2)])
    assert error == f"{np.abs(winograd_tile(d, g)[0] - direct_sum).max():.1e}"
    assert "(https://arxiv.org/abs/1509.09308)" in problems["winograd"]  # Lavin and Gray's F(2×2, 3×3)


def test_layer_floor(problems: dict[str, str]) -> None:
    layer = _layer("res2-3x3")
    shape, macs = _conv(layer)
    n = LAYERS["batch"]
    elements = n * layer["c"] * layer["hw"] ** 2 + layer["k"] * layer["c"] * layer["kernel"] ** 2
    elements += shape[0] * shape[1] * shape[2] * shape[3]
    quoted = h100_ceilings_json()
    peak, bandwidth = quoted["fp16"], quoted["bandwidth"]
    floor = max(2 * macs / (peak * 1e12), 2 * elements / (bandwidth * 1e9))
    assert_shows(answer(problems["layer-floor"]), floor * 1e6, 2 * macs / 1e9, 2 * elements / 2**20, rel=0.01)
    work, _, times = working(problems["layer-floor"])
    assert work.endswith(f": {2 * elements:,}; intensity {2 * macs / (2 * elements):,.0f} FLOP/B.")
    compute, memory = 2 * macs / (peak * 1e12), 2 * elements / (bandwidth * 1e9)
    assert times == f"Compute {compute * 1e6:.1f} µs, memory {memory * 1e6:.1f} µs; the floor is the larger."
    assert "(https://arxiv.org/abs/1512.03385)" in problems["layer-floor"]


def test_layer_counts_take_another_batch() -> None:
    from gpukb.cudnn import layers

    layer = layers.load().layers[0]
    shape, macs = _conv(_layer(layer.name))  # at the file's batch
    c = layers.counts(layer, batch=8)
    assert c.output_shape == (8, *shape[1:])
    assert c.macs * LAYERS["batch"] == macs * 8
