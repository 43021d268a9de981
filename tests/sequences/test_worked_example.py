"""The widely reproduced two-step LSTM example: recomputed exactly, and what its printed numbers leave unstated."""

# ruff: noqa: N803, N806  (matrix and size names W, U, E, H, dW follow the equations)

from __future__ import annotations

import re
import tomllib
from importlib import resources

import numpy as np
import pytest
import torch

from gpukb import errata
from gpukb.sequences import worked_example as we
from tests.helpers import ROOT

FILE = tomllib.loads((ROOT / "src/gpukb/data/sequences/lstm_example.toml").read_text(encoding="utf-8"))
RAW = {"example": FILE["example"][0], "printed": FILE["example"][0]["printed"]}


def _torch_solution(labels: list[float], lr: float) -> dict[str, np.ndarray]:
    """The example through torch.nn.LSTM and autograd, independent of gpukb.sequences."""
    ex = RAW["example"]
    order = [1, 2, 0, 3]  # the example's a, i, f, o → torch's i, f, g, o
    lstm = torch.nn.LSTM(2, 1).double()
    with torch.no_grad():
        lstm.weight_ih_l0.copy_(torch.tensor(ex["W"], dtype=torch.float64)[order])
        lstm.weight_hh_l0.copy_(torch.tensor(ex["U"], dtype=torch.float64)[order, None])
        lstm.bias_ih_l0.copy_(torch.tensor(ex["b"], dtype=torch.float64)[order])
        lstm.bias_hh_l0.zero_()
    out, _ = lstm(torch.tensor(ex["x"], dtype=torch.float64))
    (0.5 * ((out[:, 0] - torch.tensor(labels, dtype=torch.float64)) ** 2).sum()).backward()
    back = [2, 0, 1, 3]
    dW = lstm.weight_ih_l0.grad.numpy()[back]
    return {
        "out": out[:, 0].detach().numpy(),
        "dW": dW,
        "dU": lstm.weight_hh_l0.grad.numpy()[back, 0],
        "db": lstm.bias_ih_l0.grad.numpy()[back],
        "W_new": np.array(ex["W"]) - lr * dW,
    }


def test_gpukb_solution_equals_torch_autograd() -> None:
    ours = we.solve().values
    theirs = _torch_solution(RAW["example"]["labels"], RAW["example"]["learning_rate"])
    for name, value in theirs.items():
        np.testing.assert_allclose(ours[name], value, rtol=0, atol=1e-15, err_msg=name)


def test_printed_values_are_exact_values_with_rounded_intermediates() -> None:
    """Every printed number is within 2.2e-5 of the exact one (2.1e-5 at most, rounded); 47 of 66 are the exact value
    correctly rounded. The gradients are exactly the products of the *printed* (rounded) deltas, and one updated
    weight is truncated."""
    rows = we.all_comparisons()
    assert len(rows) == 66
    off = [(n, w) for n, w, c, p in rows if not we.rounds_to(c, p)]
    assert len(off) == 19
    assert ("out", "t = 1") in off
    assert ("state", "t = 0") in off
    assert ("W_new", "f, x1") in off
    assert max(abs(c - p) for n, w, c, p in rows if (n, w) in off) < 2.2e-5
    assert we.agreement()[:2] == (47, 66)
    # the page's summary and the erratum state the same largest gap, rounded the same way
    gap = we.agreement()[2]
    assert f"{gap:.1e}" == "2.1e-05"
    erratum = next(e for e in errata.load() if e.id == "lstm-example-rounding")
    assert "by at most 2.1 × 10⁻⁵" in erratum.truth
    printed = RAW["printed"]
    x = np.array(RAW["example"]["x"])
    deltas = np.array([[printed[f"d_{g}"][t] for g in "aifo"] for t in (0, 1)])  # the printed, rounded deltas
    np.testing.assert_array_equal(np.round(deltas[0][:, None] * x[0] + deltas[1][:, None] * x[1], 5), printed["dW"])
    np.testing.assert_array_equal(np.round(deltas.sum(axis=0), 5), printed["db"])
    np.testing.assert_array_equal(np.round(deltas[1] * printed["out"][0], 5), printed["dU"])
    exact = we.solve().values
    assert round(exact["out"][1], 6) == 0.771981
    assert round(exact["dW"][1, 1], 7) == -0.0066386
    exact_update = 0.7 - 0.1 * exact["dW"][2, 0]  # W_f for x1
    assert round(exact_update, 7) == 0.7003153
    assert round(exact_update, 5) == 0.70032
    assert printed["W_new"][2][0] == 0.70031


def test_the_second_label_is_1_25_not_minus_1_25() -> None:
    """The arithmetic uses y1 = +1.25: Δ1 = out1 − y1 is printed as −0.47803; with −1.25 it would be +2.02."""
    ex = RAW["example"]
    assert ex["labels_as_printed"][1] == -1.25
    assert ex["labels"][1] == 1.25
    printed_delta = RAW["printed"]["Delta"][1]
    with_plus = we.solve(labels=[0.5, 1.25]).values["Delta"][1]
    with_minus = we.solve(labels=[0.5, -1.25]).values["Delta"][1]
    assert abs(with_plus - printed_delta) < 2e-5
    assert abs(with_minus - 2.02198) < 1e-5
    assert abs(RAW["printed"]["out"][1]) < 1 < 1.25  # and |out| < 1 always: 1.25 cannot be reached


def test_the_updated_weights_imply_learning_rate_0_1() -> None:
    """W − λ·δW reproduces all 16 printed updated values (to the printed rounding) only for λ = 0.1."""
    printed = RAW["printed"]
    shown = np.concatenate([np.ravel(printed[k]) for k in ("W_new", "U_new", "b_new")])

    def updated(lr: float) -> np.ndarray:
        v = we.solve(learning_rate=lr).values
        return np.concatenate([np.ravel(v[k]) for k in ("W_new", "U_new", "b_new")])

    assert np.abs(updated(0.1) - shown).max() < 1e-5
    for lr in (0.01, 0.05, 0.2, 1.0):
        assert np.abs(updated(lr) - shown).max() > 1e-4


def test_delta_out_before_the_first_step_comes_from_step_0_gates() -> None:
    """Δout_{-1} = Uᵀ·δgates_0 = −0.00343 (printed); Uᵀ·δgates_1, as the formula is sometimes written, is −0.01828."""
    v = we.solve().values
    U = np.array(RAW["example"]["U"])
    gates = np.array([[v[f"d_{g}"][t] for g in "aifo"] for t in (0, 1)])
    assert round(float(U @ gates[0]), 5) == RAW["printed"]["Delta_out_prev"][0] == -0.00343
    assert round(float(U @ gates[1]), 5) == -0.01828
    np.testing.assert_allclose(v["Delta_out_prev"][0], U @ gates[0], rtol=1e-14)


def test_the_loss_gradient_is_out_minus_y_and_descent_subtracts_it() -> None:
    """For L = (out − y)²/2, ∂L/∂out = out − y (not y − out); W − λ·∂L/∂W lowers the loss, W + λ·∂L/∂W raises it."""
    out = torch.tensor([0.3, -0.7], dtype=torch.float64, requires_grad=True)
    y = torch.tensor([0.5, 1.25], dtype=torch.float64)
    (0.5 * ((out - y) ** 2).sum()).backward()
    assert torch.equal(out.grad, (out - y).detach())
    ex = RAW["example"]

    def loss(W: np.ndarray) -> float:
        example = we.load().model_copy(update={"W": W.tolist()})
        o = we.solve(example).values["out"]
        return float(0.5 * ((o - np.array(ex["labels"])) ** 2).sum())

    W, dW = np.array(ex["W"]), we.solve().values["dW"]
    assert loss(W - 0.1 * dW) < loss(W) < loss(W + 0.1 * dW)


def test_setup_table_maps_the_example_gates_to_torch_rows() -> None:
    _headers, rows = we.setup_rows()
    assert [r[:3] for r in rows] == [["a", "g", 2], ["i", "i", 0], ["f", "f", 1], ["o", "o", 3]]
    assert [r[3:5] for r in rows] == RAW["example"]["W"]


# --- the data file ------------------------------------------------------------------------------------------------

TEXT = resources.files("gpukb.data").joinpath(we.DATA_FILE).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("learning_rate = 0.1", "learning_rate = 0.0", r"learning_rate: Input should be greater than 0"),
        ("learning_rate = 0.1", 'learning_rate = "0.1"', r"learning_rate: Input should be a valid number"),
        ("d_f = [0.0, -0.00631]\n", "", r"printed\.d_f: Field required"),
        ("\n[example.printed]\n", "\ncolour = 1\n[example.printed]\n", r"colour: Extra inputs are not permitted"),
        ("U = [0.15, 0.8, 0.1, 0.25]", "U = [0.15, 0.8, 0.1]", r"U: List should have at least 4 items"),
    ],
)  # fmt: skip
def test_a_corrupted_copy_fails_naming_file_and_field(old: str, new: str, message: str) -> None:
    assert old in TEXT
    with pytest.raises(ValueError, match=f"^{re.escape(we.DATA_FILE)}: example entry 1 \\(two-step-lstm\\): {message}"):
        we.parse(TEXT.replace(old, new, 1))


def test_unknown_part_is_refused() -> None:
    with pytest.raises(ValueError, match=r"unknown part 'sideways'; choose one of \['forward', 'backward'"):
        we.comparison("sideways")


def test_a_repeated_example_is_refused_naming_the_file_given() -> None:
    doubled = TEXT + TEXT[TEXT.index("\n[[example]]") :]
    with pytest.raises(ValueError, match=r"^copy\.toml: example entry 2 \(two-step-lstm\): id 'two-step-lstm' repeats"):
        we.parse(doubled, "copy.toml")


def test_worked_example_labels_count_inputs_from_x1() -> None:
    """Two steps (t = 0, 1) of two inputs: the passes label rows by step, the weights by gate (a, i, f, o)."""
    backward = we.comparison("backward")
    assert all(where.startswith("t = ") for _, where, _, _ in backward)
    assert [where for name, where, _, _ in backward if name == "d_x"] == [
        "t = 0, x1", "t = 0, x2", "t = 1, x1", "t = 1, x2"]  # fmt: skip
    assert [where for name, where, _, _ in we.comparison("gradients") if name == "dW"][:4] == [
        "a, x1", "a, x2", "i, x1", "i, x2"]  # fmt: skip


def test_solve_keeps_the_learning_rate_it_used() -> None:
    assert we.solve().learning_rate == we.load().learning_rate == 0.1
    assert we.solve(learning_rate=0.5).learning_rate == 0.5
