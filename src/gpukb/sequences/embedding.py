"""Embeddings as a lookup: a one-hot vector times a matrix selects one column (or one row) of the matrix.

With the embedding matrix ``E`` of shape ``(d, V)`` (one column per word), ``E @ one_hot(k)`` is column ``k``. torch's
``nn.Embedding`` stores the transpose, ``weight`` of shape ``(V, d)``, and ``one_hot(k) @ weight`` is row ``k``:
the layer skips the product and indexes the row. The gradient of the product with respect to the matrix is the
outer product of the one-hot vector and the upstream gradient, so only the rows that were looked up receive any
gradient, summed over repeats (``np.add.at``).
"""

from __future__ import annotations

import numbers

import numpy as np

from gpukb.arguments import array_size, given, positive_int
from gpukb.sequences.rnn import as_matrix


def token_ids(ids: object, vocab_size: int) -> np.ndarray:
    """``ids`` as a 1-D int64 array of indices in ``[0, vocab_size)``.

    Raises:
        TypeError: If the ids are not integers.
        ValueError: If an id is out of range or the array is not 1-D.
    """
    vocab_size = positive_int("vocab_size", vocab_size)
    if isinstance(ids, numbers.Integral) and not isinstance(ids, bool):
        ids = [ids]
    array = np.asarray(ids)
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"token ids must be integers; got {given(ids)} with dtype {array.dtype}")
    array = array.astype(np.int64)
    if array.ndim != 1:
        raise ValueError(f"token ids must be a 1-D sequence; got shape {array.shape}")
    bad = array[(array < 0) | (array >= vocab_size)]
    if bad.size:
        raise ValueError(
            f"token id {int(bad[0])} is out of range for a vocabulary of {vocab_size} words "
            f"(allowed: 0 .. {vocab_size - 1})"
        )
    return array


def one_hot(ids: object, vocab_size: int) -> np.ndarray:
    """One-hot rows, ``(len(ids), vocab_size)``, float64.

    Raises:
        TypeError, ValueError: As :func:`token_ids`.
    """
    array = token_ids(ids, vocab_size)
    array_size("one-hot rows", (array.size, vocab_size))
    out = np.zeros((array.size, vocab_size))
    out[np.arange(array.size), array] = 1.0
    return out


# --8<-- [start:lookup]
def lookup_by_product(weight: object, ids: object) -> np.ndarray:
    """``one_hot(ids) @ weight``: the rows of ``weight (V, d)`` for ``ids``, computed as a matrix product."""
    table = as_matrix("weight", weight)
    return one_hot(ids, table.shape[0]) @ table


def lookup(weight: object, ids: object) -> np.ndarray:
    """The same rows by indexing, as ``torch.nn.Embedding`` does: ``weight[ids]``."""
    table = as_matrix("weight", weight)
    return table[token_ids(ids, table.shape[0])]


def lookup_grad(weight_shape: tuple[int, int], ids: object, grad_rows: object) -> np.ndarray:
    """∂L/∂weight for ``lookup``: ``one_hot(ids).T @ grad_rows``, a scatter-add of each row's gradient.

    Raises:
        ValueError: If ``grad_rows`` is not ``(len(ids), d)``.
    """
    vocab, dim = weight_shape
    array = token_ids(ids, vocab)
    grad = as_matrix("grad_rows", grad_rows, array.size, dim)
    out = np.zeros((vocab, dim))
    np.add.at(out, array, grad)  # a word used twice gets both gradients
    return out
    # --8<-- [end:lookup]


def vocabulary(tokens: list[str]) -> dict[str, int]:
    """Each distinct token's id, in order of first appearance."""
    out: dict[str, int] = {}
    for token in tokens:
        out.setdefault(token, len(out))
    return out
