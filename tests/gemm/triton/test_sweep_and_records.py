"""The sweep's shapes and kernel pairs against the runs that measured them (their records read with ``json``), the
case parser, the model file's parser and draw at their edges, how a configuration is written into a record, and
the results readers' selections worked by hand on small made-up records. Torch only for the bench operands (CPU)."""

from __future__ import annotations

import json
import types
from types import SimpleNamespace

import pytest
from pydantic import TypeAdapter

from gpukb.gemm.triton import model_shapes as ms
from gpukb.gemm.triton import results, sweep
from gpukb.gemm.triton.configs import CANDIDATES, Config
from gpukb.gemm.triton.pairs import parse_case
from gpukb.records import results_dir


def _raw(name: str) -> dict:
    return json.loads((results_dir() / "gemm" / f"{name}.json").read_text(encoding="utf-8"))


def _rows(record: dict, dtype: str) -> list[tuple]:
    """A sweep record's rows of one type as (group, label, M, N, K), bf16's NT rows (``NT_SHAPES``) left out."""
    return [
        (r["group"], r["label"], r["m"], r["n"], r["k"])
        for r in record["rows"]
        if r["dtype"] == dtype and (r["layout"] == "NN" or dtype != "bfloat16")
    ]


def test_the_first_sweeps_shapes_are_the_ones_it_measured() -> None:
    first = _raw("triton-gemm-sweep-h100")
    assert sweep.shapes() == _rows(first, "bfloat16")
    assert sweep.fp16_shapes() == _rows(first, "float16")
    assert sweep.fp8_shapes() == _rows(first, "float8_e4m3fn")


def test_the_random_sweep_is_the_one_measured() -> None:
    measured = [
        (r["layout"], (r["group"], r["label"], r["m"], r["n"], r["k"]))
        for r in _raw("triton-gemm-sweep-h100-issue29")["rows"]
        if r["dtype"] == "bfloat16" and r["group"] == "random"
    ]
    assert sweep.random_shapes() == measured


def test_the_sweeps_kernel_pairs() -> None:
    first = _raw("triton-gemm-sweep-h100")
    pairs = {p.name: p for p in sweep.pairs()}
    assert list(pairs) == ["triton-gemm-sweep-bf16", "triton-gemm-sweep-fp16", "triton-gemm-sweep-fp8"]
    for name, dtype, peer, reference, size in (
        ("bf16", "bfloat16", "torch.matmul (cuBLAS)", sweep._matmul_peer, 2),
        ("fp16", "float16", "torch.matmul (cuBLAS)", sweep._matmul_peer, 2),
        ("fp8", "float8_e4m3fn", "torch._scaled_mm (use_fast_accum=False)", sweep._scaled_mm_peer, 1),
    ):
        pair = pairs[f"triton-gemm-sweep-{name}"]
        cases = [f"{m}x{n}x{k}" for _, _, m, n, k in _rows(first, dtype)]
        assert list(pair.cases) == list(dict.fromkeys(cases))
        assert pair.peer == peer
        assert (pair.kernel, pair.reference, pair.check) == (sweep._kernel, reference, sweep._check)
        assert [c.cell_contents for c in pair.make_inputs.__closure__] == [dtype]  # inputs of this type
        assert pair.flops("3x5x7") == 2 * 3 * 5 * 7
        assert pair.nbytes("3x5x7") == size * (3 * 7 + 7 * 5) + 2 * 3 * 5  # C in bf16


def test_bench_operands_default_to_nn_and_keep_a_16_bit_type() -> None:
    import torch

    a, b = sweep.operands(torch, torch.float16, 3, 5, 7, device="cpu")
    assert (a.dtype, b.dtype, a.stride(), b.stride()) == (torch.float16, torch.float16, (7, 1), (5, 1))
    for args, name in (((0, 5, 7), "m"), ((3, 0, 7), "n"), ((3, 5, 0), "k")):
        with pytest.raises(ValueError, match=rf"^{name} must be an int ≥ 1"):
            sweep.operands(torch, torch.bfloat16, *args, device="cpu")


@pytest.mark.parametrize("layout", ["NN", "TT"])
def test_bench_operands_are_made_on_the_device_asked_for(layout: str) -> None:
    import torch

    a, b = sweep.operands(torch, torch.bfloat16, 3, 5, 7, layout, device="meta")
    assert (a.device.type, b.device.type) == ("meta", "meta")


def test_bench_operands_are_made_on_the_gpu_by_default() -> None:
    devices = []

    def randn(*shape: int, device: str, dtype: object) -> SimpleNamespace:
        devices.append(device)
        return SimpleNamespace(t=lambda: None)

    fake = SimpleNamespace(float8_e4m3fn="fp8", bfloat16="bf16", randn=randn)  # records where torch was asked
    sweep.operands(fake, "bf16", 3, 5, 7)
    assert devices == ["cuda", "cuda"]


@pytest.mark.parametrize("case", ["1x2", "0x1x1", "ax1x1", "1x1x1x1", "-1x2x3", 4096, None])
def test_a_case_that_is_not_three_positive_integers_is_refused(case: object) -> None:
    with pytest.raises(ValueError, match=r"^a GEMM case is 'MxNxK' with positive integers, e\.g\. '4096x4096x4096'"):
        parse_case(case)  # type: ignore[arg-type]


def test_a_case_parses() -> None:
    assert parse_case("1x1x1") == (1, 1, 1)
    assert parse_case("4095x4097x4099") == (4095, 4097, 4099)


# The model file and the draw.


def test_the_lm_head_projects_the_hidden_size_onto_the_vocabulary() -> None:
    import tomllib
    from importlib import resources

    raw = tomllib.loads(resources.files("gpukb.data").joinpath(ms.FILE).read_text(encoding="utf-8"))
    for entry, model in zip(raw["model"], ms.load().models, strict=True):
        assert model.projections()["LM head"] == (entry["vocab"], entry["hidden"])


def test_a_bad_model_file_is_named() -> None:
    with pytest.raises(ValueError, match=r"^mine\.toml: missing top-level key 'checked'$"):
        ms.parse('[[model]]\nname = "X"\n', "mine.toml")
    with pytest.raises(ValueError, match=r"mine\.toml"):
        ms.parse("checked = [", "mine.toml")
    with pytest.raises(ValueError, match=r"^mine\.toml: model"):
        ms.parse('checked = 2026-11-27\n[[model]]\nname = "X"\nhidden = "big"\n', "mine.toml")


def test_the_draw_at_its_edges() -> None:
    assert len(ms.draw(seed=0, count=1)) == 1  # seed 0 is a seed
    assert ms.draw(count=2, table=ms.load()) == ms.draw(count=2)
    with pytest.raises(ValueError, match=r"^count must be an int ≥ 1; got True$"):
        ms.draw(count=True)
    with pytest.raises(TypeError, match=r"^table must be a ModelTable \(or None: the packaged table\); got .*str"):
        ms.draw(count=1, table="models.toml")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^tokens must be an int ≥ 1; got True$"):
        ms.product(ms.load().models[0], "qkv", "forward", True)


# How a configuration is written into a record.


def test_a_configuration_writes_back_as_the_first_records_wrote_it() -> None:
    """The first sweep's records were written before the optional flags existed: each configuration reads and
    writes back unchanged; a flag that is set is written."""
    adapter = TypeAdapter(Config)
    for row in _raw("triton-gemm-sweep-h100")["rows"][:5]:
        assert adapter.dump_python(adapter.validate_python(row["config"])) == row["config"]
    padded = Config("tma", 128, 128, 64, num_stages=4, pad_rows=True)
    assert adapter.dump_python(padded) == {
        "kernel": "tma", "block_m": 128, "block_n": 128, "block_k": 64, "group_m": 8, "num_stages": 4,
        "num_warps": 8, "warp_specialize": False, "epilogue_subtile": False, "flatten": True,
        "fp8_imprecise_acc": None, "split_k": None, "pad_rows": True,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"group_m": 0}, r"^group_m must be in 1\.\.64; got 0$"),
        ({"num_warps": 2}, r"^num_warps must be in \[4, 8, 16\]"),
    ],
)
def test_a_configuration_out_of_range_says_what_is_allowed(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Config("tma", 128, 128, 64, **kwargs)


# The results readers' selections, on made-up rows.


def _row(ratio: float | None, kernel_ms: list[float]) -> SimpleNamespace:
    return SimpleNamespace(ratio=ratio, kernel_ms=kernel_ms)


def test_losing_and_uneven_rows() -> None:
    rows = [_row(0.8, [1.0]), _row(None, [1.0, 9.0]), _row(0.9, [1.0, 1.5]), _row(0.5, [2.0, 3.1]), _row(0.95, [1])]
    record = SimpleNamespace(rows=rows)
    assert results.losing_rows(record, 0.9) == [rows[3], rows[0]]  # below 0.9, lowest first
    assert results.uneven_rows(record, 1.5) == [rows[3]]  # 3.1 > 1.5 × 2.0; 1.5 is not above 1.5 × 1.0


def test_shared_memory_rows_take_16_bit_compiled_figures_and_fit_at_the_limit() -> None:
    first, second = [c for c in CANDIDATES if c.kernel == "tma"][:2]
    # 3 stages × (128 + 256) × 64 × 2 bytes, and a 128×256 tile of C: 212,992 bytes
    assert first == Config("tma", 128, 256, 64, num_stages=3, num_warps=8)
    compiled = [
        SimpleNamespace(config=first, shared_bytes=None, dtype="bfloat16"),  # no figure: the refusal's stays
        SimpleNamespace(config=second, shared_bytes=5000, dtype="float8_e4m3fn"),  # one-byte elements: not read
        SimpleNamespace(config=None, shared_bytes=6000, dtype="bfloat16"),
    ]
    record = SimpleNamespace(
        sweep=SimpleNamespace(compiler_limit=lambda: 212992, compiler_required=lambda: {first: 230000}),
        compare=SimpleNamespace(compiled=compiled),
    )
    rows = results.shared_memory_rows(record)
    assert (rows[0].config, rows[0].by_count, rows[0].reported, rows[0].fits) == (first, 212992, 230000, True)
    assert (rows[1].config, rows[1].reported) == (second, None)
    assert all(r.fits == (r.by_count <= 212992) for r in rows)
    record.sweep.compiler_limit = lambda: None
    assert {r.fits for r in results.shared_memory_rows(record)} == {None}


def test_goal_rows_meet_the_goal_at_it_and_say_what_is_missing() -> None:
    config = Config("tma", 128, 256, 64, num_stages=4, epilogue_subtile=True)
    case = SimpleNamespace(tflops=600.0, cublas_tflops=600.0 / results.GOAL, ratio=results.GOAL, timed="events")
    record = SimpleNamespace(chosen=SimpleNamespace(large=SimpleNamespace(config=config)),
                             sweep=SimpleNamespace(case=lambda c, size: case))  # fmt: skip
    assert [r.met for r in results.goal_rows(record, 989.0)] == [True, True]
    record.sweep.case = lambda c, size: None
    with pytest.raises(ValueError, match=r"^the sweep has no 4096³ result for the chosen configuration 'tma 128x256"):
        results.goal_rows(record, 989.0)
    record.chosen.large = None
    with pytest.raises(ValueError, match=r"^the sweep chose no configuration for large products$"):
        results.goal_rows(record, 989.0)


def test_an_fp8_phase_without_the_peers_result_says_which() -> None:
    with pytest.raises(KeyError, match=r"no _scaled_mm result for 4096³ with use_fast_accum=True"):
        results.Fp8(sizes=[], peer=[], configs=[]).peer_for(4096, True)


def test_mismatched_sizes_skip_rows_without_a_configuration() -> None:
    # On 132 multiprocessors 4096² takes the large tiling (512 tiles, 4 rounds), 1024² the small one (32 large
    # tiles would leave 100 idle)
    small = Config("tma", 64, 128, 64, num_stages=4, num_warps=4)
    rows = [SimpleNamespace(m=4096, config=small), SimpleNamespace(m=1024, config=small),
            SimpleNamespace(m=2048, config=None)]  # fmt: skip
    assert results.Compare.mismatched_sizes(SimpleNamespace(records=rows), 132) == [4096]


def test_the_diagnostic_runs_rounds_by_default() -> None:
    raw = _raw("triton-gemm-rounds-h100")["cases"]
    rows = results.rounds_rows()
    assert len(rows) == len({(c["dtype"], c["layout"], c["m"], c["n"], c["k"], c["side"]) for c in raw})
    counts: dict[str, tuple[int, int]] = {}
    for c in raw:
        slow, total = counts.get(c["method"], (0, 0))
        counts[c["method"]] = (slow + sum(x > min(c["rounds_ms"]) for x in c["rounds_ms"]), total + len(c["rounds_ms"]))
    assert results.slow_rounds(factor=1.0) == counts
    one = SimpleNamespace(dtype="bfloat16", layout="NN", m=1, n=2, k=3, side="kernel", method="held", rounds_ms=[1.0])
    with pytest.raises(ValueError, match=r"^bfloat16 NN 1x2x3 kernel: no rounds by \["):
        results.rounds_rows(SimpleNamespace(cases=[one]))


def test_the_diagnostic_run_is_read_as_one() -> None:
    with pytest.raises(ValueError, match=r"holds a 'gemm\.triton-gemm' record; expected 'gemm\.triton-rounds'"):
        results.rounds_committed("gemm/triton-gemm-h100")


def _sweep_bench() -> types.ModuleType:
    """bench/triton_gemm_sweep.py as a module (torch-free to import)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "bench" / "triton_gemm_sweep.py"
    spec = importlib.util.spec_from_file_location("triton_gemm_sweep_bench", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def test_the_sweep_names_the_commit_of_each_draw_it_measured() -> None:
    # the bench script's record text (torch-free to import), by set name: the texts of step 16's and step 17's records
    # from the commits they name, a set without a commit as unknown, and lists it cannot read refused
    import re as regex

    bench = _sweep_bench()
    for name, sets in (("triton-gemm-sweep-h100-held-out-7", ("held-out-7", "tokens")),
                       ("triton-gemm-sweep-h100-held-out-8", ("held-out-8",))):  # fmt: skip
        raw = _raw(name)
        commits = regex.findall(r"fixed by commit ([0-9a-f]{40})", raw["held_out"])
        pairs = ",".join(f"{s}={c}" for s, c in zip(sets, commits, strict=True))
        assert bench.held_out_text(sets, pairs) == raw["held_out"]
    assert list(bench.DRAWS)[-6:] == ["held-out-9", "tokens", "tokens-2", "tokens-3", "mid-rows", "tokens-4"]
    assert bench.held_out_text(("held-out", "tokens"), "tokens=abc") == (
        f"{bench.DRAWS['held-out']}, fixed by commit unknown; {bench.DRAWS['tokens']}, fixed by commit abc"
    )
    assert bench.held_out_text(("first", "tiny"), None) is None
    for bad in ("abc", "held-out-99=abc", "tokens=", "tokens=a,tokens=b", ",,,,,,abc"):
        with pytest.raises(ValueError, match=r"^--held-out-commit must be comma-separated set=commit pairs, each set "):
            bench.held_out_text(("tokens",), bad)


def test_the_held_out_commits_are_hex_and_given_as_text() -> None:
    # a commit with a space, a ';' or an '=' in it went into the record as written ("fixed by commit  ", "fixed by
    # commit abc;tokens=d"); a list, or a set name for the sets, was not refused clearly

    bench = _sweep_bench()
    sets = ("held-out-8", "tokens")
    for bad in ("held-out-8= ", "held-out-8=a b", "held-out-8=abc ", "held-out-8=a=b", "held-out-8=abc;tokens=d",
                "held-out-8=\n", "held-out-8=" + "a" * 41):  # fmt: skip
        with pytest.raises(ValueError, match=r"^--held-out-commit must be comma-separated set=commit pairs, each set "):
            bench.held_out_text(sets, bad)
    with pytest.raises(TypeError, match=r"^--held-out-commit must be a string; got \['held-out-8=abc'\] \(list\)$"):
        bench.held_out_text(sets, ["held-out-8=abc"])
    with pytest.raises(TypeError, match=r"^sets must be a tuple of set names; got 'held-out-8' \(str\)$"):
        bench.held_out_text("held-out-8", "held-out-8=abc")  # type: ignore[arg-type]
    # a trailing comma, and a full hash, are fine
    assert bench.held_out_text(("held-out-8",), f"held-out-8={'0a' * 20},") == (
        f"{bench.DRAWS['held-out-8']}, fixed by commit {'0a' * 20}"
    )


def test_the_sweep_cases_are_the_sets_named_and_no_other() -> None:
    # a string of one set name was read letter by letter with `in`: "tokens-2" measured step 16's "tokens" too,
    # "held-out-8" the first held-out draw; an unknown name measured nothing, silently

    bench = _sweep_bench()
    assert {case[0] for case in bench.sweep_cases(("tokens-2",))} == {"tokens-2"}
    for bad in ("tokens-2", "held-out-8", None):
        with pytest.raises(TypeError, match=r"^sets must be a tuple of set names; got "):
            bench.sweep_cases(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^sets must name sets of \[.*\]; got \['tokens-9'\]$"):
        bench.sweep_cases(("tokens", "tokens-9"))


def test_the_sweep_can_run_without_each_rule_of_the_look_up() -> None:
    import argparse

    from gpukb.gemm.triton import tuning

    bench = _sweep_bench()
    assert sorted(rule for rule, _ in bench.RULE_FLAGS.values()) == sorted(tuning.RULES)
    parser = argparse.ArgumentParser()
    bench.arguments(parser)
    for flag in bench.RULE_FLAGS:
        args = parser.parse_args([flag])
        assert [other for other in bench.RULE_FLAGS if getattr(args, bench._dest(other))] == [flag]
