"""``gpukb datasets``: list, show, papers and stats, and usage errors with status 2."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gpukb.cli import main
from gpukb.datasets import eeg_files
from gpukb.datasets.catalog import load


def test_list_filters_and_counts(capsys) -> None:
    assert main(["datasets", "list", "--domain", "eeg", "--status", "corrected"]) == 0
    out = capsys.readouterr().out
    corrected = [d.id for d in load("eeg").datasets if d.status == "corrected"]
    assert out.strip().endswith(f"{len(corrected)} of {len(load('eeg').datasets)} entries in eeg.toml")
    listed = [line.split()[0] for line in out.splitlines()[2:-2]]
    assert listed == corrected


def test_list_min_subjects(capsys) -> None:
    assert main(["datasets", "list", "--search", "motor", "--min-subjects", "100"]) == 0
    rows = capsys.readouterr().out.splitlines()[2:-2]
    assert [r.split()[0] for r in rows] == ["eegmmidb"]


def test_show_by_alias(capsys) -> None:
    assert main(["datasets", "show", "BNCI2014_001"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("BCI Competition IV dataset 2a  [bci-iv-2a]  verified, checked 2026-11-23")
    assert "sampling rate hz" in out
    assert "250" in out
    assert "moabb/datasets/bnci.py" in out


def test_show_unknown_is_a_usage_error(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["datasets", "show", "BCI IV 2c"])
    assert exit_info.value.code == 2
    assert "no dataset with id, name or alias 'BCI IV 2c'" in capsys.readouterr().err


def test_papers(capsys) -> None:
    assert main(["datasets", "papers"]) == 0
    out = capsys.readouterr().out
    assert out.count("unconfirmed") == len(load("eeg").papers)


def test_stats_of_coco_odgt_and_edf_files(tmp_path, capsys) -> None:
    doc = {
        "images": [{"id": 1}, {"id": 2}],
        "categories": [{"id": 1, "name": "person"}],
        "annotations": [
            {"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 5, 9], "iscrowd": 0},
            {"id": 2, "image_id": 1, "category_id": 1, "bbox": [9, 0, 5, 9], "iscrowd": 1},
        ],
    }
    (tmp_path / "a.json").write_text(json.dumps(doc))
    assert main(["datasets", "stats", str(tmp_path / "a.json")]) == 0
    assert capsys.readouterr().out.splitlines()[-1].split() == ["2", "1", "0.50", "1", "0", "1"]
    (tmp_path / "a.odgt").write_text(json.dumps({"ID": "x", "gtboxes": [{"tag": "mask", "fbox": [0, 0, 1, 1]}]}))
    assert main(["datasets", "stats", str(tmp_path / "a.odgt")]) == 0
    assert capsys.readouterr().out.splitlines()[-1].split() == ["1", "0", "0.00", "1", "0", "0"]
    edf = eeg_files.write_edf(tmp_path / "r.edf", {"C3": (128, np.zeros(128 * 90))}, patient="s1 X X X")
    assert main(["datasets", "stats", str(edf), str(edf)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].split() == ["2", "1", "1", "128", "0.05"]
    with pytest.raises(SystemExit) as exit_info:
        main(["datasets", "stats", str(tmp_path / "a.json"), str(tmp_path / "a.odgt")])
    assert exit_info.value.code == 2
