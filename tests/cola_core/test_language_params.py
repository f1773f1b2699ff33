"""Parameter kinds (``language/params.py``): what each kind accepts, and the words used when it does not."""

from __future__ import annotations

import datetime as dt

import pytest

from cola_core.language.params import (
    BOOL,
    LONG_RANGE,
    MAPPING,
    NUMBER,
    ORDERED,
    SCALAR_LIST,
    STRING,
    STRING_LIST,
    STRING_MAP,
    THRESHOLD,
    WHOLE,
    Param,
)


@pytest.mark.parametrize(
    ("kind", "accepted", "refused"),
    [
        (STRING, ["a", " x "], ["", "  ", 1, None]),
        (STRING_LIST, [["a"], ("a", "b")], [[], ["a", ""], "a", [1]]),
        (NUMBER, [0, -1.5, LONG_RANGE[0], LONG_RANGE[1]], [True, "1", float("nan"), LONG_RANGE[1] + 1]),
        (WHOLE, [0, LONG_RANGE[1]], [-1, 1.0, True, LONG_RANGE[1] + 1]),
        (ORDERED, [1, 2.5, "2024-01-31", dt.date(2024, 1, 31)], ["", None, float("inf")]),
        (THRESHOLD, ["< 5%", 3, ""], [None, [1], float("nan")]),
        (BOOL, [True, False], [0, "true"]),
        (MAPPING, [{}, {"a": 1}], [[], "a"]),
        (STRING_MAP, [{"id": "int"}], [{}, {"id": ""}, {"": "int"}, {"id": 1}]),
        (SCALAR_LIST, [[1, "a", None, True, dt.date(2024, 1, 1)]], [[], [[1]], [2**63], [{"a": 1}]]),
    ],
)
def test_what_each_kind_accepts(kind, accepted, refused):
    assert [kind.accepts(value) for value in accepted] == [True] * len(accepted)
    assert [kind.accepts(value) for value in refused] == [False] * len(refused)


def test_the_words_and_ranges_of_the_kinds():
    assert (STRING.describe, NUMBER.describe, WHOLE.describe, BOOL.describe) == (
        "a non-empty string", "a number", "a whole number >= 0", "true or false",
    )
    assert LONG_RANGE == (-(2**63), 2**63 - 1)
    assert (NUMBER.whole_range, WHOLE.whole_range, SCALAR_LIST.whole_range, STRING.whole_range) == (
        LONG_RANGE, LONG_RANGE, LONG_RANGE, None,
    )
    assert Param(STRING) == Param(STRING, required=False, default=None)
