"""gpukb's BLEU against sacreBLEU 2.x on sacreBLEU's own example and on random sentences, its defaults, bad input."""

from __future__ import annotations

import inspect
import re
import tomllib
from collections import Counter

import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import BLEU

from gpukb.sequences import bleu
from gpukb.sequences import worked_example as we
from tests.helpers import ROOT, raises_exactly

RAW = tomllib.loads((ROOT / "src/gpukb/data/sequences/bleu_examples.toml").read_text(encoding="utf-8"))
README = next(e for e in RAW["example"] if e["id"] == "sacrebleu-readme")
ISSUE_98 = next(e for e in RAW["example"] if e["id"] == "sacrebleu-issue-98")


def test_readme_example_equals_sacrebleu_and_the_line_its_readme_prints() -> None:
    hyps, refs = README["hypotheses"], README["references"]
    ours = bleu.corpus_bleu(hyps, refs)
    theirs = sacrebleu.corpus_bleu(hyps, refs)
    assert ours.score == pytest.approx(theirs.score, rel=1e-13)
    assert ours.precisions == pytest.approx(theirs.precisions, rel=1e-13)
    assert (ours.stats.hyp_len, ours.stats.ref_len, ours.bp) == (theirs.sys_len, theirs.ref_len, theirs.bp)
    assert str(ours) == str(theirs) == README["published"]["line"]


def test_13a_tokens_equal_sacrebleus() -> None:
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    lines = [
        "The dog bit the man.",
        "It wasn't surprising.",
        "Pay $3.50, or 3,000 yen - now!",
        "a-b 1-2 &amp; &lt;x&gt;",
        '"Quoted," she said (twice).',
        "e.g. U.S.A. 10.5% 7.",
        "tab\tand  spaces  ",
        "<skipped> a hyphen-\nated line\nbroken",  # 13a drops <skipped>, joins "-\n" and turns "\n" into a space
        "&quot;quoted&quot; &amp;quot;",
    ]
    for line in lines:
        assert bleu.tokenize(line) == Tokenizer13a()(line.rstrip()).split(), line


def test_tokenization_changes_the_score() -> None:
    """Without tokenization 'man.' is one token and matches no reference 'man': 49.19 instead of 48.53."""
    hyps, refs = README["hypotheses"], README["references"]
    scores = {m: bleu.corpus_bleu(hyps, refs, tokenize_method=m) for m in ("13a", "none")}
    for m, score in scores.items():
        assert score.score == pytest.approx(sacrebleu.corpus_bleu(hyps, refs, tokenize=m).score, rel=1e-13)
    assert round(scores["13a"].score, 2) == 48.53
    assert round(scores["none"].score, 2) == 49.19
    assert (scores["13a"].stats.hyp_len, scores["none"].stats.hyp_len) == (17, 14)
    assert bleu.tokenize(hyps[0], "none")[-1] == "man."
    assert bleu.tokenize(hyps[0])[-2:] == ["man", "."]


def test_corpus_bleu_is_not_the_mean_of_sentence_bleu() -> None:
    """BLEU sums n-gram counts over the corpus before dividing: 48.53 on the README example, while the mean of its
    three sentence scores is 47.96."""
    hyps, refs = README["hypotheses"], README["references"]
    corpus = bleu.corpus_bleu(hyps, refs).score
    mean = bleu.mean_sentence_bleu(hyps, refs)
    per_segment = [sacrebleu.sentence_bleu(h, [r1, r2]).score for h, r1, r2 in zip(hyps, *refs, strict=True)]
    assert mean == pytest.approx(sum(per_segment) / 3, rel=1e-13)
    assert round(corpus, 2) == 48.53
    assert round(mean, 2) == 47.96


def test_sentence_bleu_equals_sacrebleus_with_its_defaults() -> None:
    for h, r1, r2 in zip(README["hypotheses"], *README["references"], strict=True):
        for tok in ("13a", "none"):
            ours = bleu.sentence_bleu(h, [r1, r2], tokenize_method=tok)
            assert ours.score == pytest.approx(sacrebleu.sentence_bleu(h, [r1, r2], tokenize=tok).score, rel=1e-13)


def test_defaults_are_sacrebleus() -> None:
    """13a tokens, exp smoothing, no effective order for a corpus and effective order for a sentence, no lowercasing."""
    corpus = inspect.signature(sacrebleu.corpus_bleu).parameters
    sentence = inspect.signature(sacrebleu.sentence_bleu).parameters
    init = inspect.signature(BLEU.__init__).parameters
    assert BLEU.TOKENIZER_DEFAULT == "13a" == corpus["tokenize"].default == sentence["tokenize"].default
    assert init["smooth_method"].default == corpus["smooth_method"].default == "exp"
    assert (init["effective_order"].default, sentence["use_effective_order"].default) == (False, True)
    metric = BLEU()
    metric.corpus_score(["a"], [["a"]])  # the signature knows the number of references only after a score
    assert metric.get_signature().format().startswith("nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp")
    _headers, rows = bleu.defaults_rows()
    assert rows == [
        ["tokenizer", "13a", "13a"],
        ["smoothing", "exp", "exp"],
        ["effective order", "no", "yes"],
        ["lowercase", "no", "no"],
        ["largest n-gram order", "4", "4"],
    ]


WORDS = st.sampled_from(["the", "a", "cat", "dog", "sat", "on", "mat", ".", ",", "it's", "3.5", "-", "The"])
SENTENCE = st.lists(WORDS, min_size=1, max_size=9).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(
    segments=st.lists(st.tuples(SENTENCE, SENTENCE, SENTENCE), min_size=1, max_size=4),
    smooth=st.sampled_from(bleu.SMOOTHING),
    effective=st.booleans(),
    tok=st.sampled_from(bleu.TOKENIZERS),
    lowercase=st.booleans(),
)
def test_random_corpora_score_as_in_sacrebleu(segments, smooth, effective, tok, lowercase) -> None:
    hyps = [h for h, _, _ in segments]
    refs = [[r for _, r, _ in segments], [r for _, _, r in segments]]
    ours = bleu.corpus_bleu(
        hyps, refs, tokenize_method=tok, smooth=smooth, effective_order=effective, lowercase=lowercase
    )
    theirs = BLEU(tokenize=tok, smooth_method=smooth, effective_order=effective, lowercase=lowercase).corpus_score(
        hyps, refs
    )
    assert ours.score == pytest.approx(theirs.score, rel=1e-12, abs=1e-12)
    assert (ours.stats.hyp_len, ours.stats.ref_len) == (theirs.sys_len, theirs.ref_len)
    if smooth != "add-k":  # sacreBLEU adds k to the counts it reports back; gpukb keeps the raw counts
        assert list(ours.stats.matches) == list(theirs.counts)
        assert list(ours.stats.totals) == list(theirs.totals)


def test_a_missing_reference_is_none_and_sacrebleu_counts_an_empty_one_as_length_zero() -> None:
    """sacreBLEU's README offers None or '' for a missing reference; its code drops None but keeps '' as a reference
    of length 0, which can become the closest reference length and lift the brevity penalty to 1."""
    with_empty = BLEU(effective_order=True).corpus_score(["Yes."], [[""], ["Yes, he did it."]])
    with_none = BLEU(effective_order=True).corpus_score(["Yes."], [[None], ["Yes, he did it."]])
    assert (with_empty.ref_len, with_none.ref_len) == (0, 6)
    assert (round(with_empty.score, 2), round(with_none.score, 2)) == (70.71, 9.57)
    readme_refs = [["", *README["references"][0][1:]], README["references"][1]]  # the README's variable example
    with_none_refs = [[None, *README["references"][0][1:]], README["references"][1]]
    readme = BLEU().corpus_score(README["hypotheses"], readme_refs)
    assert readme.score == BLEU().corpus_score(README["hypotheses"], with_none_refs).score
    assert round(readme.score, 2) == 29.44  # as its README prints; there the two happen to agree
    ours = bleu.corpus_bleu(["Yes."], [[None], ["Yes, he did it."]], effective_order=True)
    assert ours.score == pytest.approx(with_none.score, rel=1e-13)
    with pytest.raises(ValueError, match=r"references\[0\]\[0\] is empty; pass None"):
        bleu.corpus_bleu(["Yes."], [[""], ["Yes, he did it."]])
    with pytest.raises(ValueError, match=r"references\[0\] is empty \(''\); sacreBLEU counts an empty reference"):
        bleu.sentence_bleu("Yes.", ["", "Yes, he did it."])


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: bleu.corpus_bleu(["a"], []), ValueError, "references is empty: BLEU needs at least one reference str"),
        (lambda: bleu.corpus_bleu([], [[]]), ValueError, "hypotheses is empty"),
        (
            lambda: bleu.corpus_bleu(["a", "b"], [["a"]]),
            ValueError,
            r"references\[0\] has 1 segments; there are 2 hypotheses",
        ),
        (lambda: bleu.corpus_bleu(["a"], [[None]]), ValueError, r"hypotheses\[0\] has no reference in any stream"),
        (lambda: bleu.corpus_bleu(["a"], ["a"]), TypeError, r"references\[0\] must be a list of strings"),
        (lambda: bleu.corpus_bleu("a", [["a"]]), TypeError, "hypotheses must be a list of strings"),
        (lambda: bleu.corpus_bleu(["a"], [[3]]), TypeError, r"references\[0\]\[0\] must be a string or None; got 3"),
        (lambda: bleu.sentence_bleu("a", []), ValueError, "references is empty: BLEU needs at least one reference"),
        (lambda: bleu.sentence_bleu("a", "a"), TypeError, "references must be a list of reference strings; got 'a'"),
        (lambda: bleu.sentence_bleu("a", ["b", 3]), TypeError, r"^references\[1\] must be a string; got 3"),
        (lambda: bleu.corpus_bleu(["a"], [["a"]], tokenize_method="intl"), ValueError, r"of \[.13a., .none.\]"),
        (lambda: bleu.corpus_bleu(["a"], [["a"]], smooth="laplace"), ValueError, "unknown smooth 'laplace'"),
        (lambda: bleu.corpus_bleu([None], [["a"]]), TypeError, "a segment must be a string; got None"),
    ],
)  # fmt: skip
def test_bad_input_gets_a_clear_error(call, error, message) -> None:
    with pytest.raises(error, match=message):
        call()


def test_empty_hypothesis_scores_zero_as_in_sacrebleu() -> None:
    ours = bleu.corpus_bleu([""], [["The dog bit the man."]])
    theirs = sacrebleu.corpus_bleu([""], [["The dog bit the man."]])
    assert ours.score == theirs.score == 0.0
    assert ours.bp == theirs.bp == 0.0


def test_examples_file_rejects_an_unknown_key() -> None:
    text = (ROOT / "src/gpukb/data/sequences/bleu_examples.toml").read_text(encoding="utf-8")
    with pytest.raises(
        ValueError, match=r"^sequences/bleu_examples\.toml: example entry 1 \(sacrebleu-readme\): colour: Extra"
    ):
        bleu.parse_examples(text.replace('id = "sacrebleu-readme"', 'id = "sacrebleu-readme"\ncolour = 1'))
    with pytest.raises(ValueError, match=re.escape("(sacrebleu-readme): url: String should match pattern")):
        bleu.parse_examples(text.replace('url = "https://', 'url = "ftp://'))


def test_one_sentence_scores_as_sacrebleus_own_test_expects_under_each_smoothing() -> None:
    """A Romanian output and reference from sacreBLEU's test suite: 8.493 with exp smoothing, 0 without smoothing
    (no 3-gram matches), 7.347 without tokenization; each also equal to sacreBLEU 2.6 itself."""
    hyp, refs = ISSUE_98["hypotheses"][0], [ISSUE_98["references"][0][0]]
    assert len(ISSUE_98["scores"]) == 7
    for s in ISSUE_98["scores"]:
        value = s.get("smooth_value")
        ours = bleu.sentence_bleu(hyp, refs, tokenize_method=s["tokenize"], smooth=s["smooth"], smooth_value=value)
        assert abs(ours.score - s["score"]) < 1e-3, s
        theirs = BLEU(tokenize=s["tokenize"], smooth_method=s["smooth"], smooth_value=value, effective_order=True)
        assert ours.score == pytest.approx(theirs.sentence_score(hyp, refs).score, rel=1e-13, abs=1e-13)
    assert bleu.sentence_bleu(hyp, refs, smooth="none").stats.matches == (5, 2, 0, 0)


def test_lowercasing_does_not_match_t_cedilla_with_t_comma() -> None:
    """The example's first words are 'Producția' (ț, U+021B) and 'producţia' (ţ, U+0163): different letters."""
    hyp, ref = ISSUE_98["hypotheses"][0], ISSUE_98["references"][0][0]
    first_hyp, first_ref = bleu.tokenize(hyp, lowercase=True)[0], bleu.tokenize(ref, lowercase=True)[0]
    assert (first_hyp[6], first_ref[6]) == ("\u021b", "\u0163")
    assert first_hyp != first_ref
    lowered = bleu.sentence_bleu(hyp, [ref], lowercase=True)
    assert lowered.stats.matches == bleu.sentence_bleu(hyp, [ref]).stats.matches == (5, 2, 0, 0)


def test_sentence_bleu_is_case_sensitive_unless_asked_as_sacrebleu_is() -> None:
    hyp, refs = "The Cat sat on the Mat.", ["the cat sat on the mat."]
    for lowercase in (False, True):
        ours = bleu.sentence_bleu(hyp, refs, lowercase=lowercase).score
        assert ours == pytest.approx(sacrebleu.sentence_bleu(hyp, refs, lowercase=lowercase).score, rel=1e-13)
    assert bleu.sentence_bleu(hyp, refs).stats.matches == (4, 2, 1, 0)  # "The", "Cat", "Mat" do not match
    assert bleu.sentence_bleu(hyp, refs, lowercase=True).stats.matches == (7, 6, 5, 4)  # the default stays off


@pytest.mark.parametrize("rows", [bleu.tokenization_rows, bleu.segment_rows, bleu.smoothing_rows])
def test_an_unknown_example_is_refused_by_name(rows) -> None:
    with pytest.raises(ValueError, match=r"^unknown example 'nope'; choose one of \['sacrebleu-readme', "):
        rows("nope")


def test_corpus_bleu_defaults_score_as_sacrebleus() -> None:
    """Case kept and no effective order by default, as ``sacrebleu.corpus_bleu``: a two-word segment whose case
    differs scores what sacreBLEU gives it, not 100."""
    hyps, refs = ["The Cat", "a dog ran far"], [["the cat", "a dog ran far"]]
    ours = bleu.corpus_bleu(hyps, refs)
    theirs = sacrebleu.corpus_bleu(hyps, refs)
    assert ours.stats.matches == tuple(theirs.counts)
    assert ours.score == pytest.approx(theirs.score, rel=1e-13)
    one = bleu.corpus_bleu(["cat"], [["cat"]])  # one token: no 2- to 4-grams, so effective order would give 100
    assert one.score == pytest.approx(sacrebleu.corpus_bleu(["cat"], [["cat"]]).score, rel=1e-13)
    assert one.score < 100


def test_tokenize_refusals() -> None:
    with raises_exactly(TypeError, "a segment must be a string; got 3 (int)"):
        bleu.tokenize(3)
    with raises_exactly(ValueError, "unknown tokenize 'intl'; choose one of ['13a', 'none']"):
        bleu.tokenize("a b", "intl")
    with raises_exactly(TypeError, "lowercase must be True or False; got 'no' (str)"):
        bleu.tokenize("A B", lowercase="no")  # lowercased the text before


def test_ngrams_orders_and_refusals() -> None:
    assert bleu.ngrams(["a", "b"], 1) == Counter({("a",): 1, ("b",): 1})
    for order in (0, -1):
        with raises_exactly(ValueError, f"max_order must be an int ≥ 1; got {order}"):
            bleu.ngrams(["a", "b"], order)
    with raises_exactly(TypeError, "tokens must be a list of token strings (see tokenize); got 'abc' (str)"):
        bleu.ngrams("abc")  # counted characters before
    with raises_exactly(TypeError, "tokens[1] must be a token string; got 2 (int)"):
        bleu.ngrams(["a", 2])


def test_segment_stats_of_order_two_by_hand() -> None:
    """Hypothesis "a b a" against "a b c" and "a a": unigrams a ×2 (clipped at 2 by the second reference), b;
    bigrams "a b" (in the first), "b a" (in neither); closest reference length 3."""
    stats = bleu.segment_stats(["a", "b", "a"], [["a", "b", "c"], ["a", "a"]], max_order=2)
    assert stats == bleu.Stats(hyp_len=3, ref_len=3, matches=(3, 1), totals=(3, 2))


def test_segment_stats_refusals() -> None:
    with raises_exactly(TypeError, "hypothesis must be a list of token strings (see tokenize); got 'the cat' (str)"):
        bleu.segment_stats("the cat", [["the", "cat"]])
    with raises_exactly(TypeError, "references[0] must be a list of token strings (see tokenize); got 'the cat' (str)"):
        bleu.segment_stats(["the", "cat"], ["the cat"])  # one reference per string, read as characters, before
    with raises_exactly(
        TypeError, "references must be a list of tokenized references (lists of strings); got 'x' (str)"
    ):
        bleu.segment_stats(["the"], "x")
    with raises_exactly(ValueError, "references is empty: a segment needs at least one tokenized reference"):
        bleu.segment_stats(["the"], [])  # min() arg is an empty sequence, before


STATS = bleu.Stats(hyp_len=3, ref_len=3, matches=(2, 1, 0, 0), totals=(3, 2, 1, 0))


def test_score_from_stats_defaults_by_hand() -> None:
    """exp smoothing: p3 has no match among its 1 trigram, so 1/(2·1); there is no 4-gram, so without effective order
    (the default) the mean includes log 0 and BLEU is 0; with it, the geometric mean of the first three."""
    default = bleu.score_from_stats(STATS)
    assert default.score == 0.0
    assert default.precisions == pytest.approx((200 / 3, 50.0, 50.0, 0.0), rel=1e-15)
    effective = bleu.score_from_stats(STATS, effective_order=True)
    assert effective.score == pytest.approx((200 / 3 * 50 * 50) ** (1 / 3), rel=1e-14)
    nothing = bleu.score_from_stats(bleu.Stats(2, 2, (0, 0, 0, 0), (2, 1, 0, 0)))
    assert (nothing.score, nothing.precisions) == (0.0, (0.0, 0.0, 0.0, 0.0))


def test_score_from_stats_refusals() -> None:
    for value in (-1, -0.5):
        with raises_exactly(ValueError, f"smooth_value must be ≥ 0; got {value}"):
            bleu.score_from_stats(STATS, "floor", value)
    with raises_exactly(
        ValueError,
        "smooth_value applies only to the methods ['floor', 'add-k']; smooth 'exp' takes none, got smooth_value=0.5",
    ):
        bleu.score_from_stats(STATS, "exp", 0.5)  # ignored before
    with raises_exactly(TypeError, "effective_order must be True or False; got 'yes' (str)"):
        bleu.score_from_stats(STATS, effective_order="yes")
    with raises_exactly(TypeError, "stats must be a bleu.Stats (see segment_stats); got (3, 3) (tuple)"):
        bleu.score_from_stats((3, 3))


def test_corpus_bleu_refusals() -> None:
    with raises_exactly(TypeError, "hypotheses must be a list of strings; got 'a b' (str)"):
        bleu.corpus_bleu("a b", [["a b"]])
    with raises_exactly(ValueError, "hypotheses is empty: BLEU needs at least one segment"):
        bleu.corpus_bleu([], [[]])
    with raises_exactly(TypeError, "references must be a list of reference streams (each a list with one string per "
                "hypothesis); got 'a b' (str)"):  # fmt: skip
        bleu.corpus_bleu(["a b"], "a b")
    with raises_exactly(ValueError, "references is empty: BLEU needs at least one reference stream"):
        bleu.corpus_bleu(["a b"], [])
    with raises_exactly(TypeError, "references[0] must be a list of strings, one per hypothesis; got 5 (int)"):
        bleu.corpus_bleu(["a b"], [5])
    with raises_exactly(TypeError, "effective_order must be True or False; got 'yes' (str)"):
        bleu.corpus_bleu(["a b"], [["a b"]], effective_order="yes")


def test_mean_sentence_bleu_refusals() -> None:
    with raises_exactly(ValueError, "hypotheses is empty: BLEU needs at least one segment"):
        bleu.mean_sentence_bleu([], [[]])  # ZeroDivisionError before
    with raises_exactly(TypeError, "hypotheses must be a list of strings; got 'ab' (str)"):
        bleu.mean_sentence_bleu("ab", [["a", "b"]])  # one segment per character before


def test_sentence_bleu_refusals() -> None:
    with raises_exactly(TypeError, "references must be a list of reference strings; got 'a b' (str)"):
        bleu.sentence_bleu("a b", "a b")
    with raises_exactly(ValueError, "references is empty: BLEU needs at least one reference"):
        bleu.sentence_bleu("a b", [])
    with raises_exactly(
        ValueError,
        "references[0] is empty (''); sacreBLEU counts an empty reference as one of length 0, "
        "which can decide the brevity penalty: leave it out instead",
    ):
        bleu.sentence_bleu("a b", [""])


def test_a_missing_reference_skips_only_that_segment_of_its_stream() -> None:
    """Stream 0 has no reference for segment 0 but has one for segment 1; stream 1 the other way round."""
    hyps = ["a b c d", "e f g h"]
    assert bleu.corpus_bleu(hyps, [[None, "e f g h"], ["a b c d", None]]).score == pytest.approx(100, rel=1e-14)


def test_data_file_errors_name_the_file_and_an_empty_file_has_no_entries() -> None:
    with raises_exactly(ValueError, "mine.toml: unknown top-level keys ['colour']; this file holds ['example']"):
        bleu.parse_examples("colour = 1", "mine.toml")
    with raises_exactly(ValueError, "mine.toml: unknown top-level keys ['colour']; this file holds ['example']"):
        we.parse("colour = 1", "mine.toml")
    assert bleu.parse_examples("") == {}
    assert we.parse("") == []


def test_segment_table_ends_with_the_mean_and_the_corpus_score() -> None:
    """The last two rows of the per-segment table are labelled for what they hold, read against the functions."""
    example = bleu.examples()["sacrebleu-readme"]
    _, rows = bleu.segment_rows("sacrebleu-readme")
    mean = [f"{bleu.mean_sentence_bleu(example.hypotheses, example.references, tokenize_method=m):.2f}"
            for m in bleu.TOKENIZERS]  # fmt: skip
    corpus = [f"{bleu.corpus_bleu(example.hypotheses, example.references, tokenize_method=m).score:.2f}"
              for m in bleu.TOKENIZERS]  # fmt: skip
    assert rows[-2:] == [["all", "mean of the sentence scores", *mean], ["all", "corpus BLEU", *corpus]]


@pytest.mark.parametrize("smooth", ["exp", "floor", "add-k", "none"])
def test_a_one_token_hypothesis_pays_the_brevity_penalty_as_sacrebleu_does(smooth: str) -> None:
    """c = 1 against r = 3: the penalty is e^(1 - 3), not zero (only an empty hypothesis has none to pay)."""
    ours = bleu.sentence_bleu("the", ["the cat sat"], smooth=smooth).score
    theirs = BLEU(smooth_method=smooth, effective_order=True).sentence_score("the", ["the cat sat"]).score
    assert ours == pytest.approx(theirs, abs=1e-9)
    assert ours > 0
