"""Sequence models: RNN and LSTM cells with backpropagation through time, embeddings, a seq2seq bottleneck, BLEU."""

from gpukb.chapters import Chapter, DataFile

#: One page module per page: ``docs/sequences/<page>.md`` is rendered by ``gpukb.sequences.pages.<page>``, whose
#: tables ``tests/sequences/pages/test_<page>.py`` checks; the errata two pages show are ``gpukb.sequences.pages``'s.
_PAGES = ("bleu", "opening", "lstm", "seq2seq")

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
    page_layers=("gpukb.sequences.pages", *(f"gpukb.sequences.pages.{page}" for page in _PAGES)),
    checks={
        "gpukb.sequences.pages": "tests.sequences.pages",
        **{f"gpukb.sequences.pages.{page}": f"tests.sequences.pages.test_{page}" for page in _PAGES},
    },
    mutation=(
        "src/gpukb/sequences/rnn.py",
        "src/gpukb/sequences/lstm.py",
        "src/gpukb/sequences/embedding.py",
        "src/gpukb/sequences/seq2seq.py",
        "src/gpukb/sequences/bleu.py",
        "src/gpukb/sequences/worked_example.py",
        "src/gpukb/sequences/problems.py",
        "src/gpukb/sequences/pages/__init__.py",
        "src/gpukb/sequences/pages/bleu.py",
        "src/gpukb/sequences/pages/lstm.py",
        "src/gpukb/sequences/pages/opening.py",
        "src/gpukb/sequences/pages/seq2seq.py",
    ),
    mutation_tests=(
        "tests/sequences/test_lstm.py",
        "tests/sequences/test_embedding_seq2seq.py",
        "tests/sequences/test_bleu.py",
        "tests/sequences/test_worked_example.py",
        "tests/sequences/test_worked_problems.py",
        "tests/sequences/pages",
    ),
)
