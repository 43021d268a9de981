"""The page “RNN and LSTM cells, forward and backward through time” (docs/sequences/lstm.md): its tables, figures and
text.
"""

from __future__ import annotations

from gpukb.sequences import worked_example
from gpukb.tables import markdown_table

#: What a quantity of the worked example is called on the page.
SYMBOLS = {
    "a": "a (input activation)",
    "i": "i (input gate)",
    "f": "f (forget gate)",
    "o": "o (output gate)",
    "state": "state (cell c)",
    "out": "out (h)",
    "Delta": "Δ = out − y",
    "Delta_out": "Δout (from t + 1)",
    "d_out": "δout",
    "d_state": "δstate",
    "d_a": "δa",
    "d_i": "δi",
    "d_f": "δf",
    "d_o": "δo",
    "d_x": "δx",
    "Delta_out_prev": "Δout(t − 1)",
    "dW": "δW",
    "dU": "δU",
    "db": "δb",
    "W_new": "W",
    "U_new": "U",
    "b_new": "b",
}


def lstm_example_setup() -> str:
    """The example's weights with the torch row each gate moves to, its inputs, labels and learning rate."""
    example = worked_example.load()
    xs = ", ".join(f"x{t} = ({', '.join(f'{v:g}' for v in x)})" for t, x in enumerate(example.x))
    ys = ", ".join(f"y{t} = {y:g}" for t, y in enumerate(example.labels))
    return (
        markdown_table(*worked_example.setup_rows())
        + "\n\n"
        + f"Inputs {xs}; labels {ys}; learning rate λ = {example.learning_rate:g}. Source: "
        + f"{example.author}, [{example.title}]({example.url}), {example.published:%d %B %Y} "
        + f"(read {example.checked})."
        + "\n"
    )


def lstm_example(part: str) -> str:
    """One part of the example (``forward``, ``backward``, ``gradients``, ``updated``): computed next to printed.

    The computed value is shown with six decimals, one more than the example prints, so a last-digit difference
    shows where it comes from.
    """
    rows = []
    for name, where, computed, printed in worked_example.comparison(part):
        same = "yes" if worked_example.rounds_to(computed, printed) else "no"
        rows.append([SYMBOLS[name], where, f"{computed + 0.0:.6f}", f"{printed:g}", f"{printed - computed:+.1e}", same])
    headers = ["quantity", "t or gate", "computed", "printed", "printed − computed", "correctly rounded"]
    return markdown_table(headers, rows) + "\n"


def lstm_example_summary() -> str:
    """One sentence: how many printed numbers are the exact values correctly rounded, and the largest gap."""
    same, total, gap, (name, where) = worked_example.agreement()
    return (
        f"{same} of the {total} printed numbers are the exact values correctly rounded; the other "
        f"{total - same} differ in the last printed digit, by at most {gap:.1e} ({SYMBOLS[name]}, {where}).\n"
    )
