"""Sequence models: RNN and LSTM cells with backpropagation through time, embeddings, a seq2seq bottleneck, BLEU."""

from gpukb.chapters import Chapter, DataFile

CHAPTER = Chapter(
    name="sequences",
    title="Sequence models",
    summary="RNN and LSTM cells with backpropagation through time, embeddings, the seq2seq bottleneck and BLEU, "
    "each checked against a reference.",
    position=75,
    data_files={
        "sequences/lstm_example.toml": DataFile(
            "gpukb.sequences.worked_example:parse",
            "example",
            schemas=(("example", "gpukb.sequences.worked_example:LstmExample"),),
        ),
        "sequences/bleu_examples.toml": DataFile(
            "gpukb.sequences.bleu:parse_examples", "example", schemas=(("example", "gpukb.sequences.bleu:BleuExample"),)
        ),
    },
    checks="tests.sequences.test_page_tables",
)
