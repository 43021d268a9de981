"""Which type combinations a GEMM library accepts: the hipBLASLt and cuBLASLt tables as data, and a checker.

The tables live in ``gpukb/data/gemm/<library>.toml``, one row per combination of the types of A, B, C and D, the
compute type, the scale type (of alpha and beta) and the bias types, with the architectures it applies to and the
vendor document it was checked against. :func:`check` answers "does this library accept this combination?" with the
matching rows, or with a ``ValueError`` that names the nearest combinations it does accept::

    >>> [(r.a, r.b, r.d, r.arch) for r in check("hipblaslt", a="fp8", b="bf8", d="bf16", arch="MI300X")]
    [('e4m3fnuz', 'e5m2fnuz', 'bf16', ('gfx942',))]

Type names resolve through :func:`gpukb.formats.spec.get_format` (``e4m3``, ``HIP_R_8F_E4M3_FNUZ``,
``float8_e5m2``, ...), through :data:`INTEGER_TYPES` for ``int8`` and ``int32``, and through the library's own words
(hipBLASLt's ``fp8`` and ``bf8``, which mean FNUZ E4M3/E5M2 on gfx942 and OCP E4M3/E5M2 on gfx950 and gfx12; cuBLAS's
``fp8``, which means either E4M3 or E5M2). A name that stands for several types matches all of them, narrowed by
``arch`` when one is given; every row names the concrete types, so the answer says which encoding you get.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, ValidationInfo, field_validator

from gpukb.arguments import given, positive_int
from gpukb.data import data_text
from gpukb.formats.spec import get_format
from gpukb.schema import StrictModel, parse_toml, validate_document, validate_entries

#: The libraries with a type table, by the name :func:`table` takes.
LIBRARIES = ("hipblaslt", "cublaslt")

#: Integer element types, which are not floating-point formats: canonical name -> the names libraries use.
INTEGER_TYPES: dict[str, tuple[str, ...]] = {
    "int8": ("int8", "int8_t", "HIP_R_8I", "CUDA_R_8I", "torch.int8", "i8"),
    "int32": ("int32", "int32_t", "HIP_R_32I", "CUDA_R_32I", "torch.int32", "i32"),
}

#: The fields of a combination a query may constrain, in the order messages name them.
QUERY_FIELDS = ("a", "b", "c", "d", "compute", "scale", "bias", "arch")

#: ``arch`` entry meaning that the sources state no architecture restriction.
ANY_ARCH = "any"

_MATRICES = ("a", "b", "c", "d")


@dataclass(frozen=True)
class Source:
    """A document a row was checked against.

    Attributes:
        id: Key in the table's ``[sources]``.
        title: What it is and what it says that matters here.
        url: Where to read it.
        path: ``owner/repo:path`` in a repository, when it is a repository file.
        commit: The commit that was read, when it is a repository file.
        version: The library version it documents.
        checked: The date it was checked (ISO format).
    """

    id: str
    title: str
    url: str
    path: str
    commit: str
    version: str
    checked: str

    def citation(self) -> str:
        """One line: title, version, where, when checked."""
        where = f"{self.path}@{self.commit[:12]}" if self.path and self.commit else self.url
        return f"{self.title}. {self.version}. {where} (checked {self.checked})"


@dataclass(frozen=True)
class ComputeType:
    """A compute type of the library (``cublasComputeType_t`` / ``hipblasComputeType_t``).

    Attributes:
        id: Short name used in the table, e.g. ``"fp32"`` or ``"xf32"``.
        enum: The library's enumerator.
        accumulate: The type products are summed in.
        input_rounding: The format A and B are rounded to before they are multiplied, or ``""``.
        aliases: Other names :meth:`TypeTable.resolve_compute` accepts.
        note: What else the source says about it.
        title: How to name what it does, when accumulate and input_rounding do not say it (emulation).
    """

    id: str
    enum: str
    accumulate: str
    input_rounding: str
    aliases: tuple[str, ...] = ()
    note: str = ""
    title: str = ""

    @property
    def label(self) -> str:
        """What the arithmetic is, comparable across libraries: ``fp32``, ``fp32 (tf32 inputs)``."""
        if self.title:
            return self.title
        return f"{self.accumulate} ({self.input_rounding} inputs)" if self.input_rounding else self.accumulate


@dataclass(frozen=True)
class Arch:
    """A GPU architecture a row may be restricted to.

    Attributes:
        id: ``gfx942``, ``sm_90``, ...
        title: Architecture and products.
        aliases: Product or family names that mean it (``MI300X``, ``H100``).
        fp8: The E4M3 and E5M2 types the library's FP8 means there (FNUZ on gfx942, OCP elsewhere).
        sources: Where the names were checked.
    """

    id: str
    title: str
    aliases: tuple[str, ...]
    fp8: tuple[str, ...]
    sources: tuple[Source, ...]


@dataclass(frozen=True)
class Scaling:
    """How scale factors apply to the inputs.

    Attributes:
        id: ``none``, ``tensor``, ``mx`` or ``nvfp4``.
        title: What the mode is, with the library's enumerator.
        block: Elements sharing one scale (0 for no block scaling).
        scale_format: Format of the block scales (``e8m0``, ``e4m3``), or ``""``.
    """

    id: str
    title: str
    block: int = 0
    scale_format: str = ""


@dataclass(frozen=True)
class Combination:
    """One combination of types a library accepts: a row of its table.

    Attributes:
        library: ``hipblaslt`` or ``cublaslt``.
        group: Id of the vendor table the row comes from.
        a: Type of A (canonical gpukb name).
        b: Type of B.
        c: Type of C.
        d: Type of D.
        compute: Compute type.
        scale: Type of alpha and beta.
        bias: Bias vector types accepted (empty: none documented, or epilogues unsupported).
        default_bias: Bias type used when none is set, or ``""``.
        arch: Architectures it applies to (``("any",)``: no restriction stated).
        scaling: Scaling mode of A and B.
        scaled: Matrices that take scale factors.
        layout: Transposes required (``"TN"``: A transposed, B not) or ``"any"``.
        layout_arch: Architectures where ``layout`` applies (empty: all of ``arch``).
        constraints: Other conditions (sizes, alignment).
        confirmed: Whether the sources state every field.
        unconfirmed: The fields they do not state.
        note: What the sources add, or what was assumed.
        sources: The documents checked.
    """

    library: str
    group: str
    a: str
    b: str
    c: str
    d: str
    compute: ComputeType
    scale: str
    bias: tuple[str, ...]
    default_bias: str
    arch: tuple[str, ...]
    scaling: Scaling
    scaled: tuple[str, ...]
    layout: str
    layout_arch: tuple[str, ...]
    constraints: str
    confirmed: bool
    unconfirmed: tuple[str, ...]
    note: str
    sources: tuple[Source, ...] = field(compare=False)

    @property
    def key(self) -> tuple:
        """What makes two rows the same combination (bias and notes aside)."""
        return (self.a, self.b, self.c, self.d, self.compute.id, self.scale, self.arch, self.scaling.id)

    def value(self, name: str) -> object:
        """A field by the name queries use (``compute`` gives the compute type's id)."""
        return self.compute.id if name == "compute" else getattr(self, name)

    def applies_to(self, arch: str) -> bool:
        """Whether the row holds on ``arch`` (a canonical architecture id)."""
        return ANY_ARCH in self.arch or arch in self.arch

    def layout_on(self, arch: str | None = None) -> str:
        """The transposes required on ``arch``; without one, the rule with the architectures it holds on."""
        if self.layout == "any" or not self.layout_arch:
            return self.layout
        if arch is None:
            return f"{self.layout} on {', '.join(self.layout_arch)}"
        return self.layout if arch in self.layout_arch else "any"

    def types(self) -> str:
        """``e4m3fnuz x e5m2fnuz -> bf16`` (with C when it differs from D)."""
        out = self.d if self.c == self.d else f"{self.d} (C {self.c})"
        return f"{self.a} x {self.b} -> {out}"


@dataclass(frozen=True)
class Refusal:
    """A combination the sources say, or show, the library does not accept."""

    a: str
    b: str
    reason: str
    sources: tuple[Source, ...]


@dataclass(frozen=True)
class TypeTable:
    """A library's table: its rows and the vocabulary they use.

    Attributes:
        library: ``hipblaslt`` or ``cublaslt``.
        title: The library's name as written.
        function: The matmul function the table describes.
        checked: Date the table was checked.
        sources: The documents, by id.
        compute: Compute types, by id.
        arch: Architectures, by id.
        scaling: Scaling modes, by id.
        aliases: The library's own type names (lower case) -> canonical types.
        groups: Group id -> (title, compact, note).
        rows: Every combination.
        refusals: Combinations it refuses.
    """

    library: str
    title: str
    function: str
    checked: str
    sources: dict[str, Source]
    compute: dict[str, ComputeType]
    arch: dict[str, Arch]
    scaling: dict[str, Scaling]
    aliases: dict[str, tuple[str, ...]]
    groups: dict[str, tuple[str, bool, str]]
    rows: tuple[Combination, ...]
    refusals: tuple[Refusal, ...]

    def type_names(self) -> list[str]:
        """The canonical types the table uses, in order of first appearance."""
        seen: dict[str, None] = {}
        for row in self.rows:
            for name in (row.a, row.b, row.c, row.d, row.scale, *row.bias):
                seen.setdefault(name, None)
        return list(seen)

    def resolve_type(self, name: str, arch: str | None = None) -> tuple[str, ...]:
        """The canonical types a name stands for in this library, narrowed to ``arch``'s FP8 when given.

        Raises:
            TypeError: If ``name`` is not a string.
            ValueError: If no type has that name; the message lists the names the table uses.
        """
        if not isinstance(name, str):
            raise TypeError(f"a type is named by a string, got {type(name).__name__}")
        own = self.aliases.get(name.strip().lower())
        if own is not None:
            if arch is None:
                return own
            native = set(self.arch[arch].fp8) if arch in self.arch else set()
            narrowed = tuple(t for t in own if t in native or t not in _FP8_TYPES)
            return narrowed or own
        try:
            return (canonical_type(name),)
        except ValueError:
            raise ValueError(
                f"unknown type {name!r} for {self.title}; its table uses {', '.join(self.type_names())}; "
                f"its own names: {', '.join(sorted(self.aliases))}; library names such as HIP_R_8F_E4M3_FNUZ, "
                "CUDA_R_16BF or float8_e4m3fn work too"
            ) from None

    def resolve_compute(self, name: str) -> str:
        """The id of a compute type named by id, enumerator or alias (case-insensitive).

        Raises:
            ValueError: If no compute type has that name; the message lists them.
        """
        wanted = str(name).strip().lower()
        for ct in self.compute.values():
            if wanted in {ct.id.lower(), ct.enum.lower(), *(a.lower() for a in ct.aliases)}:
                return ct.id
        allowed = ", ".join(f"{ct.id} ({ct.enum})" for ct in self.compute.values())
        raise ValueError(f"unknown compute type {name!r} for {self.title}; compute types: {allowed}")

    def resolve_arch(self, name: str) -> str:
        """The id of an architecture named by id or product (``MI300X``, ``H100``), case-insensitive.

        Raises:
            ValueError: If the library's table knows no such architecture; the message lists them.
        """
        wanted = str(name).strip().lower().replace(" ", "")
        for arch in self.arch.values():
            if wanted in {arch.id.lower(), *(a.lower() for a in arch.aliases)}:
                return arch.id
        other = [lib for lib in LIBRARIES if lib != self.library and _knows_arch(lib, wanted)]
        hint = f" ({name} is an architecture of {table(other[0]).title}'s table)" if other else ""
        allowed = "; ".join(f"{a.id} ({', '.join(a.aliases) or a.title})" for a in self.arch.values())
        raise ValueError(f"unknown architecture {name!r} for {self.title}{hint}; architectures: {allowed}")

    def meanings(self, name: str, arch: str | None = None) -> list[str]:
        """What a library name means (on ``arch``, an architecture id, when given), one line per type, with where
        each type appears in the table."""
        out = []
        for canonical in self.resolve_type(name, arch):
            used = {a for row in self.rows if canonical in (row.a, row.b, row.c, row.d) for a in row.arch}
            archs = [a for a in (ANY_ARCH, *self.arch) if a in used]
            fmt = describe_type(canonical)
            out.append(f"{name} = {canonical} ({fmt}) on {', '.join(archs) or 'no architecture in the table'}")
        return out


_FP8_TYPES = {"e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz"}


def canonical_type(name: str) -> str:
    """The canonical gpukb name of an element type: a float format's name, or ``int8``/``int32``.

    Raises:
        TypeError: If ``name`` is not a string.
        ValueError: If neither gpukb.formats nor :data:`INTEGER_TYPES` knows it; the message lists both.
    """
    if not isinstance(name, str):
        raise TypeError(f"a type is named by a string, got {type(name).__name__}")
    wanted = name.strip().lower()
    for canonical, names in INTEGER_TYPES.items():
        if wanted in (n.lower() for n in names):
            return canonical
    try:
        return get_format(wanted).name
    except ValueError as err:
        raise ValueError(f"{err}; integer types: {', '.join(INTEGER_TYPES)}") from None


def describe_type(name: str) -> str:
    """A canonical type in words with its HIP and CUDA names: ``FP8 E4M3 (OCP, ...); HIP_R_8F_E4M3, CUDA_R_8F_E4M3``."""
    if name in INTEGER_TYPES:
        return f"{name}, integer"
    fmt = get_format(name)
    names = ", ".join(v for k, v in fmt.library_names.items() if k in ("hip", "cuda"))
    return f"{fmt.title}{'; ' + names if names else ''}"


def _knows_arch(library: str, wanted: str) -> bool:
    return any(wanted in {a.id.lower(), *(x.lower() for x in a.aliases)} for a in table(library).arch.values())


def _library(name: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"a library is named by a string, got {type(name).__name__}")
    lib = name.strip().lower()
    if lib not in LIBRARIES:
        raise ValueError(f"unknown library {name!r}; libraries with a type table: {', '.join(LIBRARIES)}")
    return lib


# --- the data file: its models, and the table built from them ------------------------------------------------


def _one_or_more(value: object) -> object:
    """A single name where a list is allowed becomes a list of one (``""`` an empty list)."""
    if isinstance(value, str):
        return [value] if value else []
    return value


#: One name or a list of names (``arch = "any"`` or ``arch = ["sm_90", "sm_100"]``).
Names = Annotated[list[str], BeforeValidator(_one_or_more)]

#: Fields a row may leave out; its group's value, or this default, applies.
_ROW_DEFAULTS = {"default_bias": "", "layout_arch": [], "constraints": "", "confirmed": True, "unconfirmed": [],
                 "note": ""}  # fmt: skip


class SourceEntry(StrictModel):
    """``[sources.<id>]``: a document rows cite."""

    title: str
    url: str
    path: str = ""
    commit: str = ""
    version: str


class ComputeEntry(StrictModel):
    """``[compute.<id>]``: a compute type (see :class:`ComputeType`); ``label`` becomes its title."""

    enum: str
    accumulate: str
    input_rounding: str
    aliases: list[str] = Field(default_factory=list)
    note: str = ""
    label: str = ""


class ArchEntry(StrictModel):
    """``[arch.<id>]``: an architecture (see :class:`Arch`), citing source ids."""

    title: str
    aliases: list[str]
    fp8: list[str]
    source: Names


class ScalingEntry(StrictModel):
    """``[scaling.<id>]``: a scaling mode (see :class:`Scaling`)."""

    title: str
    block: int = Field(default=0, ge=0)
    scale_format: str = ""


class RowFields(StrictModel):
    """The fields a row of ``rows = [...]`` may set, and its group may set for all its rows (all optional here;
    :class:`RowEntry` says which a row must end up with). ``a`` and ``b`` may list several types (every pair is a
    row), or ``ab`` may list the pairs."""

    a: Names | None = None
    b: Names | None = None
    ab: list[Annotated[list[str], Field(min_length=2, max_length=2)]] | None = None
    c: str | None = None
    d: str | None = None
    compute: str | None = None
    scale: str | None = None
    bias: Names | None = None
    default_bias: str | None = None
    arch: Names | None = None
    scaling: str | None = None
    scaled: Names | None = None
    layout: Literal["any", "TN"] | None = None
    layout_arch: Names | None = None
    constraints: str | None = None
    confirmed: bool | None = None
    unconfirmed: list[str] | None = None
    note: str | None = None
    source: Names | None = None


class GroupEntry(RowFields):
    """``[[group]]``: one vendor table. Its row fields are the defaults of its rows."""

    id: str
    title: str
    compact: bool = False
    rows: list[RowFields] = Field(min_length=1)


class RowEntry(StrictModel):
    """One combination after its group's defaults are applied and ``a``/``b``/``ab`` expanded."""

    a: str
    b: str
    c: str
    d: str
    compute: str
    scale: str
    bias: list[str]
    default_bias: str
    arch: list[str] = Field(min_length=1)
    scaling: str
    scaled: list[Literal["a", "b", "c", "d"]]
    layout: Literal["any", "TN"]
    layout_arch: list[str]
    constraints: str
    confirmed: bool
    unconfirmed: list[Literal["a", "b", "c", "d", "compute", "scale", "bias", "default_bias", "arch", "scaling",
                              "scaled", "layout"]]  # fmt: skip
    note: str
    source: list[str] = Field(min_length=1)

    @field_validator("default_bias")
    @classmethod
    def _default_among_bias(cls, value: str, info: ValidationInfo) -> str:
        bias = info.data.get("bias", [])
        if value and value not in bias:
            raise ValueError(f"default bias {value!r} is not among the bias types {bias}")
        return value

    @field_validator("unconfirmed")
    @classmethod
    def _unconfirmed_iff_not_confirmed(cls, value: list[str], info: ValidationInfo) -> list[str]:
        if info.data.get("confirmed", True) == bool(value):
            raise ValueError("confirmed = false needs `unconfirmed` fields and a note, and only then")
        return value

    @field_validator("note")
    @classmethod
    def _unconfirmed_needs_a_note(cls, value: str, info: ValidationInfo) -> str:
        if info.data.get("confirmed") is False and not value:
            raise ValueError("an unconfirmed row needs a note saying what was assumed")
        return value


class RefusalEntry(StrictModel):
    """``[[refused]]``: a pair of A and B types the sources say the library refuses."""

    a: str
    b: str
    reason: str
    source: Names


class TableFile(StrictModel):
    """A ``gpukb/data/gemm/<library>.toml`` file."""

    library: Literal["hipblaslt", "cublaslt"]
    title: str
    function: str
    checked: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    sources: dict[str, SourceEntry]
    compute: dict[str, ComputeEntry]
    arch: dict[str, ArchEntry]
    scaling: dict[str, ScalingEntry]
    aliases: dict[str, Names]
    group: list[GroupEntry]
    refused: list[RefusalEntry] = Field(default_factory=list)


#: The top-level keys of a type table file.
FILE_KEYS = tuple(TableFile.model_fields)


def _resolve(name: str, where: str, field: str) -> str:
    """The canonical name of a type; an unknown one is a ``ValueError`` naming where and the field."""
    try:
        return canonical_type(name)
    except ValueError as err:
        raise ValueError(f"{where}: {field}: {err}") from None


def _canonical(name: str, where: str, field: str) -> str:
    """``name`` if it is a canonical type name; else a ``ValueError`` naming where, the field and the fix."""
    canonical = _resolve(name, where, field)
    if canonical != name:
        raise ValueError(f"{where}: {field}: {field} = {name!r} is not a canonical name (use {canonical!r})")
    return name


def _expand(group: GroupEntry, raw: RowFields, where: str) -> list[dict]:
    """A row with its group's defaults, one dict per (a, b) pair."""
    spec = {**_ROW_DEFAULTS, **group.model_dump(exclude_none=True, exclude={"id", "title", "compact", "rows"})}
    own = raw.model_dump(exclude_none=True)
    if "ab" in own or "a" in own or "b" in own:  # a row's own A and B replace the group's, in either form
        for key in ("a", "b", "ab"):
            spec.pop(key, None)
    spec.update(own)
    if "ab" in spec:
        if "a" in spec or "b" in spec:
            raise ValueError(f"{where}: ab: give either ab pairs or a and b, not both")
        pairs = [tuple(p) for p in spec.pop("ab")]
    else:
        missing = [k for k in ("a", "b") if k not in spec]
        if missing:
            raise ValueError(f"{where}: {missing[0]}: Field required (give a and b, or ab pairs)")
        pairs = list(itertools.product(spec.pop("a"), spec.pop("b")))
    return [{**spec, "a": a, "b": b} for a, b in pairs]


def parse(data: object, file: str | None = None) -> TypeTable:
    """Validate a parsed type table file and build the table.

    Args:
        data: The parsed TOML.
        file: The file's name, for messages (default: ``<library>.toml``).

    Raises:
        ValueError: Naming the file, the group and row, and the field: an unknown or missing key, a value of the
            wrong type, an unknown type, compute type, architecture, scaling mode or source, a name that is not
            canonical, a bias default outside the bias list, an unconfirmed row without the fields it does not
            confirm, or two rows for the same combination.
    """
    if file is None:
        library = data.get("library") if isinstance(data, dict) else None
        file = f"{library}.toml" if isinstance(library, str) else "type table"
    if isinstance(data, dict):
        unknown = sorted(set(data) - set(FILE_KEYS))
        if unknown:
            raise ValueError(f"{file}: unknown top-level keys {unknown}; this file holds {list(FILE_KEYS)}")
        validate_entries(GroupEntry, data.get("group"), file, "group", key="id")  # messages that name the group
    doc = validate_document(TableFile, data, file)
    library = doc.library
    sources = {
        sid: Source(sid, s.title, s.url, s.path, s.commit, s.version, doc.checked) for sid, s in doc.sources.items()
    }

    def cite(ids: Sequence[str], where: str) -> tuple[Source, ...]:
        for sid in ids:
            if sid not in sources:
                raise ValueError(f"{where}: source: source {sid!r} is not one of {sorted(sources)}")
        return tuple(sources[sid] for sid in ids)

    compute = {
        cid: ComputeType(cid, c.enum, c.accumulate, c.input_rounding, tuple(c.aliases), c.note, c.label)
        for cid, c in doc.compute.items()
    }
    archs = {
        aid: Arch(aid, a.title, tuple(a.aliases), tuple(a.fp8), cite(a.source, f"{file}: arch {aid}"))
        for aid, a in doc.arch.items()
    }
    scaling = {sid: Scaling(sid, s.title, s.block, s.scale_format) for sid, s in doc.scaling.items()}
    aliases = {k.lower(): tuple(_resolve(t, f"{file}: aliases", k) for t in v) for k, v in doc.aliases.items()}
    rows: list[Combination] = []
    seen: dict[tuple, str] = {}
    for group in doc.group:
        for r_index, raw in enumerate(group.rows, start=1):
            where = f"{file}: group {group.id} row {r_index}"
            for spec in _expand(group, raw, where):
                row = _build_row(library, group.id, validate_document(RowEntry, spec, where), where, compute, archs,
                                 scaling, cite)  # fmt: skip
                if row.key in seen:
                    raise ValueError(
                        f"{where}: the combination {row.types()} ({row.compute.id}, {row.arch}) is listed twice "
                        f"(first in {seen[row.key]})"
                    )
                seen[row.key] = where.removeprefix(f"{file}: ")
                rows.append(row)
    refusals = tuple(
        Refusal(
            _resolve(r.a, f"{file}: refused entry {i}", "a"),
            _resolve(r.b, f"{file}: refused entry {i}", "b"),
            r.reason,
            cite(r.source, f"{file}: refused entry {i}"),
        )
        for i, r in enumerate(doc.refused, start=1)
    )
    groups = {g.id: (g.title, g.compact, g.note or "") for g in doc.group}
    return TypeTable(library, doc.title, doc.function, doc.checked, sources, compute, archs, scaling, aliases, groups,
                     tuple(rows), refusals)  # fmt: skip


def _build_row(library, gid, spec: RowEntry, where, compute, archs, scaling, cite) -> Combination:
    """A validated row with its references resolved: compute type, architectures, scaling mode, sources."""
    for key in (*_MATRICES, "scale"):
        _canonical(getattr(spec, key), where, key)
    for name in (*spec.bias, *([spec.default_bias] if spec.default_bias else [])):
        _canonical(name, where, "bias")
    if spec.compute not in compute:
        raise ValueError(f"{where}: compute: compute {spec.compute!r} is not one of {sorted(compute)}")
    for key in ("arch", "layout_arch"):
        for a in getattr(spec, key):
            if a != ANY_ARCH and a not in archs:
                raise ValueError(f"{where}: {key}: architecture {a!r} is not one of {sorted(archs)} or {ANY_ARCH!r}")
    if spec.scaling not in scaling:
        raise ValueError(f"{where}: scaling: scaling {spec.scaling!r} is not one of {sorted(scaling)}")
    return Combination(
        library=library,
        group=gid,
        a=spec.a,
        b=spec.b,
        c=spec.c,
        d=spec.d,
        compute=compute[spec.compute],
        scale=spec.scale,
        bias=tuple(spec.bias),
        default_bias=spec.default_bias,
        arch=tuple(spec.arch),
        scaling=scaling[spec.scaling],
        scaled=tuple(spec.scaled),
        layout=spec.layout,
        layout_arch=tuple(spec.layout_arch),
        constraints=spec.constraints,
        confirmed=spec.confirmed,
        unconfirmed=tuple(spec.unconfirmed),
        note=spec.note,
        sources=cite(spec.source, where),
    )


@cache
def table(library: str) -> TypeTable:
    """The type table of a library (``"hipblaslt"`` or ``"cublaslt"``, case-insensitive), validated.

    Raises:
        ValueError: If the library is unknown (the message lists those with a table), or its file is malformed.
    """
    file = f"gemm/{_library(library)}.toml"
    return parse_file(data_text(file), f"gpukb/data/{file}")


def parse_file(text: str, file: str) -> TypeTable:
    """Parse a type-table file's text (TOML) into its validated table.

    Raises:
        ValueError: For TOML that does not parse or a table that does not validate, naming the file.
    """
    return parse(parse_toml(text, file, FILE_KEYS), file)


@dataclass(frozen=True)
class _Query:
    values: dict[str, tuple[str, ...]]  # field -> accepted canonical values
    given: dict[str, str]  # field -> what the caller wrote

    def matches(self, row: Combination, name: str) -> bool:
        wanted = self.values[name]
        if name == "bias":
            return any(w in row.bias for w in wanted)
        if name == "arch":
            return any(row.applies_to(w) for w in wanted)
        return row.value(name) in wanted

    def score(self, row: Combination) -> int:
        return sum(self.matches(row, name) for name in self.values)

    def describe(self) -> str:
        parts = []
        for name in QUERY_FIELDS:
            if name in self.given:
                resolved = "/".join(self.values[name])
                shown = (
                    self.given[name]
                    if resolved.lower() == self.given[name].lower()
                    else f"{self.given[name]} = {resolved}"
                )
                parts.append(f"{name.upper() if name in _MATRICES else name}={shown}")
        return ", ".join(parts) or "(no constraint)"


def _query(tab: TypeTable, given: dict[str, str | None]) -> _Query:
    arch = tab.resolve_arch(given["arch"]) if given.get("arch") is not None else None
    values: dict[str, tuple[str, ...]] = {}
    for name, value in given.items():
        if value is None:
            continue
        if name == "arch":
            values[name] = (arch,)
        elif name == "compute":
            values[name] = (tab.resolve_compute(value),)
        else:
            values[name] = tab.resolve_type(value, arch)
    return _Query(values, {k: str(v) for k, v in given.items() if v is not None})


def _nearest(library: str, query: _Query, limit: int = 5) -> list[tuple[int, Combination]]:
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    scored = [(query.score(row), i, row) for i, row in enumerate(table(library).rows)]
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [(score, row) for score, _, row in scored[:limit]]


def nearest(library: str, limit: int = 5, **fields: str) -> list[tuple[int, Combination]]:
    """The rows that match the most of the given fields, best first (ties in table order), at most ``limit``.

    Args:
        library: ``"hipblaslt"`` or ``"cublaslt"``.
        limit: How many rows to return (at least 1).
        **fields: As for :func:`check` (``a``, ``b``, ``c``, ``d``, ``compute``, ``scale``, ``bias``, ``arch``).

    Returns:
        ``(number of fields matched, row)`` pairs.

    Raises:
        ValueError: For an unknown field, name or library, or a limit below 1.
    """
    unknown = sorted(set(fields) - set(QUERY_FIELDS))
    if unknown:
        raise ValueError(f"unknown field(s) {unknown}; fields: {', '.join(QUERY_FIELDS)}")
    positive_int("limit", limit)
    tab = table(library)
    return _nearest(tab.library, _query(tab, dict(fields)), limit)


def check(
    library: str,
    *,
    a: str | None = None,
    b: str | None = None,
    c: str | None = None,
    d: str | None = None,
    compute: str | None = None,
    scale: str | None = None,
    bias: str | None = None,
    arch: str | None = None,
) -> list[Combination]:
    """The combinations of ``library``'s table that match every field given (fields left ``None`` match anything).

    Args:
        library: ``"hipblaslt"`` or ``"cublaslt"``.
        a: Type of A, by any name (``"fp8"``, ``"e4m3fnuz"``, ``"HIP_R_16BF"``, ``"int8"``).
        b: Type of B.
        c: Type of C.
        d: Type of D.
        compute: Compute type by id, enumerator or alias (``"fp32"``, ``"CUBLAS_COMPUTE_32F_FAST_TF32"``).
        scale: Type of alpha and beta.
        bias: A bias type the combination must accept.
        arch: Architecture by id or product (``"gfx942"``, ``"MI300X"``, ``"sm_90"``, ``"H100"``).

    Returns:
        The matching rows, in table order (at least one).

    Raises:
        TypeError: If a name is not a string.
        ValueError: If the library, a type, compute type or architecture is unknown (the message lists what is
            allowed), or if no row matches: the message names what was given, any refusal the sources record,
            and the nearest supported combinations (up to five, those that match the most fields).
    """
    tab = table(library)
    given = dict(a=a, b=b, c=c, d=d, compute=compute, scale=scale, bias=bias, arch=arch)
    query = _query(tab, given)
    found = [row for row in tab.rows if all(query.matches(row, name) for name in query.values)]
    if found:
        return found
    lines = [f"{tab.title} ({tab.function}) has no combination {query.describe()}."]
    for refusal in tab.refusals:
        if refusal.a in query.values.get("a", (refusal.a,)) and refusal.b in query.values.get("b", (refusal.b,)):
            lines.append(f"{tab.title} refuses A={refusal.a} x B={refusal.b}: {refusal.reason}.")
    arch_id = query.values["arch"][0] if "arch" in query.values else None
    if arch_id is not None:
        native = tab.arch[arch_id].fp8
        for name in _MATRICES:
            foreign = [t for t in query.values.get(name, ()) if t in _FP8_TYPES and t not in native]
            if foreign:
                lines.append(
                    f"On {arch_id} {tab.title}'s FP8 types are {' and '.join(native)}, not {', '.join(foreign)}."
                )
                break
    best = _nearest(tab.library, query)
    n = len(query.values)
    lines.append(f"Nearest supported combinations (fields matched of {n}):")
    headers, cells = rows_table([row for _, row in best], arch=arch_id)
    lines += [f"  {score}/{n}  {line}" for (score, _), line in zip(best, _plain(headers, cells), strict=True)]
    raise ValueError("\n".join(lines))


def _plain(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return ["  ".join(f"{h}={v}" for h, v in zip(headers, row, strict=True) if v not in ("", "-")) for row in rows]


#: Columns of :func:`rows_table`.
COLUMNS = ("A", "B", "C", "D", "compute", "scale", "bias", "arch", "scaling", "layout", "confirmed")


def _bias_cell(row: Combination) -> str:
    if not row.bias:
        return "-"
    text = ", ".join(row.bias)
    return f"{text} (default {row.default_bias})" if row.default_bias else text


def _confirmed_cell(row: Combination) -> str:
    return "yes" if row.confirmed else "no: " + ", ".join(f.replace("_", " ") for f in row.unconfirmed)


def rows_table(rows: Iterable[Combination], arch: str | None = None) -> tuple[list[str], list[list[str]]]:
    """Rows as a table (headers, cells) for :func:`gpukb.tables.text_table` or :func:`~gpukb.tables.markdown_table`.

    Args:
        rows: Combinations, e.g. from :func:`check` or ``table(lib).rows``.
        arch: When given, the layout column shows the rule on that architecture.

    Raises:
        TypeError: If ``rows`` holds something other than combinations.
    """
    rows = _combinations(rows)
    cells = [
        [
            r.a,
            r.b,
            r.c,
            r.d,
            r.compute.id,
            r.scale,
            _bias_cell(r),
            ", ".join(r.arch),
            r.scaling.id,
            r.layout_on(arch),
            _confirmed_cell(r),
        ]
        for r in rows
    ]
    return list(COLUMNS), cells


def sources_of(rows: Iterable[Combination]) -> list[Source]:
    """The distinct sources of some rows, in order of first appearance.

    Raises:
        TypeError: If ``rows`` holds something other than combinations.
    """
    seen: dict[str, Source] = {}
    for row in _combinations(rows):
        for src in row.sources:
            seen.setdefault(src.id, src)
    return list(seen.values())


def _combinations(rows: object) -> list[Combination]:
    """``rows`` as a list of combinations (from :func:`check` or ``table(lib).rows``), or a TypeError."""
    if isinstance(rows, str | bytes) or not isinstance(rows, Iterable):
        raise TypeError(f"rows must be combinations from check() or table(library).rows; got {given(rows)}")
    rows = list(rows)
    for row in rows:
        if not isinstance(row, Combination):
            raise TypeError(f"rows must hold combinations from check() or table(library).rows; got {given(row)}")
    return rows
