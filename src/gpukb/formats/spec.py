"""A binary floating-point format, described by its parameters, and the registry of known formats.

Everything the site says about a format (its largest value, its epsilon, the value of each bit pattern) is
computed from four numbers (exponent bits, mantissa bits, bias) and the way the format spends its special
patterns (``encoding``). The formats and their names in torch, ml_dtypes, HIP and CUDA are data, in
``gpukb/data/formats.toml``.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import cache
from typing import Literal, get_args

from pydantic import Field, model_validator

from gpukb.data import data_text
from gpukb.schema import StrictModel, parse_toml, validate_document, validate_entries

#: How a format spends its special bit patterns (see ``gpukb/data/formats.toml``).
Encoding = Literal["ieee", "fn", "fnuz", "finite", "e8m0"]
ENCODINGS: tuple[str, ...] = get_args(Encoding)

#: The libraries whose names for each format the registry records.
Library = Literal["torch", "ml_dtypes", "hip", "cuda"]
LIBRARIES: tuple[str, ...] = get_args(Library)

#: The data file, inside the package ``gpukb.data``.
DATA_FILE = "formats.toml"


# --8<-- [start:parameters]
class FormatParameters(StrictModel):
    """The parameters that define a format, and the rules they must obey (shared by the data file's entries).

    Attributes:
        name: Short canonical name, e.g. ``"e4m3"``.
        title: Human-readable name.
        exponent_bits: Width of the exponent field.
        mantissa_bits: Width of the stored fraction (the leading 1 of normal numbers is implicit).
        bias: Exponent bias: a normal number with exponent field ``e`` is ``2**(e - bias) * 1.m``.
        encoding: One of ``ENCODINGS``.
    """

    name: str = Field(min_length=1)
    title: str = Field(min_length=1)
    exponent_bits: int = Field(ge=1)
    mantissa_bits: int = Field(ge=0)
    bias: int
    encoding: Encoding

    @model_validator(mode="after")
    def _exponent_only(self):
        if self.encoding == "e8m0" and self.mantissa_bits != 0:
            raise ValueError("encoding 'e8m0' is exponent-only (mantissa_bits = 0)")
        # Every format here centres its exponent range: bias 2^(e-1) - 1; the fnuz formats, which give up the
        # top binade's infinities but not its values, one more (E4M3FNUZ 8, E5M2FNUZ 16).
        want = 2 ** (self.exponent_bits - 1) - 1 + (self.encoding == "fnuz")
        if self.bias != want:
            raise ValueError(
                f"bias {self.bias} does not fit {self.exponent_bits} exponent bits with encoding {self.encoding!r}: "
                f"it is 2^(e-1) - 1{' + 1' if self.encoding == 'fnuz' else ''} = {want}"
            )
        return self

    # --8<-- [end:parameters]


class FloatFormat(FormatParameters):
    """A binary floating-point format: its parameters, its names, and everything computed from them.

    Attributes:
        library_names: The format's name in each library of ``LIBRARIES`` (absent where it has none).
        source: Where the parameters were checked.
    """

    library_names: dict[Library, str] = Field(default_factory=dict)
    source: str = ""

    def __hash__(self) -> int:  # the names and the source are not part of a format's identity
        return hash((self.name, self.exponent_bits, self.mantissa_bits, self.bias, self.encoding))

    @property
    def signed(self) -> bool:
        """Whether the format has a sign bit (every format but E8M0)."""
        return self.encoding != "e8m0"

    @property
    def bits(self) -> int:
        """Total width in bits."""
        return int(self.signed) + self.exponent_bits + self.mantissa_bits

    @property
    def has_infinity(self) -> bool:
        return self.encoding == "ieee"

    @property
    def has_nan(self) -> bool:
        return self.encoding != "finite"

    @property
    def has_negative_zero(self) -> bool:
        return self.encoding in ("ieee", "fn", "finite")

    @property
    def has_subnormals(self) -> bool:
        """E8M0 has none: its exponent field 0 is the value 2**-127."""
        return self.encoding != "e8m0"

    @property
    def min_exponent(self) -> int:
        """Exponent of the smallest normal number (``1 - bias``; ``-bias`` for E8M0)."""
        return -self.bias if self.encoding == "e8m0" else 1 - self.bias

    @property
    def magnitude_mask(self) -> int:
        return (1 << (self.exponent_bits + self.mantissa_bits)) - 1

    @property
    def max_magnitude_bits(self) -> int:
        """The bit pattern (sign bit clear) of the largest finite value."""
        all_ones = self.magnitude_mask
        if self.encoding == "ieee":
            return all_ones - (1 << self.mantissa_bits)  # exponent all ones minus one, mantissa all ones
        if self.encoding in ("fn", "e8m0"):
            return all_ones - 1  # the all-ones pattern is NaN
        return all_ones  # fnuz and finite: every non-NaN magnitude is a number

    @property
    def max_exponent(self) -> int:
        """Unbiased exponent of the largest finite value."""
        field_value = self.max_magnitude_bits >> self.mantissa_bits
        return field_value - self.bias

    @property
    def max_value(self) -> Fraction:
        """The largest finite value, exactly."""
        mantissa = self.max_magnitude_bits & ((1 << self.mantissa_bits) - 1)
        return (1 + Fraction(mantissa, 1 << self.mantissa_bits)) * Fraction(2) ** self.max_exponent

    @property
    def min_normal(self) -> Fraction:
        """The smallest positive normal value."""
        return Fraction(2) ** self.min_exponent

    @property
    def min_subnormal(self) -> Fraction:
        """The smallest positive value (the smallest normal where there are no subnormals)."""
        if not self.has_subnormals:
            return self.min_normal
        return Fraction(2) ** (self.min_exponent - self.mantissa_bits)

    @property
    def epsilon(self) -> Fraction:
        """Machine epsilon: the gap between 1 and the next larger value (``2**-mantissa_bits``)."""
        return Fraction(1, 1 << self.mantissa_bits)

    @property
    def uint_dtype(self) -> str:
        """The smallest numpy unsigned integer type that holds a bit pattern, e.g. ``"uint8"``."""
        return next(f"uint{w}" for w in (8, 16, 32, 64) if self.bits <= w)


# --8<-- [start:entry-model]
class FormatEntry(FormatParameters):
    """One ``[[format]]`` of the data file: the parameters, each library's name (``""``: it has none) and the
    source the parameters were checked against."""

    torch: str
    ml_dtypes: str
    hip: str
    cuda: str
    source: str = Field(min_length=1)
    # --8<-- [end:entry-model]

    def to_format(self) -> FloatFormat:
        names = {lib: getattr(self, lib) for lib in LIBRARIES if getattr(self, lib)}
        return FloatFormat(**self.model_dump(include=set(FormatParameters.model_fields)), library_names=names,
                           source=self.source)  # fmt: skip


class NameSources(StrictModel):
    """Where each library's names for the formats were checked (the data file's ``[name_sources]``)."""

    torch: str = Field(min_length=1)
    ml_dtypes: str = Field(min_length=1)
    hip: str = Field(min_length=1)
    cuda: str = Field(min_length=1)


class FormatsFile(StrictModel):
    """The data file: the sources of the library names and the formats, in display order."""

    name_sources: NameSources
    format: list[FormatEntry]


# --8<-- [start:parse]
def parse(text: str, file: str = DATA_FILE) -> FormatsFile:
    """Read the data file's text into its model.

    Raises:
        ValueError: Naming the file, the entry and the field: a TOML error, an unknown key, a missing or mistyped
            field, a rule of the parameters broken, or a name used twice.
    """
    data = parse_toml(text, file, ("name_sources", "format"))
    entries = validate_entries(FormatEntry, data.get("format", []), file, "format", key="name")
    sources = validate_document(NameSources, data.get("name_sources"), f"{file}: name_sources")
    _check_names(entries, file)
    return FormatsFile(name_sources=sources, format=entries)
    # --8<-- [end:parse]


def _name_mismatch(entry: FormatEntry, name: str) -> str | None:
    """What a library name says about its format that ``entry`` contradicts, or ``None``.

    Library names spell the parameters: the width (``float8_``, ``HIP_R_8F``, ``CUDA_R_16BF``), the exponent and
    mantissa bits (``e4m3``), ``bf`` for bfloat16's 8/7 split, and ``fnuz`` for the fnuz encoding.
    """
    low = name.lower()
    bits = entry.exponent_bits + entry.mantissa_bits + (entry.encoding != "e8m0")
    width = re.search(r"(?:^b?float|_r_)(\d+)", low)
    if width and int(width.group(1)) != bits:
        return f"says {width.group(1)} bits; the format has {bits}"
    split = re.search(r"e(\d+)m(\d+)", low)
    if split and (int(split.group(1)), int(split.group(2))) != (entry.exponent_bits, entry.mantissa_bits):
        return f"says E{split.group(1)}M{split.group(2)}; the format is E{entry.exponent_bits}M{entry.mantissa_bits}"
    if "bf" in low and (entry.exponent_bits, entry.mantissa_bits) != (8, 7):
        return f"says bfloat16 (E8M7); the format is E{entry.exponent_bits}M{entry.mantissa_bits}"
    if split and ("fnuz" in low) != (entry.encoding == "fnuz"):
        return f"{'says' if 'fnuz' in low else 'lacks'} fnuz; the format's encoding is {entry.encoding!r}"
    return None


def _check_names(entries: list[FormatEntry], file: str) -> None:
    """Refuse a library name that contradicts its format's parameters (a torch name swapped with another
    format's), and a name (case-insensitive, as :func:`get_format` reads it) that two formats share: either would
    make a lookup by that name answer with the wrong format."""
    owner: dict[str, tuple[int, str, str]] = {}
    for index, entry in enumerate(entries, start=1):
        where = f"{file}: format entry {index} ({entry.name})"
        spelled = [("name", entry.name)] + [(f"{lib} name", getattr(entry, lib)) for lib in LIBRARIES
                                            if getattr(entry, lib)]  # fmt: skip
        for field, name in spelled[1:]:
            mismatch = _name_mismatch(entry, name)
            if mismatch:
                raise ValueError(f"{where}: {field} {name!r} {mismatch}")
        if entry.torch:
            spelled.append(("torch name", f"torch.{entry.torch}"))
        for field, name in spelled:
            first = owner.setdefault(name.lower(), (index, entry.name, field))
            if first[1] != entry.name:
                raise ValueError(
                    f"{where}: {field} {name!r} is already the {first[2]} of format entry {first[0]} ({first[1]}); "
                    f"a name must name one format"
                )


@cache
def _data() -> FormatsFile:
    return parse(data_text(DATA_FILE))


@cache
def _formats() -> dict[str, FloatFormat]:
    return {entry.name: entry.to_format() for entry in _data().format}


def formats() -> dict[str, FloatFormat]:
    """Every known format, by canonical name, in the order of the data file."""
    return dict(_formats())


def name_sources() -> dict[str, str]:
    """Where each library's names for the formats were checked, by library."""
    return _data().name_sources.model_dump()


@cache
def _aliases() -> dict[str, str]:
    table = {}
    for fmt in formats().values():
        for alias in (fmt.name, *fmt.library_names.values()):
            table[alias.lower()] = fmt.name
        if "torch" in fmt.library_names:
            table[f"torch.{fmt.library_names['torch']}".lower()] = fmt.name
    return table


def get_format(name: str | FloatFormat) -> FloatFormat:
    """Look a format up by its canonical name or any library's name for it (case-insensitive).

    Args:
        name: ``"e4m3"``, ``"float8_e4m3fn"``, ``"torch.float8_e4m3fn"``, ``"HIP_R_8F_E4M3"``, ``"CUDA_R_16BF"``, ...
            or a ``FloatFormat``, returned as it is.

    Raises:
        TypeError: If ``name`` is neither a string nor a ``FloatFormat``.
        ValueError: If no format has that name; the message lists the canonical names.
    """
    if isinstance(name, FloatFormat):
        return name
    if not isinstance(name, str):
        raise TypeError(f"a format is named by a string, got {type(name).__name__}")
    canonical = _aliases().get(name.strip().lower())
    if canonical is None:
        raise ValueError(
            f"unknown format {name!r}; known formats: {', '.join(formats())} "
            "(library names such as 'float8_e4m3fn' or 'HIP_R_8F_E4M3' work too)"
        )
    return _formats()[canonical]
