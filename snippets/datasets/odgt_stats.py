"""Count images, persons, ignored persons and ignore regions in a CrowdHuman .odgt file."""

# --8<-- [start:example]
import json
import tempfile
from pathlib import Path

from gpukb.datasets import odgt

# Two images in CrowdHuman's layout: one JSON object per line, boxes as [x, y, width, height].
images = [
    {
        "ID": "273271,c9db000d5146c15",
        "gtboxes": [
            {
                "tag": "person",
                "fbox": [72, 202, 163, 503],
                "vbox": [72, 202, 163, 398],
                "hbox": [171, 208, 62, 83],
                "extra": {"ignore": 0},
                "head_attr": {"ignore": 0},
            },
            {
                "tag": "person",
                "fbox": [199, 180, 144, 499],
                "vbox": [199, 180, 144, 499],
                "hbox": [272, 189, 57, 73],
                "extra": {"ignore": 0},
                "head_attr": {"ignore": 1},
            },  # head box hidden: ignore it for heads only
            {
                "tag": "person",
                "fbox": [310, 190, 40, 90],
                "vbox": [310, 190, 40, 90],
                "hbox": [320, 190, 15, 18],
                "extra": {"ignore": 1},
                "head_attr": {"ignore": 1},
            },  # a person on a poster: ignored
            {"tag": "mask", "fbox": [500, 150, 300, 200], "extra": {"ignore": 1}},  # a dense crowd: ignore region
        ],
    },
    {
        "ID": "273271,1017c000ac1360b7",
        "gtboxes": [
            {
                "tag": "person",
                "fbox": [30, 40, 80, 220],
                "vbox": [30, 40, 80, 160],
                "hbox": [55, 42, 30, 36],
                "extra": {"ignore": 0},
                "head_attr": {"ignore": 0},
            },
        ],
    },
]

with tempfile.TemporaryDirectory() as tmp:
    path = Path(tmp, "annotation_train.odgt")
    path.write_text("\n".join(json.dumps(image) for image in images) + "\n")
    records = odgt.read(path)

s = odgt.stats(records)
print(f"images:                   {s.images}")
print(f"person instances:         {s.instances}")
print(f"ignored persons:          {s.ignored_instances}")
print(f"ignore regions ('mask'):  {s.ignore_regions}")
print(f"persons per image:        {s.persons_per_image:.2f}")
print(f"usable head boxes:        {odgt.head_boxes(records)}")
# --8<-- [end:example]
