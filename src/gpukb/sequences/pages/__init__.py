"""The sequence-models chapter's page layer, the only code that turns its library and data into Markdown: one module
per page (``pages.<page>`` renders ``docs/sequences/<page>.md``), and here what several of its pages share.

Pages call their module's functions with literal arguments (``from gpukb.sequences.pages.lstm import
lstm_example``); the
library modules (:mod:`gpukb.sequences.worked_example`, :mod:`gpukb.sequences.bleu`,
:mod:`gpukb.sequences.seq2seq`) return values or ``(headers, rows)``.
"""

from __future__ import annotations

from gpukb import errata as errata_data


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
