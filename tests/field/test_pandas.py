"""Pets into a pandas DataFrame and back, with real pandas, as notebook users do.

The README's one line, ``pd.DataFrame([pet.to_dict(use_api_names=False) for pet in pets])``,
and every way of reading rows back that pandas offers: records, one row as a Series (numpy
integers), named tuples, and the nullable dtypes of ``convert_dtypes`` (``pandas.NA``).
"""

from __future__ import annotations

from typing import Any

import numpy
import pandas as pd
import pytest

from animalstore_client import Pet, PetStatus
from animalstore_client.testing import FakeAnimalStore

KEY = "sk-pandas"


@pytest.fixture
def pets() -> list[Pet]:
    store = FakeAnimalStore(api_keys={KEY})
    store.add_pet("Rex", 3, "available")
    store.add_pet("Tom", 1, None)
    store.add_pet("Kit", 2, "sold")
    with store.client(api_key=KEY) as client:
        return client.list_pets()


def frame_of(pets: list[Pet]) -> pd.DataFrame:
    """The README's line."""
    return pd.DataFrame([pet.to_dict(use_api_names=False) for pet in pets])


def test_one_line_gives_python_columns_string_statuses_and_a_missing_status(
    pets: list[Pet],
) -> None:
    frame = frame_of(pets)

    assert list(frame.columns) == ["id", "name", "category_id", "status"]
    assert frame["id"].tolist() == [1, 2, 3]
    assert frame["category_id"].dtype == numpy.int64
    assert frame["status"].tolist()[0::2] == ["available", "sold"]
    assert all(type(status) is str for status in frame["status"].dropna())
    assert frame["status"].isna().tolist() == [False, True, False]
    assert frame.loc[frame["status"] == "sold", "name"].tolist() == ["Kit"]


def test_records_read_back_are_the_same_pets(pets: list[Pet]) -> None:
    frame = frame_of(pets)
    assert [Pet.from_dict(row) for row in frame.to_dict("records")] == pets


def cells(frame: pd.DataFrame, index: int) -> dict[str, Any]:
    """A row as the values pandas holds in each column (numpy scalars, ``pandas.NA`` ...)."""
    return {column: frame[column].iloc[index] for column in frame.columns}


def test_a_row_of_numpy_integers_reads_back(pets: list[Pet]) -> None:
    frame = frame_of(pets)
    rows = [cells(frame, i) for i in range(len(frame))]
    assert type(rows[0]["id"]) is numpy.int64
    restored = [Pet.from_dict(row) for row in rows]
    assert restored == pets
    assert all(type(pet.id) is int and type(pet.category_id) is int for pet in restored)


def test_named_tuples_read_back(pets: list[Pet]) -> None:
    frame = frame_of(pets)
    rows = [row._asdict() for row in frame.itertuples(index=False)]
    assert [Pet.from_dict(row) for row in rows] == pets


def test_nullable_dtypes_with_pandas_na_read_back(pets: list[Pet]) -> None:
    frame = frame_of(pets).convert_dtypes()
    rows = [cells(frame, i) for i in range(len(frame))]
    assert rows[1]["status"] is pd.NA
    restored = [Pet.from_dict(row) for row in rows]
    assert restored == pets
    assert restored[1].status is None
    assert restored[0].status is PetStatus.AVAILABLE


def test_a_frame_of_new_rows_makes_new_pets_and_a_bad_row_names_its_field() -> None:
    frame = pd.DataFrame({"id": [7, 8], "name": ["Max", "Bo"], "category_id": [1.5, 2]})
    with pytest.raises(ValueError, match=r"^\$\.categoryId: expected an integer, got float 1\.5$"):
        Pet.from_dict(frame.to_dict("records")[0])
