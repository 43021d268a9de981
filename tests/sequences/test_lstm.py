"""The numpy RNN and LSTM against torch autograd with the same weights, their shape checks, and the forget gate."""

# ruff: noqa: N806  (matrix and size names W, U, E, H, dW follow the equations)

from __future__ import annotations

import sys

import numpy as np
import pytest
import torch

from gpukb.sequences.lstm import LSTMParams, lstm_backward, lstm_forward, sigmoid
from gpukb.sequences.rnn import RNNParams, as_matrix, output_grad, rnn_backward, rnn_forward
from gpukb.sequences.seq2seq import Seq2Seq
from tests.helpers import raises_exactly

TOL = 1e-12


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().numpy()


def _close(ours: np.ndarray, theirs: torch.Tensor) -> None:
    assert ours.shape == tuple(theirs.shape)
    np.testing.assert_allclose(ours, _np(theirs), rtol=0, atol=TOL)


@pytest.mark.parametrize(("steps", "batch", "inputs", "hidden"), [(1, 1, 1, 1), (5, 3, 4, 6), (7, 2, 3, 2)])
def test_lstm_forward_and_all_gradients_equal_torch_autograd(steps: int, batch: int, inputs: int, hidden: int) -> None:
    torch.manual_seed(steps * 100 + hidden)
    lstm = torch.nn.LSTM(inputs, hidden).double()
    x = torch.randn(steps, batch, inputs, dtype=torch.float64, requires_grad=True)
    h0, c0 = (torch.randn(1, batch, hidden, dtype=torch.float64, requires_grad=True) for _ in range(2))
    out, (h_n, c_n) = lstm(x, (h0, c0))
    g, gh, gc = torch.randn_like(out), torch.randn_like(h_n), torch.randn_like(c_n)
    ((out * g).sum() + (h_n * gh).sum() + (c_n * gc).sum()).backward()

    params = LSTMParams(_np(lstm.weight_ih_l0), _np(lstm.weight_hh_l0), _np(lstm.bias_ih_l0), _np(lstm.bias_hh_l0))
    trace = lstm_forward(params, _np(x), _np(h0[0]), _np(c0[0]))
    _close(trace.outputs, out)
    _close(trace.final[0], h_n[0])
    _close(trace.final[1], c_n[0])
    grads = lstm_backward(params, trace, _np(g), _np(gh[0]), _np(gc[0]))
    _close(grads.weight_ih, lstm.weight_ih_l0.grad)
    _close(grads.weight_hh, lstm.weight_hh_l0.grad)
    _close(grads.bias_ih, lstm.bias_ih_l0.grad)
    _close(grads.bias_hh, lstm.bias_hh_l0.grad)
    _close(grads.x, x.grad)
    _close(grads.h0, h0.grad[0])
    _close(grads.c0, c0.grad[0])
    assert np.abs(grads.weight_ih).max() > 1e-3  # the gradients are not trivially zero


def test_gate_order_is_i_f_g_o_as_torch_stacks_them() -> None:
    """Swapping two gates' rows changes the output: the order matters, and i, f, g, o is the one torch uses."""
    torch.manual_seed(1)
    lstm = torch.nn.LSTM(3, 2).double()
    x = torch.randn(4, 3, dtype=torch.float64)
    ref = _np(lstm(x)[0])
    params = LSTMParams(_np(lstm.weight_ih_l0), _np(lstm.weight_hh_l0), _np(lstm.bias_ih_l0), _np(lstm.bias_hh_l0))
    np.testing.assert_allclose(lstm_forward(params, _np(x)).outputs, ref, atol=TOL, rtol=0)
    H = 2
    swap = np.r_[0:H, H : 2 * H, 3 * H : 4 * H, 2 * H : 3 * H]  # i, f, o, g: another common way to write the stack
    swapped = LSTMParams(params.weight_ih[swap], params.weight_hh[swap], params.bias_ih[swap], params.bias_hh[swap])
    assert np.abs(lstm_forward(swapped, _np(x)).outputs - ref).max() > 1e-2


def test_only_the_sum_of_the_two_biases_matters_and_both_get_the_same_gradient() -> None:
    p = LSTMParams.random(3, 4, seed=2)
    moved = LSTMParams(p.weight_ih, p.weight_hh, p.bias_ih + 0.3, p.bias_hh - 0.3)
    x = np.random.default_rng(3).standard_normal((5, 3))
    a, b = lstm_forward(p, x), lstm_forward(moved, x)
    np.testing.assert_allclose(a.outputs, b.outputs, atol=1e-15, rtol=0)
    grads = lstm_backward(p, a, np.ones_like(a.outputs))
    np.testing.assert_array_equal(grads.bias_ih, grads.bias_hh)


def test_sgd_moves_the_sum_of_torchs_two_biases_twice_as_far() -> None:
    torch.manual_seed(10)
    lstm = torch.nn.LSTM(2, 3).double()
    before = (lstm.bias_ih_l0 + lstm.bias_hh_l0).detach().clone()
    lstm(torch.randn(4, 2, dtype=torch.float64))[0].sum().backward()
    grad = lstm.bias_ih_l0.grad.clone()
    with torch.no_grad():  # a plain SGD step on every parameter, as torch.optim.SGD(lr=0.1) takes it
        for p in lstm.parameters():
            p -= 0.1 * p.grad
    moved = (lstm.bias_ih_l0 + lstm.bias_hh_l0).detach() - before
    np.testing.assert_allclose(moved.numpy(), -2 * 0.1 * grad.numpy(), rtol=1e-12, atol=1e-15)
    assert grad.abs().max() > 1e-3


def test_unbatched_input_matches_torch_and_keeps_its_shape() -> None:
    torch.manual_seed(4)
    lstm = torch.nn.LSTM(2, 3).double()
    x = torch.randn(4, 2, dtype=torch.float64, requires_grad=True)
    out, _ = lstm(x)
    out.sum().backward()
    params = LSTMParams(_np(lstm.weight_ih_l0), _np(lstm.weight_hh_l0), _np(lstm.bias_ih_l0), _np(lstm.bias_hh_l0))
    trace = lstm_forward(params, _np(x))
    _close(trace.outputs, out)
    grads = lstm_backward(params, trace, np.ones((4, 3)))
    _close(grads.x, x.grad)
    assert grads.h0.shape == (3,)


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
def test_rnn_forward_and_all_gradients_equal_torch_autograd(nonlinearity: str) -> None:
    torch.manual_seed(5)
    rnn = torch.nn.RNN(4, 5, nonlinearity=nonlinearity).double()
    x = torch.randn(6, 2, 4, dtype=torch.float64, requires_grad=True)
    h0 = torch.randn(1, 2, 5, dtype=torch.float64, requires_grad=True)
    out, h_n = rnn(x, h0)
    g, gh = torch.randn_like(out), torch.randn_like(h_n)
    ((out * g).sum() + (h_n * gh).sum()).backward()
    params = RNNParams(
        _np(rnn.weight_ih_l0), _np(rnn.weight_hh_l0), _np(rnn.bias_ih_l0), _np(rnn.bias_hh_l0), nonlinearity
    )
    trace = rnn_forward(params, _np(x), _np(h0[0]))
    _close(trace.outputs, out)
    grads = rnn_backward(params, trace, _np(g), _np(gh[0]))
    for ours, theirs in [
        (grads.weight_ih, rnn.weight_ih_l0.grad),
        (grads.weight_hh, rnn.weight_hh_l0.grad),
        (grads.bias_ih, rnn.bias_ih_l0.grad),
        (grads.bias_hh, rnn.bias_hh_l0.grad),
        (grads.x, x.grad),
        (grads.h0, h0.grad[0]),
    ]:
        _close(ours, theirs)


def test_forget_gate_fixed_open_is_the_constant_error_carousel() -> None:
    """With f = 1 (a forget bias so large that σ rounds to 1) the cell is the 1997 LSTM's: c_t = c_{t-1} + i ⊙ g, and
    the error on c_t flows back along the cell unchanged, however many steps (the recurrent weights are zeroed so
    that the cell's own path is the only one); with a learned forget gate it is scaled by the product of the f's."""
    p = LSTMParams.random(2, 3, seed=6)
    H = 3
    b = p.bias_ih.copy()
    b[H : 2 * H] = 50.0  # σ(50) == 1.0 in float64
    no_recurrence = np.zeros_like(p.weight_hh)
    open_gate = LSTMParams(p.weight_ih, no_recurrence, b, p.bias_hh)
    learned = LSTMParams(p.weight_ih, no_recurrence, p.bias_ih, p.bias_hh)
    x = np.random.default_rng(7).standard_normal((40, 2))
    trace = lstm_forward(open_gate, x)
    assert np.all(trace.gate("f") == 1.0)
    np.testing.assert_allclose(np.diff(trace.c[:, 0], axis=0), (trace.gate("i") * trace.gate("g"))[:, 0], atol=1e-14)
    seed = np.array([1.0, -2.0, 0.5])
    np.testing.assert_array_equal(lstm_backward(open_gate, trace, grad_final_c=seed).c0, seed)  # no decay in 40 steps
    learned_trace = lstm_forward(learned, x)
    decayed = lstm_backward(learned, learned_trace, grad_final_c=seed).c0
    np.testing.assert_allclose(decayed, seed * np.prod(learned_trace.gate("f")[:, 0], axis=0), rtol=1e-12)
    assert np.abs(decayed).max() < 1e-3  # forty forget gates below 1 have shrunk it


def test_lstm_output_stays_inside_minus_one_one() -> None:
    """h = o ⊙ tanh(c) with o in (0, 1): no label outside (−1, 1) can be reached (1.25 included)."""
    p = LSTMParams.random(2, 4, seed=8)
    big = LSTMParams(p.weight_ih * 50, p.weight_hh * 50, p.bias_ih * 50, p.bias_hh * 50)
    out = lstm_forward(big, np.random.default_rng(9).standard_normal((30, 5, 2)) * 10).outputs
    assert np.abs(out).max() <= 1.0
    assert sigmoid(np.array([-800.0, 800.0])).tolist() == [0.0, 1.0]  # no overflow warning either way


# --- bad input ----------------------------------------------------------------------------------------------------


def test_lstm_weights_must_stack_four_gates() -> None:
    with pytest.raises(ValueError, match=r"weight_ih has 6 rows; an LSTM stacks four gates"):
        LSTMParams(np.zeros((6, 2)), np.zeros((6, 6)), np.zeros(6), np.zeros(6))
    with pytest.raises(ValueError, match=r"weight_hh has shape \(8, 3\); weight_ih \(8, 2\) means hidden size 2"):
        LSTMParams(np.zeros((8, 2)), np.zeros((8, 3)), np.zeros(8), np.zeros(8))
    with pytest.raises(ValueError, match=r"bias_hh has shape \(4,\); expected \(8,\)"):
        LSTMParams(np.zeros((8, 2)), np.zeros((8, 2)), np.zeros(8), np.zeros(4))
    with pytest.raises(TypeError, match=r"weight_ih must be an array of numbers"):
        LSTMParams([["a"]], np.zeros((4, 1)), np.zeros(4), np.zeros(4))


def test_inputs_and_states_must_fit_the_layer() -> None:
    p = LSTMParams.random(3, 2)
    with pytest.raises(ValueError, match=r"x has 4 features per step; the weights expect input_size = 3"):
        lstm_forward(p, np.zeros((5, 4)))
    with pytest.raises(ValueError, match=r"x must be \(T, I\) or \(T, B, I\); got shape \(3,\)"):
        lstm_forward(p, np.zeros(3))
    with pytest.raises(ValueError, match=r"at least one step"):
        lstm_forward(p, np.zeros((0, 1, 3)))
    with pytest.raises(ValueError, match=r"h0 has shape \(2, 3\); with hidden size 2 and batch 2 it must be \(2, 2\)"):
        lstm_forward(p, np.zeros((5, 2, 3)), h0=np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"c0 has shape \(1, 2\); with hidden size 2 and batch 1 it must be \(2,\)"):
        lstm_forward(p, np.zeros((5, 3)), c0=np.zeros((1, 2)))
    trace = lstm_forward(p, np.zeros((5, 3)))
    with pytest.raises(ValueError, match=r"grad_outputs has shape \(5, 3\); it must match .* \(5, 2\)"):
        lstm_backward(p, trace, np.zeros((5, 3)))


def test_rnn_checks_its_shapes_and_nonlinearity() -> None:
    with pytest.raises(ValueError, match=r"weight_hh has shape \(3, 2\); expected \(3, 3\)"):
        RNNParams(np.zeros((3, 2)), np.zeros((3, 2)), np.zeros(3), np.zeros(3))
    with pytest.raises(ValueError, match=r"unknown nonlinearity 'sigmoid'; choose one of \['tanh', 'relu'\]"):
        RNNParams(np.zeros((3, 2)), np.zeros((3, 3)), np.zeros(3), np.zeros(3), "sigmoid")
    p = RNNParams.random(2, 3)
    with pytest.raises(
        ValueError, match=r"grad_final has shape \(2,\); it must match the output it belongs to, \(3,\)"
    ):
        rnn_backward(p, rnn_forward(p, np.zeros((4, 2))), grad_final=np.zeros(2))


def test_rnn_unbatched_gradients_match_torch_and_keep_their_shapes() -> None:
    """One sequence without a batch axis, as torch.nn.RNN takes it: the gradients of x and h0 come back unbatched."""
    torch.manual_seed(6)
    rnn = torch.nn.RNN(2, 3).double()
    x = torch.randn(5, 2, dtype=torch.float64, requires_grad=True)
    h0 = torch.randn(1, 3, dtype=torch.float64, requires_grad=True)
    out, _ = rnn(x, h0)
    g = torch.randn_like(out)
    (out * g).sum().backward()
    params = RNNParams(_np(rnn.weight_ih_l0), _np(rnn.weight_hh_l0), _np(rnn.bias_ih_l0), _np(rnn.bias_hh_l0))
    grads = rnn_backward(params, rnn_forward(params, _np(x), _np(h0[0])), _np(g))
    assert grads.x.shape == (5, 2)
    assert grads.h0.shape == (3,)
    _close(grads.x, x.grad)
    _close(grads.h0, h0.grad[0])
    with pytest.raises(ValueError, match=r"^grad_outputs has shape \(5, 2\); it must match"):
        rnn_backward(params, rnn_forward(params, _np(x)), np.zeros((5, 2)))


def test_unbatched_lstm_gradients_keep_the_input_and_state_shapes() -> None:
    params = LSTMParams.random(input_size=2, hidden_size=1, seed=3)
    x = np.array([[0.5, -1.0]])  # (T, I) = (1, 2)
    trace = lstm_forward(params, x, h0=np.array([0.2]), c0=np.array([-0.3]))  # (H,) states for one sequence
    assert (trace.h[0, 0, 0], trace.c[0, 0, 0]) == (0.2, -0.3)
    grads = lstm_backward(params, trace, grad_outputs=np.ones((1, 1)), grad_final_h=np.array([0.5]))
    assert (grads.x.shape, grads.h0.shape, grads.c0.shape) == ((1, 2), (1,), (1,))
    # the same sequence as a batch of one: the same numbers, with the batch axis
    batched = lstm_forward(params, x[:, None, :], h0=np.array([[0.2]]), c0=np.array([[-0.3]]))
    ref = lstm_backward(params, batched, grad_outputs=np.ones((1, 1, 1)), grad_final_h=np.array([[0.5]]))
    assert (ref.x.shape, ref.h0.shape, ref.c0.shape) == ((1, 1, 2), (1, 1), (1, 1))
    np.testing.assert_array_equal(grads.x, ref.x[:, 0])
    np.testing.assert_array_equal(grads.h0, ref.h0[0])
    np.testing.assert_array_equal(grads.c0, ref.c0[0])


def test_unbatched_rnn_gradients_keep_the_input_and_state_shapes() -> None:
    params = RNNParams.random(input_size=2, hidden_size=1, seed=3)
    trace = rnn_forward(params, np.array([[0.5, -1.0]]), h0=np.array([0.2]))
    grads = rnn_backward(params, trace, grad_outputs=np.ones((1, 1)), grad_final=np.array([0.5]))
    assert (grads.x.shape, grads.h0.shape) == ((1, 2), (1,))
    # by hand: h1 = tanh(z), dL/dh1 = 1 + 0.5, dz = 1.5 (1 − h1²); dx = dz W_ih, dh0 = dz W_hh
    h1 = trace.h[1, 0, 0]
    dz = 1.5 * (1 - h1**2)
    np.testing.assert_allclose(grads.x, dz * params.weight_ih, rtol=1e-15)
    np.testing.assert_allclose(grads.h0, dz * params.weight_hh[0], rtol=1e-15)


def test_output_grad_returns_the_batched_shape() -> None:
    assert output_grad("g", np.zeros(3), (1, 3), unbatched=True).shape == (1, 3)
    assert output_grad("g", np.zeros((2, 3)), (2, 1, 3), unbatched=True).shape == (2, 1, 3)


def _uniform_rnn(seed: int, inputs: int, hidden: int, k: float) -> list[np.ndarray]:
    """An RNN's four arrays as the docstring says they are drawn: uniform in ±k from ``default_rng(seed)``, in the
    order weight_ih, weight_hh, bias_ih, bias_hh."""
    rng = np.random.default_rng(seed)
    return [rng.uniform(-k, k, size=s) for s in ((hidden, inputs), (hidden, hidden), (hidden,), (hidden,))]


def _same_rnn(params: RNNParams, arrays: list[np.ndarray], nonlinearity: str) -> None:
    for got, want in zip((params.weight_ih, params.weight_hh, params.bias_ih, params.bias_hh), arrays, strict=True):
        np.testing.assert_array_equal(got, want)
    assert params.nonlinearity == nonlinearity


def test_rnn_random_hands_on_its_seed_and_nonlinearity() -> None:
    _same_rnn(RNNParams.random(2, 4), _uniform_rnn(0, 2, 4, 1 / np.sqrt(4)), "tanh")  # seed 0 by default
    _same_rnn(RNNParams.random(2, 4, seed=7, scale=0.25, nonlinearity="relu"), _uniform_rnn(7, 2, 4, 0.25), "relu")


def test_lstm_random_draws_from_seed_zero_by_default() -> None:
    rng, k = np.random.default_rng(0), 1 / np.sqrt(3)
    want = [rng.uniform(-k, k, size=s) for s in ((12, 2), (12, 3), (12,), (12,))]
    p = LSTMParams.random(2, 3)
    for got, w in zip((p.weight_ih, p.weight_hh, p.bias_ih, p.bias_hh), want, strict=True):
        np.testing.assert_array_equal(got, w)


def test_weight_sizes_refused_with_the_count_of_each_model() -> None:
    """At the limit's edge (2^28 elements), so a wrong multiple of the hidden size changes the count shown."""
    with raises_exactly(ValueError, "the weights of input_size=67108864, hidden_size=1 would hold 268,435,460 elements "
                "(4, 67108865); at most 268,435,456 are built here"):  # fmt: skip
        LSTMParams.random(2**26, 1)  # 4·(2^26 + 1)
    with raises_exactly(
        ValueError,
        "the weights of vocab_size=268435456, embed=1, hidden=1 would hold 536,870,916 elements "
        "(268435458, 2); at most 268,435,456 are built here",
    ):
        Seq2Seq.random(vocab_size=2**28, embed=1, hidden=1)  # (V + 2H)(E + H)
    top = sys.float_info.max
    with raises_exactly(ValueError, f"scale must be ≤ {top / 2}; got {top!r}"):
        RNNParams.random(2, 2, scale=top)
    with raises_exactly(ValueError, f"scale must be ≤ {top / 2}; got {top!r}"):  # refused before the sizes are counted
        Seq2Seq.random(vocab_size=2**28, embed=1, hidden=1, scale=top)


def test_lstm_layout_refusals() -> None:
    with raises_exactly(ValueError, "weight_ih has 0 rows; an LSTM stacks four gates, so it needs 4 × hidden_size rows "
                "(shape (4H, I), gates in the order i, f, g, o)"):  # fmt: skip
        LSTMParams(np.zeros((0, 2)), np.zeros((0, 0)), np.zeros(0), np.zeros(0))
    with raises_exactly(ValueError, "weight_hh must be a matrix (2-D); got shape (8,)"):
        LSTMParams(np.zeros((8, 2)), np.zeros(8), np.zeros(8), np.zeros(8))
    with raises_exactly(
        ValueError, "weight_hh has shape (8, 3); weight_ih (8, 2) means hidden size 2, so weight_hh must be (8, 2)"
    ):
        LSTMParams(np.zeros((8, 2)), np.zeros((8, 3)), np.zeros(8), np.zeros(8))


def test_rnn_helpers_name_their_input() -> None:
    w = np.zeros((2, 2))
    with raises_exactly(TypeError, "bias_ih must be an array of numbers; got dtype <U1"):
        RNNParams(w, w, ["a", "b"], np.zeros(2))
    params = RNNParams(w, w, np.zeros(2), np.zeros(2))
    with raises_exactly(TypeError, "h0 must be an array of numbers; got dtype <U1"):
        rnn_forward(params, np.zeros((1, 2)), h0=["a", "b"])
    trace = rnn_forward(params, np.zeros((1, 2)))
    with raises_exactly(TypeError, "grad_outputs must be an array of numbers; got dtype <U1"):
        rnn_backward(params, trace, grad_outputs=[["a", "b"]])
    with raises_exactly(ValueError, "m has shape (2, 3); expected (?, 4)"):
        as_matrix("m", np.zeros((2, 3)), cols=4)
    with raises_exactly(ValueError, "m has shape (2, 3); expected (3, ?)"):
        as_matrix("m", np.zeros((2, 3)), rows=3)
