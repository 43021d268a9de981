"""A dtype's name → its torch dtype: the one map of the project (pages, records and bench scripts say ``"bf16"``,
torch says ``torch.bfloat16``).

torch is imported only when a torch dtype is asked for, so a module that names dtypes imports this one freely and
the pages that need no torch build without it.
"""

from __future__ import annotations

import re
from typing import Any

from gpukb.arguments import given, text

#: Short names the project uses → torch's names. ``tf32`` is float32 data multiplied in TF32 (a math mode, not a
#: storage type); ``fp8`` is OCP E4M3 (``float8_e4m3fn``), the FP8 the H100's tensor cores take for A and B.
SHORT_NAMES = {
    "fp32": "float32",
    "float": "float32",
    "tf32": "float32",
    "fp16": "float16",
    "half": "float16",
    "bf16": "bfloat16",
    "fp8": "float8_e4m3fn",
    "e4m3": "float8_e4m3fn",
    "e5m2": "float8_e5m2",
}

_NAME = re.compile(r"[a-z][a-z0-9_]*")


def _torch() -> Any:
    import torch

    return torch


def torch_name(name: str) -> str:
    """torch's name of a dtype given by a short name (``"bf16"`` → ``"bfloat16"``, :data:`SHORT_NAMES`) or by
    torch's own (``"float16"`` or ``"torch.float16"`` → ``"float16"``).

    Raises:
        TypeError: If ``name`` is not a string.
        ValueError: If it names no torch dtype (the message lists the short names).
    """
    name = text("name", name, max_length=40).removeprefix("torch.")
    name = SHORT_NAMES.get(name, name)
    torch = _torch()
    if not _NAME.fullmatch(name) or not isinstance(getattr(torch, name, None), torch.dtype):
        raise ValueError(f"no torch dtype is named {given(name)}; short names: {sorted(SHORT_NAMES)}")
    return name


def torch_dtype(name: str) -> Any:
    """The ``torch.dtype`` a name stands for (:func:`torch_name`): ``torch_dtype("bf16") is torch.bfloat16``.

    Raises:
        TypeError: If ``name`` is not a string.
        ValueError: If it names no torch dtype.
    """
    return getattr(_torch(), torch_name(name))
