"""Parameter kinds (``language/params.py``): what each kind accepts, and the words used when it does not;
and the one-line description every built-in parameter declares for the rule reference."""

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
from cola_core.ruleset import registry as registry_module
from cola_core.ruleset.registry import default_checks


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


def _description_problem(text):
    """What is wrong with a parameter's description, or None when it is fit for the rule reference."""
    if not text:
        return "is empty"
    if len(text.splitlines()) != 1 or text != text.strip():
        return "is not one line without surrounding space"
    if len(text) > 100:
        return f"is {len(text)} characters long (at most 100)"
    if not text[0].isupper():
        return "does not start with a capital letter"
    if text.endswith("."):
        return "ends with a period"
    return None


def test_every_built_in_parameter_has_a_one_line_description(monkeypatch):
    # The built-in types only: no decorator registration another test may have left behind.
    monkeypatch.setattr(registry_module, "_registered", {})
    checked, undeclared, problems = [], [], []
    for rule_type, cls in default_checks().items():
        if cls.params_spec is None:
            undeclared.append(rule_type)
            continue
        for name, param in cls.params_spec.items():
            checked.append((rule_type, name))
            problem = _description_problem(param.description)
            if problem is not None:
                problems.append(f"{rule_type}.{name}: {param.description!r} {problem}")
    assert problems == []
    assert undeclared == []
    # 27 rule types (metrics that share a class, such as min and max, each count), 130 parameters.
    assert (len({rule_type for rule_type, _ in checked}), len(checked)) == (27, 130)


def test_a_parameter_declared_without_a_description_has_an_empty_one():
    # The default: custom checks written before descriptions existed keep working.
    assert Param(STRING).description == ""
    assert Param(STRING, required=True) == Param(STRING, required=True, description="")
