"""The one dtype-name map (``gpukb.dtypes``): short names and torch's own names give torch's dtypes; anything else is
refused with the names there are."""

from __future__ import annotations

import pytest

from gpukb import dtypes

torch = pytest.importorskip("torch")


@pytest.mark.parametrize(
    ("name", "dtype"),
    [
        ("bf16", "bfloat16"),
        ("fp16", "float16"),
        ("half", "float16"),
        ("fp32", "float32"),
        ("tf32", "float32"),
        ("float", "float32"),
        ("fp8", "float8_e4m3fn"),
        ("e4m3", "float8_e4m3fn"),
        ("e5m2", "float8_e5m2"),
        ("bfloat16", "bfloat16"),
        ("torch.float16", "float16"),
        ("int8", "int8"),
    ],
)
def test_a_name_gives_its_torch_dtype(name: str, dtype: str) -> None:
    assert dtypes.torch_name(name) == dtype
    assert dtypes.torch_dtype(name) is getattr(torch, dtype)


@pytest.mark.parametrize("name", ["bf17", "", "Float16", "nn", "float16 ", "__class__", "torch."])
def test_a_name_of_no_dtype_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match=r"no torch dtype is named .*; short names: \['bf16', 'e4m3'"):
        dtypes.torch_dtype(name)


@pytest.mark.parametrize("name", [None, 16, torch.bfloat16, b"bf16"])
def test_a_name_that_is_no_string_is_refused(name: object) -> None:
    with pytest.raises(TypeError, match="name"):
        dtypes.torch_name(name)  # type: ignore[arg-type]
