"""Person statistics from CrowdHuman's ``.odgt`` annotation files.

An ``.odgt`` file holds one JSON object per line, one per image: ``{"ID": ..., "gtboxes": [...]}``. Each box has a
``tag``: ``"person"`` for a person, ``"mask"`` for a region to ignore (crowds, reflections, posters). A person box
carries up to three ``[x, y, width, height]`` boxes: ``fbox`` (full body, including occluded parts), ``vbox`` (the
visible part) and ``hbox`` (head); ``extra.ignore = 1`` flags a person box that evaluation ignores, and
``head_attr.ignore = 1`` a head box to ignore.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from gpukb import arguments
from gpukb.datasets.coco import DetectionStats

#: The box kinds a CrowdHuman person may carry.
BOX_KEYS = ("fbox", "vbox", "hbox")


def _check_box(box: Any, where: str) -> None:
    ok = isinstance(box, list) and len(box) == 4
    ok = ok and all(isinstance(v, int | float) and not isinstance(v, bool) for v in box)
    if not ok:
        raise ValueError(f"{where} must be [x, y, width, height], got {box!r}")
    if box[2] < 0 or box[3] < 0:
        raise ValueError(f"{where} has a negative width or height: {box!r}")


def validate_record(record: Any, where: str = "record") -> None:
    """Check one image's record.

    Raises:
        ValueError: Naming the record and field: no ``ID``, ``gtboxes`` not a list, a box without a ``tag``, or a
            box that is not four numbers with non-negative width and height.
    """
    if not isinstance(record, Mapping):
        raise ValueError(f"{where} is not a JSON object")
    if not isinstance(record.get("ID"), str):
        raise ValueError(f"{where}: field ID must be a string, got {record.get('ID')!r}")
    boxes = record.get("gtboxes")
    if not isinstance(boxes, list):
        raise ValueError(f"{where} ({record['ID']}): field gtboxes must be a list")
    for j, box in enumerate(boxes):
        label = f"{where} ({record['ID']}): gtboxes[{j}]"
        if not isinstance(box, Mapping) or not isinstance(box.get("tag"), str):
            raise ValueError(f"{label}: field tag must be a string")
        for key in BOX_KEYS:
            if key in box:
                _check_box(box[key], f"{label}.{key}")


def _utf8_lines(handle, path: Path) -> list[str]:
    try:
        return handle.readlines()
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text (an .odgt file is JSON, one record per line)") from None


def read(path: str | Path) -> list[dict[str, Any]]:
    """Read an ``.odgt`` file: one validated record per non-empty line.

    Raises:
        FileNotFoundError: If there is no such file.
        ValueError: Naming the file: something other than a regular file (a folder, a named pipe), or, with the
            line, a line that is not JSON or not a valid record.
    """
    path = arguments.regular_file("an .odgt file", path)
    records = []
    with path.open(encoding="utf-8") as handle:
        lines = _utf8_lines(handle, path)
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}, line {number}: not JSON: {err}") from None
            validate_record(record, f"{path}, line {number}")
            records.append(record)
    return records


def _flag(box: Mapping[str, Any], key: str) -> bool:
    attrs = box.get(key)
    return isinstance(attrs, Mapping) and attrs.get("ignore", 0) == 1


def stats(records: Iterable[Mapping[str, Any]]) -> DetectionStats:
    """Count images, person instances, ignored persons and ignore regions.

    ``instances`` counts ``person`` boxes not flagged ``extra.ignore``; ``ignored_instances`` the flagged ones;
    ``ignore_regions`` the ``mask`` boxes. Tags other than these two are rejected, so a new tag cannot be counted
    silently.

    Raises:
        ValueError: For an invalid record or an unknown tag.
    """
    images = 0
    per_image: Counter[str] = Counter()
    ignored = masks = 0
    for index, record in enumerate(records, start=1):  # words count from 1 (record 1, line 1), indices from 0
        validate_record(record, f"record {index}")
        images += 1
        for j, box in enumerate(record["gtboxes"]):
            tag = box["tag"]
            if tag == "mask":
                masks += 1
            elif tag == "person":
                if _flag(box, "extra"):
                    ignored += 1
                else:
                    per_image[record["ID"]] += 1
            else:
                raise ValueError(f"record {index} ({record['ID']}): gtboxes[{j}].tag {tag!r} is not 'person' or 'mask'")
    return DetectionStats(
        images=images,
        instances=sum(per_image.values()),
        ignore_regions=masks,
        ignored_instances=ignored,
        images_with_instances=len(per_image),
        max_per_image=max(per_image.values(), default=0),
    )


def head_boxes(records: Iterable[Mapping[str, Any]]) -> int:
    """Head boxes usable for head detection: ``hbox`` on non-ignored persons, not flagged ``head_attr.ignore``."""
    return sum(
        1
        for record in records
        for box in record["gtboxes"]
        if box["tag"] == "person" and "hbox" in box and not _flag(box, "extra") and not _flag(box, "head_attr")
    )
