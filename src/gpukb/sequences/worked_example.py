"""A widely reproduced two-step LSTM example, recomputed exactly with :mod:`gpukb.sequences.lstm`.

The example has one hidden unit, two input features and two time steps, its gates stacked in the order a, i, f, o
(a is the "input activation", torch's g) with one bias per gate. It maps onto torch's layout by reordering the
rows to i, f, g, o and putting the bias in ``bias_ih`` with ``bias_hh = 0``. The loss is ``(out_t − y_t)² / 2`` per
step, so the upstream gradient of each output is ``out_t − y_t``; the update is plain SGD, ``W − λ·δW``.

The data file ``sequences/lstm_example.toml`` holds the inputs and the values the example prints; the functions
here return the exact values next to the printed ones, as ``(headers, rows)``.
"""

# ruff: noqa: N806, N815  (matrix and size names W, U, E, H, dW follow the equations)

from __future__ import annotations

import datetime
from dataclasses import dataclass
from functools import cache

import numpy as np
from pydantic import Field

from gpukb.arguments import choice
from gpukb.data import data_text
from gpukb.schema import StrictModel, parse_toml, validate_entries
from gpukb.sequences.lstm import LSTMParams, lstm_backward, lstm_forward

DATA_FILE = "sequences/lstm_example.toml"

#: The example's gate order, and where each of its gates sits in torch's order i, f, g, o.
EXAMPLE_ORDER = ("a", "i", "f", "o")
TO_TORCH = [1, 2, 0, 3]  # torch row k takes the example's row TO_TORCH[k]: i, f, a(=g), o
FROM_TORCH = [2, 0, 1, 3]  # the example's row k is torch's row FROM_TORCH[k]

Vector = list[float]


class Printed(StrictModel):
    """The values the example prints, per step (t = 0, 1) or per gate (a, i, f, o)."""

    a: Vector
    i: Vector
    f: Vector
    o: Vector
    state: Vector
    out: Vector
    Delta: Vector
    Delta_out: Vector
    d_out: Vector
    d_state: Vector
    d_a: Vector
    d_i: Vector
    d_f: Vector
    d_o: Vector
    d_x: list[Vector]
    Delta_out_prev: Vector
    dW: list[Vector]
    dU: Vector
    db: Vector
    W_new: list[Vector]
    U_new: Vector
    b_new: Vector


class LstmExample(StrictModel):
    """The example's inputs, where it was published, and what it prints."""

    id: str
    title: str
    author: str
    published: datetime.date
    url: str = Field(pattern=r"^https://")
    checked: datetime.date
    gate_order: list[str]
    W: list[Vector] = Field(min_length=4, max_length=4)
    U: Vector = Field(min_length=4, max_length=4)
    b: Vector = Field(min_length=4, max_length=4)
    x: list[Vector] = Field(min_length=1)
    labels: Vector
    labels_as_printed: Vector
    learning_rate: float = Field(gt=0)
    note: str
    printed: Printed


def parse(text: str, file: str = DATA_FILE) -> list[LstmExample]:
    """Read the data file's text: its ``[[example]]`` entries.

    Raises:
        ValueError: Naming the file, the entry and the field, for a TOML error, an unknown key, a wrong type or an id
            used twice.
    """
    data = parse_toml(text, file, ("example",))
    return validate_entries(LstmExample, data.get("example", []), file, "example", key="id")


@cache
def load(example_id: str = "two-step-lstm") -> LstmExample:
    """One example of the packaged data file, by id.

    Raises:
        ValueError: For an unknown id.
    """
    entries = {e.id: e for e in parse(data_text(DATA_FILE))}
    return entries[choice("example", example_id, tuple(entries))]


def torch_params(example: LstmExample) -> LSTMParams:
    """The example's weights in torch's layout: rows reordered a, i, f, o → i, f, g, o; ``bias_hh = 0``."""
    W, U, b = np.array(example.W), np.array(example.U)[:, None], np.array(example.b)
    return LSTMParams(W[TO_TORCH], U[TO_TORCH], b[TO_TORCH], np.zeros(4))


@dataclass(frozen=True)
class Solution:
    """Every quantity the example prints, computed exactly (float64), in the example's names and gate order."""

    values: dict[str, np.ndarray]
    learning_rate: float


# --8<-- [start:solve]
def solve(
    example: LstmExample | None = None, labels: Vector | None = None, learning_rate: float | None = None
) -> Solution:
    """Forward, backward and one SGD step of the example, through the same LSTM code as everything else.

    Args:
        example: The example (default: the packaged one).
        labels: Labels to use instead of the example's (to test what another label would give).
        learning_rate: λ to use instead of the example's.
    """
    example = example or load()
    y = np.array(example.labels if labels is None else labels, dtype=float)
    lr = example.learning_rate if learning_rate is None else learning_rate
    params = torch_params(example)
    trace = lstm_forward(params, np.array(example.x))  # one sequence: (T, I)
    out = trace.outputs[:, 0]
    delta = out - y  # ∂L/∂out_t for L = Σ (out_t − y_t)² / 2
    grads = lstm_backward(params, trace, grad_outputs=delta[:, None])
    d_gates = grads.d_gates[:, 0, FROM_TORCH]  # back to the example's order a, i, f, o
    d_h = grads.d_h[:, 0, 0]
    delta_out_prev = np.concatenate([grads.h0, (d_h - delta)[:-1]])  # Δout_{t-1}: what step t sends back
    v = {
        **{name: trace.gate(torch_name)[:, 0, 0] for name, torch_name in zip("aifo", "gifo", strict=True)},
        "state": trace.c[1:, 0, 0],
        "out": out,
        "Delta": delta,
        "Delta_out": d_h - delta,
        "d_out": d_h,
        "d_state": grads.d_c[:, 0, 0],
        **{f"d_{name}": d_gates[:, k] for k, name in enumerate(EXAMPLE_ORDER)},
        "d_x": grads.x,
        "Delta_out_prev": delta_out_prev,
        "dW": grads.weight_ih[FROM_TORCH],
        "dU": grads.weight_hh[FROM_TORCH, 0],
        "db": grads.bias_ih[FROM_TORCH],
    }
    v["W_new"] = np.array(example.W) - lr * v["dW"]  # plain SGD: W − λ·δW
    v["U_new"] = np.array(example.U) - lr * v["dU"]
    v["b_new"] = np.array(example.b) - lr * v["db"]
    return Solution(v, lr)
    # --8<-- [end:solve]


#: The quantities of each part of the example, as the page groups them.
PARTS = {
    "forward": ("a", "i", "f", "o", "state", "out"),
    "backward": ("Delta", "Delta_out", "d_out", "d_state", "d_a", "d_i", "d_f", "d_o", "d_x", "Delta_out_prev"),
    "gradients": ("dW", "dU", "db"),
    "updated": ("W_new", "U_new", "b_new"),
}


def _labels(shape: tuple[int, ...], per_step: bool) -> list[tuple[str, tuple[int, ...]]]:
    """A row label and index for each element of a quantity: per step for the passes, per gate for the weights."""
    out = []
    for index in np.ndindex(*shape):
        if per_step:
            where = f"t = {index[0]}" + (f", x{index[1] + 1}" if len(index) > 1 else "")
        else:
            gate = EXAMPLE_ORDER[index[0]]
            where = f"{gate}" + (f", x{index[1] + 1}" if len(index) > 1 else "")
        out.append((where, index))
    return out


def comparison(part: str) -> list[tuple[str, str, float, float]]:
    """``(quantity, where, computed, printed)`` for every printed number of one part of the example.

    Args:
        part: ``"forward"``, ``"backward"``, ``"gradients"`` or ``"updated"``.

    Raises:
        ValueError: For another part.
    """
    choice("part", part, tuple(PARTS))
    solution, printed = solve(), load().printed
    rows = []
    for name in PARTS[part]:
        computed = np.asarray(solution.values[name])
        shown = np.asarray(getattr(printed, name), dtype=float)
        for where, index in _labels(computed.shape, part in ("forward", "backward")):
            rows.append((name, where, float(computed[index]), float(shown[index])))
    return rows


def all_comparisons() -> list[tuple[str, str, float, float]]:
    """:func:`comparison` of every part, in order."""
    return [row for part in PARTS for row in comparison(part)]


def rounds_to(computed: float, printed: float) -> bool:
    """Whether ``printed`` is ``computed`` correctly rounded to five decimals (or to four, as ``1.5176`` is printed)."""
    return round(computed, 5) == printed or round(computed, 4) == printed


def agreement() -> tuple[int, int, float, tuple[str, str]]:
    """How the printed numbers agree with the exact ones.

    Returns:
        ``(correctly rounded, total, largest gap among the others, where it is)``.
    """
    rows = all_comparisons()
    off = [(abs(c - p), n, w) for n, w, c, p in rows if not rounds_to(c, p)]
    gap, name, where = max(off) if off else (0.0, "", "")
    return len(rows) - len(off), len(rows), gap, (name, where)


def setup_rows() -> tuple[list[str], list[list[object]]]:
    """The example's weights, one row per gate in its order, with the row each takes in torch's layout."""
    example = load()
    headers = ["gate (example)", "torch gate", "torch row", "W (x1)", "W (x2)", "U", "b"]
    rows = []
    for k, gate in enumerate(EXAMPLE_ORDER):
        torch_row = TO_TORCH.index(k)
        rows.append([gate, "ifgo"[torch_row], torch_row, *example.W[k], example.U[k], example.b[k]])
    return headers, rows
