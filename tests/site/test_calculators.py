"""The calculators on the pages compute what the library computes: driven in Chromium, compared case by case.

Each calculator (``docs/javascripts/calculators/``, rendered by ``gpukb.calculators.calculator_html``) is driven
through one ``page.evaluate`` batch: the script sets every field of a case, runs the calculator's update (what an
``input`` event runs) and reads what the page shows: each result's raw value (``data-value``: an int's digits, a
float's ``repr``) or, for a bad field, which field shows a message and the message. The same inputs go through
``gpukb.calculators.field_value`` into the library function the calculator ports; any difference fails the test
naming the input. The cases cover every bit pattern of every format of 8 bits or fewer, at least 1,000 sampled
values and patterns of each 16- and 32-bit format (subnormals, ties, overflow and NaN among them), at least 300
occupancy configurations over every compute capability, and at least 200 cases each for the bound of a layer,
training memory and attention; every bad-input kind (empty, negative, not a number, out of range, a bit pattern too
long) is tried on each calculator. The counts are printed.

Reuses the fixtures of tests/site/test_browser.py (the built site served on 127.0.0.1, the system Chromium, a page
that fails on any foreign request or JavaScript error); skips cleanly without Chromium.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable
from fractions import Fraction

import numpy as np
import pytest

from gpukb.attention.costs import attention_summary
from gpukb.calculators import field_value
from gpukb.cuda.limits import known
from gpukb.cuda.occupancy import RESOURCES, occupancy
from gpukb.distributed.memory import FSDP2_ACTIVATION_BYTES, SCHEMES, training_memory
from gpukb.distributed.model import ModelConfig
from gpukb.distributed.pages.memory import MEMORY_RECORDS, matching_runs
from gpukb.formats.codec import decode, parse_bits
from gpukb.formats.spec import formats
from gpukb.formats.tables import pattern_table, value_table
from gpukb.measuring.counting import ELEMENT_BYTES
from gpukb.performance.layer_bound import LAYERS, layer_bound
from gpukb.performance.specs import GEMM_QUANTITY, load
from gpukb.records import load as load_record
from tests.site.test_browser import base_url, browser, page  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser

PAGES = {
    "formats": "/formats/anatomy/",
    "occupancy": "/cuda/execution/",
    "bound": "/performance/bounding/",
    "memory": "/distributed/memory/",
    "attention": "/attention/cost/",
}

#: Sets every field of each case, updates, reads the result or the error; `want` (formats only) picks value rows.
_DRIVE = """({calc, batch}) => {
  const cases = JSON.parse(batch);
  const root = document.querySelector(`div.gpukb-calc[data-calc="${calc}"]`);
  const controls = {};
  for (const c of root.querySelectorAll("input, select")) controls[c.name] = c;
  const out = root.querySelector(".gpukb-calc-out");
  // JSON text both ways: Playwright's own serialisation of thousands of nested values costs seconds of Python.
  return JSON.stringify(cases.map(({fields, want}) => {
    for (const [name, value] of Object.entries(fields)) {
      const control = controls[name];
      if (control.type === "checkbox") control.checked = value; else control.value = value;
    }
    root.gpukbUpdate();
    if (root.dataset.state !== "ok") {
      const bad = [...root.querySelectorAll(".gpukb-calc-bad")];
      return {error: bad.map(b => [b.dataset.field, b.querySelector(".gpukb-calc-error").textContent]),
              stale: out.querySelector("table") !== null};
    }
    // A stored value may be NaN in the formats calculator; anywhere else NaN or undefined is a bug.
    const result = {nan: calc !== "formats" && /NaN|undefined/.test(out.textContent)};
    if (calc === "formats") {
      const [values, pattern] = out.querySelectorAll("table");
      const row = tr => [...tr.cells].map(td => td.textContent);
      const wanted = [...values.tBodies[0].rows].filter(tr => want === "all" || want.includes(tr.dataset.format));
      result.rows = wanted.map(row);
      result.pattern = row(pattern.tBodies[0].rows[0]);
    } else {
      const cells = [...out.querySelectorAll("td[data-key]")];
      result.values = Object.fromEntries(cells.map(td => [td.dataset.key, td.dataset.value]));
    }
    return result;
  }));
}"""


def _drive(page, calc: str, cases: list[dict]) -> list[dict]:  # noqa: F811
    page.goto(PAGES[calc], wait_until="domcontentloaded")
    page.wait_for_selector(f"div.gpukb-calc[data-calc={calc}][data-ready='1']")
    batch = [{"fields": c["fields"], "want": c.get("want")} for c in cases]
    return json.loads(page.evaluate(_DRIVE, {"calc": calc, "batch": json.dumps(batch)}))


def _check(page, calc: str, cases: list[dict], expected_of: Callable, what: Callable) -> tuple[int, int, list[str]]:  # noqa: F811
    """Drive the calculator through ``cases`` and then every bad input of :data:`BAD_INPUTS` for it, in one batch;
    return (cases the library computes, cases it refuses, every difference)."""
    bad = list(_bad_cases(calc))
    shown = _drive(page, calc, [*cases, *(c for *_, c in bad)])
    expected = [expected_of(c) for c in cases]
    problems = _compare(calc, cases, shown[: len(cases)], expected, what)
    problems += _bad_problems(calc, bad, shown[len(cases) :], expected_of)
    refused = sum("error" in e for e in expected)
    return len(cases) - refused, refused, problems


def _library(fn: Callable[[], object]) -> dict:
    """What the library gives: the result, or the message of the ValueError/TypeError it raises."""
    try:
        return {"ok": fn()}
    except (ValueError, TypeError) as err:
        return {"error": str(err)}


def _named(case: dict) -> str:
    """A case's fields, for a failure message (long text shortened)."""
    return json.dumps(case["fields"], ensure_ascii=False)[:300]


def _compare(calc: str, cases: list[dict], shown: list[dict], expected: list[dict], what: Callable) -> list[str]:
    """Every difference between the page and the library, each naming its input; ``what(case, shown)`` picks the
    page's answer to compare with the library's."""
    problems = []
    for case, page_result, lib in zip(cases, shown, expected, strict=True):
        if "error" in lib:
            if "error" not in page_result:
                problems.append(f"{calc} {_named(case)}: the library refuses ({lib['error']}); the page shows a result")
            elif [m for _, m in page_result["error"]] != [lib["error"]]:
                problems.append(
                    f"{calc} {_named(case)}: page says {page_result['error']}, library says {lib['error']!r}"
                )
            elif page_result["stale"]:
                problems.append(f"{calc} {_named(case)}: a result is still shown beside the error")
            continue
        if "error" in page_result:
            problems.append(f"{calc} {_named(case)}: page refuses ({page_result['error']}); the library gives a result")
            continue
        if page_result.get("nan"):
            problems.append(f"{calc} {_named(case)}: the page shows NaN, undefined or null")
        got, want = what(case, page_result), lib["ok"]
        if got != want:
            diff = (
                {k: (got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)}
                if isinstance(want, dict)
                else (got, want)
            )
            problems.append(f"{calc} {_named(case)}: page != library: {diff}")
    return problems


def _report(record_property, line: str) -> None:
    """Print a calculator's case counts, and record them for the run's summary (``tests/conftest.py`` lists them
    after the tests, where pytest-xdist would hide a print)."""
    print(f"\n{line}")
    record_property("calculator cases", line)


def _py(value: object) -> str:
    """A result as the page writes it into data-value: an int's digits, a float's repr, None as "None"."""
    if value is None:
        return "None"
    return repr(value) if isinstance(value, float) else str(value)


# --- number formats --------------------------------------------------------------------------------------------


def _decimal(x: Fraction) -> str:
    """The exact decimal of a fraction whose denominator is a power of two (every stored value and midpoint)."""
    sign = "-" if x < 0 else ""
    x = abs(x)
    k = x.denominator.bit_length() - 1
    assert x.denominator == 1 << k
    digits = str(x.numerator * 5**k).rjust(k + 1, "0")
    whole, frac = digits[: len(digits) - k] or "0", digits[len(digits) - k :].rstrip("0")
    return f"{sign}{whole}.{frac}" if frac else f"{sign}{whole}"


def _format_cases(rng: np.random.Generator) -> tuple[list[dict], dict[str, int]]:
    """Every bit pattern of the formats of 8 bits or fewer, with the midpoints (ties) of every other pair of
    neighbouring values and twice the largest value (overflow); for FP16, BF16 and FP32 1,000 sampled values each
    (random patterns' exact values, subnormals, ties, random decimals, values past the largest, NaN) and 200
    sampled patterns; TF32 and FP64 sampled too; and whole tables for a set of awkward spellings."""
    fmts = formats()
    base = {"value": "1", "rounding": "nearest-even", "saturate": False, "bits": "0", "as_format": "e4m3"}
    cases, counts = [], {}

    def pattern(text: str, name: str) -> None:
        cases.append({"fields": {**base, "bits": text, "as_format": name}, "want": [], "kind": "pattern"})

    def value(text: str, name: str | None, rounding: str = "nearest-even", saturate: bool = False) -> None:
        fields = {**base, "value": text, "rounding": rounding, "saturate": saturate}
        cases.append({"fields": fields, "want": "all" if name is None else [name], "kind": "value"})

    spellings = (hex, str, bin, lambda b: f" {b:#X} ")
    for f in (f for f in fmts.values() if f.bits <= 8):
        finite = sorted({decode(b, f).signed_value for b in range(1 << f.bits) if decode(b, f).value is not None})
        for bits in range(1 << f.bits):
            pattern(spellings[bits % len(spellings)](bits), f.name)
        ties = list(itertools.pairwise(finite))[f.bits % 2 :: 2]  # every other neighbouring pair
        for i, (a, b) in enumerate(ties):
            value(_decimal((a + b) / 2), f.name, rounding=("nearest-even", "toward-zero")[i % 5 == 0])
        value(_decimal(f.max_value * 2), f.name, saturate=bool(f.bits % 2))
        counts[f"{f.name} patterns"] = 1 << f.bits
        counts[f"{f.name} ties"] = len(ties)
    for name, n_values, n_patterns in (
        ("fp16", 1000, 200),
        ("bf16", 1000, 200),
        ("fp32", 1000, 200),
        ("tf32", 100, 100),
        ("fp64", 50, 100),
    ):
        f = fmts[name]
        start = len(cases)
        for bits in rng.integers(0, 1 << min(f.bits, 62), size=n_patterns, dtype=np.int64):
            pattern(hex(int(bits) << max(0, f.bits - 62)), f.name)
        sampled = [int(b) for b in rng.integers(0, 1 << min(f.bits, 62), size=n_values * 4 // 10, dtype=np.int64)]
        sampled = [b << max(0, f.bits - 62) for b in sampled]
        sampled += [int(b) for b in rng.integers(1, (1 << f.mantissa_bits) - 1, size=n_values // 10, dtype=np.int64)]
        for bits in sampled:  # the exact value of the pattern and the tie above it
            d = decode(bits, f)
            if d.value is None:
                value(d.kind if d.kind == "nan" else f"{'-' if d.sign else ''}inf", f.name)
                continue
            value(_decimal(d.signed_value), f.name)
            above = decode(bits + 1, f) if bits + 1 < 1 << f.bits else d
            if above.value is not None and above.sign == d.sign and len(cases) - start < n_values + n_patterns:
                value(_decimal((d.signed_value + above.signed_value) / 2), f.name, rounding="nearest-even")
        top = _decimal(f.max_value)
        for scale in range(3):
            value(f"{top}{'' if '.' in top else '.'}{'0' * scale}1", f.name)  # just past the largest: rounds down
            value(f"-{f.max_value * (2 + scale)}", f.name, saturate=scale == 1)  # overflows, or saturates
        value("nan", f.name)
        while len(cases) - start < n_values + n_patterns:  # random decimals
            mantissa, e = int(rng.integers(1, 10**7)), int(rng.integers(-60, 40))
            value(f"{'-' if mantissa % 3 == 0 else ''}{mantissa}e{e}", f.name, saturate=bool(mantissa % 2))
        counts[f"{name} patterns"] = n_patterns
        counts[f"{name} values"] = len(cases) - start - n_patterns
    awkward = (
        "42.5",
        "0.1",
        "-0",
        "1e-400",
        "1e5000",
        "-1e5000",
        "nan",
        "-inf",
        "1_000.5",
        " 65504 ",
        "1E+2",
        ".5",
        "5.",
        "sNaN",
        "Infinity",
        "0.000000000000000000000000000000000000000000001",
        "24",
        "32",
        "40",
        "64",
        "96",  # 24 to 96: relative errors that tie at three digits
        "١٢.٥",  # digits of another script, which Python's Decimal reads
        "\u00a042\u3000",  # Unicode spaces around it
        "-1e1000000000000000000",  # an exponent past what Python's decimal holds: refused
        "1_0e99999999999999999999",  # the same with an underscore: refused as not a number
        "0.001e1000000000000000002",  # the same exponent, but the value's is within it: overflows
    )
    for text in awkward:
        for rounding, saturate in (("nearest-even", False), ("toward-zero", True)):
            value(text, None, rounding=rounding, saturate=saturate)  # the whole table
    counts["whole tables"] = 2 * len(awkward)
    for text in ("٩٩", " 0x٦٣ ", "0b_1_1"):
        pattern(text, "e4m3")
    return cases, counts


def _format_expected(case: dict) -> dict:
    fields = case["fields"]
    if case["kind"] == "pattern":
        return _library(lambda: [str(c) for c in pattern_table(parse_bits(fields["bits"]), fields["as_format"])[1][0]])
    names = None if case["want"] == "all" else case["want"]
    return _library(
        lambda: [
            [str(c) for c in row]
            for row in value_table(fields["value"], names, rounding=fields["rounding"], saturate=fields["saturate"])[1]
        ]
    )


def test_formats_calculator_matches_the_library(page, record_property) -> None:  # noqa: F811
    cases, counts = _format_cases(np.random.default_rng(27))
    _, refused, problems = _check(
        page,
        "formats",
        cases,
        _format_expected,
        lambda case, r: r["pattern"] if case["kind"] == "pattern" else r["rows"],
    )
    summary = ", ".join(f"{k} {v}" for k, v in counts.items())
    _report(
        record_property,
        f"formats calculator: {len(cases)} cases ({refused} refused): {summary}" + _bad_summary("formats"),
    )
    assert all(counts[f"{n} values"] >= 1000 for n in ("fp16", "bf16", "fp32"))
    assert sum(counts[f"{f.name} patterns"] for f in formats().values() if f.bits <= 8) == sum(
        1 << f.bits for f in formats().values() if f.bits <= 8
    )
    assert problems == [], f"{len(problems)} differences:\n" + "\n".join(problems[:30])


# --- occupancy ---------------------------------------------------------------------------------------------------


def _occupancy_cases(rng: np.random.Generator) -> list[dict]:
    cases = []
    ccs = known()
    for i in range(480):
        cc = ccs[i % len(ccs)]
        threads = int(rng.choice([32, 64, 96, 128, 192, 256, 384, 512, 640, 768, 1024, int(rng.integers(1, 1100))]))
        registers = int(rng.choice([0, 16, 24, 32, 40, 64, 72, 96, 128, 168, 255, int(rng.integers(0, 300))]))
        static = int(rng.choice([0, 0, 1024, 4096, 16384, 49152, int(rng.integers(0, 52000))]))
        dynamic = int(rng.choice([0, 0, 8192, 32768, 65536, 100000, int(rng.integers(0, 240000))]))
        cluster = str(int(rng.integers(1, 18))) if (cc == "9.0" and i % 3) or i % 40 == 0 else ""
        carveout = "" if i % 4 else str(int(rng.integers(0, 101)))
        cases.append(
            {
                "fields": {
                    "cc": cc,
                    "threads": str(threads),
                    "registers": str(registers),
                    "static_shared": str(static),
                    "dynamic_shared": str(dynamic),
                    "opt_in": bool(i % 5),
                    "carveout": carveout,
                    "cluster_size": cluster,
                    "nonportable_cluster": bool(i % 2),
                }
            }
        )
    return cases


def _occupancy_expected(case: dict) -> dict:
    f = case["fields"]

    def run() -> dict:
        occ = occupancy(
            f["cc"],
            field_value(f["threads"]),
            field_value(f["registers"]),
            field_value(f["static_shared"]),
            field_value(f["dynamic_shared"]),
            cluster_size=field_value(f["cluster_size"]),
            nonportable_cluster=f["nonportable_cluster"],
            opt_in=f["opt_in"],
            carveout_percent=field_value(f["carveout"]),
        )
        out = {
            k: _py(getattr(occ, k))
            for k in (
                "warps_per_block",
                "registers_per_block",
                "shared_per_block",
                "shared_per_sm",
                "active_blocks",
                "active_warps",
            )
        }
        out.update({f"limit:{r}": _py(occ.limits[r]) for r in RESOURCES})
        out["occupancy"], out["limiting"] = repr(occ.occupancy), ",".join(occ.limiting)
        return out

    return _library(run)


def test_occupancy_calculator_matches_the_library(page, record_property) -> None:  # noqa: F811
    cases = _occupancy_cases(np.random.default_rng(27))
    computed, refused, problems = _check(page, "occupancy", cases, _occupancy_expected, lambda case, r: r["values"])
    _report(
        record_property,
        f"occupancy calculator: {len(cases)} configurations over {len(known())} compute capabilities "
        f"({computed} computed, {refused} refused with the library's message)" + _bad_summary("occupancy"),
    )
    assert computed >= 300
    assert problems == [], f"{len(problems)} differences:\n" + "\n".join(problems[:30])


# --- the bound of a layer -----------------------------------------------------------------------------------------

_CONV_FIELD = {"n": "conv_n"}


def _bound_cases(rng: np.random.Generator) -> list[dict]:
    gpus, dtypes = list(load().gpus), list(GEMM_QUANTITY)
    sizes = [1, 3, 16, 64, 127, 512, 4096, 8192, 65536]
    cases = []
    for i in range(330):
        layer = list(LAYERS)[i % 3]
        fields = {
            "layer": layer,
            "dtype": dtypes[int(rng.integers(len(dtypes)))],
            "gpu": gpus[int(rng.integers(len(gpus)))],
            "bias": bool(i % 2),
            "causal": bool(i % 4 < 2),
        }
        for name in LAYERS[layer]:
            value = str(int(rng.choice(sizes)))
            if layer == "conv2d":
                value = {
                    "kh": str(int(rng.integers(1, 8))),
                    "kw": str(int(rng.integers(1, 8))),
                    "stride": str(int(rng.integers(1, 4))),
                    "padding": str(int(rng.integers(0, 3))),
                    "n": str(int(rng.integers(1, 64))),
                    "h": str(int(rng.choice(sizes[2:7]))),
                    "w": str(int(rng.choice(sizes[1:7]))),
                }.get(name, value)
            if layer == "attention" and name in ("heads", "kv_heads"):
                value = str(int(rng.choice([1, 2, 8, 12, 32, 64])))
            fields[_CONV_FIELD.get(name, name) if layer == "conv2d" else name] = value
        if layer == "attention" and i % 5 == 0:
            fields["kv_heads"] = ""  # as many as heads
        cases.append({"fields": fields})
    return cases


def _bound_expected(case: dict) -> dict:
    f = case["fields"]
    layer = f["layer"]
    sizes = {n: field_value(f[_CONV_FIELD.get(n, n) if layer == "conv2d" else n]) for n in LAYERS[layer]}
    flag_on = f["bias"] if layer == "conv2d" else f["causal"] if layer == "attention" else False

    def run() -> dict:
        b = layer_bound(layer, f["dtype"], sizes, f["gpu"], flag_on)
        out = {"flops": _py(b.flops), "nbytes": _py(b.nbytes), "intensity": _py(b.intensity)}
        for prefix, c in (("datasheet", b.datasheet), ("measured", b.measured)):
            for key in ("tflops", "gbps", "ridge", "compute_s", "memory_s", "time_s", "limiter"):
                out[f"{prefix}.{key}"] = "None" if c is None else _py(getattr(c, key))
        return out

    return _library(run)


def test_bound_calculator_matches_the_library(page, record_property) -> None:  # noqa: F811
    cases = _bound_cases(np.random.default_rng(27))
    computed, refused, problems = _check(page, "bound", cases, _bound_expected, lambda case, r: r["values"])
    _report(
        record_property,
        f"bound calculator: {len(cases)} layers ({computed} bounded, {refused} refused)" + _bad_summary("bound"),
    )
    assert computed >= 200
    assert problems == [], f"{len(problems)} differences:\n" + "\n".join(problems[:30])


# --- training memory -------------------------------------------------------------------------------------------------


def _memory_cases(rng: np.random.Generator) -> list[dict]:
    measured = [load_record(r) for r in MEMORY_RECORDS]
    cases = []
    for i in range(240):
        scheme = list(SCHEMES)[i % len(SCHEMES)]
        mode = rng.choice(list(FSDP2_ACTIVATION_BYTES)) if scheme == "fsdp2" else ""
        if i % 37 == 0:
            mode = "" if scheme == "fsdp2" else "PURE"  # refused: a mode belongs to FSDP2 alone
        heads = int(rng.choice([1, 4, 12, 16, 32]))
        fields = {
            "scheme": scheme,
            "mixed_precision": str(mode),
            "world_size": str(int(rng.choice([1, 2, 3, 8, 64]))),
            "checkpointing": bool(i % 2),
            "batch": str(int(rng.integers(1, 33))),
            "vocab": str(int(rng.choice([64, 16384, 50257, 128256]))),
            "seq": str(int(rng.choice([16, 1024, 4096]))),
            "hidden": str(heads * int(rng.choice([8, 64, 128]))),
            "heads": str(heads),
            "layers": str(int(rng.integers(1, 81))),
        }
        if i % 8 == 0:  # a configuration the site measured: the model, batch and GPUs of a memory record
            record = measured[(i // 8) % len(measured)]
            fields.update({k: str(v) for k, v in record.model.items()})
            fields.update({"batch": str(record.batch), "world_size": str(record.world_size)})
            if i % 16 == 0:
                fields.update({"scheme": "ddp_fp32", "mixed_precision": ""})
        cases.append({"fields": fields})
    return cases


def _memory_expected(case: dict) -> dict:
    f = case["fields"]

    def run() -> dict:
        config = ModelConfig(**{k: field_value(f[k]) for k in ("vocab", "seq", "hidden", "heads", "layers")})
        args = (
            config,
            field_value(f["batch"]),
            f["scheme"],
            field_value(f["world_size"]),
            f["mixed_precision"] or None,
            f["checkpointing"],
        )
        m = training_memory(*args)
        out = {
            k: _py(getattr(m, k))
            for k in ("parameters", "params", "grads", "optimizer", "states", "blocks", "head", "recompute", "peak")
        }
        for record_id, run in matching_runs(*args):
            out[f"match:{record_id}:{run.name}"] = f"{run.peak_bytes},{run.activation_bytes}"
        return out

    return _library(run)


def test_memory_calculator_matches_the_library(page, record_property) -> None:  # noqa: F811
    cases = _memory_cases(np.random.default_rng(27))
    computed, refused, problems = _check(page, "memory", cases, _memory_expected, lambda case, r: r["values"])
    matched = sum(any(k.startswith("match:") for k in _memory_expected(c).get("ok", {})) for c in cases)
    _report(
        record_property,
        f"memory calculator: {len(cases)} cases ({computed} computed, {refused} refused; "
        f"{matched} shown beside a measured run)" + _bad_summary("memory"),
    )
    assert computed >= 200
    assert matched >= 10
    assert problems == [], f"{len(problems)} differences:\n" + "\n".join(problems[:30])


# --- attention ------------------------------------------------------------------------------------------------------


def _attention_cases(rng: np.random.Generator) -> list[dict]:
    dtypes = [d for d in ELEMENT_BYTES if d.startswith(("fp", "tf", "bf"))]
    cases = []
    for i in range(240):
        heads = int(rng.choice([1, 8, 12, 32, 64, 128]))
        kv = "" if i % 6 == 0 else str(int(rng.choice([1, 2, 4, 8, heads])))
        fields = {
            "batch": str(int(rng.integers(1, 65))),
            "heads": str(heads),
            "kv_heads": kv,
            "q_len": str(int(rng.choice([1, 7, 512, 4096, 131072, int(rng.integers(1, 10**6))]))),
            "kv_len": str(int(rng.choice([1, 512, 4096, 131072, int(rng.integers(1, 10**6))]))),
            "head_dim": str(int(rng.choice([64, 80, 128, 256]))),
            "causal": bool(i % 2),
            "dtype": dtypes[i % len(dtypes)],
            "layers": str(int(rng.integers(1, 129))),
        }
        cases.append({"fields": fields})
    return cases


def _attention_expected(case: dict) -> dict:
    f = case["fields"]

    def run() -> dict:
        s = attention_summary(
            *(field_value(f[k]) for k in ("batch", "heads", "q_len", "kv_len", "head_dim")),
            field_value(f["kv_heads"]),
            f["causal"],
            f["dtype"],
            field_value(f["layers"]),
        )
        c = s.costs
        out = {
            k: _py(getattr(c, k))
            for k in ("flops", "io_bytes", "score_bytes", "unfused_bytes", "intensity", "unfused_intensity")
        }
        out.update({k: _py(getattr(s, k)) for k in ("kv_per_token", "kv_per_sequence", "kv_total")})
        return out

    return _library(run)


def test_attention_calculator_matches_the_library(page, record_property) -> None:  # noqa: F811
    cases = _attention_cases(np.random.default_rng(27))
    computed, refused, problems = _check(page, "attention", cases, _attention_expected, lambda case, r: r["values"])
    _report(
        record_property,
        f"attention calculator: {len(cases)} shapes ({computed} counted, {refused} refused)"
        + _bad_summary("attention"),
    )
    assert computed >= 200
    assert problems == [], f"{len(problems)} differences:\n" + "\n".join(problems[:30])


# --- bad input: the library's message beside the field, no result ---------------------------------------------------

#: (calculator, field, text, kind): each kind of bad input on each calculator's fields.
BAD_INPUTS = [
    ("formats", "value", "", "empty"),
    ("formats", "value", "4 2", "not a number"),
    ("formats", "value", "1" * 2001, "too long"),
    ("formats", "value", "1e1000000000000000000", "out of range"),
    ("formats", "bits", "", "empty"),
    ("formats", "bits", "-1", "negative"),
    ("formats", "bits", "0xzz", "not a number"),
    ("formats", "bits", "0x100", "out of range"),
    ("formats", "bits", "0b" + "1" * 67, "bit pattern too long"),
    ("occupancy", "threads", "", "empty"),
    ("occupancy", "threads", "-32", "negative"),
    ("occupancy", "registers", "lots", "not a number"),
    ("occupancy", "threads", "1025", "out of range"),
    ("occupancy", "registers", "256", "out of range"),
    ("occupancy", "dynamic_shared", "1e6", "not an int"),
    ("occupancy", "dynamic_shared", "999999999999999999999999", "out of range"),
    ("occupancy", "carveout", "101", "out of range"),
    ("occupancy", "cluster_size", "17", "out of range"),
    ("bound", "m", "", "empty"),
    ("bound", "k", "-4096", "negative"),
    ("bound", "n", "four", "not a number"),
    ("bound", "n", "0", "out of range"),
    ("bound", "m", "nan", "not an int"),
    ("memory", "world_size", "", "empty"),
    ("memory", "batch", "-8", "negative"),
    ("memory", "hidden", "wide", "not a number"),
    ("memory", "heads", "7", "out of range"),
    ("memory", "layers", str(2**62), "more parameters than torch counts"),
    ("memory", "seq", str(2**40), "more scores than torch counts"),
    ("memory", "mixed_precision", "", "out of range"),
    ("attention", "q_len", "", "empty"),
    ("attention", "heads", "-32", "negative"),
    ("attention", "head_dim", "1.5", "not an int"),
    ("attention", "kv_heads", "5", "out of range"),
    ("attention", "layers", "0", "out of range"),
]

_DEFAULTS = {
    "formats": (
        {"value": "42.5", "rounding": "nearest-even", "saturate": False, "bits": "0x63", "as_format": "e4m3"},
        _format_expected,
    ),
    "occupancy": (
        {
            "cc": "9.0",
            "threads": "256",
            "registers": "64",
            "static_shared": "0",
            "dynamic_shared": "16384",
            "opt_in": True,
            "carveout": "",
            "cluster_size": "",
            "nonportable_cluster": False,
        },
        _occupancy_expected,
    ),
    "bound": (
        {
            "layer": "gemm",
            "dtype": "bf16",
            "gpu": "h100-sxm5",
            "m": "4096",
            "n": "4096",
            "k": "4096",
            "bias": True,
            "causal": True,
        },
        _bound_expected,
    ),
    "memory": (
        {
            "scheme": "fsdp2",
            "mixed_precision": "DEFAULT",
            "world_size": "2",
            "checkpointing": False,
            "batch": "8",
            "vocab": "16384",
            "seq": "1024",
            "hidden": "768",
            "heads": "12",
            "layers": "12",
        },
        _memory_expected,
    ),
    "attention": (
        {
            "batch": "1",
            "heads": "32",
            "kv_heads": "8",
            "q_len": "8192",
            "kv_len": "8192",
            "head_dim": "128",
            "causal": True,
            "dtype": "bf16",
            "layers": "32",
        },
        _attention_expected,
    ),
}


def _bad_cases(calc: str) -> Iterable[tuple[str, str, str, dict]]:
    base, _ = _DEFAULTS[calc]
    for name, field, text, kind in BAD_INPUTS:
        if name == calc:
            case = {"fields": {**base, field: text}, "want": "all", "kind": "pattern" if field == "bits" else "value"}
            yield field, text, kind, case


def _bad_problems(calc: str, bad: list[tuple], shown: list[dict], expected_of: Callable) -> list[str]:
    """Each bad input: the library refuses it, and the page shows that message beside that field, with no result
    left standing."""
    problems = []
    for (field, text, kind, case), got in zip(bad, shown, strict=True):
        lib = expected_of(case)
        where = f"{calc}.{field} = {text[:40]!r} ({kind})"
        if "error" not in lib:
            problems.append(f"{where}: the library accepts it")
        elif "error" not in got:
            problems.append(f"{where}: the page shows a result")
        elif got["error"] != [[field, lib["error"]]]:
            problems.append(f"{where}: page {got['error']}, expected [[{field!r}, {lib['error']!r}]]")
        elif got["stale"]:
            problems.append(f"{where}: a result is still shown")
    return problems


def _bad_summary(calc: str) -> str:
    bad = list(_bad_cases(calc))
    return f"; {len(bad)} bad inputs ({', '.join(sorted({kind for _, _, kind, _ in bad}))})"


def test_every_kind_of_bad_input_is_tried() -> None:
    """The bad inputs cover each kind on each calculator where it applies (a bit pattern only in the formats)."""
    kinds = {calc: {kind for name, _, _, kind in BAD_INPUTS if name == calc} for calc in PAGES}
    for calc, seen in kinds.items():
        assert {"empty", "negative", "out of range"} <= seen, calc
        assert seen & {"not a number", "not an int"}, calc
    assert "bit pattern too long" in kinds["formats"]
