"""The numba GPU tests skip, with the reason and the numpy range that works, where numba-cuda's CUDA target cannot
load (numpy 2.5 removed ``np.row_stack``, which numba-cuda still registers); here that numpy is imitated."""

from __future__ import annotations

import subprocess
import sys

from tests.cuda.numba_target import unavailable_reason
from tests.fuzz.budget import SUBPROCESS_TIMEOUT_S
from tests.helpers import ROOT


def test_the_target_loads_with_the_pinned_numpy() -> None:
    assert unavailable_reason() is None


def test_without_row_stack_the_reason_names_the_bug_and_the_numpy_that_works() -> None:
    code = (
        "import numpy as np\n"
        "del np.row_stack  # what numpy 2.5 did\n"
        "from tests.cuda.numba_target import unavailable_reason\n"
        "print(unavailable_reason())\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          timeout=SUBPROCESS_TIMEOUT_S)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    reason = proc.stdout.strip()
    assert "registers np.row_stack, which numpy" in reason
    assert "NVIDIA/numba-cuda#907" in reason
    assert "with numpy >=1.22,<2.5 only; the project pins numpy>=1.26,<2.4" in reason
