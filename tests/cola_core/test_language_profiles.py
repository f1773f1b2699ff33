"""Profile and ColumnProfile: frozen values, strict JSON, and a readable table."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

import pytest

from cola_core.language.profiles import ColumnProfile, Profile


def _profile() -> Profile:
    return Profile(
        rows=200,
        columns=(
            ColumnProfile("id", "bigint", "number", 200, nulls=0, distinct=200, distinct_exact=True,
                          minimum=1, maximum=200, mean=100.5, stddev=57.879184513951124),
            ColumnProfile("status", "string", "text", 200, nulls=10, distinct=3, distinct_exact=True,
                          min_length=4, max_length=7, top_values=(("paid", 120), ("pending", 50), ("shipped", 20))),
            ColumnProfile("email", "string", "text", 200, nulls=2, distinct=190, min_length=5, max_length=30,
                          formats={"email": 195}),
            ColumnProfile("day", "date", "date", 200, nulls=0, distinct=7, distinct_exact=True,
                          minimum=dt.date(2024, 1, 1), maximum=dt.date(2024, 1, 7), mean=dt.date(2024, 1, 4)),
            ColumnProfile("ratio", "double", "number", 200, nulls=0, distinct=150, nan=1, infinite=0,
                          minimum=0.0, maximum=float("inf")),
            ColumnProfile("nested", "struct<a:int>", "skipped", 200, skipped="a struct column has no statistics"),
        ),
    )


def test_the_table_shows_each_column_in_a_line():
    assert str(_profile()) == "\n".join([
        "Profile of 200 rows",
        "column  type           nulls    distinct  min         max         mean        top values / formats",
        "id      bigint         0 (0%)   200       1           200         100.5",
        "status  string         10 (5%)  3                                             paid: 120, pending: 50, shipped: 20",
        "email   string         2 (1%)   ~190                                          email 195",
        "day     date           0 (0%)   7         2024-01-01  2024-01-07  2024-01-04",
        "ratio   double         0 (0%)   ~150      0           inf",
        "nested  struct<a:int>                                                         skipped: a struct column has no statistics",
    ])


def test_to_dict_is_strict_json_and_a_column_is_found_by_name():
    data = _profile().to_dict()
    text = json.dumps(data, allow_nan=False)
    assert json.loads(text) == data
    assert data["columns"][4]["maximum"] == "Infinity"
    assert data["columns"][3]["mean"] == "2024-01-04"
    assert data["columns"][1]["null_percent"] == 5.0 and data["columns"][1]["top_values"][0] == ["paid", 120]
    assert _profile().column("email").present == 198
    with pytest.raises(KeyError):
        _profile().column("nope")


def test_a_profile_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        _profile().rows = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        _profile().column("email").formats["email"] = 0  # type: ignore[index]


def test_a_name_or_value_holding_a_newline_keeps_the_table_one_line_per_column():
    odd = Profile(2, (ColumnProfile("t\nz", "string", "text", 2, nulls=0, distinct=1, distinct_exact=True,
                                    top_values=(("it's\nnew", 2),)),))
    assert str(odd).splitlines() == [
        "Profile of 2 rows",
        "column  type    nulls   distinct  min  max  mean  top values / formats",
        "t z     string  0 (0%)  1                         it's new: 2",
    ]
