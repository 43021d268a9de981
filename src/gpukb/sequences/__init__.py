"""Sequence models: RNN and LSTM cells with backpropagation through time, embeddings, a seq2seq bottleneck, BLEU."""
