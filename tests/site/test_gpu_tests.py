"""The GPU test run: a JUnit report becomes a ``site.gpu-tests`` record, the committed record validates and
renders, and every gpu-marked test in the suite appears in it."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from gpukb.records import Run, Versions, load, read
from gpukb.site import pages
from gpukb.site.gpu_tests import OUTCOMES, RECORD_ID, GpuTestRun, from_junit, main, read_junit

JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="3">
<testcase classname="tests.formats.test_gpu" name="test_a" time="1.5"/>
<testcase classname="tests.formats.test_gpu" name="test_b" time="0.1"><failure message="x">boom</failure></testcase>
<testcase classname="tests.gemm.triton.test_matmul" name="test_c[bf16]" time="2.0"><skipped message="s"/></testcase>
<testcase classname="" name="tests.site.test_mathml" time="0"><error message="collection failure">x</error></testcase>
</testsuite></testsuites>"""

RUN = Run(date=dt.date(2026, 11, 22), command="pytest -m gpu", machine="x86_64", cpu_count=16, gpu=None,
          versions=Versions(python="3.12.3"))  # fmt: skip


@pytest.fixture
def report(tmp_path):
    path = tmp_path / "r.xml"
    path.write_text(JUNIT)
    return path


def test_read_junit(report) -> None:
    outcomes = read_junit(report)
    assert [(o.node, o.outcome, o.seconds) for o in outcomes] == [
        ("tests/formats/test_gpu.py::test_a", "passed", 1.5),
        ("tests/formats/test_gpu.py::test_b", "failed", 0.1),
        ("tests/gemm/triton/test_matmul.py::test_c[bf16]", "skipped", 2.0),
        ("tests/site/test_mathml.py", "not collected", 0.0),
    ]


def test_not_junit_is_refused(tmp_path) -> None:
    path = tmp_path / "r.xml"
    path.write_text("<html/>")
    with pytest.raises(ValueError, match="not a JUnit XML report"):
        read_junit(path)


def test_record_from_junit_counts_the_outcomes(report) -> None:
    record = from_junit(report, run=RUN)
    assert record.kind == "site.gpu-tests"
    assert record.counts() == {"passed": 1, "failed": 1, "error": 0, "skipped": 1, "not collected": 1}


def test_the_command_line_writes_a_record_that_validates(report, tmp_path, capsys) -> None:
    out = tmp_path / "run.json"
    assert main([str(report), str(out), "--command", "python3 -m pytest -m gpu tests"]) == 0
    record = read(out, expect=GpuTestRun)
    assert record.run.command == "python3 -m pytest -m gpu tests"
    assert [t.outcome for t in record.tests] == ["passed", "failed", "skipped", "not collected"]
    assert "4 test cases (1 passed, 1 failed, 1 skipped, 1 not collected)" in capsys.readouterr().out


def test_a_malformed_record_is_refused_naming_the_field(report, tmp_path) -> None:
    data = json.loads(from_junit(report, run=RUN).model_dump_json())
    data["tests"][1]["outcome"] = "flaky"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"bad\.json: tests\[1\]\.outcome: Input should be 'passed'"):
        read(path)


def test_the_page_renders_every_case_and_the_counts() -> None:
    record = load(RECORD_ID, expect=GpuTestRun)
    text = pages.gpu_test_run()
    for t in record.tests:
        assert f"| `{t.node}` | {t.outcome} | {t.seconds:.1f} |" in text
    seen = [t.outcome for t in record.tests]
    counts = ", ".join(f"{seen.count(o)} {o}" for o in OUTCOMES if o in seen)  # in the order the page lists them
    assert f"\n\n{counts}. Measured on an NVIDIA H100 80GB HBM3" in text


def test_committed_run_covers_every_gpu_test(request) -> None:
    """The committed H100 run must contain each gpu-marked test that this suite collects, and none failed."""
    ran = {t.node.split("[")[0]: t.outcome for t in load(RECORD_ID, expect=GpuTestRun).tests}
    gpu_tests = {
        item.nodeid.split("[")[0] for item in request.session.items if item.get_closest_marker("gpu") is not None
    }
    if not gpu_tests:
        pytest.skip("run with the whole suite: this session collected no gpu-marked tests to compare")
    missing = sorted(gpu_tests - set(ran))
    assert missing == [], f"gpu tests not in the committed H100 run: {missing}"
    assert [node for node in gpu_tests if ran[node] in ("failed", "error")] == []
