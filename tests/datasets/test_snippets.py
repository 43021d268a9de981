"""Run the dataset chapter's snippets as a reader would and assert what they print, independently of gpukb."""

from __future__ import annotations

import re
import runpy
from collections.abc import Callable

from tests.helpers import ROOT


def _fields(out: str) -> dict[str, str]:
    return {k.strip(): v.strip() for k, v in re.findall(r"^([^:\n]+):\s+(\S.*)$", out, flags=re.M)}


def check_coco_stats(out: str) -> None:
    doc = runpy.run_path(str(ROOT / "snippets/datasets/coco_stats.py"), run_name="check")["doc"]
    persons = [a for a in doc["annotations"] if a["category_id"] == 1]
    plain = [a for a in persons if a["iscrowd"] == 0]
    per_image = {i["id"]: sum(a["image_id"] == i["id"] for a in plain) for i in doc["images"]}
    f = _fields(out)
    assert int(f["images"]) == len(doc["images"]) == 3
    assert int(f["person instances"]) == len(plain) == 5  # the car and the crowd region are not persons
    assert int(f["crowd regions (iscrowd=1)"]) == len(persons) - len(plain) == 1
    assert f["persons per image"] == f"{len(plain) / len(doc['images']):.2f}" == "1.67"
    assert f["persons per non-empty image"] == f"{len(plain) / sum(v > 0 for v in per_image.values()):.2f}" == "2.50"
    assert int(f["most persons in one image"]) == max(per_image.values()) == 3


def check_odgt_stats(out: str) -> None:
    images = runpy.run_path(str(ROOT / "snippets/datasets/odgt_stats.py"), run_name="check")["images"]
    boxes = [b for image in images for b in image["gtboxes"]]
    persons = [b for b in boxes if b["tag"] == "person"]
    kept = [b for b in persons if b["extra"]["ignore"] == 0]
    f = _fields(out)
    assert int(f["images"]) == len(images) == 2
    assert int(f["person instances"]) == len(kept) == 3
    assert int(f["ignored persons"]) == len(persons) - len(kept) == 1
    assert int(f["ignore regions ('mask')"]) == sum(b["tag"] == "mask" for b in boxes) == 1
    assert f["persons per image"] == "1.50"
    assert int(f["usable head boxes"]) == sum(b["head_attr"]["ignore"] == 0 for b in kept) == 2


def check_edf_header(out: str) -> None:
    lines = out.splitlines()
    assert lines[:4] == [
        "EEG Fpz-Cz         100 Hz  uV",
        "EEG Pz-Oz          100 Hz  uV",
        "EOG horizontal     100 Hz  uV",
        "Temp rectal          1 Hz  uV",
    ]
    assert lines[4] == "files: 3, subjects: 2 ('SC4001', 'SC4012')"
    assert lines[5] == "EEG channels per file: (2,), EEG rates (Hz): (100.0,)"
    assert lines[6] == f"hours recorded: {3 * 60 / 3600:.2f}"  # three one-minute files


def check_query_catalog(out: str) -> None:
    import tomllib

    raw = tomllib.loads((ROOT / "src/gpukb/data/datasets/eeg.toml").read_text())
    expected = [
        e
        for e in raw["dataset"]
        if e["verification"]["status"] == "verified"
        and e.get("eeg", {}).get("subjects", 0) >= 50
        and "motor" in " ".join([e["name"], *e["aliases"], e["task"], e["eeg"].get("paradigm", "")]).lower()
    ]
    rows = re.findall(r"^(\S+)\s+(\d+) subjects\s+(\d+) channels\s+(\S+) Hz\s+checked (\S+) against: (.+)$", out, re.M)
    assert len(rows) == len(out.splitlines()) == len(expected) >= 3
    for (ident, subjects, channels, rate, checked, kinds), e in zip(rows, expected, strict=True):
        assert ident == e["id"]
        assert (int(subjects), int(channels), float(rate)) == (
            e["eeg"]["subjects"],
            e["eeg"]["channels"],
            e["eeg"]["sampling_rate_hz"],
        )
        assert checked == e["verification"]["checked"].isoformat()
        assert kinds.split(", ") == [s["kind"] for s in e["verification"]["sources"]]


#: The checks of every snippet under snippets/datasets/, by path (the global snippet test can merge this).
CHECKS: dict[str, Callable[[str], None]] = {
    "snippets/datasets/coco_stats.py": check_coco_stats,
    "snippets/datasets/edf_header.py": check_edf_header,
    "snippets/datasets/odgt_stats.py": check_odgt_stats,
    "snippets/datasets/query_catalog.py": check_query_catalog,
}
