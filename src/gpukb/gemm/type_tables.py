"""The type tables as the pages show them: the quick answers, each vendor group, the comparison of the two
libraries, as ``(headers, rows)`` computed from :mod:`gpukb.gemm.types`; :mod:`gpukb.gemm.pages` renders them."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from gpukb.errata import Erratum
from gpukb.errata import load as load_errata
from gpukb.gemm.types import (
    INTEGER_TYPES,
    LIBRARIES,
    Combination,
    check,
    describe_type,
    rows_table,
    table,
)

Table = tuple[list[str], list[list[str]]]

#: Columns a group table always shows, even when every row has the same value.
_ALWAYS = ("A", "B", "C", "D")

#: The errata these pages correct: claims of a widely shared explanation of hipBLASLt's types (their ``claimed_in``).
NOTES_SECTION = "a widely shared explanation of hipBLASLt's type table"

#: Questions the quick-answer table answers: a label and the types (E4M3/E5M2 in each architecture's own encoding).
QUESTIONS: tuple[tuple[str, dict[str, str]], ...] = (
    ("A E4M3, B E5M2, D BF16", {"a": "e4m3", "b": "e5m2", "d": "bf16"}),
    ("A E5M2, B E5M2, D BF16", {"a": "e5m2", "b": "e5m2", "d": "bf16"}),
    ("A, B, C, D all E4M3", {"a": "e4m3", "b": "e4m3", "c": "e4m3", "d": "e4m3"}),
    ("A, B E4M3, C BF16, D E4M3", {"a": "e4m3", "b": "e4m3", "c": "bf16", "d": "e4m3"}),
    ("A, B FP16, C FP16, D FP32", {"a": "fp16", "b": "fp16", "c": "fp16", "d": "fp32"}),
    ("A, B FP16, C FP32, D FP32", {"a": "fp16", "b": "fp16", "c": "fp32", "d": "fp32"}),
    ("A, B INT8, D INT32", {"a": "int8", "b": "int8", "d": "int32"}),
    ("A, B FP32 with TF32 compute", {"a": "fp32", "b": "fp32", "d": "fp32", "compute": "tf32"}),
)

#: The columns of the quick-answer table: (label, library, architecture).
TARGETS: tuple[tuple[str, str, str], ...] = (
    ("hipBLASLt, MI300X (gfx942)", "hipblaslt", "gfx942"),
    ("hipBLASLt, MI355X (gfx950)", "hipblaslt", "gfx950"),
    ("cuBLASLt, H100 (sm_90)", "cublaslt", "sm_90"),
)


def _family(name: str) -> str:
    """E4M3 and E5M2 without their encoding (the comparison's unit); other types as they are."""
    return {"e4m3fnuz": "E4M3", "e4m3": "E4M3", "e5m2fnuz": "E5M2", "e5m2": "E5M2"}.get(name, name)


def answer(library: str, arch: str, types: dict[str, str]) -> str:
    """Whether ``library`` accepts a combination on ``arch``, in words: ``no``, or ``yes: <types>`` with the
    conditions (layout, scaling, unconfirmed fields) of its best row."""
    tab = table(library)
    native = dict(zip(("e4m3", "e5m2"), tab.arch[arch].fp8, strict=True))
    query = {k: native.get(v, v) for k, v in types.items()}
    try:
        rows = check(library, arch=arch, **query)
    except ValueError:
        return "no"
    rows.sort(key=lambda r: (r.scaling.id not in ("none", "tensor"), not r.confirmed))
    row = rows[0]
    text = f"yes: {row.types().replace(' x ', ' × ').replace(' -> ', ' → ')}"
    extras = []
    if row.layout_on(arch) == "TN":
        extras.append("A transposed, B not")
    if row.scaling.id not in ("none", "tensor"):
        extras.append(f"{row.scaling.id} scaling only")
    if not row.confirmed:
        extras.append("unconfirmed: " + ", ".join(f.replace("_", " ") for f in row.unconfirmed))
    return text + (f" ({'; '.join(extras)})" if extras else "")


def answers_table() -> Table:
    """The quick answers: each of :data:`QUESTIONS` on each of :data:`TARGETS`, from :func:`check`."""
    headers = ["combination", *(label for label, _, _ in TARGETS)]
    rows = [[label, *(answer(lib, arch, types) for _, lib, arch in TARGETS)] for label, types in QUESTIONS]
    return headers, rows


def _ab(pairs: Sequence[tuple[str, str]]) -> str:
    """A set of (A, B) pairs in words: ``(e4m3 or e5m2) × (e4m3 or e5m2)`` when they are every combination of
    their A and B types, else the pairs one by one."""
    a_types = list(dict.fromkeys(a for a, _ in pairs))
    b_types = list(dict.fromkeys(b for _, b in pairs))
    if len(set(pairs)) == len(a_types) * len(b_types):
        either = lambda types: types[0] if len(types) == 1 else f"({' or '.join(types)})"  # noqa: E731
        return f"{either(a_types)} × {either(b_types)}"
    return "; ".join(f"{a} × {b}" for a, b in pairs)


def merge_ab(
    headers: Sequence[str], cells: Sequence[Sequence[str]], only: Collection[str] | None = None
) -> tuple[list[str], list[list[str]]]:
    """Merge rows that differ only in their first two columns (A and B) into one ``A × B`` column.

    Args:
        headers: Column names; the first two are A and B.
        cells: The rows.
        only: When given, merge only rows whose A and B are both among these types; others stay on their own.

    The merged rows keep the order in which each group first appears.
    """
    merged: dict[tuple, list[tuple[str, str]]] = {}
    for cell in cells:
        alone = only is not None and not (cell[0] in only and cell[1] in only)
        key = (*((cell[0], cell[1]) if alone else ()), *cell[2:])
        merged.setdefault(key, []).append((cell[0], cell[1]))
    width = len(headers) - 2
    return ["A × B", *headers[2:]], [[_ab(pairs), *key[-width:]] for key, pairs in merged.items()]


def group_table(rows: Sequence[Combination], compact: bool) -> tuple[list[str], list[list[str]], list[str]]:
    """A group's table without the columns that are the same on every row, and those columns as
    ``"<column>: <value>"`` (for the caption): ``(headers, rows, constant)``."""
    headers, cells = rows_table(rows)
    if compact:
        headers, cells = merge_ab(headers, cells)
    always = (*_ALWAYS, "A × B")
    constant = [
        i for i, h in enumerate(headers) if h not in always and len(cells) > 1 and len({c[i] for c in cells}) == 1
    ]
    caption = [f"{headers[i]}: {cells[0][i]}" for i in constant]
    keep = [i for i in range(len(headers)) if i not in constant]
    return [headers[i] for i in keep], [[c[i] for i in keep] for c in cells], caption


def group_rows(library: str, groups: Sequence[str] | None = None) -> list[tuple[str, list[Combination]]]:
    """A library's groups (vendor tables) with their rows, in table order or in the order of ``groups``.

    Raises:
        ValueError: If a group id is unknown; the message lists them.
    """
    tab = table(library)
    wanted = list(tab.groups) if groups is None else list(groups)
    unknown = [g for g in wanted if g not in tab.groups]
    if unknown:
        raise ValueError(f"unknown group(s) {unknown} of {tab.title}; groups: {', '.join(tab.groups)}")
    return [(gid, [r for r in tab.rows if r.group == gid]) for gid in wanted]


def compute_table(library: str) -> Table:
    """The library's compute types: id, enumerator, accumulator, what A and B are rounded to."""
    tab = table(library)
    rows = [
        [ct.id, f"`{ct.enum}`", ct.accumulate, ct.input_rounding or "as stored", ct.note or "-"]
        for ct in tab.compute.values()
    ]
    return ["compute", "enumerator", "accumulates in", "A, B rounded to", "note"], rows


def arch_table() -> Table:
    """Every architecture of both tables, with the names it answers to and what its FP8 is."""
    rows = []
    for library in LIBRARIES:
        tab = table(library)
        for arch in tab.arch.values():
            fp8 = " and ".join(arch.fp8)
            rows.append([tab.title, arch.id, arch.title, ", ".join(arch.aliases) or "-", fp8])
    return ["library", "architecture", "what it is", "also accepted as", "E4M3 and E5M2 there"], rows


def names_table() -> Table:
    """The canonical type names the tables use, with the format and the HIP and CUDA names behind each."""
    names: dict[str, None] = {}
    for library in LIBRARIES:
        for name in table(library).type_names():
            names.setdefault(name, None)
    order = [n for n in names if n not in INTEGER_TYPES] + [n for n in names if n in INTEGER_TYPES]
    rows = []
    for name in order:
        if name in INTEGER_TYPES:
            aliases = [n for n in INTEGER_TYPES[name] if n.startswith(("HIP_", "CUDA_"))]
            rows.append([name, f"{name[3:]}-bit signed integer", ", ".join(f"`{a}`" for a in aliases)])
        else:
            title, _, lib_names = describe_type(name).partition("; ")
            rows.append([name, title, ", ".join(f"`{n}`" for n in lib_names.split(", ") if n) or "-"])
    return ["name", "type", "HIP / CUDA name"], rows


def _comparison_key(row: Combination) -> tuple:
    return (_family(row.a), _family(row.b), _family(row.c), _family(row.d), row.compute.label, row.scale)


def _where(rows: Sequence[Combination]) -> str:
    """Where a library has a combination: architectures, with FNUZ, a layout rule or missing sources noted."""
    parts: list[str] = []
    for row in rows:
        marks = ["FNUZ"] if any(t.endswith("fnuz") for t in (row.a, row.b, row.c, row.d)) else []
        if row.layout == "TN":
            marks.append(row.layout_on())
        if not row.confirmed:
            marks.append("partly unconfirmed")
        text = ", ".join(row.arch) + (f" ({'; '.join(marks)})" if marks else "")
        if text not in parts:
            parts.append(text)
    return "; ".join(parts) or "-"


def comparison() -> dict[tuple, dict[str, list[Combination]]]:
    """Combinations without block scaling, keyed by (A, B, C, D, arithmetic, scale) with E4M3/E5M2 taken
    without their encoding, and the rows of each library that have them."""
    out: dict[tuple, dict[str, list[Combination]]] = {}
    for library in LIBRARIES:
        for row in table(library).rows:
            if row.scaling.id in ("none", "tensor"):
                out.setdefault(_comparison_key(row), {lib: [] for lib in LIBRARIES})[library].append(row)
    return out


def comparison_counts() -> tuple[int, int, dict[str, int]]:
    """How many combinations without block scaling there are, how many both libraries have, and how many only
    one has (by the library's title)."""
    pairs = comparison()
    both = sum(all(libs.values()) for libs in pairs.values())
    only = {}
    for lib in LIBRARIES:
        alone = [bool(libs[lib]) and not any(libs[o] for o in LIBRARIES if o != lib) for libs in pairs.values()]
        only[table(lib).title] = sum(alone)
    return len(pairs), both, only


def comparison_table() -> Table:
    """hipBLASLt and cuBLASLt side by side: every combination without block scaling, with where each library has
    it (E4M3 and E5M2 rows that differ only in A and B merged)."""
    pairs = comparison()
    titles = [table(lib).title for lib in LIBRARIES]
    rows = [[*key, *(_where(libs[lib]) for lib in LIBRARIES)] for key, libs in pairs.items()]
    return merge_ab(["A", "B", "C", "D", "arithmetic", "scale", *titles], rows, only=("E4M3", "E5M2"))


def notes_errata() -> list[Erratum]:
    """The errata of a widely shared explanation of hipBLASLt's types (:data:`NOTES_SECTION`), in file order."""
    return [e for e in load_errata() if e.topic == "gemm" and e.claimed_in.startswith(NOTES_SECTION)]
