"""Bounded work: a call that builds a value as large as a constant says (``repeat``,
``array_repeat``, ``sequence``, ``lpad``/``rpad``, ``space``, format widths...) is refused in pure
Python, before Spark could fold it on the driver or build it on every row."""

from __future__ import annotations

import pytest

from cola_core import Cola, ColaRuleError
from cola_core.guards.sqlguard import MAX_BUILT_SIZE, check_expression, check_query


def bound(key: str, function: str, size: str, how: str) -> str:
    return (
        f"'{key}' calls {function}() to build a value of {size} characters or elements (for {function}(), {how}); "
        f"a rule may build at most {MAX_BUILT_SIZE:,} characters or elements, so that it cannot exhaust Spark's memory"
    )


REPEAT = "the length of its text times its count"


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        # The constant form, folded on the driver; and its per-row forms with a constant count.
        ("length(repeat('a', 2000000000)) > 0", bound("expression", "repeat", "2,000,000,000", REPEAT)),
        ("size(array_repeat(id, 2000000000)) > 0",
         bound("expression", "array_repeat", "2,000,000,000", "the size of its element times its count")),
        ("length(repeat(cast(id AS string), 2000000000)) > 0", bound("expression", "repeat", "2,000,000,000", REPEAT)),
        # Other functions that build a value of a size an argument gives.
        ("length(lpad(name, 50000000, '0')) > 0", bound("expression", "lpad", "50,000,000", "its length")),
        ("length(rpad(name, 50000000)) > 0", bound("expression", "rpad", "50,000,000", "its length")),
        ("length(space(1e9)) > 0", bound("expression", "space", "1,000,000,000", "its count")),
        ("size(sequence(1, 100000000)) > 0",
         bound("expression", "sequence", "100,000,000", "(stop - start) / step elements")),
        ("size(sequence(0, 1000000000, 10)) > 0",
         bound("expression", "sequence", "100,000,001", "(stop - start) / step elements")),
        ("length(format_number(id, 20000000)) > 0",
         bound("expression", "format_number", "20,000,000", "its decimal places")),
        ("length(format_string('%900000000s', name)) > 0",
         bound("expression", "format_string", "900,000,000", "the widths and precisions of its format")),
        ("length(printf('%.5000000f', id)) > 0",
         bound("expression", "printf", "5,000,000", "the widths and precisions of its format")),
        # Sizes written as constant arithmetic, casts or typed literals, and names in backticks.
        ("length(repeat('a', 1000 * 1000 * 1000)) > 0", bound("expression", "repeat", "1,000,000,000", REPEAT)),
        ("length(repeat('a', CAST(2e9 AS INT))) > 0", bound("expression", "repeat", "2,000,000,000", REPEAT)),
        ("length(repeat('a', 2000000000L)) > 0", bound("expression", "repeat", "2,000,000,000", REPEAT)),
        ("length(`repeat`('a', 2000000000)) > 0", bound("expression", "repeat", "2,000,000,000", REPEAT)),
        ("length(system.builtin.repeat('a', 2000000000)) > 0",
         bound("expression", "repeat", "2,000,000,000", REPEAT)),
        # Small constants that multiply: nested calls, and a long text repeated.
        ("length(repeat(repeat('a', 100000), 100000)) > 0", bound("expression", "repeat", "10,000,000,000", REPEAT)),
        ("length(repeat('abcd', 300000)) > 0", bound("expression", "repeat", "1,200,000", REPEAT)),
        ("size(array_repeat(repeat('a', 1000), 10000)) > 0",
         bound("expression", "array_repeat", "10,000,000", "the size of its element times its count")),
    ],
)
def test_a_constant_size_above_the_bound_is_refused_before_spark(condition, message):
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([{"type": "expression", "expression": condition}])
    assert str(raised.value) == f"rules[0] (expression): {message}"


@pytest.mark.parametrize(
    "condition",
    [
        "lpad(code, 10, '0') = '0000000042'",
        "length(repeat('-', 1000000)) > 0",  # at the bound
        "repeat(name, id) = ''",  # the data gives the size: the engine survives it when it runs
        "size(sequence(1, id)) > 0",
        "format_string('%05d', id) = '00042'",
        "length(space(3)) = 3",
        "repeat('ab', 2) = 'abab'",
    ],
)
def test_sizes_within_the_bound_or_from_the_data_pass(condition):
    Cola().parse([{"type": "expression", "expression": condition}])


def test_every_piece_of_sql_is_bounded_where_it_is_written():
    too_large = "repeat('a', 2000000000)"
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([{"type": "not_null", "columns": ["a"], "where": f"length({too_large}) > 0"}])
    assert str(raised.value) == f"rules[0] (not_null): {bound('where', 'repeat', '2,000,000,000', REPEAT)}"
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([{"type": "sql", "query": f"SELECT {too_large} AS x"}])
    assert str(raised.value) == f"rules[0] (sql): {bound('query', 'repeat', '2,000,000,000', REPEAT)}"
    with pytest.raises(ColaRuleError) as raised:
        check_query(f"SELECT {too_large}", "query")
    assert str(raised.value) == f"rules: {bound('query', 'repeat', '2,000,000,000', REPEAT)}"
    # Inside a literal or a comment it is text, not a call.
    check_expression(f"name <> '{too_large}' -- {too_large}")
