"""Calculators on the pages: the form a page layer renders, the data it ships, and how a field's text is read.

A calculator is a form on the page whose arithmetic is a JavaScript port of one library function
(``docs/javascripts/calculators/``). The page layer renders the form with :func:`calculator_html`, with the data the
script needs (format parameters, per-architecture limits, GPU figures, measured ceilings) exported from the same
data files and functions the library reads, as a JSON island (``<script type="application/json">``): the script
never holds a number of its own. ``tests/site/test_calculators.py`` drives each calculator in Chromium and compares
every answer and every error message with the library's on the same inputs.

A text field reaches the library as :func:`field_value` reads it, so a bad field gets the library's own message.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from gpukb.arguments import given, text

#: Text longer than this (after stripping) is not read as a number: it reaches the library as text.
FIELD_MAX = 100


# --8<-- [start:field-value]
def field_value(text: str) -> int | float | str | None:
    """What a calculator's text field passes to the library function it mirrors.

    ``None`` for an empty field (the argument's default, or a refusal where it has none); an int or a float where
    Python's ``int()`` or ``float()`` reads the stripped text (ASCII digits only: the script reads no others); the
    stripped text itself otherwise, which the library refuses with its own message.

    Raises:
        TypeError: If ``text`` is not a string.
    """
    if not isinstance(text, str):
        raise TypeError(f"a field's text is a string; got {given(text)}")
    stripped = text.strip()
    if not stripped:
        return None
    if len(stripped) > FIELD_MAX or not stripped.isascii():
        return stripped
    for read in (int, float):
        try:
            return read(stripped)
        except ValueError:
            continue
    return stripped
    # --8<-- [end:field-value]


@dataclass(frozen=True)
class Field:
    """One input of a calculator's form.

    Attributes:
        name: The key the script reads.
        label: What the reader sees (the library's name for the argument, so its messages name the field).
        kind: ``"text"``, ``"select"`` or ``"checkbox"``.
        default: The text, the chosen option's value, or ``"on"``/``""`` for a checkbox.
        options: ``(value, label)`` pairs of a select.
        hint: A short explanation under the label.
        only: The values of the ``layer`` field this field belongs to (shown only then); empty: always shown.
    """

    name: str
    label: str
    kind: Literal["text", "select", "checkbox"] = "text"
    default: str = ""
    options: Sequence[tuple[str, str]] = ()
    hint: str = ""
    only: Sequence[str] = ()

    def __post_init__(self) -> None:
        for name in ("name", "label", "default", "hint"):
            text(name, getattr(self, name))
        if not self.name.isidentifier():
            raise ValueError(f"a field's name is a word the script reads as a key; got {given(self.name)}")
        if self.kind not in ("text", "select", "checkbox"):
            raise ValueError(f"a field's kind is 'text', 'select' or 'checkbox'; got {given(self.kind)}")
        for name in ("options", "only"):
            if isinstance(getattr(self, name), str | bytes) or not isinstance(getattr(self, name), Sequence):
                raise TypeError(f"{name} must be a sequence; got {given(getattr(self, name))}")
        for option in self.options:
            if not isinstance(option, tuple | list) or len(option) != 2 or not all(isinstance(s, str) for s in option):
                raise TypeError(f"a select's options are (value, label) pairs of strings; got {given(option)}")
        for value in self.only:
            text("an item of only", value)


def _json_island(data: Mapping[str, object]) -> str:
    # Inside <script> nothing may close the element: escape <, > and & as JSON's \\u escapes.
    try:
        text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as err:  # NaN, infinity, a set, an object: nothing the script could read
        raise type(err)(f"a calculator's data must be JSON (finite numbers, strings, lists, objects): {err}") from None
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _field_html(calc: str, field: Field) -> str:
    ident = f"gpukb-{calc}-{field.name}"
    attrs = f' data-field="{html.escape(field.name)}"'
    if field.only:
        attrs += f' data-only="{html.escape(" ".join(field.only))}"'
    label = f'<label for="{ident}">{html.escape(field.label)}</label>'
    if field.kind == "select":
        options = "".join(
            f'<option value="{html.escape(v)}"{" selected" if v == field.default else ""}>{html.escape(text)}</option>'
            for v, text in field.options
        )
        control = f'<select id="{ident}" name="{html.escape(field.name)}">{options}</select>'
    elif field.kind == "checkbox":
        checked = " checked" if field.default else ""
        control = f'<input id="{ident}" name="{html.escape(field.name)}" type="checkbox"{checked}>'
    else:
        control = (
            f'<input id="{ident}" name="{html.escape(field.name)}" type="text" value="{html.escape(field.default)}" '
            'autocomplete="off" spellcheck="false">'
        )
    hint = f'<small class="gpukb-calc-hint">{html.escape(field.hint)}</small>' if field.hint else ""
    error = f'<output class="gpukb-calc-error" for="{ident}" role="alert"></output>'
    return f'<div class="gpukb-calc-field gpukb-calc-{field.kind}"{attrs}>{label}{control}{hint}{error}</div>'


def calculator_html(calc: str, title: str, fields: Sequence[Field], data: Mapping[str, object]) -> str:
    """A calculator's form, its empty result area and its data island, as one HTML block for a page.

    Without JavaScript the form stays inert and the result area says that the calculator needs it.

    Args:
        calc: The calculator's name: the script ``docs/javascripts/calculators/<calc>.js`` mounts it.
        title: The form's caption.
        fields: Its inputs, in order.
        data: What the script needs, exported from the library and its data files (JSON-serialisable).

    Raises:
        TypeError: For a name or title that is not a string, a field that is not a :class:`Field`, or data that is
            not a mapping.
        ValueError: For a name that is not a lowercase word, two fields with one name, or data that JSON cannot
            hold (NaN, infinity, a set).
    """
    if not text("calc", calc).isidentifier() or not calc.islower() or calc.startswith("_"):
        raise ValueError(f"a calculator's name is a lowercase word; got {calc!r}")
    text("title", title)
    if isinstance(fields, str | bytes) or not isinstance(fields, Sequence):
        raise TypeError(f"fields must be a list of Field; got {given(fields)}")
    for field in fields:
        if not isinstance(field, Field):
            raise TypeError(f"fields must hold Field objects; got {given(field)}")
    if not isinstance(data, Mapping):
        raise TypeError(f"data must be a mapping (the JSON object the script reads); got {given(data)}")
    names = [f.name for f in fields]
    if len(set(names)) != len(names):
        raise ValueError(f"calculator {calc!r} names a field twice: {names}")
    body = "".join(_field_html(calc, f) for f in fields)
    return (
        f'<div class="gpukb-calc" data-calc="{calc}">'
        f'<form class="gpukb-calc-form" autocomplete="off"><fieldset><legend>{html.escape(title)}</legend>'
        f"{body}</fieldset></form>"
        '<div class="gpukb-calc-out" aria-live="polite"><p>This calculator runs in the browser; it needs '
        "JavaScript.</p></div>"
        f'<script type="application/json" class="gpukb-calc-data">{_json_island(data)}</script>'
        "</div>"
    )
