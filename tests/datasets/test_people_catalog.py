"""What the person-detection summary claimed, decided by the catalog's sourced figures (the errata name these tests).

The figures themselves are researched and sourced in people.toml; these tests pin the verdicts the errata page states.
"""

from __future__ import annotations

import pytest

from gpukb.datasets.catalog import load


@pytest.fixture  # per test (load() caches), so mutmut maps every test to the catalog code it reads
def people():
    return load("people")


def test_crowdhuman_has_15000_training_images_of_a_larger_set(people) -> None:
    d = people.get("crowdhuman")
    assert d.status == "corrected"
    assert d.people.splits["train"] == 15000
    assert d.people.images == sum(d.people.splits.values()) > 15000  # the 470K instances are not in 15,000 images
    assert d.people.persons_per_image == pytest.approx(22.6, abs=0.05)


def test_mot20_has_fewer_than_2_2_million_boxes(people) -> None:
    d = people.get("mot20")
    assert d.status == "corrected"
    assert 2_000_000 < d.people.instances < 2_200_000
    assert d.people.video is True


def test_scut_head_counts(people) -> None:
    d = people.get("scut-head")
    assert d.status == "corrected"
    assert (d.people.images, d.people.instances) == (4405, 111251)


@pytest.mark.parametrize("ident", ["humanflow-unconfirmed", "nightpersons-unconfirmed", "multiviewpeople-unconfirmed"])
def test_the_2024_names_are_unconfirmed_and_carry_no_figures(people, ident: str) -> None:
    d = people.get(ident)
    assert d.status == "unconfirmed"
    assert d.people is None or all(v is None for v in d.people.model_dump().values())
    assert d.verification.notes_said
