"""gpukb.records: the run description, the writer, the validating loader, and every committed results file."""

from __future__ import annotations

import datetime as dt
import json
import platform
import shutil
import subprocess
import sys
import zipfile
from typing import Literal

import pytest

from gpukb import records
from gpukb.records import store
from gpukb.schema import StrictModel
from tests.helpers import ROOT


class Point(StrictModel):
    x: int
    label: str


class Demo(records.Record):
    """A kind that exists only in these tests (registered by the ``demo_kind`` fixture)."""

    kind: Literal["test.demo"] = "test.demo"
    schema_version: Literal[2] = 2
    points: list[Point]


@pytest.fixture
def demo_kind(monkeypatch: pytest.MonkeyPatch) -> type[Demo]:
    monkeypatch.setitem(store.KINDS, "test.demo", f"{__name__}:Demo")
    return Demo


def _cpu_run(**changes) -> records.Run:
    run = records.Run(
        date=dt.date(2026, 11, 23),
        started=dt.datetime(2026, 11, 23, 16, 0, 5, tzinfo=dt.UTC),
        command="python bench/demo.py out.json",
        machine="x86_64",
        cpu_count=2,
        gpu=None,
        versions=records.Versions(python="3.11.7", numpy="2.3.5", torch="2.13.0+cpu"),
    )
    return run.model_copy(update=changes)


def test_describe_run_reads_this_machine() -> None:
    run = records.describe_run("python x.py --flag", notes=["a note"])
    assert run.versions.python == platform.python_version()
    assert run.command == "python x.py --flag"
    assert run.date == run.started.date()
    assert run.notes == ["a note"]
    import torch

    assert (run.gpu is None) == (not torch.cuda.is_available())


def test_command_line_is_what_a_reader_types() -> None:
    assert (
        records.command_line(["bench/gpu_sweep.py", "--output", "a b.json"])
        == "python bench/gpu_sweep.py --output 'a b.json'"
    )
    assert records.command_line(["/x/gpukb/__main__.py", "bench"]) == "python -m gpukb bench"
    assert records.command_line(["/venv/bin/gpukb", "bench", "--quick"]) == "gpukb bench --quick"


def test_a_torchrun_process_records_the_torchrun_command(monkeypatch) -> None:
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")
    assert records.command_line(["bench/distributed_collectives.py", "out.json"]) == (
        "torchrun --nproc_per_node=2 bench/distributed_collectives.py out.json"
    )


def test_clock_reading_from_nvidia_smi_fields() -> None:
    smi = {"clocks.sm": 1980.0, "clocks.mem": 2619.0, "clocks.max.sm": 1980.0, "clocks.max.mem": 2619.0,
           "power.draw": 338.8, "power.limit": 700.0, "temperature.gpu": 48.0, "pstate": "P0"}  # fmt: skip
    reading = records.clock_reading(smi)
    assert reading == records.ClockReading(sm_mhz=1980, mem_mhz=2619, max_sm_mhz=1980, max_mem_mhz=2619,
                                           power_w=338.8, power_limit_w=700, temperature_c=48, pstate="P0")  # fmt: skip
    assert records.clock_text(reading) == "SM 1980/1980 MHz, memory 2619 MHz, 339 W of 700 W, 48 °C, P0"
    assert records.clock_reading({**smi, "power.draw": "[N/A]"}).power_w is None
    assert records.clock_reading(None) is None


def test_measured_on_names_gpu_software_day_and_command() -> None:
    gpu = records.Gpu(name="NVIDIA H100 80GB HBM3", sm_count=132, compute_capability="9.0",
                      memory_bytes=85017493504, l2_bytes=52428800, driver="580.159.04")  # fmt: skip
    run = _cpu_run(gpu=gpu, versions=records.Versions(python="3.12.3", torch="2.11.0+cu130", torch_cuda="13.0",
                                                      triton="3.6.0"))  # fmt: skip
    assert records.measured_on(run) == (
        "Measured on an NVIDIA H100 80GB HBM3 (132 SMs, driver 580.159.04), torch 2.11.0+cu130 (CUDA 13.0), "
        "triton 3.6.0, Python 3.12.3, on 2026-11-23, by `python bench/demo.py out.json`."
    )
    cpu = records.measured_on(_cpu_run(), command=False)
    assert cpu.startswith("Measured on the CPU of an x86_64 machine (2 logical CPUs), torch 2.13.0+cpu")
    assert "`" not in cpu


def test_measured_on_adds_the_notes_when_asked() -> None:
    run = _cpu_run().model_copy(update={"notes": ["4 ranks, nccl.", "One warm-up step."]})
    assert records.measured_on(run, notes=True) == records.measured_on(run) + " 4 ranks, nccl. One warm-up step."
    assert records.measured_on(_cpu_run(), notes=True) == records.measured_on(_cpu_run())


def test_a_measured_table_is_the_table_then_its_note_and_provenance() -> None:
    run = _cpu_run()
    text = records.measured_table(["n", "ms"], [[1, "0.5"], [2, "1.0"]], run, "Medians of 5. ", command=False)
    assert text == "| n | ms |\n|---|---|\n| 1 | 0.5 |\n| 2 | 1.0 |\n\nMedians of 5. " + records.measured_on(run, False)
    with pytest.raises(TypeError, match=r"run must be a gpukb\.records\.Run; got dict"):
        records.measured_table(["n"], [[1]], {})
    with pytest.raises(TypeError, match="note must be a string; got int"):
        records.measured_table(["n"], [[1]], run, 3)
    with pytest.raises(TypeError, match=r"command must be True or False; got 'no' \(str\)"):
        records.measured_table(["n"], [[1]], run, "", command="no")  # was read as True
    with pytest.raises(ValueError, match="row 1 has 1 cells, the header has 2"):
        records.measured_table(["n", "ms"], [[1]], run)


def test_write_then_read_round_trips(tmp_path, demo_kind) -> None:
    record = Demo(run=_cpu_run(), points=[Point(x=1, label="a"), Point(x=2, label="b")])
    assert (record.kind, record.schema_version) == ("test.demo", 2)
    path = records.write(record, tmp_path / "sub" / "demo.json")
    text = path.read_text()
    assert json.loads(text)["run"]["date"] == "2026-11-23"  # one date format: the UTC day
    assert json.loads(text)["run"]["started"] == "2026-11-23T16:00:05Z"
    assert records.read(path, Demo) == record


def test_load_by_id_from_a_configured_folder(tmp_path, monkeypatch, demo_kind) -> None:
    records.write(Demo(run=_cpu_run(), points=[]), tmp_path / "test" / "first.json")
    monkeypatch.setenv(records.RESULTS_DIR_VARIABLE, str(tmp_path))
    assert records.record_ids() == ["test/first"]
    assert records.load("test/first", Demo).points == []
    with pytest.raises(FileNotFoundError, match=r"test/second.*does not exist; there are \[.test/first.\]"):
        records.load("test/second")


@pytest.mark.parametrize("bad_id", ["../etc/passwd", "/abs", "a//b", "a/./b", "", "a b", 3])
def test_a_record_id_is_a_plain_relative_path(bad_id) -> None:
    with pytest.raises(ValueError, match="a record id is a path like"):
        records.load(bad_id)


def _file(tmp_path, demo_kind, **changes) -> dict:
    data = json.loads(
        records.write(Demo(run=_cpu_run(), points=[Point(x=1, label="a")]), tmp_path / "d.json").read_text()
    )
    data.update(changes)
    return data


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"kind": "test.nothing"}, r"kind: unknown results kind 'test.nothing'; kinds are \["),
        ({"schema_version": 1}, r"schema_version is 1; this version of gpukb reads test.demo schema 2"),
        ({"points": [{"x": "1", "label": "a"}]}, r"points\[0\]\.x: Input should be a valid integer \(got '1'\)"),
        ({"points": [{"x": 1}]}, r"points\[0\]\.label: Field required"),
        ({"points": [{"x": 1, "label": "a", "colour": "red"}]}, r"points\[0\]\.colour: Extra inputs are not permitted"),
        ({"run": None}, r"run: Input should be an object"),
    ],
)
def test_a_malformed_file_names_the_file_and_the_field(tmp_path, demo_kind, change, message) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_file(tmp_path, demo_kind, **change)))
    with pytest.raises(ValueError, match=rf"^{path}: {message}"):
        records.read(path)


def test_a_file_that_omits_its_schema_version_is_refused(tmp_path, demo_kind) -> None:
    data = _file(tmp_path, demo_kind)
    del data["schema_version"]
    with pytest.raises(ValueError, match="schema_version is None"):
        records.parse(data, "x.json")


class Other(records.Record):
    kind: Literal["test.other"] = "test.other"
    schema_version: Literal[1] = 1


def test_a_record_of_another_kind_is_refused(tmp_path, demo_kind, monkeypatch) -> None:
    monkeypatch.setitem(store.KINDS, "test.other", f"{__name__}:Other")
    with pytest.raises(ValueError, match=r"holds a 'test\.demo' record; expected 'test\.other'"):
        records.parse(_file(tmp_path, demo_kind), "x.json", Other)


def test_an_unregistered_kind_cannot_be_written(tmp_path) -> None:
    with pytest.raises(ValueError, match="not registered in KINDS"):
        records.write(Demo(run=_cpu_run(), points=[]), tmp_path / "x.json")


def test_every_registered_kind_has_a_model_and_a_json_schema() -> None:
    schemas = records.json_schemas()
    assert sorted(schemas) == sorted(store.KINDS)
    for kind, schema in schemas.items():
        assert schema["properties"]["kind"]["const"] == kind
        assert "run" in schema["required"]


@pytest.mark.parametrize("record_id", records.record_ids())
def test_every_committed_results_file_validates(record_id: str) -> None:
    record = records.load(record_id)
    assert record.kind in store.KINDS
    assert records.measured_on(record.run).startswith("Measured on ")


def test_every_committed_file_is_a_record() -> None:
    folder = ROOT / "src" / "gpukb" / "data" / "results"
    files = sorted(p.relative_to(folder).with_suffix("").as_posix() for p in folder.rglob("*") if p.is_file())
    assert files == records.record_ids(), "only JSON records belong under gpukb/data/results"


def test_an_installed_wheel_finds_and_renders_its_records(tmp_path) -> None:
    """Build the wheel, unpack it where the checkout is not on the path, and read every record from it."""
    # Build from a copy, so that setuptools' build/ folder is not left in the checkout.
    source = tmp_path / "source"
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    wheels = tmp_path / "wheels"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(wheels),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = wheels.glob("gpukb-*.whl")
    installed = tmp_path / "site-packages"
    zipfile.ZipFile(wheel).extractall(installed)
    script = (
        "import gpukb, gpukb.records as r; "
        f"assert gpukb.__file__.startswith({str(installed)!r}), gpukb.__file__; "
        "ids = r.record_ids(); print(len(ids)); "
        "print('\\n'.join(r.measured_on(r.load(i).run) for i in ids)); "
        "from gpukb.formats.pages.anatomy import tf32_check; print(tf32_check())"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env={"PYTHONPATH": str(installed), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    count = int(lines[0])
    assert count == len(records.record_ids()) > 0
    assert all(line.startswith("Measured on ") for line in lines[1 : 1 + count])
    from gpukb.formats.pages.anatomy import tf32_check  # the same recorded table, rendered from the checkout

    assert "\n".join(lines[1 + count :]) == tf32_check()


def test_finished_adds_the_duration_and_the_end_reading_of_a_gpu_run(monkeypatch) -> None:
    import time

    smi = {"clocks.sm": 1500.0, "clocks.max.sm": 1980.0, "power.draw": 650.0, "power.limit": 700.0, "pstate": "P0"}
    monkeypatch.setattr("gpukb.measuring.device.clocks", lambda: smi)
    gpu = records.Gpu(name="NVIDIA H100 80GB HBM3", sm_count=132, compute_capability="9.0",
                      memory_bytes=85017493504, l2_bytes=52428800, driver="580.159.04")  # fmt: skip
    done = records.finished(_cpu_run(gpu=gpu), time.perf_counter() - 2.0)
    assert done.duration_s >= 2.0
    assert done.clocks["end"] == records.clock_reading(smi)
    given = records.ClockReading(sm_mhz=1980)
    assert records.finished(_cpu_run(gpu=gpu), time.perf_counter(), clocks={"end": given}).clocks["end"] == given
    assert "end" not in records.finished(_cpu_run(), time.perf_counter()).clocks  # a CPU run reads no GPU clocks


# --- the run description's every field, on a GPU faked on the CPU ----------------------------------------------

_H100 = {"gpu": "NVIDIA H100 80GB HBM3", "sm_count": 132, "compute_capability": "9.0",
         "memory_bytes": 85017493504, "l2_bytes": 52428800, "driver": "580.159.04"}  # fmt: skip
_SMI = {"clocks.sm": 1980.0, "clocks.mem": 2619.0, "clocks.max.sm": 1980.0, "clocks.max.mem": 2619.0,
        "power.draw": 71.5, "power.limit": 700.0, "temperature.gpu": 31.0, "pstate": "P0"}  # fmt: skip


@pytest.fixture
def fake_gpu(monkeypatch: pytest.MonkeyPatch):
    """``describe_run`` on a machine whose environment, device and clocks say there is an H100 (each library at
    its own version, so a field read from another library's shows)."""
    import dataclasses

    import torch

    from gpukb import environment
    from gpukb.measuring import device
    from gpukb.records import run as run_module

    libraries = {"numpy": "2.5.2", "torch": "2.11.0+cu130", "triton": "3.6.0", "ml_dtypes": "0.5.4",
                 "numba": "0.62.1"}  # fmt: skip
    env = dataclasses.replace(environment.collect(), cuda_gpu=_H100["gpu"], torch_cuda="13.0", nvcc="13.0.88",
                              libraries=libraries)  # fmt: skip
    monkeypatch.setattr(environment, "collect", lambda: env)
    monkeypatch.setattr(device, "describe", lambda t: dict(_H100) if t is torch else pytest.fail(f"described {t!r}"))
    monkeypatch.setattr(device, "clocks", lambda: dict(_SMI))
    monkeypatch.setattr(run_module, "_cudnn_version", lambda t: "9.10.2" if t is torch else pytest.fail("no torch"))
    return env


def test_describe_run_on_a_gpu_records_the_device_the_libraries_and_a_first_reading(fake_gpu) -> None:
    import os

    before = dt.datetime.now(dt.UTC).replace(microsecond=0)
    run = records.describe_run("python bench/x.py out.json", notes=("one", "two"))
    after = dt.datetime.now(dt.UTC)
    assert run.gpu == records.Gpu(name=_H100["gpu"], sm_count=132, compute_capability="9.0",
                                  memory_bytes=85017493504, l2_bytes=52428800, driver="580.159.04")  # fmt: skip
    assert run.versions == records.Versions(python=fake_gpu.python, numpy="2.5.2", torch="2.11.0+cu130",
                                            torch_cuda="13.0", triton="3.6.0", cudnn="9.10.2", nvcc="13.0.88",
                                            ml_dtypes="0.5.4", numba="0.62.1")  # fmt: skip
    assert run.clocks == {"start": records.clock_reading(_SMI)}
    assert (run.machine, run.cpu_count) == (platform.machine(), os.cpu_count() or 1)
    assert before <= run.started <= after
    assert (run.started.tzinfo, run.started.microsecond) == (dt.UTC, 0)
    assert run.date == run.started.date()
    assert (run.command, run.notes, run.duration_s) == ("python bench/x.py out.json", ["one", "two"], None)


def test_describe_run_without_a_command_records_this_process_and_without_clocks_none(fake_gpu, monkeypatch):
    from gpukb.measuring import device

    monkeypatch.setattr(sys, "argv", ["bench/x.py", "out.json"])
    monkeypatch.setattr(device, "clocks", lambda: None)  # nvidia-smi did not answer
    run = records.describe_run()
    assert (run.command, run.clocks, run.gpu.name) == ("python bench/x.py out.json", {}, _H100["gpu"])


def test_describe_run_without_a_gpu_records_no_gpu_library(monkeypatch) -> None:
    import dataclasses

    from gpukb import environment

    env = dataclasses.replace(environment.collect(), cuda_gpu=None, torch_cuda=None, nvcc=None)
    monkeypatch.setattr(environment, "collect", lambda: env)
    monkeypatch.setattr("os.cpu_count", lambda: None)  # unknown: one CPU at least
    run = records.describe_run("x")
    assert (run.gpu, run.clocks, run.versions.cudnn, run.cpu_count) == (None, {}, None, 1)


def test_command_line_of_no_arguments_is_empty() -> None:
    assert records.command_line([]) == ""


def test_clock_reading_keeps_only_a_p_state() -> None:
    assert records.clock_reading({**_SMI, "pstate": "[N/A]"}).pstate is None
    assert records.clock_reading({**_SMI, "pstate": 0.0}).pstate is None  # a number is no P-state


def test_finished_measures_from_the_start() -> None:
    import time

    done = records.finished(_cpu_run(), time.perf_counter() - 1.0, notes=["n"])
    assert 1.0 <= done.duration_s < 60
    assert done.notes == ["n"]


@pytest.mark.parametrize(
    ("reading", "text"),
    [
        (records.ClockReading(sm_mhz=1755.4), "SM 1755 MHz"),  # no maximum: no "/1980"
        (records.ClockReading(power_w=71.5), "72 W"),  # no limit: no " of 700 W"
        (records.ClockReading(temperature_c=31, pstate="P2"), "31 °C, P2"),
        (records.ClockReading(), "not reported"),
    ],
)
def test_clock_text_says_only_what_was_read(reading, text) -> None:
    assert records.clock_text(reading) == text


def _gpu(name: str = "NVIDIA H100 80GB HBM3", driver: str | None = "580.159.04") -> records.Gpu:
    return records.Gpu(name=name, sm_count=132, compute_capability="9.0", memory_bytes=85017493504,
                       l2_bytes=52428800, driver=driver)  # fmt: skip


_ALL = records.Versions(python="3.12.3", numpy="2.5.2", torch="2.11.0+cu130", torch_cuda="13.0", triton="3.6.0",
                        cudnn="9.10.2", nvcc="13.0", ml_dtypes="0.5.4", numba="0.62.1", cublaslt="13.1.0")  # fmt: skip


@pytest.mark.parametrize(
    ("changes", "sentence"),
    [
        ({"gpu": _gpu(), "versions": _ALL},
         "Measured on an NVIDIA H100 80GB HBM3 (132 SMs, driver 580.159.04), torch 2.11.0+cu130 (CUDA 13.0), "
         "triton 3.6.0, cuDNN 9.10.2, cuBLASLt 13.1.0, nvcc 13.0, numpy 2.5.2, ml_dtypes 0.5.4, Python 3.12.3"),
        # the GPU libraries and torch's CUDA are named only for a GPU run; numba never
        ({"versions": _ALL},
         "Measured on the CPU of an x86_64 machine (2 logical CPUs), torch 2.11.0+cu130, triton 3.6.0, numpy 2.5.2, "
         "ml_dtypes 0.5.4, Python 3.12.3"),
        ({"gpu": _gpu("Tesla T4", driver=None)}, "Measured on a Tesla T4 (132 SMs), torch 2.13.0+cpu, numpy 2.3.5"),
        ({"gpu": _gpu("A100-SXM4-80GB")}, "Measured on an A100-SXM4-80GB (132 SMs, driver 580.159.04)"),
        ({"gpu": _gpu("ampere card")}, "Measured on an ampere card (132 SMs"),
        ({"gpu": _gpu("EPYC")}, "Measured on an EPYC (132 SMs"),
        ({"gpu": _gpu("Quadro")}, "Measured on a Quadro (132 SMs"),
        ({"gpu": _gpu("Xavier")}, "Measured on a Xavier (132 SMs"),  # the vowels are the five letters alone
        ({"gpu": _gpu("Oa")}, "Measured on an Oa (132 SMs"),
        ({"machine": None, "cpu_count": None}, "Measured on the CPU of an unrecorded machine, torch 2.13.0+cpu"),
    ],
)  # fmt: skip
def test_measured_on_says_each_part_only_where_it_was_recorded(changes, sentence) -> None:
    text = records.measured_on(_cpu_run(**changes))
    assert text.startswith(sentence)
    assert text.endswith(", on 2026-11-23, by `python bench/demo.py out.json`.")


def test_measured_table_names_the_command_unless_told_not_to() -> None:
    run = _cpu_run()
    assert records.measured_table(["n"], [[1]], run) == "| n |\n|---|\n| 1 |\n\n" + records.measured_on(run)
    assert records.measured_table(["n"], [[1]], run, command=False).endswith("on 2026-11-23.")


@pytest.mark.parametrize(
    ("available", "version", "text"),
    [(True, 91002, "9.10.2"), (True, 90100, "9.1.0"), (True, 8907, "8907"), (True, 10000, "1.0.0"),
     (True, 0, None), (True, None, None), (False, 91002, None)],
)  # fmt: skip
def test_the_cudnn_version_is_read_the_way_cudnn_9_encodes_it(available, version, text) -> None:
    """cuDNN 9 reports 9.10.2 as 91002 (major·10000 + minor·100 + patch); cuDNN 8 as 8907 (kept as given)."""
    import types

    from gpukb.records.run import _cudnn_version

    cudnn = types.SimpleNamespace(is_available=lambda: available, version=lambda: version)
    assert _cudnn_version(types.SimpleNamespace(backends=types.SimpleNamespace(cudnn=cudnn))) == text
