"""Person statistics from COCO-style detection annotations (the JSON layout of COCO, CityPersons' COCO export, etc.).

A COCO annotation file is one JSON object with ``images``, ``annotations`` and ``categories``. Each annotation has an
``image_id``, a ``category_id``, a ``bbox`` ``[x, y, width, height]`` in pixels and ``iscrowd`` (1 marks a region
covering a crowd that is not annotated person by person; evaluation ignores detections there). This module checks
that structure and counts what a catalog entry reports: images, person instances, persons per image and crowd
regions.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpukb import arguments


@dataclass(frozen=True)
class DetectionStats:
    """What a person-detection annotation file contains.

    Attributes:
        images: Images (records) in the file, with or without persons.
        instances: Person boxes counted as instances (not crowd regions, not boxes flagged to ignore).
        ignore_regions: Regions evaluation ignores: COCO ``iscrowd=1`` boxes, CrowdHuman ``mask`` boxes.
        ignored_instances: Person boxes flagged to ignore (CrowdHuman ``extra.ignore=1``); 0 for COCO.
        images_with_instances: Images with at least one instance.
        max_per_image: The most instances in one image.
    """

    images: int
    instances: int
    ignore_regions: int
    ignored_instances: int
    images_with_instances: int
    max_per_image: int

    @property
    def persons_per_image(self) -> float:
        """Instances per image, over all images (0.0 for an empty file)."""
        return self.instances / self.images if self.images else 0.0

    @property
    def persons_per_nonempty_image(self) -> float:
        """Instances per image, over the images that contain at least one."""
        return self.instances / self.images_with_instances if self.images_with_instances else 0.0


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def validate(data: Mapping[str, Any]) -> None:
    """Check a COCO-style document's structure.

    Raises:
        ValueError: Naming the list, the index and the field that is wrong: a missing list, an image or category
            without an integer ``id``, a duplicate id, an annotation pointing at an unknown image or category, a
            ``bbox`` that is not four numbers with non-negative width and height, or ``iscrowd`` not 0 or 1.
    """
    _require(isinstance(data, Mapping), f"a COCO file is a JSON object, got {type(data).__name__}")
    for key in ("images", "annotations", "categories"):
        _require(isinstance(data.get(key), list), f"missing list {key!r}; keys present: {sorted(data)}")
    ids: dict[str, set[int]] = {}
    for key in ("images", "categories"):
        seen: set[int] = set()
        for i, item in enumerate(data[key]):
            _require(isinstance(item, Mapping), f"{key}[{i}] is not an object")
            ident = item.get("id")
            _require(isinstance(ident, int) and not isinstance(ident, bool), f"{key}[{i}].id must be an integer")
            _require(ident not in seen, f"{key}[{i}].id {ident} is used twice")
            seen.add(ident)
        ids[key] = seen
    for i, ann in enumerate(data["annotations"]):
        _require(isinstance(ann, Mapping), f"annotations[{i}] is not an object")
        _require(
            ann.get("image_id") in ids["images"],
            f"annotations[{i}].image_id {ann.get('image_id')!r} is not an image id",
        )
        _require(
            ann.get("category_id") in ids["categories"],
            f"annotations[{i}].category_id {ann.get('category_id')!r} is no category id",
        )
        box = ann.get("bbox")
        _require(
            isinstance(box, list) and len(box) == 4 and all(_number(v) for v in box),
            f"annotations[{i}].bbox must be [x, y, width, height], got {box!r}",
        )
        _require(box[2] >= 0 and box[3] >= 0, f"annotations[{i}].bbox has a negative width or height: {box!r}")
        crowd = ann.get("iscrowd", 0)
        _require(
            crowd in (0, 1) and not isinstance(crowd, bool), f"annotations[{i}].iscrowd must be 0 or 1, got {crowd!r}"
        )


def load(path: str | Path) -> dict[str, Any]:
    """Read and validate a COCO-style JSON file.

    Raises:
        FileNotFoundError: If there is no such file.
        ValueError: For something other than a regular file, or a file that is not JSON or not a valid COCO
            document (with the file name).
    """
    path = arguments.regular_file("a COCO .json file", path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not JSON: {err}") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text (a COCO file is JSON)") from None
    try:
        validate(data)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None
    return data


def stats(data: Mapping[str, Any], category: str = "person") -> DetectionStats:
    """Count the images, instances and crowd regions of one category.

    Args:
        data: A COCO-style document (validated here).
        category: The category's ``name``.

    Raises:
        ValueError: For an invalid document, or a category name that is not in it (the message lists the names).
    """
    validate(data)
    wanted = {c["id"] for c in data["categories"] if c.get("name") == category}
    if not wanted:
        names = sorted(str(c.get("name")) for c in data["categories"])
        raise ValueError(f"no category named {category!r}; categories: {', '.join(names)}")
    per_image: Counter[int] = Counter()
    crowd = 0
    for ann in data["annotations"]:
        if ann["category_id"] not in wanted:
            continue
        if ann.get("iscrowd", 0) == 1:
            crowd += 1
        else:
            per_image[ann["image_id"]] += 1
    return DetectionStats(
        images=len(data["images"]),
        instances=sum(per_image.values()),
        ignore_regions=crowd,
        ignored_instances=0,
        images_with_instances=len(per_image),
        max_per_image=max(per_image.values(), default=0),
    )
