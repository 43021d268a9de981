"""``gpukb bleu``: corpus (or per-line sentence) BLEU of a hypothesis file against reference files, sacreBLEU-style."""

from __future__ import annotations

import argparse
from pathlib import Path

from gpukb import arguments
from gpukb.sequences import bleu

EPILOG = """examples:
  gpukb bleu --example sacrebleu-readme        the three sentences of sacreBLEU's README
  gpukb bleu hyp.txt ref1.txt ref2.txt          one segment per line; each reference file is a stream
  gpukb bleu hyp.txt ref.txt --tokenize none    no tokenization: split on spaces only
  gpukb bleu hyp.txt ref.txt --sentence         sentence BLEU of each line (effective order on)"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``bleu`` subcommand."""
    parser = sub.add_parser(
        "bleu",
        help="BLEU with sacreBLEU's defaults (13a tokens, exp smoothing), from files or a packaged example",
        description="Corpus BLEU of a hypothesis file against one or more reference files (one segment per line), "
        "or per-line sentence BLEU; the same numbers as sacreBLEU with the same settings.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("hypotheses", nargs="?", type=Path, help="the system output, one segment per line")
    parser.add_argument("references", nargs="*", type=Path, help="reference files, one segment per line each")
    parser.add_argument("--example", choices=sorted(bleu.examples()), help="score a packaged example instead")
    parser.add_argument("--tokenize", choices=bleu.TOKENIZERS, default="13a", help="tokenizer (default: 13a)")
    parser.add_argument("--smooth", choices=bleu.SMOOTHING, default="exp", help="smoothing (default: exp)")
    parser.add_argument("--lowercase", action="store_true", help="compare lowercased text")
    parser.add_argument("--sentence", action="store_true", help="sentence BLEU of each line, effective order on")
    parser.set_defaults(handler=run, parser=parser)


def _lines(path: Path) -> list[str]:
    path = arguments.regular_file("a segment file", path)  # a named pipe would block the read forever
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text (one segment per line)") from None


def run(args: argparse.Namespace) -> int:
    """Score and print; bad input exits with status 2 and a message naming what was wrong."""
    parser: argparse.ArgumentParser = args.parser
    try:
        if args.example:
            if args.hypotheses is not None:
                raise ValueError("give either --example or files, not both")
            example = bleu.examples()[args.example]
            hypotheses, references = example.hypotheses, example.references
        else:
            if args.hypotheses is None or not args.references:
                raise ValueError("give a hypothesis file and at least one reference file (or --example)")
            hypotheses = _lines(args.hypotheses)
            references = [_lines(p) for p in args.references]
        options = {"tokenize_method": args.tokenize, "smooth": args.smooth, "lowercase": args.lowercase}
        if args.sentence:
            for k, hyp in enumerate(hypotheses, start=1):
                refs = [stream[k - 1] for stream in references if len(stream) == len(hypotheses)]
                if len(refs) != len(references):
                    raise ValueError(f"every reference file needs {len(hypotheses)} lines, one per hypothesis")
                print(f"{k}\t{bleu.sentence_bleu(hyp, refs, **options).score:.2f}\t{hyp}")
        else:
            score = bleu.corpus_bleu(hypotheses, references, **options)
            case = "lc" if args.lowercase else "mixed"
            print(f"{score}")
            print(f"nrefs:{len(references)}|case:{case}|eff:no|tok:{args.tokenize}|smooth:{args.smooth}")
    except (ValueError, TypeError, OSError) as err:
        parser.error(str(err))
    return 0
