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
    mutation=(
        "src/gpukb/sequences/rnn.py",
        "src/gpukb/sequences/lstm.py",
        "src/gpukb/sequences/embedding.py",
        "src/gpukb/sequences/seq2seq.py",
        "src/gpukb/sequences/bleu.py",
        "src/gpukb/sequences/worked_example.py",
        "src/gpukb/sequences/problems.py",
        "src/gpukb/sequences/pages.py",
    ),
    mutation_tests=(
        "tests/sequences/test_lstm.py",
        "tests/sequences/test_embedding_seq2seq.py",
        "tests/sequences/test_bleu.py",
        "tests/sequences/test_worked_example.py",
        "tests/sequences/test_worked_problems.py",
        "tests/sequences/test_page_tables.py",
        "tests/site/test_page_tables.py",  # renders the pages and runs the chapter's cell checks on them
    ),
)
