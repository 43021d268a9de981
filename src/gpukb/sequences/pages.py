"""The sequence-models chapter's page layer: the only code that turns its library and data into Markdown.

Pages call these functions with literal arguments (``from gpukb.sequences.pages import lstm_example``); the
library modules (:mod:`gpukb.sequences.worked_example`, :mod:`gpukb.sequences.bleu`,
:mod:`gpukb.sequences.seq2seq`) return values or ``(headers, rows)``.
"""

from __future__ import annotations

from importlib import metadata

from gpukb import errata as errata_data
from gpukb.sequences import bleu, seq2seq, worked_example
from gpukb.tables import markdown_table

#: What a quantity of the worked example is called on the page.
SYMBOLS = {
    "a": "a (input activation)",
    "i": "i (input gate)",
    "f": "f (forget gate)",
    "o": "o (output gate)",
    "state": "state (cell c)",
    "out": "out (h)",
    "Delta": "Δ = out − y",
    "Delta_out": "Δout (from t + 1)",
    "d_out": "δout",
    "d_state": "δstate",
    "d_a": "δa",
    "d_i": "δi",
    "d_f": "δf",
    "d_o": "δo",
    "d_x": "δx",
    "Delta_out_prev": "Δout(t − 1)",
    "dW": "δW",
    "dU": "δU",
    "db": "δb",
    "W_new": "W",
    "U_new": "U",
    "b_new": "b",
}


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def versions() -> str:
    """The library versions this build of the chapter ran with (the tests run with the same environment)."""
    return (
        "Built with "
        + ", ".join(f"{p} {_version(p)}" for p in ("numpy", "torch", "sacrebleu"))
        + "; everything on these pages runs on the CPU."
    )


# --- the worked LSTM example (docs/sequences/lstm.md) --------------------------------------------------------------


def lstm_example_setup() -> str:
    """The example's weights with the torch row each gate moves to, its inputs, labels and learning rate."""
    example = worked_example.load()
    xs = ", ".join(f"x{t} = ({', '.join(f'{v:g}' for v in x)})" for t, x in enumerate(example.x))
    ys = ", ".join(f"y{t} = {y:g}" for t, y in enumerate(example.labels))
    return (
        markdown_table(*worked_example.setup_rows())
        + "\n\n"
        + f"Inputs {xs}; labels {ys}; learning rate λ = {example.learning_rate:g}. Source: "
        + f"{example.author}, [{example.title}]({example.url}), {example.published:%d %B %Y} "
        + f"(read {example.checked})."
        + "\n"
    )


def lstm_example(part: str) -> str:
    """One part of the example (``forward``, ``backward``, ``gradients``, ``updated``): computed next to printed.

    The computed value is shown with six decimals, one more than the example prints, so a last-digit difference
    shows where it comes from.
    """
    rows = []
    for name, where, computed, printed in worked_example.comparison(part):
        same = "yes" if worked_example.rounds_to(computed, printed) else "no"
        rows.append([SYMBOLS[name], where, f"{computed + 0.0:.6f}", f"{printed:g}", f"{printed - computed:+.1e}", same])
    headers = ["quantity", "t or gate", "computed", "printed", "printed − computed", "correctly rounded"]
    return markdown_table(headers, rows) + "\n"


def lstm_example_summary() -> str:
    """One sentence: how many printed numbers are the exact values correctly rounded, and the largest gap."""
    same, total, gap, (name, where) = worked_example.agreement()
    return (
        f"{same} of the {total} printed numbers are the exact values correctly rounded; the other "
        f"{total - same} differ in the last printed digit, by at most {gap:.1e} ({SYMBOLS[name]}, {where}).\n"
    )


def sequences_errata(*ids: str) -> str:
    """Collapsed notes for the chapter's errata entries (all of them, or those named): claim, truth, test, link.

    The link is the URL a browser resolves from a page of this chapter (markdown-exec output is not rewritten).
    """
    entries = [e for e in errata_data.load() if e.topic == "sequences" and (not ids or e.id in ids)]
    out = []
    for e in entries:
        out.append(f'??? note "A claim you may meet: {e.claim}"')
        out.append(f"    {e.truth}")
        out.append("")
        out.append(f"    Decided by `{e.test}`; [errata entry](../../about/errata/#{e.id}).")
        out.append("")
    return "\n".join(out)


# --- embeddings and seq2seq (docs/sequences/seq2seq.md) -----------------------------------------------------------


def bottleneck() -> str:
    """The seq2seq bottleneck measured on a random model: context size, first-token sensitivity, context gap."""
    headers, rows = seq2seq.bottleneck_rows()
    cells = [[n, size, f"{sens:.1e}", f"{gap:.1e}"] for n, size, sens, gap in rows]
    return markdown_table(headers, cells) + "\n"


def capacity() -> str:
    """The bottleneck as counting: a rotation RNN whose first input never fades, and inputs that share a context."""
    headers, rows = seq2seq.capacity_rows()
    cells = [[n, numbers, size, f"{sens:.4f}", null, "–" if shift is None else f"{shift:.2f}",
              "–" if gap is None else f"{gap:.0e}"] for n, numbers, size, sens, null, shift, gap in rows]  # fmt: skip
    return markdown_table(headers, cells) + "\n"


# --- BLEU (docs/sequences/bleu.md) ---------------------------------------------------------------------------------


def bleu_defaults() -> str:
    """sacreBLEU's defaults, which gpukb's BLEU shares."""
    return markdown_table(*bleu.defaults_rows()) + "\n"


def bleu_published(example_id: str) -> str:
    """gpukb's score of an example next to the line its source prints."""
    example = bleu.examples()[example_id]
    ours = bleu.corpus_bleu(example.hypotheses, example.references)
    published = example.published
    lines = [f"- gpukb: `{ours}`"]
    if published is not None:
        lines.append(
            f"- printed by the source ([{example.source}]({example.url}), read {example.checked}): "
            f"`{published.line}`, signature `{published.signature}`"
        )
    return "\n".join(lines) + "\n"


def bleu_tokenization(example_id: str) -> str:
    """The example's corpus BLEU under each tokenizer."""
    return markdown_table(*bleu.tokenization_rows(example_id)) + "\n"


def bleu_segments(example_id: str) -> str:
    """Sentence BLEU per segment, their mean, and corpus BLEU, under each tokenizer."""
    return markdown_table(*bleu.segment_rows(example_id)) + "\n"


def bleu_smoothing(example_id: str) -> str:
    """A one-sentence example's BLEU under each smoothing and tokenizer its source gives a score for."""
    return markdown_table(*bleu.smoothing_rows(example_id)) + "\n"
