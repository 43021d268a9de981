"""CrowdHuman .odgt: generated files with known contents, and malformed ones."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gpukb.datasets import odgt


def _box(rng) -> list[float]:
    return [
        float(rng.uniform(0, 900)),
        float(rng.uniform(0, 600)),
        float(rng.uniform(5, 80)),
        float(rng.uniform(20, 300)),
    ]


def _generate(seed: int, images: int = 30) -> tuple[list[dict], dict]:
    rng = np.random.default_rng(seed)
    records, truth = [], {"persons": 0, "ignored": 0, "masks": 0, "heads": 0, "nonempty": 0, "max": 0}
    for i in range(images):
        boxes = []
        persons = int(rng.integers(0, 40))
        ignored = int(rng.integers(0, 3))
        masks = int(rng.integers(0, 3))
        hidden_heads = int(rng.integers(0, persons + 1))
        for j in range(persons):
            boxes.append(
                {
                    "tag": "person",
                    "fbox": _box(rng),
                    "vbox": _box(rng),
                    "hbox": _box(rng),
                    "extra": {"box_id": j, "occ": 0, "ignore": 0},
                    "head_attr": {"ignore": int(j < hidden_heads), "occ": 0, "unsure": 0},
                }
            )
        boxes += [{"tag": "person", "fbox": _box(rng), "extra": {"ignore": 1}} for _ in range(ignored)]
        boxes += [{"tag": "mask", "fbox": _box(rng), "extra": {"ignore": 1}} for _ in range(masks)]
        rng.shuffle(boxes)
        records.append({"ID": f"273271,{i:x}", "gtboxes": boxes})
        truth["persons"] += persons
        truth["ignored"] += ignored
        truth["masks"] += masks
        truth["heads"] += persons - hidden_heads
        truth["nonempty"] += persons > 0
        truth["max"] = max(truth["max"], persons)
    return records, truth


@pytest.mark.parametrize("seed", range(5))
def test_counts_match_what_was_generated(tmp_path, seed: int) -> None:
    records, truth = _generate(seed)
    path = tmp_path / "annotation_train.odgt"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n\n")  # a trailing blank line is allowed
    read = odgt.read(path)
    assert read == records
    s = odgt.stats(read)
    assert (s.images, s.instances, s.ignored_instances, s.ignore_regions) == (
        30,
        truth["persons"],
        truth["ignored"],
        truth["masks"],
    )
    assert (s.images_with_instances, s.max_per_image) == (truth["nonempty"], truth["max"])
    assert s.persons_per_image == pytest.approx(truth["persons"] / 30)
    assert odgt.head_boxes(read) == truth["heads"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"ID": "a", "gtboxes": [', r"line 2: not JSON"),
        ('{"gtboxes": []}', r"line 2: field ID must be a string"),
        ('{"ID": "a", "gtboxes": {}}', r"line 2 \(a\): field gtboxes must be a list"),
        ('{"ID": "a", "gtboxes": [{"fbox": [1, 2, 3, 4]}]}', r"line 2 \(a\): gtboxes\[0\]: field tag must be a string"),
        ('{"ID": "a", "gtboxes": [{"tag": "person", "vbox": [1, 2, 3]}]}', r"line 2 \(a\): gtboxes\[0\]\.vbox must be"),
        (
            '{"ID": "a", "gtboxes": [{"tag": "person", "hbox": [1, 2, -3, 4]}]}',
            r"line 2 \(a\): gtboxes\[0\]\.hbox has a negative",
        ),
    ],
)
def test_malformed_lines_name_the_file_line_and_field(tmp_path, line: str, message: str) -> None:
    path = tmp_path / "bad.odgt"
    path.write_text('{"ID": "ok", "gtboxes": []}\n' + line + "\n")
    with pytest.raises(ValueError, match=r"bad\.odgt, " + message):
        odgt.read(path)


def test_an_unknown_tag_is_not_counted_silently() -> None:
    with pytest.raises(ValueError, match=r"record 1 \(x\): gtboxes\[0\]\.tag 'head' is not 'person' or 'mask'"):
        odgt.stats([{"ID": "x", "gtboxes": [{"tag": "head", "hbox": [1, 2, 3, 4]}]}])


def test_a_box_of_no_width_or_height_is_a_box_and_a_bool_is_not_a_number() -> None:
    flat = {"ID": "f", "gtboxes": [{"tag": "person", "fbox": [1, 2, 0, 0], "hbox": [1, 2, 0, 0]}]}
    assert odgt.stats([flat]).instances == 1  # zero width and height: degenerate, not negative
    with pytest.raises(ValueError, match=r"gtboxes\[0\]\.fbox must be \[x, y, width, height\], got \[1, 2, True, 4\]"):
        odgt.stats([{"ID": "b", "gtboxes": [{"tag": "person", "fbox": [1, 2, True, 4]}]}])


def test_a_head_is_counted_only_on_a_person_neither_flag_ignores() -> None:
    def person(**flags) -> dict:
        return {"tag": "person", "hbox": [1, 2, 3, 4], **flags}

    boxes = [
        person(),
        person(extra={}),
        person(extra={"ignore": 0}),
        person(extra={"ignore": 1}),
        person(head_attr={"ignore": 1}),
        person(head_attr={"occ": 1}),
        {"tag": "person", "fbox": [1, 2, 3, 4]},
    ]
    assert odgt.head_boxes([{"ID": "h", "gtboxes": boxes}]) == 4  # fmt: skip


def test_edges_of_an_odgt_file(tmp_path) -> None:
    """Records named by their place when no file is, an empty list has no busiest image, a reader's name in its
    type error, and a blank line skipped."""
    with pytest.raises(ValueError, match=r"^record 1: field ID must be a string, got None$"):
        odgt.stats([{"gtboxes": []}])
    with pytest.raises(ValueError, match=r"^record: field ID must be a string, got 7$"):
        odgt.validate_record({"ID": 7, "gtboxes": []})
    assert odgt.stats([]).max_per_image == 0
    with pytest.raises(TypeError, match=r"^an \.odgt file must be a path"):
        odgt.read(3)
    path = tmp_path / "gaps.odgt"
    path.write_text('{"ID": "a", "gtboxes": []}\n\n{"ID": "b", "gtboxes": []}\n', encoding="utf-8")
    assert [r["ID"] for r in odgt.read(path)] == ["a", "b"]
