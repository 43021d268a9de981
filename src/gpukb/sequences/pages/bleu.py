"""The page “BLEU, computed and checked against sacreBLEU” (docs/sequences/bleu.md): its tables, figures and text."""

from __future__ import annotations

from gpukb.sequences import bleu
from gpukb.tables import markdown_table


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
