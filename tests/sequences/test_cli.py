"""``gpukb bleu``: the packaged example, files, per-line sentence BLEU, and usage errors with status 2."""

from __future__ import annotations

from pathlib import Path

import pytest
import sacrebleu

from gpukb.cli import main
from gpukb.sequences.bleu import examples


def test_example_prints_sacrebleus_line_and_a_signature(capsys) -> None:
    assert main(["bleu", "--example", "sacrebleu-readme"]) == 0
    out = capsys.readouterr().out.splitlines()
    example = examples()["sacrebleu-readme"]
    assert out[0] == example.published.line == str(sacrebleu.corpus_bleu(example.hypotheses, example.references))
    assert out[1] == "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp"


def test_files_and_options(tmp_path: Path, capsys) -> None:
    example = examples()["sacrebleu-readme"]
    hyp = tmp_path / "hyp.txt"
    hyp.write_text("\n".join(example.hypotheses) + "\n")
    refs = []
    for k, stream in enumerate(example.references):
        refs.append(tmp_path / f"ref{k}.txt")
        refs[-1].write_text("\n".join(stream) + "\n")
    assert main(["bleu", str(hyp), *map(str, refs), "--tokenize", "none"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == str(sacrebleu.corpus_bleu(example.hypotheses, example.references, tokenize="none"))
    assert main(["bleu", str(hyp), *map(str, refs), "--sentence"]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    segments = zip(example.hypotheses, zip(*example.references, strict=True), strict=True)
    expected = [sacrebleu.sentence_bleu(h, list(r)).score for h, r in segments]
    assert [float(r[1]) for r in rows] == [round(s, 2) for s in expected]
    assert [r[2] for r in rows] == example.hypotheses


@pytest.mark.parametrize(
    ("ref_text", "message"),
    [
        ("The dog bit the man.\nextra line\n", "references[0] has 2 segments; there are 1 hypotheses"),
        ("\n", "references[0][0] is empty; pass None"),
    ],
)
def test_bad_files_are_usage_errors(tmp_path: Path, capsys, ref_text: str, message: str) -> None:
    hyp, ref = tmp_path / "hyp.txt", tmp_path / "ref.txt"
    hyp.write_text("The dog bit the man.\n")
    ref.write_text(ref_text)
    with pytest.raises(SystemExit) as exit_info:
        main(["bleu", str(hyp), str(ref)])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_missing_arguments_are_usage_errors(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["bleu"])
    assert exit_info.value.code == 2
    assert "give a hypothesis file and at least one reference file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["bleu", str(tmp_path / "missing.txt"), str(tmp_path / "missing.txt")])
    assert f"{tmp_path / 'missing.txt'}: no such file" in capsys.readouterr().err
