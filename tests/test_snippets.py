"""Run every snippet under snippets/ and assert what it prints, FastAPI-style.

Each snippet has a check function below; a snippet without one fails `test_every_snippet_has_a_check`, so a
new snippet cannot reach the site with only "it ran" as its test.
"""

from __future__ import annotations

import platform
import re
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest

from gpukb.site.snippets import SnippetError, run_snippet
from tests.helpers import ROOT


def check_float32_fields(out: str) -> None:
    rows = {}
    for line in out.splitlines():
        match = re.match(
            r"\s*(\S+)\s+sign=(\d)\s+exponent=([01]{8})\s+mantissa=([01]{23})\s+(\w+)\s+stored=(\S+)", line
        )
        assert match, f"unexpected line {line!r}"
        rows[match.group(1)] = match.groups()[1:]
    assert list(rows) == ["42.5", "0.1", "-2", "1e-45", "3.5e+38"]
    # Every row's fields must be the bits numpy stores for that float32.
    for label, (sign, exponent, mantissa, _kind, _stored) in rows.items():
        with np.errstate(over="ignore"):  # 3.5e38 overflows to inf, as the snippet shows
            bits = int(np.array(float(label), dtype=np.float32).view(np.uint32))
        assert int(sign + exponent + mantissa, 2) == bits, label
    assert rows["42.5"] == ("0", "10000100", "01010100000000000000000", "normal", "42.5")
    assert rows["0.1"][3:] == ("normal", "0.10000000149011612")
    assert Fraction(rows["0.1"][4]) != Fraction("0.1")
    assert rows["1e-45"][3:] == ("subnormal", repr(2.0**-149))
    assert rows["3.5e+38"][3:] == ("inf", "inf")


def check_environment(out: str) -> None:
    table = dict(re.findall(r"^\| ([^|]+?) \| ([^|]+?) \|$", out, flags=re.MULTILINE))
    assert table["python"] == platform.python_version()
    assert table["numpy"] == np.__version__
    import torch

    assert table["torch"] == torch.__version__
    assert table["CUDA GPU"] == (torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none")


CHECKS: dict[str, Callable[[str], None]] = {
    "snippets/formats/float32_fields.py": check_float32_fields,
    "snippets/site/environment.py": check_environment,
}

SNIPPETS = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "snippets").rglob("*.py"))


def test_every_snippet_has_a_check() -> None:
    assert sorted(CHECKS) == SNIPPETS


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_snippet_output(snippet: str) -> None:
    CHECKS[snippet](run_snippet(ROOT / snippet))


def test_a_broken_snippet_fails(tmp_path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("from gpukb.formats.float32 import float32_fields\nfloat32_fields('42.5')\n")
    with pytest.raises(SnippetError, match="TypeError: float32_fields expects a real number"):
        run_snippet(broken)


def test_a_missing_snippet_fails(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="no snippet"):
        run_snippet(tmp_path / "nowhere.py")
