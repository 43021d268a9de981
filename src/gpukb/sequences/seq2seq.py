"""The encoder-decoder (seq2seq) of Sutskever et al. (2014) and Cho et al. (2014) in numpy, to show its bottleneck.

An encoder RNN reads the input sequence; its last hidden state is the context ``c``, a vector of the hidden size H
whatever the input's length. A decoder RNN starts from ``c`` and also reads ``c`` at every step (Cho et al.'s
form), so everything the decoder knows about the input passes through those H numbers. Two measurements make the
bottleneck concrete:

* the sensitivity of ``c`` to the *first* input, ``‖∂c/∂x_1‖`` (Frobenius norm of the Jacobian), which backprop
  through time computes (:func:`gpukb.sequences.rnn.rnn_backward`, all components of ``c`` in one batched pass);
* the distance between the contexts of two inputs that differ only in their first token.

With random contractive weights both shrink as the input grows; that is the fading (vanishing-gradient) effect of
a tanh RNN, which depends on the weights. :func:`capacity_rows` shows the bottleneck itself, without fading: a
context of H numbers cannot tell apart inputs of more than H numbers. Attention (Bahdanau et al., 2015) removes the
bottleneck by giving the decoder every encoder state; that is the attention chapter's subject.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpukb.arguments import array_size, given, integer, non_negative_int, positive_int, real
from gpukb.sequences.embedding import lookup
from gpukb.sequences.rnn import MAX_SCALE, RNNParams, rnn_backward, rnn_forward


@dataclass(frozen=True)
class Seq2Seq:
    """A toy encoder-decoder: embeddings, an encoder RNN, a decoder RNN fed ``[embedding; c]``, an output layer.

    Attributes:
        embedding: ``(V, E)`` word vectors, shared by encoder and decoder.
        encoder: RNN with input size E and hidden size H.
        decoder: RNN with input size E + H (the previous word and the context) and hidden size H.
        out: ``(V, H)`` projection of the decoder state to word scores.
    """

    embedding: np.ndarray
    encoder: RNNParams
    decoder: RNNParams
    out: np.ndarray

    @classmethod
    def random(
        cls, vocab_size: int = 12, embed: int = 8, hidden: int = 16, seed: int = 0, scale: float = 0.3
    ) -> Seq2Seq:
        """Random weights from ``seed``: word vectors from N(0, 1) (as ``torch.nn.Embedding`` draws them), the two
        RNNs and the output layer uniform in ``±scale``."""
        vocab_size, embed, hidden = (
            positive_int(n, v) for n, v in (("vocab_size", vocab_size), ("embed", embed), ("hidden", hidden))
        )
        seed, scale = non_negative_int("seed", seed), real("scale", scale, positive=True, maximum=MAX_SCALE)
        array_size(f"the weights of vocab_size={vocab_size}, embed={embed}, hidden={hidden}",
                   (vocab_size + 2 * hidden, embed + hidden))  # fmt: skip
        rng = np.random.default_rng(seed)
        return cls(
            rng.normal(size=(vocab_size, embed)),
            RNNParams.random(embed, hidden, seed=seed + 1, scale=scale),
            RNNParams.random(embed + hidden, hidden, seed=seed + 2, scale=scale),
            rng.uniform(-scale, scale, size=(vocab_size, hidden)),
        )

    @property
    def hidden_size(self) -> int:
        """H, the size of the context."""
        return self.encoder.hidden_size

    # --8<-- [start:encode-decode]
    def encode(self, ids: object) -> np.ndarray:
        """The context: the encoder's last hidden state, ``(H,)`` for any input length."""
        trace = rnn_forward(self.encoder, lookup(self.embedding, ids))
        return trace.final

    def decode(self, context: np.ndarray, steps: int, start: int = 0) -> list[int]:
        """Greedy decoding from the context alone: ``s_0 = c`` and each step reads ``[previous word; c]``."""
        steps = positive_int("steps", steps)
        word = integer("start", start, 0, self.embedding.shape[0] - 1)
        state, words = context, []
        for _ in range(steps):
            step_input = np.concatenate([self.embedding[word], context])[None, :]
            state = rnn_forward(self.decoder, step_input, state).final
            word = int(np.argmax(self.out @ state))
            words.append(word)
        return words

    # --8<-- [end:encode-decode]

    def first_token_sensitivity(self, ids: object) -> float:
        """``‖∂c/∂x_1‖_F``: how much the context can still move when the first input vector moves.

        All rows of the Jacobian in one backward pass: the sequence repeated H times as a batch, and copy k
        receives the upstream gradient e_k on the context, so its input gradient is row k of ∂c/∂x.
        """
        hidden = self.hidden_size
        x = lookup(self.embedding, ids)
        trace = rnn_forward(self.encoder, np.repeat(x[:, None, :], hidden, axis=1))
        rows = rnn_backward(self.encoder, trace, grad_final=np.eye(hidden)).x[0]  # (H, E)
        return float(np.linalg.norm(rows))


def _lengths(lengths: object, maximum: int) -> tuple[int, ...]:
    """``lengths`` as a non-empty tuple of ints in ``[1, maximum]``; a string, a set or a number is refused.

    Raises:
        TypeError: If it is not a non-empty tuple or list of ints.
        ValueError: For a length below 1 or above ``maximum``.
    """
    if isinstance(lengths, str | bytes) or not isinstance(lengths, tuple | list) or not lengths:
        raise TypeError(f"lengths must be a non-empty tuple of ints; got {given(lengths)}")
    return tuple(integer(f"lengths[{i}]", n, minimum=1, maximum=maximum) for i, n in enumerate(lengths))


def bottleneck_rows(lengths: tuple[int, ...] = (2, 5, 10, 20, 50, 100), seed: int = 0) -> tuple[list[str], list[list]]:
    """For inputs of each length: the context's size, ``‖∂c/∂x_1‖``, and how far apart the contexts of two
    inputs that differ only in the first token are.

    Inputs are drawn from ``seed``; the model is :meth:`Seq2Seq.random` with the same seed.

    Raises:
        TypeError: For ``lengths`` that is not a sequence of ints, or a seed that is not an int.
        ValueError: For a length below 1 or above 100,000, no lengths, or a negative seed.
    """
    lengths, seed = _lengths(lengths, 100_000), non_negative_int("seed", seed)
    model = Seq2Seq.random(seed=seed)
    rng = np.random.default_rng(seed + 100)
    vocab = model.embedding.shape[0]
    rows = []
    for n in lengths:
        ids = rng.integers(1, vocab, size=n)
        other = ids.copy()
        other[0] = 1 + (ids[0] % (vocab - 1))  # another first word, the rest the same
        c_a, c_b = model.encode(ids), model.encode(other)
        rows.append([n, c_a.size, model.first_token_sensitivity(ids), float(np.linalg.norm(c_a - c_b))])
    headers = ["input length", "context size", "‖∂c/∂x₁‖", "‖c(A) − c(B)‖"]
    return headers, rows


# --8<-- [start:capacity]
def capacity_rows(
    lengths: tuple[int, ...] = (1, 2, 3, 4, 8), embed: int = 8, hidden: int = 16, seed: int = 0
) -> tuple[list[str], list[list]]:
    """The bottleneck without the fading: a linear RNN ``h_t = W h_{t-1} + U x_t`` whose ``W`` is a rotation.

    ``‖∂c/∂x_1‖ = ‖W^(T-1) U‖ = ‖U‖`` at every length, so the first input never fades. But ``c`` is a linear map
    of the ``T·E`` input numbers to ``H`` numbers; once ``T·E > H`` it has a null space of dimension ``T·E − H``
    (for ``U`` of full rank), and two inputs whose first vectors differ by a unit vector share their context
    exactly. Returns, per length: ``T·E``, ``H``, ``‖∂c/∂x_1‖``, the null space's dimension, and for the pair (when
    there is one) ``‖x_1(A) − x_1(B)‖`` and ``‖c(A) − c(B)‖``.

    Raises:
        TypeError: For ``lengths`` that is not a tuple or list of ints, sizes or a seed that are not ints.
        ValueError: For no lengths, sizes below 1, a negative seed, or matrices past
            :data:`gpukb.arguments.MAX_ARRAY_ELEMENTS` (the SVD's ``(T·E, T·E)`` factor, ``(H, H)``).
    """
    lengths = _lengths(lengths, 100_000)
    embed, hidden = positive_int("embed", embed), positive_int("hidden", hidden)
    seed = non_negative_int("seed", seed)  # numpy's default_rng read True as 1 and refused -1 without a name
    array_size(f"the context's matrix of hidden={hidden}", (hidden, hidden))
    for n in lengths:  # the SVD's right factor is (T·E, T·E): refused before any of it is built
        array_size(f"the right singular vectors of length {n}, embed={embed}", (n * embed, n * embed))
    rng = np.random.default_rng(seed)
    w, _ = np.linalg.qr(rng.normal(size=(hidden, hidden)))  # orthogonal: lengths of states are kept
    u = rng.normal(size=(hidden, embed)) / np.sqrt(embed)
    rows = []
    for n in lengths:
        # c = Σ_t W^(T-t) U x_t: the blocks of the context's matrix, first input first
        blocks = [np.linalg.matrix_power(w, n - 1 - t) @ u for t in range(n)]
        a = np.concatenate(blocks, axis=1)  # (H, T·E)
        _, sv, vt = np.linalg.svd(a)
        rank = int((sv > sv[0] * 1e-12).sum())
        null = vt[rank:].T  # (T·E, T·E − rank)
        gap = shift = None
        if null.shape[1]:
            # the direction of the null space that moves the first input most, scaled so it moves it by 1
            _, _, v1 = np.linalg.svd(null[:embed])
            z = null @ v1[0]
            z /= np.linalg.norm(z[:embed])
            x = rng.normal(size=n * embed)
            shift = float(np.linalg.norm(z[:embed]))
            gap = float(np.linalg.norm(a @ x - a @ (x + z)))
        rows.append([n, n * embed, hidden, float(np.linalg.norm(blocks[0])), null.shape[1], shift, gap])
    headers = ["input length T", "input numbers T·E", "context size H", "‖∂c/∂x₁‖", "null space T·E − H",
               "‖x₁(A) − x₁(B)‖", "‖c(A) − c(B)‖"]  # fmt: skip
    return headers, rows
    # --8<-- [end:capacity]
