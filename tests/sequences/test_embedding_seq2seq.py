"""Embeddings as a lookup (against torch.nn.Embedding) and the seq2seq context bottleneck."""

# ruff: noqa: N806  (matrix and size names W, U, E, H, dW follow the equations)

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
import torch

from gpukb.sequences.embedding import lookup, lookup_by_product, lookup_grad, one_hot, token_ids, vocabulary
from gpukb.sequences.lstm import LSTMParams, lstm_backward, lstm_forward
from gpukb.sequences.rnn import RNNParams, rnn_forward
from gpukb.sequences.seq2seq import Seq2Seq, bottleneck_rows, capacity_rows
from tests.helpers import raises_exactly
from tests.sequences.test_lstm import _same_rnn, _uniform_rnn


def test_one_hot_times_the_matrix_selects_a_column_and_a_row() -> None:
    E = np.arange(12.0).reshape(3, 4)  # (d, V)
    for k in range(4):
        np.testing.assert_array_equal(E @ one_hot([k], 4)[0], E[:, k])  # column convention
        np.testing.assert_array_equal(one_hot([k], 4)[0] @ E.T, E.T[k])  # row convention (torch's layout)


def test_lookup_and_its_gradient_equal_torch_embedding() -> None:
    torch.manual_seed(0)
    emb = torch.nn.Embedding(7, 3).double()
    ids = [2, 5, 2, 0]
    out = emb(torch.tensor(ids))
    upstream = torch.randn_like(out)
    (out * upstream).sum().backward()
    weight = emb.weight.detach().numpy()
    np.testing.assert_array_equal(lookup(weight, ids), out.detach().numpy())
    np.testing.assert_allclose(lookup_by_product(weight, ids), out.detach().numpy(), rtol=0, atol=1e-15)
    grad = lookup_grad(weight.shape, ids, upstream.numpy())
    np.testing.assert_allclose(grad, emb.weight.grad.numpy(), rtol=0, atol=1e-15)
    np.testing.assert_allclose(grad, one_hot(ids, 7).T @ upstream.numpy(), rtol=0, atol=1e-15)  # the product's gradient
    assert np.flatnonzero(np.abs(grad).sum(axis=1)).tolist() == [0, 2, 5]


def test_vocabulary_keeps_first_appearance_order() -> None:
    assert vocabulary(["b", "a", "b", "c"]) == {"b": 0, "a": 1, "c": 2}


@pytest.mark.parametrize(
    ("ids", "error", "message"),
    [
        ([0, 7], ValueError, r"token id 7 is out of range for a vocabulary of 7 words \(allowed: 0 .. 6\)"),
        ([-1], ValueError, r"token id -1 is out of range"),
        ([1.5], TypeError, r"token ids must be integers"),
        ([[1, 2]], ValueError, r"token ids must be a 1-D sequence; got shape \(1, 2\)"),
    ],
)
def test_bad_token_ids_are_refused(ids: object, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        lookup(np.zeros((7, 3)), ids)


def test_gradient_rows_must_match_the_lookup() -> None:
    with pytest.raises(ValueError, match=r"grad_rows has shape \(2, 3\); expected \(3, 3\)"):
        lookup_grad((7, 3), [1, 2, 3], np.zeros((2, 3)))


def test_context_has_the_hidden_size_whatever_the_input_length() -> None:
    model = Seq2Seq.random(hidden=16)
    for n in (1, 10, 500):
        assert model.encode(np.arange(n) % 12).shape == (16,)
    c = model.encode([3, 4, 5])
    assert model.decode(c, 4) == model.decode(c.copy(), 4)  # the decoder sees the input only through c
    assert len(model.decode(c, 4)) == 4


def test_first_token_sensitivity_is_the_jacobian_norm() -> None:
    """‖∂c/∂x_1‖ from backprop through time equals a finite-difference Jacobian of the encoder."""
    model = Seq2Seq.random(seed=3)
    ids = [1, 5, 7, 2]
    from gpukb.sequences.rnn import rnn_forward

    x = model.embedding[ids]
    eps = 1e-6
    cols = []
    for j in range(x.shape[1]):
        up, down = x.copy(), x.copy()
        up[0, j] += eps
        down[0, j] -= eps
        cols.append((rnn_forward(model.encoder, up).final - rnn_forward(model.encoder, down).final) / (2 * eps))
    assert model.first_token_sensitivity(ids) == pytest.approx(np.linalg.norm(np.array(cols)), rel=1e-7)


def test_the_first_token_fades_from_the_context_as_the_input_grows() -> None:
    headers, rows = bottleneck_rows()
    assert headers == ["input length", "context size", "‖∂c/∂x₁‖", "‖c(A) − c(B)‖"]
    sens = [r[2] for r in rows]
    assert all(a > b for a, b in itertools.pairwise(sens))
    assert rows[0][3] > 0.1
    assert rows[-1][0] == 100
    assert rows[-1][3] == 0.0
    assert {r[1] for r in rows} == {16}


def test_seq2seq_refuses_bad_arguments() -> None:
    model = Seq2Seq.random()
    c = model.encode([1, 2])
    with pytest.raises(ValueError, match=r"steps must be an int ≥ 1; got 0"):
        model.decode(c, 0)
    with pytest.raises(ValueError, match=r"start must be an int ≥ 0, ≤ 11; got 12"):
        model.decode(c, 3, start=12)
    with pytest.raises(ValueError, match=r"token id 12 is out of range for a vocabulary of 12 words"):
        model.encode([12])
    with pytest.raises(ValueError, match=r"hidden must be an int ≥ 1; got 0"):
        Seq2Seq.random(hidden=0)


def test_a_context_of_h_numbers_cannot_tell_apart_more_than_h_input_numbers() -> None:
    """With a rotation as recurrence nothing fades (‖∂c/∂x₁‖ is the same at every length), yet once T·E > H two inputs
    whose first vectors differ by 1 get the same context: the bottleneck is a count, not a decay."""
    _, rows = capacity_rows(lengths=(1, 2, 3, 5), embed=4, hidden=8, seed=3)
    sens = [r[3] for r in rows]
    assert max(sens) - min(sens) < 1e-12 * max(sens)
    assert [r[4] for r in rows] == [0, 0, 4, 12]
    for r in rows[2:]:
        assert r[5] == pytest.approx(1.0, abs=1e-12)
        assert r[6] < 1e-12
    assert rows[0][5] is rows[0][6] is None
    with pytest.raises(ValueError, match=r"^lengths\[0\] must be an int ≥ 1, ≤ 100000; got 0$"):
        capacity_rows(lengths=(0,))


def test_greedy_decoding_is_torchs_rnn_step_by_step() -> None:
    """Each step feeds ``[embedding of the previous word; c]`` to torch.nn.RNN from the last state (``s_0 = c``) and
    picks the highest-scoring word; the default first word is id 0."""
    model = Seq2Seq.random(seed=4)
    c = model.encode([3, 4, 5])
    _V, E = model.embedding.shape
    H = model.decoder.hidden_size
    rnn = torch.nn.RNN(E + H, H, dtype=torch.float64)
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(rnn, f"{name}_l0").copy_(torch.from_numpy(getattr(model.decoder, name)))

    def greedy(start: int, steps: int) -> list[int]:
        h, word, words = torch.from_numpy(c)[None, None, :], start, []
        context = torch.from_numpy(c)
        with torch.no_grad():
            for _ in range(steps):
                step = torch.cat([torch.from_numpy(model.embedding[word]), context])[None, None, :]
                _, h = rnn(step, h)
                word = int(torch.argmax(torch.from_numpy(model.out) @ h[0, 0]))
                words.append(word)
        return words

    assert model.decode(c, 6) == greedy(0, 6)
    assert model.decode(c, 6, start=7) == greedy(7, 6)
    assert greedy(0, 6) != greedy(7, 6)  # the first word matters here, so the default is seen


@pytest.mark.parametrize(
    ("ours", "theirs", "bound"),
    [
        (lambda: LSTMParams.random(3, 25, seed=1), lambda: torch.nn.LSTM(3, 25), 1 / np.sqrt(25)),
        (lambda: RNNParams.random(3, 25, seed=1), lambda: torch.nn.RNN(3, 25), 1 / np.sqrt(25)),
        (lambda: RNNParams.random(3, 25, seed=1, scale=0.05), lambda: torch.nn.RNN(3, 25), 0.05),
    ],
    ids=["lstm", "rnn", "rnn-scale"],
)
def test_weights_are_drawn_as_torch_draws_them(ours: object, theirs: object, bound: float) -> None:
    """torch's layout (gates stacked in 4H rows for the LSTM) and its init, uniform in ±1/sqrt(H), or ±scale."""
    p, module = ours(), theirs()
    for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
        values = getattr(p, name)
        assert values.shape == tuple(getattr(module, f"{name}_l0").shape), name
        assert -bound <= values.min() < -0.8 * bound, name  # the whole span
        assert 0.8 * bound < values.max() <= bound, name


def test_seq2seq_weights_are_uniform_in_plus_minus_scale() -> None:
    """The weights of both RNNs and of the output layer span ±scale, as documented (the word vectors are N(0, 1))."""
    model = Seq2Seq.random(vocab_size=30, embed=8, hidden=16, scale=0.05)
    arrays = {"out": model.out}
    for rnn in ("encoder", "decoder"):
        arrays |= {f"{rnn}.{n}": getattr(getattr(model, rnn), n) for n in ("weight_ih", "weight_hh")}
    for name, values in arrays.items():
        assert -0.05 <= values.min() < -0.03, name
        assert 0.03 < values.max() <= 0.05, name
    assert model.out.shape == (30, 16)
    assert model.decoder.input_size == 8 + 16


@pytest.mark.parametrize("layer", [RNNParams, LSTMParams], ids=["rnn", "lstm"])
def test_params_store_float_arrays_under_their_names(layer: type) -> None:
    """Lists are taken and kept as float64 arrays in the fields torch's names give them (4H rows for the LSTM)."""
    rows = 1 if layer is RNNParams else 4
    given = {"weight_ih": [[1, 2]] * rows, "weight_hh": [[3]] * rows, "bias_ih": [4] * rows, "bias_hh": [5] * rows}
    p = layer(*given.values())
    for name, value in given.items():
        field = getattr(p, name)
        assert isinstance(field, np.ndarray), name
        assert field.dtype == np.float64, name
        np.testing.assert_array_equal(field, value)
    assert (p.input_size, p.hidden_size) == (2, 1)


#: Each public function of the chapter with one refused argument, and the name its message must give
#: ("<name> must ..."): the argument checks are shared, so a swapped name would blame the wrong argument.
REFUSED = [
    (lambda: LSTMParams.random(0, 2), "input_size"),
    (lambda: LSTMParams.random(2, 0), "hidden_size"),
    (lambda: LSTMParams.random(2, 2, seed=-1), "seed"),
    (lambda: capacity_rows(embed=0), "embed"),
    (lambda: capacity_rows(hidden=0), "hidden"),
    (lambda: RNNParams.random(0, 2), "input_size"),
    (lambda: RNNParams.random(2, 0), "hidden_size"),
    (lambda: RNNParams.random(2, 2, seed=-1), "seed"),
    (lambda: RNNParams.random(2, 2, scale=-1.0), "scale"),
    (lambda: RNNParams([[1.0]], [[1.0, 2.0]], [0.0], [0.0]), "weight_hh"),
    (lambda: RNNParams([1.0], [[1.0]], [0.0], [0.0]), "weight_ih"),
    (lambda: RNNParams([[1.0]], [[1.0]], [0.0, 1.0], [0.0]), "bias_ih"),
    (lambda: RNNParams([[1.0]], [[1.0]], [0.0], [0.0, 1.0]), "bias_hh"),
    (lambda: Seq2Seq.random(vocab_size=0), "vocab_size"),
    (lambda: Seq2Seq.random(embed=0), "embed"),
    (lambda: Seq2Seq.random(hidden=0), "hidden"),
    (lambda: Seq2Seq.random(seed=-1), "seed"),
    (lambda: Seq2Seq.random(scale=0.0), "scale"),
    (lambda: bottleneck_rows(lengths=(2, 0)), r"lengths\[1\]"),
    (lambda: bottleneck_rows(lengths=(100_001,)), r"lengths\[0\]"),
    (lambda: bottleneck_rows(seed=-1), "seed"),
    (lambda: token_ids([1], 0), "vocab_size"),
    (lambda: lookup([1.0], [0]), "weight"),
    (lambda: lookup_by_product([1.0], [0]), "weight"),
    (lambda: rnn_forward(RNNParams.random(2, 3), [[0.0, 0.0]], [0.0]), "h0"),
    (lambda: rnn_forward(RNNParams.random(2, 3), [[True, False]]), "x"),
    (lambda: LSTMParams(np.zeros((4, 2)), np.zeros((4, 2)), np.zeros(4), np.zeros(4)), "weight_hh"),
    (lambda: LSTMParams(np.zeros((4, 2)), np.zeros((4, 1)), np.zeros(3), np.zeros(4)), "bias_ih"),
    (lambda: LSTMParams(np.zeros((4, 2)), np.zeros((4, 1)), np.zeros(4), np.zeros(3)), "bias_hh"),
    (lambda: _lstm_backward_of_one(grad_final_h=np.zeros(2)), "grad_final_h"),
    (lambda: _lstm_backward_of_one(grad_final_c=np.zeros(2)), "grad_final_c"),
]


def _lstm_backward_of_one(**grads: object) -> object:
    p = LSTMParams.random(2, 3)
    return lstm_backward(p, lstm_forward(p, np.zeros((4, 2))), **grads)


@pytest.mark.parametrize(("call", "argument"), REFUSED, ids=[re.sub(r"\W", "", a) for _, a in REFUSED])
def test_each_refused_argument_is_named(call: object, argument: str) -> None:
    with pytest.raises((ValueError, TypeError), match=rf"^{argument} (must|has)"):
        call()


def test_token_ids_take_one_int_and_refuse_a_bool_as_given() -> None:
    np.testing.assert_array_equal(token_ids(3, 5), [3])
    with pytest.raises(TypeError, match=r"^token ids must be integers; got True \(bool\) with dtype bool$"):
        token_ids(True, 5)
    with pytest.raises(ValueError, match=r"^one-hot rows would hold 1,000,000,000 elements"):
        one_hot([0], 10**9)  # refused before anything is allocated


def test_bottleneck_lengths_run_from_one_word() -> None:
    _, rows = bottleneck_rows(lengths=(1, 3))
    assert [r[0] for r in rows] == [1, 3]
    with pytest.raises(TypeError, match=r"^lengths must be a non-empty tuple of ints; got \[\] \(list\)"):
        bottleneck_rows(lengths=[])


def test_seq2seq_random_hands_seeds_on_to_its_parts() -> None:
    """Embedding N(0, 1) then the output layer from ``seed``; the encoder from seed + 1, the decoder from seed + 2."""
    for seed, model in ((0, Seq2Seq.random(5, 3, 4)), (5, Seq2Seq.random(5, 3, 4, seed=5, scale=0.2))):
        scale = 0.3 if seed == 0 else 0.2
        rng = np.random.default_rng(seed)
        np.testing.assert_array_equal(model.embedding, rng.normal(size=(5, 3)))
        np.testing.assert_array_equal(model.out, rng.uniform(-scale, scale, size=(5, 4)))
        _same_rnn(model.encoder, _uniform_rnn(seed + 1, 3, 4, scale), "tanh")
        _same_rnn(model.decoder, _uniform_rnn(seed + 2, 3 + 4, 4, scale), "tanh")


def test_lengths_are_a_tuple_or_list_of_ints() -> None:
    with raises_exactly(TypeError, "lengths must be a non-empty tuple of ints; got 'ab' (str)"):
        bottleneck_rows(lengths="ab")
    with raises_exactly(TypeError, "lengths must be a non-empty tuple of ints; got {2} (set)"):
        capacity_rows(lengths={2})
    with raises_exactly(TypeError, "seed must be an int ≥ 0; got True (bool)"):
        capacity_rows(lengths=(1,), seed=True)  # numpy's default_rng took True as seed 1
    with raises_exactly(ValueError, "seed must be an int ≥ 0; got -1"):
        capacity_rows(lengths=(1,), seed=-1)
    with raises_exactly(
        ValueError,
        "the right singular vectors of length 3000, embed=8 would hold 576,000,000 elements "
        "(24000, 24000); at most 268,435,456 are built here",
    ):
        capacity_rows(lengths=(1, 3000))


def test_bottleneck_pairs_differ_in_the_first_word_only_the_next_word_wrapping_to_one() -> None:
    """Length-1 inputs: row k's gap is ‖c([a]) − c([b])‖ for b the word after a (after the last, word 1)."""
    model = Seq2Seq.random(seed=0)
    vocab = model.embedding.shape[0]
    encode = lambda word: model.encode(np.array([word]))  # noqa: E731
    following = {a: a + 1 if a < vocab - 1 else 1 for a in range(1, vocab)}
    gaps = {a: float(np.linalg.norm(encode(a) - encode(b))) for a, b in following.items()}
    _, rows = bottleneck_rows(lengths=(1,) * 40, seed=0)
    seen = set()
    for row in rows:
        (a,) = [a for a, gap in gaps.items() if gap == row[3]]
        seen.add(a)
    assert {vocab - 2, vocab - 1} <= seen  # the draws reach the last two words, where a wrong wrap would show
