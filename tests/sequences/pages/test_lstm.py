"""The cell checks of docs/sequences/lstm.md (``gpukb.sequences.pages.lstm``)."""

# ruff: noqa: N806  (matrix and size names W, U, E, H, dW follow the equations)

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from gpukb.sequences.pages import lstm as page
from tests.helpers import ROOT, markdown_tables, outside_tables

_LSTM_FILE = tomllib.loads((ROOT / "src/gpukb/data/sequences/lstm_example.toml").read_text(encoding="utf-8"))


LSTM_RAW = {"example": _LSTM_FILE["example"][0], "printed": _LSTM_FILE["example"][0]["printed"]}


NAMES = {  # the page's label of each quantity → the data file's key
    "a (input activation)": "a",
    "i (input gate)": "i",
    "f (forget gate)": "f",
    "o (output gate)": "o",
    "state (cell c)": "state",
    "out (h)": "out",
    "Δ = out − y": "Delta",
    "Δout (from t + 1)": "Delta_out",
    "δout": "d_out",
    "δstate": "d_state",
    "δa": "d_a",
    "δi": "d_i",
    "δf": "d_f",
    "δo": "d_o",
    "δx": "d_x",
    "Δout(t − 1)": "Delta_out_prev",
    "δW": "dW",
    "δU": "dU",
    "δb": "db",
    "W": "W_new",
    "U": "U_new",
    "b": "b_new",
}


GATES = "aifo"


def _torch_example() -> dict[str, np.ndarray]:
    """The worked example by hand in torch ops, every intermediate's gradient from autograd (retain_grad)."""
    ex = LSTM_RAW["example"]
    W = torch.tensor(ex["W"], dtype=torch.float64, requires_grad=True)
    U = torch.tensor(ex["U"], dtype=torch.float64, requires_grad=True)
    b = torch.tensor(ex["b"], dtype=torch.float64, requires_grad=True)
    xs = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in ex["x"]]
    h_init = torch.zeros((), dtype=torch.float64, requires_grad=True)
    h, c = h_init, torch.zeros((), dtype=torch.float64)
    keep: dict[str, list[torch.Tensor]] = {k: [] for k in ("z", "gates", "c", "h")}
    loss = 0
    for x, y in zip(xs, ex["labels"], strict=True):
        z = W @ x + U * h + b
        z.retain_grad()
        gates = torch.cat([torch.tanh(z[:1]), torch.sigmoid(z[1:])])
        c = gates[2] * c + gates[0] * gates[1]
        h = gates[3] * torch.tanh(c)
        c.retain_grad()
        h.retain_grad()
        for k, v in (("z", z), ("gates", gates), ("c", c), ("h", h)):
            keep[k].append(v)
        loss = loss + 0.5 * (h - y) ** 2
    loss.backward()
    out = np.array([v.item() for v in keep["h"]])
    delta = out - np.array(ex["labels"])
    d_out = np.array([v.grad.item() for v in keep["h"]])
    dz = np.array([v.grad.numpy() for v in keep["z"]])
    lr = ex["learning_rate"]
    values = {g: np.array([v[k].item() for v in keep["gates"]]) for k, g in enumerate(GATES)}
    values.update(
        {
            "state": np.array([v.item() for v in keep["c"]]),
            "out": out,
            "Delta": delta,
            "Delta_out": d_out - delta,
            "d_out": d_out,
            "d_state": np.array([v.grad.item() for v in keep["c"]]),
            **{f"d_{g}": dz[:, k] for k, g in enumerate(GATES)},
            "d_x": np.array([x.grad.numpy() for x in xs]),
            "Delta_out_prev": np.array([h_init.grad.item(), (d_out - delta)[0]]),
            "dW": W.grad.numpy(),
            "dU": U.grad.numpy(),
            "db": b.grad.numpy(),
            "W_new": W.detach().numpy() - lr * W.grad.numpy(),
            "U_new": U.detach().numpy() - lr * U.grad.numpy(),
            "b_new": b.detach().numpy() - lr * b.grad.numpy(),
        }
    )
    return values


def _index(key: str, where: str) -> tuple[int, ...]:
    """'t = 1, x2' → (1, 1); 'f, x1' → (2, 0); 'o' → (3,)."""
    parts = [p.strip() for p in where.split(",")]
    first = int(parts[0][4:]) if parts[0].startswith("t = ") else GATES.index(parts[0])
    return (first, int(parts[1][1:]) - 1) if len(parts) > 1 else (first,)


def check_lstm_example(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    assert outside_tables(markdown) == []  # the block prints the table alone
    exact = _torch_example()
    part = kwargs["args"][0] if kwargs["args"] else kwargs["part"]
    expected_keys = {
        "forward": "a i f o state out",
        "backward": "Delta Delta_out d_out d_state d_a d_i d_f d_o d_x Delta_out_prev",
        "gradients": "dW dU db",
        "updated": "W_new U_new b_new",
    }[part].split()
    assert [k for k in dict.fromkeys(NAMES[r["quantity"]] for r in table)] == expected_keys
    assert len(table) == sum(np.size(LSTM_RAW["printed"][k]) for k in expected_keys)
    for row in table:
        key = NAMES[row["quantity"]]
        index = _index(key, row["t or gate"])
        computed = float(exact[key][index])
        printed = float(np.asarray(LSTM_RAW["printed"][key])[index])
        assert float(row["computed"]) == pytest.approx(computed, abs=5e-7), row
        assert float(row["printed"]) == printed, row
        assert float(row["printed − computed"]) == pytest.approx(printed - computed, rel=0.06, abs=1e-12), row
        rounded = round(computed, 5) == printed or round(computed, 4) == printed
        assert row["correctly rounded"] == ("yes" if rounded else "no"), row


def check_lstm_example_summary(markdown: str, kwargs: dict[str, Any]) -> None:
    """The counts and the largest gap over every printed number of the data file, against torch's exact values,
    rounded as the table's check rounds them."""
    exact = _torch_example()
    seen = []  # (|printed - exact|, correctly rounded) for every printed number
    for key, printed in LSTM_RAW["printed"].items():
        for index, p in np.ndenumerate(np.asarray(printed, dtype=float)):
            c = float(exact[key][index])
            seen.append((abs(p - c), round(c, 5) == p or round(c, 4) == p))
    same = sum(ok for _, ok in seen)
    gap = max(g for g, ok in seen if not ok)
    found = re.fullmatch(
        r"(\d+) of the (\d+) printed numbers are the exact values correctly rounded; the other (\d+) differ in the "
        r"last printed digit, by at most (\S+) \((.+)\)\.\n",
        markdown,
    )
    assert found, markdown
    assert [int(n) for n in found.groups()[:3]] == [same, len(seen), len(seen) - same]
    assert found[4] == f"{gap:.1e}"


def check_lstm_example_setup(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    ex = LSTM_RAW["example"]
    torch_name = {"a": "g", "i": "i", "f": "f", "o": "o"}  # torch.nn.LSTM: i, f, g, o
    assert [r["gate (example)"] for r in table] == ex["gate_order"] == list(GATES)
    for k, row in enumerate(table):
        gate = row["gate (example)"]
        assert row["torch gate"] == torch_name[gate]
        assert int(row["torch row"]) == "ifgo".index(torch_name[gate])
        assert [float(row["W (x1)"]), float(row["W (x2)"])] == ex["W"][k]
        assert (float(row["U"]), float(row["b"])) == (ex["U"][k], ex["b"][k])
    # the sentence under the table: the inputs, labels and learning rate of the data file, and its source
    xs = ", ".join(f"x{t} = ({', '.join(f'{v:g}' for v in x)})" for t, x in enumerate(ex["x"]))
    ys = ", ".join(f"y{t} = {y:g}" for t, y in enumerate(ex["labels"]))
    assert outside_tables(markdown) == [
        f"Inputs {xs}; labels {ys}; learning rate λ = {ex['learning_rate']:g}. Source: {ex['author']}, "
        f"[{ex['title']}]({ex['url']}), {ex['published']:%d %B %Y} (read {ex['checked']})."
    ]


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "lstm_example": check_lstm_example,
    "lstm_example_setup": check_lstm_example_setup,
    "lstm_example_summary": check_lstm_example_summary,
}


def test_a_wrong_printed_value_fails_the_check() -> None:
    markdown = page.lstm_example("forward").replace("| 0.81775 |", "| 0.81776 |", 1)
    with pytest.raises(AssertionError):
        check_lstm_example(markdown, {"args": ("forward",)})
