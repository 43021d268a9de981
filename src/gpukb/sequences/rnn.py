"""An Elman RNN layer in numpy, forward and backward through time, laid out as ``torch.nn.RNN`` stores it.

One layer, time-major input ``(T, B, I)`` (or ``(T, I)`` for one sequence), parameters ``weight_ih (H, I)``,
``weight_hh (H, H)`` and the two biases ``bias_ih``, ``bias_hh`` of shape ``(H,)``:

    h_t = φ(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh),   φ = tanh or relu.

Everything is computed in float64. The shape checks here are shared with :mod:`gpukb.sequences.lstm`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Literal

import numpy as np

from gpukb.arguments import array_size, choice, non_negative_int, positive_int, real

#: The widest uniform draw ``±scale`` numpy can make: its range, ``2 · scale``, must be a float.
MAX_SCALE = sys.float_info.max / 2

#: The nonlinearities ``torch.nn.RNN`` offers.
NONLINEARITIES = ("tanh", "relu")


def as_matrix(name: str, value: object, rows: int | None = None, cols: int | None = None) -> np.ndarray:
    """``value`` as a float64 matrix, with ``rows`` rows and ``cols`` columns where given.

    Raises:
        TypeError: If it is not numeric.
        ValueError: If it is not 2-D or has the wrong shape.
    """
    array = _numeric(name, value)
    if array.ndim != 2:
        raise ValueError(f"{name} must be a matrix (2-D); got shape {array.shape}")
    if (rows is not None and array.shape[0] != rows) or (cols is not None and array.shape[1] != cols):
        want = f"({'?' if rows is None else rows}, {'?' if cols is None else cols})"
        raise ValueError(f"{name} has shape {array.shape}; expected {want}")
    return array


def as_vector(name: str, value: object, size: int) -> np.ndarray:
    """``value`` as a float64 vector of ``size`` elements.

    Raises:
        TypeError: If it is not numeric.
        ValueError: If its shape is not ``(size,)``.
    """
    array = _numeric(name, value)
    if array.shape != (size,):
        raise ValueError(f"{name} has shape {array.shape}; expected ({size},)")
    return array


def _numeric(name: str, value: object) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype == object or not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
        raise TypeError(f"{name} must be an array of numbers; got dtype {array.dtype}")
    if array.dtype == bool:
        raise TypeError(f"{name} must be an array of numbers, not booleans")
    return array.astype(np.float64)


def sequence_input(x: object, input_size: int) -> tuple[np.ndarray, bool]:
    """The input as ``(T, B, I)`` float64, and whether it was one unbatched sequence ``(T, I)``.

    Raises:
        TypeError: If it is not numeric.
        ValueError: If it is not 2-D or 3-D, is empty in time or batch, or its feature size is not ``input_size``.
    """
    array = _numeric("x", x)
    if array.ndim not in (2, 3):
        raise ValueError(f"x must be (T, I) or (T, B, I); got shape {array.shape}")
    unbatched = array.ndim == 2
    if unbatched:
        array = array[:, None, :]
    steps, batch, features = array.shape
    if steps == 0 or batch == 0:
        raise ValueError(f"x must hold at least one step of one sequence; got shape {array.shape}")
    if features != input_size:
        raise ValueError(f"x has {features} features per step; the weights expect input_size = {input_size}")
    return array, unbatched


def initial_state(name: str, value: object, batch: int, hidden: int, unbatched: bool) -> np.ndarray:
    """An initial state (``h0`` or ``c0``) as ``(B, H)``: zeros when ``None``; ``(H,)`` for unbatched input.

    Raises:
        ValueError: If its shape is not ``(B, H)`` (``(H,)`` for unbatched input).
    """
    if value is None:
        return np.zeros((batch, hidden))
    array = _numeric(name, value)
    want = (hidden,) if unbatched else (batch, hidden)
    if array.shape != want:
        raise ValueError(
            f"{name} has shape {array.shape}; with hidden size {hidden} and batch {batch} it must be {want}"
        )
    return array.reshape(batch, hidden)


def output_grad(name: str, value: object, shape: tuple[int, ...], unbatched: bool) -> np.ndarray:
    """An upstream gradient, reshaped to the batched ``shape``; ``None`` is zeros.

    Raises:
        ValueError: If its shape is not the one of what it is the gradient of.
    """
    if value is None:
        return np.zeros(shape)
    array = _numeric(name, value)
    want = (shape[0], shape[2]) if unbatched and len(shape) == 3 else (shape[1],) if unbatched else shape
    if array.shape != want:
        raise ValueError(f"{name} has shape {array.shape}; it must match the output it belongs to, {want}")
    return array.reshape(shape)


def unbatch(array: np.ndarray, unbatched: bool, axis: int) -> np.ndarray:
    """Drop the batch axis that :func:`sequence_input` added to an unbatched sequence."""
    return np.squeeze(array, axis=axis) if unbatched else array


# --8<-- [start:rnn-params]
@dataclass(frozen=True)
class RNNParams:
    """The parameters of one ``torch.nn.RNN`` layer, in torch's layout.

    Attributes:
        weight_ih: ``(H, I)``, applied to the input.
        weight_hh: ``(H, H)``, applied to the previous hidden state.
        bias_ih: ``(H,)``.
        bias_hh: ``(H,)``; torch keeps two biases, only their sum matters to the output.
        nonlinearity: ``"tanh"`` (torch's default) or ``"relu"``.
    """

    weight_ih: np.ndarray
    weight_hh: np.ndarray
    bias_ih: np.ndarray
    bias_hh: np.ndarray
    nonlinearity: Literal["tanh", "relu"] = "tanh"
    # --8<-- [end:rnn-params]

    def __post_init__(self) -> None:
        choice("nonlinearity", self.nonlinearity, NONLINEARITIES)
        w_ih = as_matrix("weight_ih", self.weight_ih)
        hidden = w_ih.shape[0]
        object.__setattr__(self, "weight_ih", w_ih)
        object.__setattr__(self, "weight_hh", as_matrix("weight_hh", self.weight_hh, hidden, hidden))
        object.__setattr__(self, "bias_ih", as_vector("bias_ih", self.bias_ih, hidden))
        object.__setattr__(self, "bias_hh", as_vector("bias_hh", self.bias_hh, hidden))

    @property
    def hidden_size(self) -> int:
        """H."""
        return self.weight_hh.shape[0]

    @property
    def input_size(self) -> int:
        """I."""
        return self.weight_ih.shape[1]

    @classmethod
    def random(
        cls,
        input_size: int,
        hidden_size: int,
        seed: int = 0,
        scale: float | None = None,
        nonlinearity: Literal["tanh", "relu"] = "tanh",
    ) -> RNNParams:
        """Weights drawn as torch draws them, uniform in ``±1/sqrt(H)`` (or ``±scale``), from ``seed``.

        Raises:
            TypeError: For sizes or a seed that are not ints, a scale that is not a real number.
            ValueError: For sizes below 1, a negative seed, a scale that is not finite and positive, an unknown
                nonlinearity, or weights past :data:`gpukb.arguments.MAX_ARRAY_ELEMENTS`.
        """
        input_size, hidden_size = positive_int("input_size", input_size), positive_int("hidden_size", hidden_size)
        array_size(f"the weights of input_size={input_size}, hidden_size={hidden_size}",
                   (hidden_size, input_size + hidden_size))  # fmt: skip
        rng = np.random.default_rng(non_negative_int("seed", seed))
        k = 1 / np.sqrt(hidden_size) if scale is None else real("scale", scale, positive=True, maximum=MAX_SCALE)
        draw = lambda *shape: rng.uniform(-k, k, size=shape)  # noqa: E731
        return cls(
            draw(hidden_size, input_size),
            draw(hidden_size, hidden_size),
            draw(hidden_size),
            draw(hidden_size),
            nonlinearity,
        )


@dataclass(frozen=True)
class RNNTrace:
    """What the forward pass keeps for the backward pass.

    Attributes:
        x: The input, ``(T, B, I)``.
        h: Hidden states ``h_0 .. h_T`` as ``(T + 1, B, H)``: ``h[0]`` is the initial state.
        unbatched: The input was one sequence ``(T, I)``.
    """

    x: np.ndarray
    h: np.ndarray
    unbatched: bool

    @property
    def outputs(self) -> np.ndarray:
        """``h_1 .. h_T``, what ``torch.nn.RNN`` returns as its output: ``(T, B, H)`` (``(T, H)`` unbatched)."""
        return unbatch(self.h[1:], self.unbatched, 1)

    @property
    def final(self) -> np.ndarray:
        """``h_T`` (torch's ``h_n`` without its layer axis)."""
        return unbatch(self.h[-1], self.unbatched, 0)


@dataclass(frozen=True)
class RNNGrads:
    """Gradients of a scalar loss with respect to the parameters, the input and the initial state.

    ``bias_ih`` and ``bias_hh`` are equal: each receives the full gradient of the pre-activation.
    """

    weight_ih: np.ndarray
    weight_hh: np.ndarray
    bias_ih: np.ndarray
    bias_hh: np.ndarray
    x: np.ndarray
    h0: np.ndarray


# --8<-- [start:rnn-forward]
def rnn_forward(params: RNNParams, x: object, h0: object = None) -> RNNTrace:
    """Run the layer over a sequence: ``h_t = φ(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)``.

    Args:
        params: The layer.
        x: ``(T, B, I)``, or ``(T, I)`` for one sequence.
        h0: ``(B, H)`` (``(H,)`` unbatched); zeros when ``None``.

    Raises:
        TypeError: If an array is not numeric.
        ValueError: If a shape does not fit the layer (input size, hidden size, batch).
    """
    xs, unbatched = sequence_input(x, params.input_size)
    steps, batch, _ = xs.shape
    h = np.empty((steps + 1, batch, params.hidden_size))
    h[0] = initial_state("h0", h0, batch, params.hidden_size, unbatched)
    act = np.tanh if params.nonlinearity == "tanh" else (lambda z: np.maximum(z, 0.0))
    for t in range(steps):
        z = xs[t] @ params.weight_ih.T + params.bias_ih + h[t] @ params.weight_hh.T + params.bias_hh
        h[t + 1] = act(z)
    return RNNTrace(xs, h, unbatched)
    # --8<-- [end:rnn-forward]


# --8<-- [start:rnn-backward]
def rnn_backward(
    params: RNNParams, trace: RNNTrace, grad_outputs: object = None, grad_final: object = None
) -> RNNGrads:
    """Backpropagation through time.

    Args:
        params: The layer the trace came from.
        trace: :func:`rnn_forward`'s result.
        grad_outputs: ∂L/∂h_t for every step, shaped like ``trace.outputs``; zeros when ``None``.
        grad_final: ∂L/∂h_T arriving from outside the outputs (torch's ``h_n``); zeros when ``None``.

    Raises:
        ValueError: If a gradient's shape is not the one of the output it belongs to.
    """
    steps, batch, _ = trace.x.shape
    hidden = params.hidden_size
    g_out = output_grad("grad_outputs", grad_outputs, (steps, batch, hidden), trace.unbatched)
    g_h = output_grad("grad_final", grad_final, (batch, hidden), trace.unbatched).copy()
    d_w_ih, d_w_hh, d_b = np.zeros_like(params.weight_ih), np.zeros_like(params.weight_hh), np.zeros(hidden)
    d_x = np.zeros_like(trace.x)
    for t in reversed(range(steps)):
        g_h = g_h + g_out[t]  # everything that reaches h_{t+1}: its own output and step t+2
        h_new = trace.h[t + 1]
        dz = g_h * (1 - h_new**2) if params.nonlinearity == "tanh" else g_h * (h_new > 0)
        d_w_ih += dz.T @ trace.x[t]
        d_w_hh += dz.T @ trace.h[t]
        d_b += dz.sum(axis=0)
        d_x[t] = dz @ params.weight_ih
        g_h = dz @ params.weight_hh  # on to h_t
    return RNNGrads(d_w_ih, d_w_hh, d_b, d_b.copy(), unbatch(d_x, trace.unbatched, 1), unbatch(g_h, trace.unbatched, 0))
    # --8<-- [end:rnn-backward]
