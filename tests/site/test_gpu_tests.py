"""The committed GPU test run is read correctly, and every gpu-marked test in the suite appears in it."""

from __future__ import annotations

import pytest

from gpukb.site.gpu_tests import read_junit, summary_markdown
from tests.helpers import ROOT

REPORT = ROOT / "bench" / "results" / "gpu-tests-h100.xml"

JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="3">
<testcase classname="tests.formats.test_gpu" name="test_a" time="1.5"/>
<testcase classname="tests.formats.test_gpu" name="test_b" time="0.1"><failure message="x">boom</failure></testcase>
<testcase classname="tests.kernels.test_matmul" name="test_c[bf16]" time="2.0"><skipped message="s"/></testcase>
<testcase classname="" name="tests.site.test_mathml" time="0"><error message="collection failure">x</error></testcase>
</testsuite></testsuites>"""


def test_read_junit(tmp_path) -> None:
    path = tmp_path / "r.xml"
    path.write_text(JUNIT)
    outcomes = read_junit(path)
    assert [(o.node, o.outcome) for o in outcomes] == [
        ("tests/formats/test_gpu.py::test_a", "passed"),
        ("tests/formats/test_gpu.py::test_b", "failed"),
        ("tests/kernels/test_matmul.py::test_c[bf16]", "skipped"),
        ("tests/site/test_mathml.py", "not collected"),
    ]
    text = summary_markdown(path)
    assert "| `tests/formats/test_gpu.py::test_a` | passed | 1.5 |" in text
    assert text.endswith("1 passed, 1 failed, 1 skipped, 1 not collected.")


def test_not_junit_is_refused(tmp_path) -> None:
    path = tmp_path / "r.xml"
    path.write_text("<html/>")
    with pytest.raises(ValueError, match="not a JUnit XML report"):
        read_junit(path)


def test_committed_run_covers_every_gpu_test(request) -> None:
    """The committed H100 run must contain each gpu-marked test that this suite collects, and none failed."""
    ran = {o.node.split("[")[0]: o.outcome for o in read_junit(REPORT)}
    gpu_tests = {
        item.nodeid.split("[")[0] for item in request.session.items if item.get_closest_marker("gpu") is not None
    }
    if not gpu_tests:
        pytest.skip("run with the whole suite: this session collected no gpu-marked tests to compare")
    missing = sorted(gpu_tests - set(ran))
    assert missing == [], f"gpu tests not in the committed H100 run: {missing}"
    assert [node for node in gpu_tests if ran[node] in ("failed", "error")] == []
