"""An LSTM layer in numpy, forward and backward through time, laid out as ``torch.nn.LSTM`` stores it.

torch stacks the four gates in the order **i, f, g, o** (input, forget, cell candidate, output) along the first
axis of ``weight_ih (4H, I)`` and ``weight_hh (4H, H)``, and keeps two biases ``bias_ih`` and ``bias_hh`` of
shape ``(4H,)`` that are simply added:

    i = σ(W_ii x + b_ii + W_hi h + b_hi)      f = σ(W_if x + b_if + W_hf h + b_hf)
    g = tanh(W_ig x + b_ig + W_hg h + b_hg)   o = σ(W_io x + b_io + W_ho h + b_ho)
    c' = f ⊙ c + i ⊙ g                         h' = o ⊙ tanh(c')

Sources: the ``torch.nn.LSTM`` documentation (variables ``weight_ih_l[k]`` = ``(W_ii|W_if|W_ig|W_io)``); the
cell of S. Hochreiter and J. Schmidhuber, "Long Short-Term Memory", Neural Computation 9(8), 1997, with the forget
gate of F. A. Gers, J. Schmidhuber and F. Cummins, "Learning to Forget", Neural Computation 12(10), 2000.
"""

# ruff: noqa: N806  (matrix and size names W, U, E, H, dW follow the equations)

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpukb.arguments import array_size, non_negative_int, positive_int
from gpukb.sequences.rnn import as_matrix, as_vector, initial_state, output_grad, sequence_input, unbatch

#: torch's order of the gates along the stacked axis.
GATE_ORDER = ("i", "f", "g", "o")


def sigmoid(z: np.ndarray) -> np.ndarray:
    """The logistic function, without overflow for large negative ``z``."""
    return 0.5 * (1.0 + np.tanh(0.5 * z))


# --8<-- [start:lstm-params]
@dataclass(frozen=True)
class LSTMParams:
    """The parameters of one ``torch.nn.LSTM`` layer, in torch's layout (gates stacked i, f, g, o).

    Attributes:
        weight_ih: ``(4H, I)``.
        weight_hh: ``(4H, H)``.
        bias_ih: ``(4H,)``.
        bias_hh: ``(4H,)``; only ``bias_ih + bias_hh`` affects the output.
    """

    weight_ih: np.ndarray
    weight_hh: np.ndarray
    bias_ih: np.ndarray
    bias_hh: np.ndarray
    # --8<-- [end:lstm-params]

    def __post_init__(self) -> None:
        w_ih = as_matrix("weight_ih", self.weight_ih)
        rows = w_ih.shape[0]
        if rows == 0 or rows % 4:
            raise ValueError(
                f"weight_ih has {rows} rows; an LSTM stacks four gates, so it needs 4 × hidden_size "
                f"rows (shape (4H, I), gates in the order i, f, g, o)"
            )
        hidden = rows // 4
        w_hh = as_matrix("weight_hh", self.weight_hh)
        if w_hh.shape != (4 * hidden, hidden):
            raise ValueError(
                f"weight_hh has shape {w_hh.shape}; weight_ih {w_ih.shape} means hidden size {hidden}, "
                f"so weight_hh must be ({4 * hidden}, {hidden})"
            )
        object.__setattr__(self, "weight_ih", w_ih)
        object.__setattr__(self, "weight_hh", w_hh)
        object.__setattr__(self, "bias_ih", as_vector("bias_ih", self.bias_ih, 4 * hidden))
        object.__setattr__(self, "bias_hh", as_vector("bias_hh", self.bias_hh, 4 * hidden))

    @property
    def hidden_size(self) -> int:
        """H."""
        return self.weight_hh.shape[1]

    @property
    def input_size(self) -> int:
        """I."""
        return self.weight_ih.shape[1]

    @classmethod
    def random(cls, input_size: int, hidden_size: int, seed: int = 0) -> LSTMParams:
        """Weights drawn as torch draws them, uniform in ``±1/sqrt(H)``, from ``seed``.

        Raises:
            TypeError: For sizes or a seed that are not ints.
            ValueError: For sizes below 1, a negative seed, or weights past :data:`gpukb.arguments.MAX_ARRAY_ELEMENTS`.
        """
        input_size, hidden_size = positive_int("input_size", input_size), positive_int("hidden_size", hidden_size)
        array_size(f"the weights of input_size={input_size}, hidden_size={hidden_size}",
                   (4 * hidden_size, input_size + hidden_size))  # fmt: skip
        rng = np.random.default_rng(non_negative_int("seed", seed))
        k = 1 / np.sqrt(hidden_size)
        draw = lambda *shape: rng.uniform(-k, k, size=shape)  # noqa: E731
        h4 = 4 * hidden_size
        return cls(draw(h4, input_size), draw(h4, hidden_size), draw(h4), draw(h4))


@dataclass(frozen=True)
class LSTMTrace:
    """What the forward pass keeps: every gate and state of every step.

    Attributes:
        x: The input, ``(T, B, I)``.
        gates: Activated gates ``(T, B, 4H)`` in torch's order i, f, g, o (σ, σ, tanh, σ applied).
        c: Cell states ``c_0 .. c_T`` as ``(T + 1, B, H)``.
        h: Hidden states ``h_0 .. h_T`` as ``(T + 1, B, H)``.
        unbatched: The input was one sequence ``(T, I)``.
    """

    x: np.ndarray
    gates: np.ndarray
    c: np.ndarray
    h: np.ndarray
    unbatched: bool

    def gate(self, name: str) -> np.ndarray:
        """One gate over all steps, ``(T, B, H)``: ``"i"``, ``"f"``, ``"g"`` or ``"o"``."""
        k = GATE_ORDER.index(name)
        hidden = self.h.shape[2]
        return self.gates[:, :, k * hidden : (k + 1) * hidden]

    @property
    def outputs(self) -> np.ndarray:
        """``h_1 .. h_T``, torch's output: ``(T, B, H)`` (``(T, H)`` unbatched)."""
        return unbatch(self.h[1:], self.unbatched, 1)

    @property
    def final(self) -> tuple[np.ndarray, np.ndarray]:
        """``(h_T, c_T)``, torch's ``(h_n, c_n)`` without the layer axis."""
        return unbatch(self.h[-1], self.unbatched, 0), unbatch(self.c[-1], self.unbatched, 0)


@dataclass(frozen=True)
class LSTMGrads:
    """Gradients of a scalar loss, and the per-step deltas a worked example shows.

    Attributes:
        weight_ih, weight_hh, bias_ih, bias_hh: Parameter gradients (the two biases' are equal).
        x: ∂L/∂x_t, shaped like the input.
        h0, c0: ∂L/∂h_0 and ∂L/∂c_0.
        d_gates: ∂L/∂(pre-activation) of each gate, ``(T, B, 4H)`` in the order i, f, g, o.
        d_h: ∂L/∂h_t in total (from its output and from step t + 1), ``(T, B, H)`` for t = 1 .. T.
        d_c: ∂L/∂c_t in total, ``(T, B, H)`` for t = 1 .. T.
    """

    weight_ih: np.ndarray
    weight_hh: np.ndarray
    bias_ih: np.ndarray
    bias_hh: np.ndarray
    x: np.ndarray
    h0: np.ndarray
    c0: np.ndarray
    d_gates: np.ndarray
    d_h: np.ndarray
    d_c: np.ndarray


# --8<-- [start:lstm-forward]
def lstm_forward(params: LSTMParams, x: object, h0: object = None, c0: object = None) -> LSTMTrace:
    """Run the layer over a sequence.

    Args:
        params: The layer.
        x: ``(T, B, I)``, or ``(T, I)`` for one sequence.
        h0: Initial hidden state, ``(B, H)`` (``(H,)`` unbatched); zeros when ``None``.
        c0: Initial cell state, same shape; zeros when ``None``.

    Raises:
        TypeError: If an array is not numeric.
        ValueError: If a shape does not fit the layer (input size, hidden size, batch).
    """
    xs, unbatched = sequence_input(x, params.input_size)
    steps, batch, _ = xs.shape
    H = params.hidden_size
    h, c = np.empty((steps + 1, batch, H)), np.empty((steps + 1, batch, H))
    h[0] = initial_state("h0", h0, batch, H, unbatched)
    c[0] = initial_state("c0", c0, batch, H, unbatched)
    gates = np.empty((steps, batch, 4 * H))
    for t in range(steps):
        z = xs[t] @ params.weight_ih.T + params.bias_ih + h[t] @ params.weight_hh.T + params.bias_hh
        i, f, g, o = sigmoid(z[:, :H]), sigmoid(z[:, H : 2 * H]), np.tanh(z[:, 2 * H : 3 * H]), sigmoid(z[:, 3 * H :])
        gates[t] = np.concatenate([i, f, g, o], axis=1)
        c[t + 1] = f * c[t] + i * g
        h[t + 1] = o * np.tanh(c[t + 1])
    return LSTMTrace(xs, gates, c, h, unbatched)
    # --8<-- [end:lstm-forward]


# --8<-- [start:lstm-backward]
def lstm_backward(
    params: LSTMParams,
    trace: LSTMTrace,
    grad_outputs: object = None,
    grad_final_h: object = None,
    grad_final_c: object = None,
) -> LSTMGrads:
    """Backpropagation through time.

    Args:
        params: The layer the trace came from.
        trace: :func:`lstm_forward`'s result.
        grad_outputs: ∂L/∂h_t for every step, shaped like ``trace.outputs``; zeros when ``None``.
        grad_final_h: ∂L/∂h_T from outside (torch's ``h_n``).
        grad_final_c: ∂L/∂c_T from outside (torch's ``c_n``).

    Raises:
        ValueError: If a gradient's shape is not the one of the output it belongs to.
    """
    steps, batch, _ = trace.x.shape
    H = params.hidden_size
    g_out = output_grad("grad_outputs", grad_outputs, (steps, batch, H), trace.unbatched)
    d_h_next = output_grad("grad_final_h", grad_final_h, (batch, H), trace.unbatched).copy()
    d_c_next = output_grad("grad_final_c", grad_final_c, (batch, H), trace.unbatched).copy()
    d_w_ih, d_w_hh, d_b = np.zeros_like(params.weight_ih), np.zeros_like(params.weight_hh), np.zeros(4 * H)
    d_x, d_gates = np.zeros_like(trace.x), np.zeros_like(trace.gates)
    d_h_all, d_c_all = np.zeros((steps, batch, H)), np.zeros((steps, batch, H))
    for t in reversed(range(steps)):
        i, f, g, o = (trace.gates[t][:, k * H : (k + 1) * H] for k in range(4))
        tanh_c = np.tanh(trace.c[t + 1])
        d_h = g_out[t] + d_h_next  # δout_t = Δ_t + Δout_t
        d_c = d_h * o * (1 - tanh_c**2) + d_c_next  # δstate_t (d_c_next already carries f_{t+1})
        dz = np.concatenate(
            [
                d_c * g * i * (1 - i),  # input gate, through its sigmoid
                d_c * trace.c[t] * f * (1 - f),  # forget gate
                d_c * i * (1 - g**2),  # cell candidate, through its tanh
                d_h * tanh_c * o * (1 - o),  # output gate
            ],
            axis=1,
        )
        d_gates[t], d_h_all[t], d_c_all[t] = dz, d_h, d_c
        d_w_ih += dz.T @ trace.x[t]
        d_w_hh += dz.T @ trace.h[t]
        d_b += dz.sum(axis=0)
        d_x[t] = dz @ params.weight_ih
        d_h_next = dz @ params.weight_hh  # Δout_{t-1}
        d_c_next = d_c * f  # the cell's only path back: times f, no matrix
    return LSTMGrads(
        d_w_ih,
        d_w_hh,
        d_b,
        d_b.copy(),
        unbatch(d_x, trace.unbatched, 1),
        unbatch(d_h_next, trace.unbatched, 0),
        unbatch(d_c_next, trace.unbatched, 0),
        d_gates,
        d_h_all,
        d_c_all,
    )
    # --8<-- [end:lstm-backward]
