"""Count images, persons, persons per image and crowd regions in a COCO-style annotation file."""

# --8<-- [start:example]
import json
import tempfile
from pathlib import Path

from gpukb.datasets import coco

# A tiny annotation file in COCO's layout: three street images, persons and one car.
doc = {
    "images": [
        {"id": 1, "file_name": "street_a.png", "width": 2048, "height": 1024},
        {"id": 2, "file_name": "street_b.png", "width": 2048, "height": 1024},
        {"id": 3, "file_name": "empty_road.png", "width": 2048, "height": 1024},
    ],
    "categories": [{"id": 1, "name": "person"}, {"id": 3, "name": "car"}],
    "annotations": [
        {"id": 10, "image_id": 1, "category_id": 1, "bbox": [410, 380, 42, 118], "iscrowd": 0},
        {"id": 11, "image_id": 1, "category_id": 1, "bbox": [470, 385, 40, 112], "iscrowd": 0},
        {"id": 12, "image_id": 1, "category_id": 3, "bbox": [900, 420, 260, 150], "iscrowd": 0},
        {"id": 13, "image_id": 2, "category_id": 1, "bbox": [120, 300, 60, 170], "iscrowd": 0},
        {"id": 14, "image_id": 2, "category_id": 1, "bbox": [205, 310, 55, 160], "iscrowd": 0},
        {"id": 15, "image_id": 2, "category_id": 1, "bbox": [280, 305, 58, 166], "iscrowd": 0},
        {"id": 16, "image_id": 2, "category_id": 1, "bbox": [600, 290, 400, 200], "iscrowd": 1},  # a crowd
    ],
}

with tempfile.TemporaryDirectory() as tmp:
    path = Path(tmp, "instances.json")
    path.write_text(json.dumps(doc))
    s = coco.stats(coco.load(path), category="person")

print(f"images:                      {s.images}")
print(f"person instances:            {s.instances}")
print(f"crowd regions (iscrowd=1):   {s.ignore_regions}")
print(f"persons per image:           {s.persons_per_image:.2f}")
print(f"persons per non-empty image: {s.persons_per_nonempty_image:.2f}")
print(f"most persons in one image:   {s.max_per_image}")
# --8<-- [end:example]
