"""The cuBLASLt snippet: its call sequence, a syntax check against real headers, a compile, and a GPU run.

The GPU run goes through the shared runner (``gpukb.site.snippets.run_snippet``, which compiles the file with the
``nvcc`` line its header shows the reader); :func:`check_cublaslt_matmul` asserts what it prints and is this
snippet's entry in ``tests/gemm/test_snippets.py``'s ``CHECKS``. The static checks here need no GPU.

The CUDA runtime and cuBLAS headers are not part of the test extra: the only registry source for ``cublasLt.h``
is the ``nvidia-cublas`` wheel, 444 MB (13.10.0.20, measured 2026-11-22) for 0.6 MB of headers. The
compile tests look for the headers in ``GPUKB_CUDA_INCLUDE`` (directories separated by ``os.pathsep``), in
``/usr/local/cuda/include`` and in installed ``nvidia-*`` wheels, and skip with the reason when they are absent.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpukb.site.snippets import compile_cuda, find_nvcc, nvcc_flags, run_snippet
from tests.helpers import ROOT

SNIPPET = ROOT / "snippets" / "gemm" / "cublaslt_matmul.cu"
HEADERS = ("cuda_runtime_api.h", "cublasLt.h")

#: The parameters of hipblasLtMatmul, in order, as hipblaslt.h declares them
#: (ROCm/hipBLASLt library/include/hipblaslt.h @ 007c1b57d117047ca837a07196edc373655bcfe4); cublasLtMatmul in
#: cublasLt.h has the same sixteen.
MATMUL_PARAMETERS = (
    "handle",
    "matmulDesc",
    "alpha",
    "A",
    "Adesc",
    "B",
    "Bdesc",
    "beta",
    "C",
    "Cdesc",
    "D",
    "Ddesc",
    "algo",
    "workspace",
    "workspaceSizeInBytes",
    "stream",
)

#: The source notes' hipBLASLt example (000_f9967bbdf790133a.txt, "3. Using hipBLASLt"), comments dropped.
NOTES_HIPBLASLT = """
hipblasLtHandle_t handle;
hipblasLtCreate(&handle);
hipblasLtMatrixLayout_t matA, matB, matC;
hipblasLtMatrixLayoutCreate(&matA, HIPBLAS_LT_R_16F, M, K, M);
hipblasLtMatrixLayoutCreate(&matB, HIPBLAS_LT_R_16F, K, N, K);
hipblasLtMatrixLayoutCreate(&matC, HIPBLAS_LT_R_16F, M, N, M);
hipblasLtMatmul(handle, matmulDesc, &alpha, A, matA, B, matB, &beta, C, matC, workspace, streams);
"""


def calls(source: str, name: str) -> list[list[str]]:
    """The argument lists of every call of ``name`` in C source, split at top-level commas."""
    found = []
    for match in re.finditer(rf"\b{re.escape(name)}\s*\(", source):
        depth, start, args = 1, match.end(), []
        i = start
        while depth:
            ch = source[i]
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            elif ch == "," and depth == 1:
                args.append(source[start:i].strip())
                start = i + 1
            i += 1
        args.append(source[start : i - 1].strip())
        found.append([a for a in args if a])
    return found


def _code() -> str:
    return re.sub(r"//[^\n]*", "", SNIPPET.read_text(encoding="utf-8"))


def test_snippet_follows_the_cublaslt_sequence() -> None:
    code = _code()
    order = [
        "cublasLtCreate",
        "cublasLtMatmulDescCreate",
        "cublasLtMatrixLayoutCreate",
        "cublasLtMatmulPreferenceCreate",
        "cublasLtMatmulPreferenceSetAttribute",
        "cublasLtMatmulAlgoGetHeuristic",
        "cublasLtMatmul",
    ]
    positions = [re.search(rf"\b{name}\s*\(", code).start() for name in order]
    assert positions == sorted(positions)
    assert calls(code, "cublasLtMatmulDescCreate") == [["&op", "CUBLAS_COMPUTE_32F", "CUDA_R_32F"]]
    layouts = calls(code, "cublasLtMatrixLayoutCreate")
    assert [args[1] for args in layouts] == ["CUDA_R_16BF"] * 3
    assert calls(code, "cublasLtMatmulPreferenceSetAttribute")[0][1] == "CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES"
    assert len(calls(code, "cublasLtMatmulAlgoGetHeuristic")[0]) == 10
    (matmul,) = calls(code, "cublasLtMatmul")
    assert len(matmul) == len(MATMUL_PARAMETERS)
    assert matmul[12] == "&heuristic.algo"  # the algorithm the heuristic chose
    assert matmul[14] == "heuristic.workspaceSize"


def test_every_library_call_is_checked() -> None:
    code = _code()
    for name in re.findall(r"\b((?:cublasLt|cuda)\w+)\s*\(", code):
        if name in ("cublasLtGetStatusString", "cublasLtGetVersion", "cudaGetErrorString"):
            continue
        for match in re.finditer(rf"\b{name}\s*\(", code):
            line = code[code.rfind("\n", 0, match.start()) + 1 : match.start()]
            assert "CHECK_CUDA(" in line or "CHECK_CUBLAS(" in line, f"{name} is called unchecked: {line!r}"


def test_claim_hipblaslt_call_list_is_incomplete() -> None:
    """Decides the erratum on the notes' hipBLASLt snippet."""
    (matmul,) = calls(NOTES_HIPBLASLT, "hipblasLtMatmul")
    assert len(matmul) == 12 != len(MATMUL_PARAMETERS)  # no D, Ddesc, algo or workspace size
    assert "hipblasLtMatmulDescCreate" not in NOTES_HIPBLASLT  # matmulDesc is used but never created
    assert "hipblasLtMatmulAlgoGetHeuristic" not in NOTES_HIPBLASLT
    # hipblasLtMatrixLayoutCreate takes a hipDataType (HIP_R_16F); HIPBLAS_LT_R_16F is no enumerator of it
    # (the pre-ROCm-6 hipblasltDatatype_t spelled its half type HIPBLASLT_R_16F).
    assert {args[1] for args in calls(NOTES_HIPBLASLT, "hipblasLtMatrixLayoutCreate")} == {"HIPBLAS_LT_R_16F"}
    # The cuBLASLt snippet, which compiled and ran on the H100, makes the calls the notes leave out.
    code = _code()
    for name in ("cublasLtMatmulDescCreate", "cublasLtMatmulAlgoGetHeuristic"):
        assert calls(code, name)
    assert len(calls(code, "cublasLtMatmul")[0]) == len(MATMUL_PARAMETERS)


def include_dirs() -> tuple[list[str], list[str]]:
    """Directories holding the headers, and the headers not found in any of them."""
    candidates = [d for d in os.environ.get("GPUKB_CUDA_INCLUDE", "").split(os.pathsep) if d]
    candidates.append("/usr/local/cuda/include")
    for entry in map(Path, sys.path):
        for sub in ("nvidia/cu13/include", "nvidia/cublas/include", "nvidia/cuda_runtime/include"):
            if (entry / sub).is_dir():
                candidates.append(str(entry / sub))
    dirs, missing = [], []
    for header in HEADERS:
        where = next((d for d in candidates if (Path(d) / header).is_file()), None)
        if where is None:
            missing.append(header)
        elif where not in dirs:
            dirs.append(where)
    return dirs, missing


def _need_headers() -> list[str]:
    dirs, missing = include_dirs()
    if missing:
        pytest.skip(
            f"no {', '.join(missing)} here: set GPUKB_CUDA_INCLUDE to the CUDA toolkit's and cuBLAS's include "
            "directories, or install the nvidia-cublas wheel (444 MB) and nvidia-cuda-runtime wheel"
        )
    return dirs


def test_snippet_compiles_as_host_cpp() -> None:
    """The snippet is host code only, so g++ checks it against the real headers without nvcc."""
    dirs = _need_headers()
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no g++ or c++ on PATH")
    cmd = [compiler, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-x", "c++"]
    proc = subprocess.run([*cmd, *(f"-I{d}" for d in dirs), str(SNIPPET)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_snippet_compiles_with_nvcc(tmp_path: Path) -> None:
    """Compile only (``-c``): no GPU and no cuBLAS library needed, the headers are."""
    dirs = _need_headers()
    if find_nvcc() is None:
        pytest.skip("no nvcc (looked at $NVCC, PATH, $CUDA_HOME/bin and /usr/local/cuda/bin)")
    obj = tmp_path / "cublaslt_matmul.o"
    compile_cuda(SNIPPET, obj, flags=[*nvcc_flags(SNIPPET), *(f"-I{d}" for d in dirs)], compile_only=True)
    assert obj.stat().st_size > 0


def test_the_runner_builds_with_the_line_the_reader_sees() -> None:
    header = SNIPPET.read_text(encoding="utf-8").split("// --8<-- [start:example]")[0]
    assert "//   nvcc -O2 -std=c++17 snippets/gemm/cublaslt_matmul.cu -o cublaslt_matmul -lcublasLt -lcublas" in header
    assert nvcc_flags(SNIPPET) == ["-O2", "-std=c++17", "-lcublasLt", "-lcublas"]


_RUN = re.compile(
    r"cuBLASLt bf16 GEMM: D = A\^T B, M=(?P<m>\d+) N=(?P<n>\d+) K=(?P<k>\d+), FP32 accumulation\n"
    r"cublasLt version: (?P<version>\d+)\n"
    r"heuristic: (?P<found>\d+) algorithm returned, workspace (?P<ws>\d+) of (?P<ws_max>\d+) bytes\n"
    r"checked (?P<checked>\d+) of (?P<total>\d+) elements against the FP64 product of the bf16 inputs\n"
    r"max abs error (?P<max_abs>\S+), largest error / bound (?P<worst>\S+), elements over the bound: (?P<over>\d+)\n"
    r"median (?P<ms>\S+) ms over (?P<calls>\d+) calls \(CUDA events\): (?P<tflops>\S+) TFLOP/s\n"
    r"PASS\n$"
)


def check_cublaslt_matmul(out: str, m: int = 768, n: int = 512, k: int = 1024, calls: int = 20) -> None:
    """What the snippet prints: its sizes, a chosen algorithm, every checked element within the bound, a timing."""
    match = _RUN.match(out)
    assert match, f"unexpected output:\n{out}"
    got = {key: float(value) for key, value in match.groupdict().items()}
    assert (got["m"], got["n"], got["k"], got["calls"]) == (m, n, k, calls)
    assert got["version"] >= 110000  # cublasLtGetVersion(): major * 10000 + minor * 100 + patch
    assert got["found"] == 1
    assert got["ws"] <= got["ws_max"] == 32 * 1024 * 1024
    total = m * n
    assert got["total"] == total
    step = max(1, total // 65536)  # the snippet checks every step-th element
    assert got["checked"] == -(-total // step)
    assert got["over"] == 0
    assert 0 < got["worst"] <= 1
    assert got["max_abs"] > 0
    assert got["ms"] > 0
    assert got["tflops"] == pytest.approx(2 * m * n * k / (got["ms"] * 1e-3) / 1e12, rel=0.02, abs=0.1)


def test_the_check_reads_the_recorded_h100_run() -> None:
    """The check accepts what the snippet printed on the H100 (recorded by bench/gemm_ground_up.py)."""
    recorded = (
        "cuBLASLt bf16 GEMM: D = A^T B, M=768 N=512 K=1024, FP32 accumulation\n"
        "cublasLt version: 130100\n"
        "heuristic: 1 algorithm returned, workspace 0 of 33554432 bytes\n"
        "checked 65536 of 393216 elements against the FP64 product of the bf16 inputs\n"
        "max abs error 1.249e-01, largest error / bound 0.773, elements over the bound: 0\n"
        "median 0.0067 ms over 20 calls (CUDA events): 119.8 TFLOP/s\n"
        "PASS\n"
    )
    check_cublaslt_matmul(recorded)
    with pytest.raises(AssertionError):
        check_cublaslt_matmul(recorded.replace("bound: 0", "bound: 3"))


@pytest.mark.gpu
@pytest.mark.parametrize("size", [("256", "128", "4096", "3"), ("48", "80", "16", "3")])
def test_snippet_runs_at_other_sizes(size: tuple[str, ...]) -> None:
    """Shapes nobody tuned for, through the shared runner (the default size runs in tests/gemm/test_snippets.py)."""
    m, n, k, calls = map(int, size)
    check_cublaslt_matmul(run_snippet(SNIPPET, args=size), m, n, k, calls)
