"""COCO-style JSON: generated files with known contents, and malformed ones."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gpukb.datasets import coco


def _generate(seed: int, images: int = 40) -> tuple[dict, dict]:
    """A random COCO document and the counts it was built with (not computed by the module under test)."""
    rng = np.random.default_rng(seed)
    doc = {"images": [], "annotations": [], "categories": [{"id": 1, "name": "person"}, {"id": 2, "name": "bicycle"}]}
    truth = {"instances": 0, "crowd": 0, "nonempty": 0, "max": 0}
    next_id = 1
    for image_id in range(100, 100 + images):
        doc["images"].append({"id": image_id, "width": 2048, "height": 1024, "file_name": f"{image_id}.png"})
        persons = int(rng.integers(0, 6))
        crowds = int(rng.random() < 0.2)
        bikes = int(rng.integers(0, 3))
        for kind, count in ((0, persons), (1, crowds), (2, bikes)):
            for _ in range(count):
                box = [float(rng.uniform(0, 2000)), float(rng.uniform(0, 1000)), float(rng.uniform(1, 50)), 80.0]
                doc["annotations"].append(
                    {
                        "id": next_id,
                        "image_id": image_id,
                        "category_id": 2 if kind == 2 else 1,
                        "bbox": box,
                        "iscrowd": int(kind == 1),
                        "area": box[2] * box[3],
                    }
                )
                next_id += 1
        truth["instances"] += persons
        truth["crowd"] += crowds
        truth["nonempty"] += persons > 0
        truth["max"] = max(truth["max"], persons)
    return doc, truth


@pytest.mark.parametrize("seed", range(5))
def test_counts_match_what_was_generated(tmp_path, seed: int) -> None:
    doc, truth = _generate(seed)
    path = tmp_path / "instances.json"
    path.write_text(json.dumps(doc))
    s = coco.stats(coco.load(path))
    assert (s.images, s.instances, s.ignore_regions) == (40, truth["instances"], truth["crowd"])
    assert (s.images_with_instances, s.max_per_image, s.ignored_instances) == (truth["nonempty"], truth["max"], 0)
    assert s.persons_per_image == pytest.approx(truth["instances"] / 40)
    assert s.persons_per_nonempty_image == pytest.approx(truth["instances"] / truth["nonempty"])


def test_another_category_and_an_unknown_one() -> None:
    doc, _ = _generate(0)
    bikes = sum(1 for a in doc["annotations"] if a["category_id"] == 2)
    assert coco.stats(doc, category="bicycle").instances == bikes
    with pytest.raises(ValueError, match="no category named 'pedestrian'; categories: bicycle, person"):
        coco.stats(doc, category="pedestrian")


def test_an_empty_file_has_no_persons() -> None:
    s = coco.stats({"images": [], "annotations": [], "categories": [{"id": 1, "name": "person"}]})
    assert (s.images, s.instances, s.persons_per_image, s.persons_per_nonempty_image) == (0, 0, 0.0, 0.0)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("categories"), r"missing list 'categories'"),
        (lambda d: d["images"].append(dict(d["images"][0])), r"images\[40\]\.id 100 is used twice"),
        (lambda d: d["annotations"][0].update(image_id=7), r"annotations\[0\]\.image_id 7 is not an image id"),
        (lambda d: d["annotations"][0].update(category_id=9), r"annotations\[0\]\.category_id 9 is no category id"),
        (
            lambda d: d["annotations"][0].update(bbox=[1, 2, 3]),
            r"annotations\[0\]\.bbox must be \[x, y, width, height\]",
        ),
        (lambda d: d["annotations"][0].update(bbox=[1, 2, -3, 4]), r"annotations\[0\]\.bbox has a negative width"),
        (lambda d: d["annotations"][0].update(iscrowd=2), r"annotations\[0\]\.iscrowd must be 0 or 1, got 2"),
        (lambda d: d["images"][0].update(id="100"), r"images\[0\]\.id must be an integer"),
        (lambda d: d["annotations"][0].update(bbox=[1, 2, True, 4]), r"bbox must be \[x, y, width, height\]"),
        (lambda d: d["annotations"][0].update(bbox=[1, "2", 3, 4]), r"bbox must be \[x, y, width, height\]"),
    ],
)
def test_malformed_documents_name_the_list_index_and_field(change, message: str) -> None:
    doc, _ = _generate(1)
    change(doc)
    with pytest.raises(ValueError, match=message):
        coco.stats(doc)


def test_a_file_that_is_not_json_is_named(tmp_path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"images": [')
    with pytest.raises(ValueError, match=r"broken\.json: not JSON"):
        coco.load(path)
    path.write_text('{"images": []}')
    with pytest.raises(ValueError, match=r"broken\.json: missing list 'annotations'"):
        coco.load(path)


def test_edges_of_a_coco_document() -> None:
    """A zero-size box is a box, iscrowd absent means 0, an empty file has no busiest image, and what is not an
    object, a list item or an annotation is named by its type; a path that is no file by the reader's name."""
    doc = {"images": [{"id": 1}], "categories": [{"id": 1, "name": "person"}],
           "annotations": [{"image_id": 1, "category_id": 1, "bbox": [0, 0, 0, 0]},
                           {"image_id": 1, "category_id": 1, "bbox": [1, 1, 2, 2], "iscrowd": 1}]}  # fmt: skip
    s = coco.stats(doc)
    assert (s.instances, s.ignore_regions, s.max_per_image) == (1, 1, 1)
    empty = coco.stats({"images": [], "annotations": [], "categories": [{"id": 1, "name": "person"}]})
    assert empty.max_per_image == 0
    with pytest.raises(ValueError, match=r"^a COCO file is a JSON object, got list$"):
        coco.validate([])
    with pytest.raises(ValueError, match=r"^images\[0\]"):
        coco.validate({**doc, "images": [3]})
    with pytest.raises(ValueError, match=r"^annotations\[0\]"):
        coco.validate({**doc, "annotations": [3]})
    with pytest.raises(TypeError, match=r"^a COCO \.json file must be a path"):
        coco.load(3)
