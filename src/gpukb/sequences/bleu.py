"""BLEU (Papineni et al., 2002) with sacreBLEU's defaults, written from the paper and sacreBLEU's documented choices.

BLEU is a corpus metric. For every hypothesis segment, count its n-grams (n = 1..4) and how many of them occur in a
reference, each n-gram's count *clipped* to the most times it occurs in any one reference; sum those counts over
the whole corpus, divide to get four modified precisions p_n, and combine:

    BLEU = BP · exp( (1/4) Σ_n log p_n ),    BP = 1 if c > r else exp(1 − r/c),

where c is the total hypothesis length and r the total of the reference lengths closest to each hypothesis length
(the shorter one on a tie). sacreBLEU adds what the paper leaves open: the text is tokenized by the ``13a`` rules
of WMT's ``mteval-v13a.pl`` by default; a precision with no match is smoothed by the ``exp`` method (the k-th such
order gets ``1 / (2^k · total)``, the NIST script's choice); sentence BLEU uses the *effective order* (orders with no
n-gram at all are left out of the mean). Scores are reported ×100.

Sources: K. Papineni, S. Roukos, T. Ward, W.-J. Zhu, "BLEU: a Method for Automatic Evaluation of Machine
Translation", ACL 2002, https://aclanthology.org/P02-1040/; M. Post, "A Call for Clarity in Reporting BLEU Scores",
WMT 2018, https://aclanthology.org/W18-6319/; sacreBLEU 2.6.0 (``sacrebleu/metrics/bleu.py``,
``sacrebleu/tokenizers/tokenizer_13a.py``, https://github.com/mjpost/sacrebleu).
"""

from __future__ import annotations

import datetime
import inspect
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from pydantic import Field

from gpukb.arguments import choice, flag, given, integer, real
from gpukb.data import data_text
from gpukb.schema import StrictModel, parse_toml, validate_entries

#: Tokenizers implemented here: sacreBLEU's default and no tokenization at all (split on whitespace).
TOKENIZERS = ("13a", "none")
#: Smoothing methods, as sacreBLEU names them (Chen and Cherry, WMT 2014, methods 0-3).
SMOOTHING = ("exp", "none", "floor", "add-k")
#: Default smoothing values of the methods that take one (sacreBLEU's ``BLEU.SMOOTH_DEFAULTS``).
SMOOTH_DEFAULTS = {"floor": 0.1, "add-k": 1.0}
MAX_ORDER = 4

# --8<-- [start:tokenize-13a]
#: The ``13a`` rules, applied in order to the line padded with spaces (mteval-v13a.pl's tokenization):
_13A_RULES = (
    (re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])"), r" \1 "),  # split off most ASCII punctuation and symbols
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),  # a period or comma not after a digit
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),  # a period or comma not before a digit
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),  # a dash after a digit
)


def tokenize_13a(line: str) -> list[str]:
    """Tokens of one line by the ``13a`` rules: undo four HTML escapes, split off punctuation, keep ``3.5`` whole.

    The apostrophe is not split off (``wasn't`` stays one token), nor is a period between digits.
    """
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    for escaped, char in (("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">")):
        line = line.replace(escaped, char)
    line = f" {line} "
    for pattern, replacement in _13A_RULES:
        line = pattern.sub(replacement, line)
    return line.split()
    # --8<-- [end:tokenize-13a]


def tokenize(line: str, method: str = "13a", lowercase: bool = False) -> list[str]:
    """A line's tokens: ``"13a"`` (sacreBLEU's default) or ``"none"`` (whitespace only); trailing space removed.

    Raises:
        TypeError: If ``line`` is not a string, ``lowercase`` not a bool.
        ValueError: For another method.
    """
    if not isinstance(line, str):
        raise TypeError(f"a segment must be a string; got {given(line)}")
    choice("tokenize", method, TOKENIZERS)
    line = line.lower() if flag("lowercase", lowercase) else line  # a truthy "no" lowercased the text before
    line = line.rstrip()
    return tokenize_13a(line) if method == "13a" else line.split()


def ngrams(tokens: Sequence[str], max_order: int = MAX_ORDER) -> Counter:
    """Counts of every n-gram (as a tuple) of orders 1 .. ``max_order`` (orders longer than the tokens have none).

    Raises:
        TypeError: For ``tokens`` that are a lone string (its characters were counted as tokens before) or not a
            sequence of strings, a ``max_order`` that is not an int.
        ValueError: For a ``max_order`` below 1.
    """
    _tokens("tokens", tokens)
    top = min(integer("max_order", max_order, minimum=1), len(tokens))
    return Counter(tuple(tokens[i : i + n]) for n in range(1, top + 1) for i in range(len(tokens) - n + 1))


@dataclass(frozen=True)
class Stats:
    """BLEU's sufficient statistics; they add up over segments.

    Attributes:
        hyp_len: Hypothesis tokens.
        ref_len: Reference tokens, the closest reference length per segment.
        matches: Clipped n-gram matches, per order 1 .. 4.
        totals: Hypothesis n-grams, per order.
    """

    hyp_len: int
    ref_len: int
    matches: tuple[int, ...]
    totals: tuple[int, ...]

    def __add__(self, other: Stats) -> Stats:
        add = lambda a, b: tuple(x + y for x, y in zip(a, b, strict=True))  # noqa: E731
        return Stats(
            self.hyp_len + other.hyp_len,
            self.ref_len + other.ref_len,
            add(self.matches, other.matches),
            add(self.totals, other.totals),
        )


def _tokens(name: str, tokens: object) -> None:
    """Refuse what is not a list of tokens: a lone string, a non-sequence, an item that is not a string.

    Raises:
        TypeError: Naming ``name``, what was given and what is allowed.
    """
    if isinstance(tokens, str | bytes) or not isinstance(tokens, Sequence):
        raise TypeError(f"{name} must be a list of token strings (see tokenize); got {given(tokens)}")
    for k, token in enumerate(tokens):
        if not isinstance(token, str):
            raise TypeError(f"{name}[{k}] must be a token string; got {given(token)}")


def _check_segment(hypothesis: object, references: object) -> None:
    """Refuse a segment that is not tokenized lists: hypothesis tokens and a non-empty list of reference token lists.

    Raises:
        TypeError: For a lone string or a list of strings where lists of tokens are expected.
        ValueError: For no reference.
    """
    _tokens("hypothesis", hypothesis)
    if isinstance(references, str | bytes) or not isinstance(references, Sequence):
        raise TypeError(
            f"references must be a list of tokenized references (lists of strings); got {given(references)}"
        )
    if len(references) == 0:
        raise ValueError("references is empty: a segment needs at least one tokenized reference")
    for k, ref in enumerate(references):
        _tokens(f"references[{k}]", ref)


# --8<-- [start:segment-stats]
def segment_stats(hypothesis: list[str], references: list[list[str]], max_order: int = MAX_ORDER) -> Stats:
    """The statistics of one tokenized segment against its tokenized references.

    Raises:
        TypeError: For a hypothesis or a reference that is a string instead of a list of tokens (before, a string
            was read as a list of characters and a list of strings as one reference per character string).
        ValueError: For no reference (a bare ``min()`` error before), a ``max_order`` below 1.
    """
    _check_segment(hypothesis, references)
    hyp = ngrams(hypothesis, max_order)
    best: Counter = Counter()
    for ref in references:  # clip each n-gram at its largest count in any single reference
        best |= ngrams(ref, max_order)
    matches, totals = [0] * max_order, [0] * max_order
    for gram, count in hyp.items():
        totals[len(gram) - 1] += count
        matches[len(gram) - 1] += min(count, best[gram])
    # the reference length closest to the hypothesis length; the shorter one on a tie
    ref_len = min((abs(len(r) - len(hypothesis)), len(r)) for r in references)[1]
    return Stats(len(hypothesis), ref_len, tuple(matches), tuple(totals))
    # --8<-- [end:segment-stats]


@dataclass(frozen=True)
class Score:
    """A BLEU score and what it is made of (precisions and score ×100, as sacreBLEU reports them).

    Attributes:
        score: BLEU ×100.
        precisions: The (smoothed) modified precisions ×100, orders 1 .. 4.
        bp: The brevity penalty.
        stats: The summed statistics.
    """

    score: float
    precisions: tuple[float, ...]
    bp: float
    stats: Stats

    @property
    def ratio(self) -> float:
        """Hypothesis length over reference length."""
        return self.stats.hyp_len / self.stats.ref_len if self.stats.ref_len else 0.0

    def __str__(self) -> str:
        """sacreBLEU's one-line form: ``BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = ...)``."""
        p = "/".join(f"{x:.1f}" for x in self.precisions)
        return (
            f"BLEU = {self.score:.2f} {p} (BP = {self.bp:.3f} ratio = {self.ratio:.3f} "
            f"hyp_len = {self.stats.hyp_len} ref_len = {self.stats.ref_len})"
        )


def _smoothing(stats: object, smooth: object, smooth_value: object, effective_order: object) -> float:
    """Check :func:`score_from_stats`'s arguments; the smoothing value to use (the method's default if none given).

    Raises:
        TypeError: For ``stats`` that are not :class:`Stats`, a ``smooth_value`` that is not a real number, an
            ``effective_order`` that is not a bool.
        ValueError: For an unknown method, a negative ``smooth_value`` or one given to a method that takes none.
    """
    if not isinstance(stats, Stats):
        raise TypeError(f"stats must be a bleu.Stats (see segment_stats); got {given(stats)}")
    choice("smooth", smooth, SMOOTHING)
    flag("effective_order", effective_order)
    if smooth_value is None:
        return SMOOTH_DEFAULTS.get(smooth, 0.0)
    if smooth not in SMOOTH_DEFAULTS:  # sacreBLEU ignores it; a caller who passes one expects it to count
        raise ValueError(
            f"smooth_value applies only to the methods {list(SMOOTH_DEFAULTS)}; smooth {smooth!r} takes none, "
            f"got smooth_value={smooth_value!r}"
        )
    return real("smooth_value", smooth_value, minimum=0)


# --8<-- [start:score]
def score_from_stats(
    stats: Stats, smooth: str = "exp", smooth_value: float | None = None, effective_order: bool = False
) -> Score:
    """BLEU from summed statistics: smoothed precisions, their geometric mean, the brevity penalty.

    Raises:
        TypeError: For ``stats`` that are not :class:`Stats`, a ``smooth_value`` that is not a real number, an
            ``effective_order`` that is not a bool.
        ValueError: For an unknown smoothing method, a negative ``smooth_value``, or one given to a method that
            takes none (``exp``, ``none``: it was ignored before).
    """
    value = _smoothing(stats, smooth, smooth_value, effective_order)
    c, r = stats.hyp_len, stats.ref_len
    bp = 1.0 if c >= r else (math.exp(1 - r / c) if c > 0 else 0.0)
    order = len(stats.totals)
    precisions = [0.0] * order
    if not any(stats.matches):  # nothing matches: BLEU is 0 whatever the smoothing
        return Score(0.0, tuple(precisions), bp, stats)
    halvings, used = 0, order
    for n in range(order):
        match, total = float(stats.matches[n]), float(stats.totals[n])
        if smooth == "add-k" and n > 0:
            match, total = match + value, total + value
        if total == 0:  # the hypotheses have no n-grams this long
            break
        if effective_order:
            used = n + 1
        if match > 0:
            precisions[n] = 100 * match / total
        elif smooth == "exp":
            halvings += 1
            precisions[n] = 100 / (2**halvings * total)
        elif smooth == "floor":
            precisions[n] = 100 * value / total
    logs = [math.log(p) if p > 0 else -math.inf for p in precisions[:used]]
    score = bp * math.exp(sum(logs) / used) if all(math.isfinite(x) for x in logs) else 0.0
    return Score(score, tuple(precisions), bp, stats)
    # --8<-- [end:score]


def _hypotheses(hypotheses: object) -> None:
    """Refuse hypotheses that are not a non-empty list (a lone string included).

    Raises:
        TypeError: For a string or a non-sequence.
        ValueError: For an empty list.
    """
    if isinstance(hypotheses, str) or not isinstance(hypotheses, Sequence):
        raise TypeError(f"hypotheses must be a list of strings; got {given(hypotheses)}")
    if len(hypotheses) == 0:
        raise ValueError("hypotheses is empty: BLEU needs at least one segment")


def _references(references: object, segments: int) -> list[list[str]]:
    """Reference streams → the references of each segment, ``None`` entries (a missing reference) dropped.

    Raises:
        TypeError: If the streams are not lists of strings (or ``None``).
        ValueError: No stream; a stream of another length than the hypotheses; an empty reference; a segment with
            no reference at all.
    """
    if isinstance(references, str) or not isinstance(references, Sequence):
        raise TypeError(
            f"references must be a list of reference streams (each a list with one string per "
            f"hypothesis); got {given(references)}"
        )
    if len(references) == 0:
        raise ValueError("references is empty: BLEU needs at least one reference stream")
    per_segment: list[list[str]] = [[] for _ in range(segments)]
    for k, stream in enumerate(references):
        if isinstance(stream, str) or not isinstance(stream, Sequence):
            raise TypeError(f"references[{k}] must be a list of strings, one per hypothesis; got {given(stream)}")
        if len(stream) != segments:
            raise ValueError(f"references[{k}] has {len(stream)} segments; there are {segments} hypotheses")
        for s, ref in enumerate(stream):
            if ref is None:
                continue
            if not isinstance(ref, str):
                raise TypeError(f"references[{k}][{s}] must be a string or None; got {given(ref)}")
            if not ref.strip():
                raise ValueError(
                    f"references[{k}][{s}] is empty; pass None for a segment this stream has no reference for"
                )
            per_segment[s].append(ref)
    for s, refs in enumerate(per_segment):
        if not refs:
            raise ValueError(f"hypotheses[{s}] has no reference in any stream")
    return per_segment


# --8<-- [start:corpus-bleu]
def corpus_bleu(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str | None]],
    tokenize_method: str = "13a",
    smooth: str = "exp",
    smooth_value: float | None = None,
    effective_order: bool = False,
    lowercase: bool = False,
) -> Score:
    """Corpus BLEU, with sacreBLEU's defaults (``13a`` tokens, ``exp`` smoothing, no effective order).

    Args:
        hypotheses: One string per segment.
        references: Reference *streams*, as sacreBLEU takes them: each a list with one reference per hypothesis
            (``None`` where a stream has no reference for a segment).
        tokenize_method: ``"13a"`` or ``"none"``.
        smooth: ``"exp"``, ``"none"``, ``"floor"`` or ``"add-k"``.
        smooth_value: For ``floor`` (default 0.1) and ``add-k`` (default 1).
        effective_order: Leave out orders with no n-gram at all.
        lowercase: Compare lowercased text.

    Raises:
        TypeError: If the inputs are not strings in lists.
        ValueError: For no hypotheses, no reference stream, streams of the wrong length, an empty reference, a
            segment without a reference, an unknown tokenizer or smoothing.
    """
    _hypotheses(hypotheses)
    per_segment = _references(references, len(hypotheses))
    flag("effective_order", effective_order)
    total = None
    for hyp, refs in zip(hypotheses, per_segment, strict=True):
        stats = segment_stats(
            tokenize(hyp, tokenize_method, lowercase), [tokenize(r, tokenize_method, lowercase) for r in refs]
        )
        total = stats if total is None else total + stats
    return score_from_stats(total, smooth, smooth_value, effective_order)
    # --8<-- [end:corpus-bleu]


def sentence_bleu(
    hypothesis: str,
    references: Sequence[str],
    tokenize_method: str = "13a",
    smooth: str = "exp",
    smooth_value: float | None = None,
    effective_order: bool = True,
    lowercase: bool = False,
) -> Score:
    """BLEU of one segment against its references, with ``sacrebleu.sentence_bleu``'s defaults (effective order on).

    Raises:
        TypeError, ValueError: As :func:`corpus_bleu`; also if ``references`` is a lone string or empty.
    """
    if isinstance(references, str) or not isinstance(references, Sequence):
        raise TypeError(f"references must be a list of reference strings; got {given(references)}")
    if len(references) == 0:
        raise ValueError("references is empty: BLEU needs at least one reference")
    for k, ref in enumerate(references):
        if not isinstance(ref, str):
            raise TypeError(f"references[{k}] must be a string; got {given(ref)}")
        if not ref.strip():
            raise ValueError(
                f"references[{k}] is empty ({ref!r}); sacreBLEU counts an empty reference as one of "
                "length 0, which can decide the brevity penalty: leave it out instead"
            )
    return corpus_bleu(
        [hypothesis], [[r] for r in references], tokenize_method, smooth, smooth_value, effective_order, lowercase
    )


def mean_sentence_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str | None]], **options) -> float:
    """The average of per-segment sentence BLEU: a different number from corpus BLEU, shown for contrast.

    Raises:
        TypeError, ValueError: As :func:`corpus_bleu` (before, no hypotheses raised ZeroDivisionError and a lone
            string was scored one character per segment).
    """
    _hypotheses(hypotheses)
    per_segment = _references(references, len(hypotheses))
    scores = [sentence_bleu(h, refs, **options).score for h, refs in zip(hypotheses, per_segment, strict=True)]
    return sum(scores) / len(scores)


# --- the examples (data file) ---------------------------------------------------------------------------------

DATA_FILE = "sequences/bleu_examples.toml"


class Published(StrictModel):
    """A score as the source prints it, in sacreBLEU's one-line form."""

    line: str = Field(pattern=r"^BLEU = ")
    signature: str


class PublishedScore(StrictModel):
    """A sentence BLEU score a source prints for one setting (effective order on)."""

    smooth: str
    smooth_value: float | None = None
    tokenize: str
    score: float = Field(ge=0, le=100)


class BleuExample(StrictModel):
    """Hypotheses and reference streams from a public source, with what that source says they score.

    Attributes:
        id: Stable identifier.
        source: Where the sentences come from.
        url: The source's address.
        checked: When the source was read.
        hypotheses: System output, one string per segment.
        references: Reference streams (lists of the same length as ``hypotheses``).
        published: The score the source prints for them, if it does.
        scores: Sentence BLEU scores the source expects under other settings.
    """

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    source: str
    url: str = Field(pattern=r"^https://")
    checked: datetime.date
    hypotheses: list[str] = Field(min_length=1)
    references: list[list[str]] = Field(min_length=1)
    published: Published | None = None
    scores: list[PublishedScore] = Field(default_factory=list)


def parse_examples(text: str, file: str = DATA_FILE) -> dict[str, BleuExample]:
    """Read the examples file: its ``[[example]]`` entries, by id.

    Raises:
        ValueError: Naming the file, the entry and the field; an id used twice.
    """
    data = parse_toml(text, file, ("example",))
    return {e.id: e for e in validate_entries(BleuExample, data.get("example", []), file, "example", key="id")}


@cache
def examples() -> dict[str, BleuExample]:
    """The packaged examples, by id."""
    return parse_examples(data_text(DATA_FILE))


# --- tables for the page ------------------------------------------------------------------------------------------


def defaults_rows() -> tuple[list[str], list[list[str]]]:
    """The defaults of :func:`corpus_bleu` and :func:`sentence_bleu` (sacreBLEU's, which a test compares)."""
    corpus, sentence = inspect.signature(corpus_bleu).parameters, inspect.signature(sentence_bleu).parameters
    yes = {True: "yes", False: "no"}.__getitem__  # a default that is not a bool fails here, not shown as "no"
    rows = [
        ["tokenizer", corpus["tokenize_method"].default, sentence["tokenize_method"].default],
        ["smoothing", corpus["smooth"].default, sentence["smooth"].default],
        ["effective order", yes(corpus["effective_order"].default), yes(sentence["effective_order"].default)],
        ["lowercase", yes(corpus["lowercase"].default), yes(sentence["lowercase"].default)],
        ["largest n-gram order", str(MAX_ORDER), str(MAX_ORDER)],
    ]
    return ["setting", "corpus BLEU", "sentence BLEU"], rows


def tokenization_rows(example_id: str) -> tuple[list[str], list[list[object]]]:
    """The same corpus under each tokenizer: the first hypothesis's tokens, the lengths, the corpus score.

    Raises:
        ValueError: For an unknown example.
    """
    example = examples()[choice("example", example_id, tuple(examples()))]
    rows = []
    for method in TOKENIZERS:
        score = corpus_bleu(example.hypotheses, example.references, tokenize_method=method)
        tokens = " · ".join(tokenize(example.hypotheses[0], method))
        rows.append([method, tokens, score.stats.hyp_len, score.stats.ref_len, f"{score.score:.2f}"])
    return ["tokenizer", "first hypothesis as tokens", "hyp_len", "ref_len", "corpus BLEU"], rows


def segment_rows(example_id: str) -> tuple[list[str], list[list[object]]]:
    """Sentence BLEU of each segment under each tokenizer, their mean, and corpus BLEU.

    Raises:
        ValueError: For an unknown example.
    """
    example = examples()[choice("example", example_id, tuple(examples()))]
    refs = _references(example.references, len(example.hypotheses))
    rows: list[list[object]] = []
    for k, (hyp, segment_refs) in enumerate(zip(example.hypotheses, refs, strict=True), start=1):
        rows.append(
            [str(k), hyp, *(f"{sentence_bleu(hyp, segment_refs, tokenize_method=m).score:.2f}" for m in TOKENIZERS)]
        )
    rows.append(
        [
            "all",
            "mean of the sentence scores",
            *(
                f"{mean_sentence_bleu(example.hypotheses, example.references, tokenize_method=m):.2f}"
                for m in TOKENIZERS
            ),
        ]
    )
    rows.append(
        [
            "all",
            "corpus BLEU",
            *(
                f"{corpus_bleu(example.hypotheses, example.references, tokenize_method=m).score:.2f}"
                for m in TOKENIZERS
            ),
        ]
    )
    return ["segment", "hypothesis", *(f"sentence BLEU, {m}" for m in TOKENIZERS)], rows


def smoothing_rows(example_id: str) -> tuple[list[str], list[list[object]]]:
    """Sentence BLEU of a one-segment example under each setting its source prints a score for.

    Raises:
        ValueError: For an unknown example.
    """
    example = examples()[choice("example", example_id, tuple(examples()))]
    refs = _references(example.references, len(example.hypotheses))[0]
    rows = []
    for s in example.scores:
        ours = sentence_bleu(
            example.hypotheses[0], refs, tokenize_method=s.tokenize, smooth=s.smooth, smooth_value=s.smooth_value
        )
        default = SMOOTH_DEFAULTS.get(s.smooth)
        value = (
            f"{s.smooth_value:g}"
            if s.smooth_value is not None
            else "-"
            if default is None
            else f"{default:g} (default)"
        )
        rows.append([s.smooth, value, s.tokenize, f"{ours.score:.5f}", f"{s.score:g}"])
    return ["smoothing", "value", "tokenizer", "gpukb", "the source expects"], rows
