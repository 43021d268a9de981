"""A toy encoder-decoder: whatever the input's length, the decoder sees it only through a context of H numbers."""

# --8<-- [start:context]
import numpy as np

from gpukb.sequences.seq2seq import Seq2Seq

model = Seq2Seq.random(vocab_size=12, embed=8, hidden=16, seed=0)
rng = np.random.default_rng(1)
for length in (3, 30, 300):
    ids = rng.integers(1, 12, size=length)
    context = model.encode(ids)
    print(f"input of {length:>3} words -> context of shape {context.shape}, decoded: {model.decode(context, 5)}")
# --8<-- [end:context]
