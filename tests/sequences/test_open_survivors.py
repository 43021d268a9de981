"""What the sequences chapter's mutation run found no test for: unbatched shapes, seeds and options handed on, whole
error messages (so a changed argument name fails), the inputs BLEU refuses, the data files' names in their errors.

Shapes are worked by hand, random weights compared with an explicit construction from the documented draws.
"""

from __future__ import annotations

import re
import sys
from collections import Counter

import numpy as np
import pytest

from gpukb.sequences import bleu
from gpukb.sequences import worked_example as we
from gpukb.sequences.lstm import LSTMParams, lstm_backward, lstm_forward
from gpukb.sequences.problems import lstm_parameters
from gpukb.sequences.rnn import RNNParams, as_matrix, output_grad, rnn_backward, rnn_forward
from gpukb.sequences.seq2seq import Seq2Seq, bottleneck_rows, capacity_rows


def raises(error: type[Exception], message: str):
    """``pytest.raises`` matching the whole message, literally."""
    return pytest.raises(error, match=f"^{re.escape(message)}$")


# --- unbatched shapes: T = 1 step, I = 2 features, H = 1 unit, so dropping the wrong axis (or every axis of
# size 1) gives another shape -----------------------------------------------------------------------------------


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


# --- seeds and options handed on --------------------------------------------------------------------------------


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


def test_seq2seq_random_hands_seeds_on_to_its_parts() -> None:
    """Embedding N(0, 1) then the output layer from ``seed``; the encoder from seed + 1, the decoder from seed + 2."""
    for seed, model in ((0, Seq2Seq.random(5, 3, 4)), (5, Seq2Seq.random(5, 3, 4, seed=5, scale=0.2))):
        scale = 0.3 if seed == 0 else 0.2
        rng = np.random.default_rng(seed)
        np.testing.assert_array_equal(model.embedding, rng.normal(size=(5, 3)))
        np.testing.assert_array_equal(model.out, rng.uniform(-scale, scale, size=(5, 4)))
        _same_rnn(model.encoder, _uniform_rnn(seed + 1, 3, 4, scale), "tanh")
        _same_rnn(model.decoder, _uniform_rnn(seed + 2, 3 + 4, 4, scale), "tanh")


# --- refusals, read whole --------------------------------------------------------------------------------------


def test_weight_sizes_refused_with_the_count_of_each_model() -> None:
    """At the limit's edge (2^28 elements), so a wrong multiple of the hidden size changes the count shown."""
    with raises(ValueError, "the weights of input_size=67108864, hidden_size=1 would hold 268,435,460 elements "
                "(4, 67108865); at most 268,435,456 are built here"):  # fmt: skip
        LSTMParams.random(2**26, 1)  # 4·(2^26 + 1)
    with raises(ValueError, "the weights of vocab_size=268435456, embed=1, hidden=1 would hold 536,870,916 elements "
                "(268435458, 2); at most 268,435,456 are built here"):  # fmt: skip
        Seq2Seq.random(vocab_size=2**28, embed=1, hidden=1)  # (V + 2H)(E + H)
    top = sys.float_info.max
    with raises(ValueError, f"scale must be ≤ {top / 2}; got {top!r}"):
        RNNParams.random(2, 2, scale=top)
    with raises(ValueError, f"scale must be ≤ {top / 2}; got {top!r}"):  # refused before the sizes are counted
        Seq2Seq.random(vocab_size=2**28, embed=1, hidden=1, scale=top)


def test_lstm_layout_refusals() -> None:
    with raises(ValueError, "weight_ih has 0 rows; an LSTM stacks four gates, so it needs 4 × hidden_size rows "
                "(shape (4H, I), gates in the order i, f, g, o)"):  # fmt: skip
        LSTMParams(np.zeros((0, 2)), np.zeros((0, 0)), np.zeros(0), np.zeros(0))
    with raises(ValueError, "weight_hh must be a matrix (2-D); got shape (8,)"):
        LSTMParams(np.zeros((8, 2)), np.zeros(8), np.zeros(8), np.zeros(8))
    with raises(ValueError, "weight_hh has shape (8, 3); weight_ih (8, 2) means hidden size 2, so weight_hh must be "
                "(8, 2)"):  # fmt: skip
        LSTMParams(np.zeros((8, 2)), np.zeros((8, 3)), np.zeros(8), np.zeros(8))


def test_rnn_helpers_name_their_input() -> None:
    w = np.zeros((2, 2))
    with raises(TypeError, "bias_ih must be an array of numbers; got dtype <U1"):
        RNNParams(w, w, ["a", "b"], np.zeros(2))
    params = RNNParams(w, w, np.zeros(2), np.zeros(2))
    with raises(TypeError, "h0 must be an array of numbers; got dtype <U1"):
        rnn_forward(params, np.zeros((1, 2)), h0=["a", "b"])
    trace = rnn_forward(params, np.zeros((1, 2)))
    with raises(TypeError, "grad_outputs must be an array of numbers; got dtype <U1"):
        rnn_backward(params, trace, grad_outputs=[["a", "b"]])
    with raises(ValueError, "m has shape (2, 3); expected (?, 4)"):
        as_matrix("m", np.zeros((2, 3)), cols=4)
    with raises(ValueError, "m has shape (2, 3); expected (3, ?)"):
        as_matrix("m", np.zeros((2, 3)), rows=3)


def test_lengths_are_a_tuple_or_list_of_ints() -> None:
    with raises(TypeError, "lengths must be a non-empty tuple of ints; got 'ab' (str)"):
        bottleneck_rows(lengths="ab")
    with raises(TypeError, "lengths must be a non-empty tuple of ints; got {2} (set)"):
        capacity_rows(lengths={2})
    with raises(TypeError, "seed must be an int ≥ 0; got True (bool)"):
        capacity_rows(lengths=(1,), seed=True)  # numpy's default_rng took True as seed 1
    with raises(ValueError, "seed must be an int ≥ 0; got -1"):
        capacity_rows(lengths=(1,), seed=-1)
    with raises(ValueError, "the right singular vectors of length 3000, embed=8 would hold 576,000,000 elements "
                "(24000, 24000); at most 268,435,456 are built here"):  # fmt: skip
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


# --- BLEU ---------------------------------------------------------------------------------------------------------


def test_tokenize_refusals() -> None:
    with raises(TypeError, "a segment must be a string; got 3 (int)"):
        bleu.tokenize(3)
    with raises(ValueError, "unknown tokenize 'intl'; choose one of ['13a', 'none']"):
        bleu.tokenize("a b", "intl")
    with raises(TypeError, "lowercase must be True or False; got 'no' (str)"):
        bleu.tokenize("A B", lowercase="no")  # lowercased the text before


def test_ngrams_orders_and_refusals() -> None:
    assert bleu.ngrams(["a", "b"], 1) == Counter({("a",): 1, ("b",): 1})
    for order in (0, -1):
        with raises(ValueError, f"max_order must be an int ≥ 1; got {order}"):
            bleu.ngrams(["a", "b"], order)
    with raises(TypeError, "tokens must be a list of token strings (see tokenize); got 'abc' (str)"):
        bleu.ngrams("abc")  # counted characters before
    with raises(TypeError, "tokens[1] must be a token string; got 2 (int)"):
        bleu.ngrams(["a", 2])


def test_segment_stats_of_order_two_by_hand() -> None:
    """Hypothesis "a b a" against "a b c" and "a a": unigrams a ×2 (clipped at 2 by the second reference), b;
    bigrams "a b" (in the first), "b a" (in neither); closest reference length 3."""
    stats = bleu.segment_stats(["a", "b", "a"], [["a", "b", "c"], ["a", "a"]], max_order=2)
    assert stats == bleu.Stats(hyp_len=3, ref_len=3, matches=(3, 1), totals=(3, 2))


def test_segment_stats_refusals() -> None:
    with raises(TypeError, "hypothesis must be a list of token strings (see tokenize); got 'the cat' (str)"):
        bleu.segment_stats("the cat", [["the", "cat"]])
    with raises(TypeError, "references[0] must be a list of token strings (see tokenize); got 'the cat' (str)"):
        bleu.segment_stats(["the", "cat"], ["the cat"])  # one reference per string, read as characters, before
    with raises(TypeError, "references must be a list of tokenized references (lists of strings); got 'x' (str)"):
        bleu.segment_stats(["the"], "x")
    with raises(ValueError, "references is empty: a segment needs at least one tokenized reference"):
        bleu.segment_stats(["the"], [])  # min() arg is an empty sequence, before


STATS = bleu.Stats(hyp_len=3, ref_len=3, matches=(2, 1, 0, 0), totals=(3, 2, 1, 0))


def test_score_from_stats_defaults_by_hand() -> None:
    """exp smoothing: p3 has no match among its 1 trigram, so 1/(2·1); there is no 4-gram, so without effective order
    (the default) the mean includes log 0 and BLEU is 0; with it, the geometric mean of the first three."""
    default = bleu.score_from_stats(STATS)
    assert default.score == 0.0
    assert default.precisions == pytest.approx((200 / 3, 50.0, 50.0, 0.0), rel=1e-15)
    effective = bleu.score_from_stats(STATS, effective_order=True)
    assert effective.score == pytest.approx((200 / 3 * 50 * 50) ** (1 / 3), rel=1e-14)
    nothing = bleu.score_from_stats(bleu.Stats(2, 2, (0, 0, 0, 0), (2, 1, 0, 0)))
    assert (nothing.score, nothing.precisions) == (0.0, (0.0, 0.0, 0.0, 0.0))


def test_score_from_stats_refusals() -> None:
    for value in (-1, -0.5):
        with raises(ValueError, f"smooth_value must be ≥ 0; got {value}"):
            bleu.score_from_stats(STATS, "floor", value)
    with raises(ValueError, "smooth_value applies only to the methods ['floor', 'add-k']; smooth 'exp' takes none, "
                "got smooth_value=0.5"):  # fmt: skip
        bleu.score_from_stats(STATS, "exp", 0.5)  # ignored before
    with raises(TypeError, "effective_order must be True or False; got 'yes' (str)"):
        bleu.score_from_stats(STATS, effective_order="yes")
    with raises(TypeError, "stats must be a bleu.Stats (see segment_stats); got (3, 3) (tuple)"):
        bleu.score_from_stats((3, 3))


def test_corpus_bleu_refusals() -> None:
    with raises(TypeError, "hypotheses must be a list of strings; got 'a b' (str)"):
        bleu.corpus_bleu("a b", [["a b"]])
    with raises(ValueError, "hypotheses is empty: BLEU needs at least one segment"):
        bleu.corpus_bleu([], [[]])
    with raises(TypeError, "references must be a list of reference streams (each a list with one string per "
                "hypothesis); got 'a b' (str)"):  # fmt: skip
        bleu.corpus_bleu(["a b"], "a b")
    with raises(ValueError, "references is empty: BLEU needs at least one reference stream"):
        bleu.corpus_bleu(["a b"], [])
    with raises(TypeError, "references[0] must be a list of strings, one per hypothesis; got 5 (int)"):
        bleu.corpus_bleu(["a b"], [5])
    with raises(TypeError, "effective_order must be True or False; got 'yes' (str)"):
        bleu.corpus_bleu(["a b"], [["a b"]], effective_order="yes")


def test_mean_sentence_bleu_refusals() -> None:
    with raises(ValueError, "hypotheses is empty: BLEU needs at least one segment"):
        bleu.mean_sentence_bleu([], [[]])  # ZeroDivisionError before
    with raises(TypeError, "hypotheses must be a list of strings; got 'ab' (str)"):
        bleu.mean_sentence_bleu("ab", [["a", "b"]])  # one segment per character before


def test_sentence_bleu_refusals() -> None:
    with raises(TypeError, "references must be a list of reference strings; got 'a b' (str)"):
        bleu.sentence_bleu("a b", "a b")
    with raises(ValueError, "references is empty: BLEU needs at least one reference"):
        bleu.sentence_bleu("a b", [])
    with raises(ValueError, "references[0] is empty (''); sacreBLEU counts an empty reference as one of length 0, "
                "which can decide the brevity penalty: leave it out instead"):  # fmt: skip
        bleu.sentence_bleu("a b", [""])


def test_a_missing_reference_skips_only_that_segment_of_its_stream() -> None:
    """Stream 0 has no reference for segment 0 but has one for segment 1; stream 1 the other way round."""
    hyps = ["a b c d", "e f g h"]
    assert bleu.corpus_bleu(hyps, [[None, "e f g h"], ["a b c d", None]]).score == pytest.approx(100, rel=1e-14)


# --- data files ---------------------------------------------------------------------------------------------------


def test_data_file_errors_name_the_file_and_an_empty_file_has_no_entries() -> None:
    with raises(ValueError, "mine.toml: unknown top-level keys ['colour']; this file holds ['example']"):
        bleu.parse_examples("colour = 1", "mine.toml")
    with raises(ValueError, "mine.toml: unknown top-level keys ['colour']; this file holds ['example']"):
        we.parse("colour = 1", "mine.toml")
    assert bleu.parse_examples("") == {}
    assert we.parse("") == []


# --- the worked example and the LSTM problem --------------------------------------------------------------------


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


def test_lstm_parameters_answer_by_hand() -> None:
    """I = 256, H = 512: 4H = 2,048 rows; 2,048·(256 + 512) weights + 2·2,048 biases = 1,576,960."""
    assert lstm_parameters().answer == (
        "1,576,960: weight_ih 2,048 × 256, weight_hh 2,048 × 512, and two bias vectors of 2,048."
    )


def test_segment_table_ends_with_the_mean_and_the_corpus_score() -> None:
    """The last two rows of the per-segment table are labelled for what they hold, read against the functions."""
    example = bleu.examples()["sacrebleu-readme"]
    _, rows = bleu.segment_rows("sacrebleu-readme")
    mean = [f"{bleu.mean_sentence_bleu(example.hypotheses, example.references, tokenize_method=m):.2f}"
            for m in bleu.TOKENIZERS]  # fmt: skip
    corpus = [f"{bleu.corpus_bleu(example.hypotheses, example.references, tokenize_method=m).score:.2f}"
              for m in bleu.TOKENIZERS]  # fmt: skip
    assert rows[-2:] == [["all", "mean of the sentence scores", *mean], ["all", "corpus BLEU", *corpus]]
