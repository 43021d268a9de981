"""The products a transformer's linear layers make, and the Triton GEMM's second sweep: products drawn at random,
with a fixed seed, from model families (``gpukb/data/gemm/model_shapes.toml``) and token counts from 1 to 16384.

The second sweep exists because a sweep chosen by the people who tune a kernel tends to contain the shapes they
tuned for. The first draw (:data:`RANDOM_SEED`) was committed before the tuning it measured; once its losses were
known and tuned on, a new draw (the first of :data:`HELD_OUT_DRAWS`) was committed before that tuning and measured
only after it: its figures are what a user of these models would see. Torch-free.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from functools import cache
from importlib import resources
from typing import Literal

from pydantic import Field

from gpukb.arguments import given, integer
from gpukb.schema import StrictModel, parse_toml, validate_entries

#: The file this module reads, under the ``gpukb.data`` package.
FILE = "gemm/model_shapes.toml"

#: The seed and size of the random sweep (drawn once, before the tuning it measures; never redrawn). Its results
#: were measured and read after issue 29's tuning, so later tuning may use it: it is no longer held out.
RANDOM_SEED = 29
RANDOM_COUNT = 24
#: The held-out draws from the same generator, by the name of the set of shapes each is (the ``sweep`` of a sweep
#: record's rows): ``(seed, count)``. Each seed was drawn with ``secrets.randbelow(10**6)`` and committed before the
#: run that first measured its draw; once that run's results had been read, the draw was *seen* and the next one was
#: drawn. :func:`gpukb.gemm.triton.sweep.held_out` turns a draw into the sweep's shapes.
HELD_OUT_DRAWS: dict[str, tuple[int, int]] = {
    # 2026-11-27, committed before the tuning that followed the random sweep, measured once, in the final run.
    "held-out": (909044, 32),
    # Once the first held-out sweep's results had been read (and its losing classes tuned, through shapes designed
    # for them, not its own): committed after the last tuning and before the run that measured it.
    "held-out-2": (961848, 32),
    # Once the second's results had been read (and the rules of the class look-up changed for the causes its losses
    # showed, checked on designed shapes, not its own): committed after those changes, before the run that measured it.
    "held-out-3": (877618, 32),
    # Once the third's results had been read: committed before the fifth tuning (decode steps and under-filled waves,
    # on designed shapes) and before the run that measured it.
    "held-out-4": (276436, 32),
    # Once the fourth's results had been read (and the look-up's rules changed for what they showed: weight-bound
    # products carried over by bytes, borrowed splits, the one-launch cap): committed before the run that measured
    # it. A first seed, 402292, drew 4×1024×1024 NT, a shape the fifth tuning ran; it was set aside, unmeasured.
    "held-out-5": (599625, 32),
    # Once the fifth's results had been read, and step 14 had measured tiles of two blocks on its products: committed
    # after the look-up's step-15 rule (two blocks where they do more work per unit of time) and before the run that
    # measured it. A first seed, 186744, drew 9×2304×768 NT, a shape a tuning ran; it was set aside, unmeasured.
    "held-out-6": (342000, 32),
    # Once the sixth's results had been read: committed before step 16's run (tall tiles for products of a few
    # hundred tokens, on the sixth draw's products among others) and before the run that measured it.
    "held-out-7": (718203, 32),
    # Once the seventh's results had been read: committed before step 17's run (the default tiling against the
    # look-up's choice on seen large products) and before the run that measured it. Two first seeds, 264917 and 155236,
    # drew 4×4096×14336 and 4×1024×4096 NT, shapes earlier runs had measured; they were set aside, unmeasured.
    "held-out-8": (620941, 32),
    # Once the eighth's results had been read, and after steps 18 to 20 (split-K, swapped tiles and the tiles of 321 to
    # 2048 rows, each judged on a draw of its own class): committed before the run that measured the look-up as it
    # stands on products of every size.
    "held-out-9": (228843, 32),
}
#: Draws of one class of products (:func:`draw_rows`), by the name of the set of shapes each is: the seed, the count and
#: the rows (M from the first to the second), each committed before the run that first measured it.
TOKEN_DRAWS: dict[str, tuple[int, int, tuple[int, int]]] = {
    # step 16's: committed after its rule and before the run that measured it
    "tokens": (553071, 24, (65, 320)),
    # step 18's: committed after its rule and before the run that measured it
    "tokens-2": (471190, 24, (65, 320)),
    # step 19's: committed before the run that tuned the swapped tiles, and before the rule
    "tokens-3": (815263, 24, (65, 320)),
    # step 20's, of the next class up (321 to 2048 rows): committed before the run that tuned its tiles, and before
    # any rule
    "mid-rows": (490622, 24, (321, 2048)),
    # step 21's, of 65 to 320 rows again: committed before the run that timed deeper pipelines, and before any rule
    "tokens-4": (172560, 24, (65, 320)),
}
#: The most products one call draws (a sweep measures a few dozen; a million is drawn in seconds).
MAX_COUNT = 1_000_000
#: Token counts are drawn log-uniformly from this range (a decode step of one token to a 16k-token batch).
TOKENS = (1, 16384)

Pass = Literal["forward", "input-grad", "weight-grad"]

#: How each pass multiplies, for a linear layer ``y = x @ W.t()`` with ``W`` of ``out × in`` (PyTorch's
#: ``nn.Linear``): the layout code of ``matmul`` (``gpukb.gemm.triton.matmul.layout_code``) and the draw's weight.
PASSES: dict[str, tuple[str, float]] = {
    "forward": ("NT", 0.5),  # y = x @ W.t(): B is the transpose of the row-major weight
    "input-grad": ("NN", 0.25),  # dx = dy @ W
    "weight-grad": ("TN", 0.25),  # dW = dy.t() @ x: A is the transpose of the row-major dy
}


class Model(StrictModel):
    """One model's sizes, as its ``config.json`` gives them."""

    name: str = Field(min_length=1)
    hidden: int = Field(gt=0)
    ffn: int = Field(gt=0)
    vocab: int = Field(gt=0)
    heads: int = Field(gt=0)
    kv_heads: int = Field(gt=0)
    head_dim: int = Field(gt=0)
    source: str = Field(pattern=r"^https://")

    def projections(self) -> dict[str, tuple[int, int]]:
        """The model's linear layers as ``name: (out, in)``: fused query/key/value, attention output, MLP up (and
        gate, each of this size), MLP down, LM head."""
        q, kv = self.heads * self.head_dim, self.kv_heads * self.head_dim
        return {
            "qkv": (q + 2 * kv, self.hidden),
            "attention out": (self.hidden, q),
            "MLP up": (self.ffn, self.hidden),
            "MLP down": (self.hidden, self.ffn),
            "LM head": (self.vocab, self.hidden),
        }


class ModelTable(StrictModel):
    """The file: the day it was checked and the models."""

    checked: dt.date
    models: list[Model]


def parse(text: str, file: str = FILE) -> ModelTable:
    """Parse the model file.

    Raises:
        ValueError: Naming the file, the model and the field, for an unknown key, a wrong type or a repeated name.
    """
    data = parse_toml(text, file, ("checked", "model"))
    if data.get("checked") is None:
        raise ValueError(f"{file}: missing top-level key 'checked'")
    models = validate_entries(Model, data.get("model"), file, "model", key="name")
    return ModelTable(checked=data["checked"], models=models)


@cache
def load() -> ModelTable:
    """The committed model file."""
    return parse(resources.files("gpukb.data").joinpath(FILE).read_text(encoding="utf-8"))


class DrawnShape(StrictModel):
    """One product of the random sweep: which model, layer, pass and token count it comes from, and its
    ``M×N×K`` and layout as ``matmul`` sees them."""

    model: str
    layer: str
    phase: Pass
    tokens: int = Field(gt=0)
    layout: Literal["NN", "NT", "TN"]
    m: int = Field(gt=0)
    n: int = Field(gt=0)
    k: int = Field(gt=0)

    @property
    def label(self) -> str:
        """E.g. ``"Mistral-7B MLP down, forward, 37 tokens"``."""
        return f"{self.model} {self.layer}, {self.phase}, {self.tokens} tokens"


def product(model: Model, layer: str, phase: str, tokens: int) -> DrawnShape:
    """The product one pass of one layer makes at ``tokens`` tokens.

    Raises:
        ValueError: For a layer the model does not have, an unknown pass, or tokens below 1.
    """
    layers = model.projections()
    if layer not in layers:
        raise ValueError(f"layer must be one of {list(layers)}; got {layer!r}")
    if phase not in PASSES:
        raise ValueError(f"phase must be one of {list(PASSES)}; got {phase!r}")
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 1:
        raise ValueError(f"tokens must be an int ≥ 1; got {tokens!r}")
    out, inp = layers[layer]
    layout = PASSES[phase][0]
    m, n, k = {"forward": (tokens, out, inp), "input-grad": (tokens, inp, out), "weight-grad": (out, inp, tokens)}[
        phase
    ]
    return DrawnShape(model=model.name, layer=layer, phase=phase, tokens=tokens, layout=layout, m=m, n=n, k=k)  # type: ignore[arg-type]


def draw(seed: int = RANDOM_SEED, count: int = RANDOM_COUNT, table: ModelTable | None = None) -> list[DrawnShape]:
    """``count`` products drawn with ``random.Random(seed)``: a model, a layer and a pass uniformly (passes by
    their weight in :data:`PASSES`), a token count log-uniformly from :data:`TOKENS`. The same seed gives the same
    list on every Python since 3.2 (``random.Random`` with an int seed, ``random()`` and ``choices``).

    Raises:
        ValueError: For a count below 1 or above :data:`MAX_COUNT`, a seed that is not an int, or a negative seed
            (``random.Random`` seeds with its absolute value, so ``-1`` would draw what ``1`` draws).
        TypeError: For a ``table`` that is not a :class:`ModelTable`.
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an int; got {seed!r}")
    if seed < 0:
        raise ValueError(f"seed must be ≥ 0 (random.Random draws the same for -s as for s); got {seed}")
    if isinstance(count, bool) or not isinstance(count, int):
        raise ValueError(f"count must be an int ≥ 1; got {count!r}")
    integer("count", count, minimum=1, maximum=MAX_COUNT)
    if table is not None and not isinstance(table, ModelTable):
        raise TypeError(f"table must be a ModelTable (or None: the packaged table); got {given(table)}")
    models = (table or load()).models
    rng = random.Random(seed)
    phases = list(PASSES)
    weights = [PASSES[p][1] for p in phases]
    lo, hi = math.log(TOKENS[0]), math.log(TOKENS[1] + 1)
    out = []
    for _ in range(count):
        model = models[int(rng.random() * len(models))]
        layers = list(model.projections())
        layer = layers[int(rng.random() * len(layers))]
        phase = rng.choices(phases, weights)[0]
        tokens = min(TOKENS[1], int(math.exp(lo + (hi - lo) * rng.random())))
        out.append(product(model, layer, phase, tokens))
    return out


def draw_rows(seed: int, count: int, rows: tuple[int, int]) -> list[DrawnShape]:
    """The first ``count`` products of :func:`draw`'s sequence for ``seed`` whose M is within ``rows`` (both ends
    included): a draw of one class of products from the same generator.

    Raises:
        ValueError: For what :func:`draw` refuses, ``rows`` that are not two ints 1 ≤ low ≤ high, rows above every
            product's M (the most tokens, :data:`TOKENS`, or a weight gradient's M, a layer's output size), or a class
            so rare that :data:`MAX_COUNT` products hold fewer than ``count`` of it.
    """
    ints = isinstance(rows, tuple) and len(rows) == 2 and all(type(r) is int for r in rows)
    if not ints or not 1 <= rows[0] <= rows[1]:
        raise ValueError(f"rows must be two ints (low, high) with 1 ≤ low ≤ high; got {rows!r}")
    integer("count", count, minimum=1, maximum=MAX_COUNT)
    most = max(TOKENS[1], *(out for model in load().models for out, _ in model.projections().values()))
    if rows[0] > most:  # no product has such rows: refused now, not after drawing a million
        raise ValueError(f"rows must include M of a product the draw can make (at most {most}); got {rows!r}")
    drawn = 256
    while True:  # a longer prefix of the same sequence until it holds enough (draw(seed, n) begins draw(seed, 2n))
        picked = [s for s in draw(seed, drawn) if rows[0] <= s.m <= rows[1]][:count]
        if len(picked) == count:
            return picked
        if drawn == MAX_COUNT:
            held = len(picked)
            raise ValueError(f"{MAX_COUNT} products of seed {seed} hold {held} with M in {rows}; asked for {count}")
        drawn = min(2 * drawn, MAX_COUNT)
