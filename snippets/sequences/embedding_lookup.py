"""An embedding is a lookup: a one-hot vector times the embedding matrix selects one column (or row) of it."""

# ruff: noqa: E402  (each section is shown on the page on its own, so it imports what it uses)

# --8<-- [start:column]
import numpy as np

from gpukb.sequences.bleu import tokenize
from gpukb.sequences.embedding import one_hot, vocabulary

words = tokenize("The dog bit the man.")  # ['The', 'dog', 'bit', 'the', 'man', '.']
vocab = vocabulary(words)  # each distinct token's id, in order of first appearance
E = np.arange(3 * len(vocab), dtype=float).reshape(3, len(vocab))  # (d, V): one column per word, d = 3
k = vocab["dog"]
print("vocabulary:", vocab)
print("E =\n", E)
print(f"one_hot('dog') = {one_hot([k], len(vocab))[0]}")
print(f"E @ one_hot('dog') = {E @ one_hot([k], len(vocab))[0]}  = column {k} of E: {E[:, k]}")
# --8<-- [end:column]

# --8<-- [start:rows]
import numpy as np

from gpukb.sequences.embedding import lookup, lookup_by_product, lookup_grad

rng = np.random.default_rng(0)
weight = rng.standard_normal((6, 3))  # torch's nn.Embedding layout: (V, d), one row per word
ids = [1, 4, 1]  # a sentence of three words, the second word id used twice
by_product = lookup_by_product(weight, ids)  # one_hot(ids) @ weight: a (3, 6) @ (6, 3) product
by_index = lookup(weight, ids)  # weight[ids]: what the layer does instead
print("product == indexing:", np.array_equal(by_product, by_index))
grad = lookup_grad(weight.shape, ids, np.ones((3, 3)))  # upstream gradient of ones for each looked-up row
print("rows of the weight gradient that are not zero:", np.flatnonzero(np.abs(grad).sum(axis=1)).tolist())
print("gradient of row 1 (used twice):", grad[1].tolist())
# --8<-- [end:rows]
