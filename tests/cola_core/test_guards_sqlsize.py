"""Bounded work: a call that builds a value as large as a constant says (``repeat``,
``array_repeat``, ``sequence``, ``lpad``/``rpad``, ``space``, format widths...) is refused in pure
Python, before Spark could fold it on the driver or build it on every row."""

from __future__ import annotations

import pytest

from cola_core import Cola, ColaRuleError
from cola_core.guards.sqlguard import MAX_BUILT_SIZE, check_expression, check_query
from cola_core.guards.sqlsize import MAX_BUILT_WORK

REPEAT = "the length of its text times its count"
ADDED = "the sizes of its arguments added"
MAPPED = "the size of its lambda's value times the elements of its array"
SEQUENCE = "(stop - start) / step elements"
# How the refusal says each function's size is reckoned.
HOW = {
    "repeat": REPEAT, "array_repeat": "the size of its element times its count", "sequence": SEQUENCE,
    "lpad": "its length", "rpad": "its length", "space": "its count", "format_number": "its decimal places",
    "format_string": "the widths and precisions of its format", "printf": "the widths and precisions of its format",
    "array_join": "its array's elements, and its delimiter between each two",
    "concat_ws": "its arguments added, and its separator between each two elements",
    "regexp_replace": "its text times the length of its replacement",
    "transform": MAPPED, "zip_with": MAPPED, "aggregate": MAPPED, "concat": ADDED, "array": ADDED,
}


def bound(key: str, function: str, size: str, how: str | None = None) -> str:
    how = HOW[function] if how is None else how
    return (
        f"'{key}' calls {function}() to build a value of {size} characters or elements (for {function}(), {how}); "
        f"a rule may build at most {MAX_BUILT_SIZE:,} characters or elements, so that it cannot exhaust Spark's memory"
    )


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        # The constant form, folded on the driver; and its per-row forms with a constant count.
        ("length(repeat('a', 2000000000)) > 0", bound("expression", "repeat", "2,000,000,000")),
        ("size(array_repeat(id, 2000000000)) > 0",
         bound("expression", "array_repeat", "2,000,000,000")),
        ("length(repeat(cast(id AS string), 2000000000)) > 0", bound("expression", "repeat", "2,000,000,000")),
        # Other functions that build a value of a size an argument gives.
        ("length(lpad(name, 50000000, '0')) > 0", bound("expression", "lpad", "50,000,000")),
        ("length(rpad(name, 50000000)) > 0", bound("expression", "rpad", "50,000,000")),
        ("length(space(1e9)) > 0", bound("expression", "space", "1,000,000,000")),
        ("size(sequence(1, 100000000)) > 0",
         bound("expression", "sequence", "100,000,000")),
        ("size(sequence(0, 1000000000, 10)) > 0",
         bound("expression", "sequence", "100,000,001")),
        ("length(format_number(id, 20000000)) > 0",
         bound("expression", "format_number", "20,000,000")),
        ("length(format_string('%900000000s', name)) > 0",
         bound("expression", "format_string", "900,000,000")),
        ("length(printf('%.5000000f', id)) > 0",
         bound("expression", "printf", "5,000,000")),
        # Sizes written as constant arithmetic, casts or typed literals, and names in backticks.
        ("length(repeat('a', 1000 * 1000 * 1000)) > 0", bound("expression", "repeat", "1,000,000,000")),
        ("length(repeat('a', CAST(2e9 AS INT))) > 0", bound("expression", "repeat", "2,000,000,000")),
        ("length(repeat('a', 2000000000L)) > 0", bound("expression", "repeat", "2,000,000,000")),
        ("length(`repeat`('a', 2000000000)) > 0", bound("expression", "repeat", "2,000,000,000")),
        ("length(system.builtin.repeat('a', 2000000000)) > 0",
         bound("expression", "repeat", "2,000,000,000")),
        # Small constants that multiply: nested calls, and a long text repeated.
        ("length(repeat(repeat('a', 100000), 100000)) > 0", bound("expression", "repeat", "10,000,000,000")),
        ("length(repeat('abcd', 300000)) > 0", bound("expression", "repeat", "1,200,000")),
        ("size(array_repeat(repeat('a', 1000), 10000)) > 0",
         bound("expression", "array_repeat", "10,000,000")),
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


THREE_THOUSAND = ", ".join(["repeat('a', 1000000)"] * 3000)


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        # Sizes written as arithmetic, string constants and their casts, and numeric functions.
        ("length(repeat('a', 1e6 * 1e6)) > 0", bound("expression", "repeat", "1,000,000,000,000")),
        ("length(repeat('a', '2000000000')) > 0", bound("expression", "repeat", "2,000,000,000")),
        ("length(repeat('a', cast('2e9' AS int))) > 0", bound("expression", "repeat", "2,000,000,000")),
        ("length(repeat('a', int('2000000000'))) > 0", bound("expression", "repeat", "2,000,000,000")),
        ("length(repeat('a', power(10, 12))) > 0", bound("expression", "repeat", "1,000,000,000,000")),
        ("length(space(1e12 div 1000)) > 0", bound("expression", "space", "1,000,000,000")),
        ("length(lpad('', 1e12)) > 0", bound("expression", "lpad", "1,000,000,000,000")),
        # Arrays of arrays, and what is made of them.
        ("size(array_repeat(array_repeat(1, 1000000), 1000000)) > 0",
         bound("expression", "array_repeat", "1,000,000,000,000")),
        ("size(flatten(array_repeat(sequence(1, 1000000), 1000))) > 0",
         bound("expression", "array_repeat", "1,000,000,000")),
        ("size(explode(array_repeat('x', 3e11))) > 0",
         bound("expression", "array_repeat", "300,000,000,000")),
        ("size(sequence(1L, 300000000000L)) > 0", bound("expression", "sequence", "300,000,000,000")),
        # The two that the guard let through: a lambda's value per element, and a concat of many.
        ("size(transform(sequence(1, 1e6), x -> repeat('a', 1e6))) > 0",
         bound("expression", "transform", "1,000,000,000,000")),
        (f"length(concat({THREE_THOUSAND})) > 0", bound("expression", "concat", "3,000,000,000")),
        ("size(array(repeat('a', 1000000), repeat('b', 1000000))) > 0",
         bound("expression", "array", "2,000,000")),
        ("size(zip_with(sequence(1, 1000000), sequence(1, 1000000), (x, y) -> repeat('a', 1000))) > 0",
         bound("expression", "zip_with", "1,000,000,000")),
        ("size(transform(array_repeat(1, 1000), x -> transform(array_repeat(1, 1000), y -> repeat('a', 1000)))) > 0",
         bound("expression", "transform", "1,000,000,000")),
        ("length(aggregate(sequence(1, 1000000), '', (acc, x) -> concat(acc, 'aaaa'))) > 0",
         bound("expression", "aggregate", "4,000,000")),
        # Texts joined, and texts that multiply a separator or a replacement.
        ("length(concat_ws(',', repeat('a', 600000), repeat('b', 600000))) > 0",
         bound("expression", "concat_ws", "1,200,001")),
        ("length(array_join(array_repeat('a', 1000000), repeat('b', 1000000))) > 0",
         bound("expression", "array_join", "1,000,000,000,000")),
        ("length(regexp_replace(repeat('a', 1000000), 'a', repeat('b', 1000000))) > 0",
         bound("expression", "regexp_replace", "1,000,000,000,000")),
        ("length(format_string('%s%s', repeat('a', 1000000), repeat('a', 1000000))) > 0",
         bound("expression", "format_string", "2,000,000")),
        # A sequence of timestamps or dates with a constant step (the 315 billion elements).
        ("size(sequence(timestamp'0001-01-01', timestamp'9999-12-31', interval 1 second)) > 0",
         bound("expression", "sequence", "315,537,811,201")),
        ("size(sequence(to_timestamp('2000-01-01'), to_timestamp('2010-01-01'), interval '1' second)) > 0",
         bound("expression", "sequence", "315,619,201")),
        ("size(sequence(cast('2000-01-01' AS timestamp), cast('2000-01-02' AS timestamp), "
         "make_dt_interval(0, 0, 0, 0.001))) > 0", bound("expression", "sequence", "86,400,001")),
        ("size(sequence(DATE '2000-01-01', DATE '2000-01-01' + INTERVAL 9000 YEARS)) > 0",
         bound("expression", "sequence", "3,287,183")),
    ],
)
def test_sizes_read_through_whole_expressions_are_refused_before_spark(condition, message):
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([{"type": "expression", "expression": condition}])
    assert str(raised.value) == f"rules[0] (expression): {message}"


def test_a_joined_text_and_the_work_of_a_lambda_are_bounded():
    joined = "length(repeat('a', 1000000) || repeat('b', 1000000)) > 0"
    with pytest.raises(ColaRuleError) as raised:
        check_expression(joined, "where")
    assert str(raised.value) == (
        "rules: 'where' joins with || to build a value of 2,000,000 characters or elements (for ||, the sizes of "
        "its operands added); a rule may build at most 1,000,000 characters or elements, so that it cannot exhaust "
        "Spark's memory"
    )
    # Each value within the bound, but a million of them built one after another.
    with pytest.raises(ColaRuleError) as raised:
        check_expression("exists(sequence(1, 1000000), x -> length(repeat('a', 1000)) > 5)", "where")
    assert str(raised.value) == (
        "rules: 'where' calls exists() to build 1,002,000,001 characters or elements in all (every value built "
        f"inside it, a lambda's once per element of its array); a rule may build at most {MAX_BUILT_WORK:,} in all, "
        "so that it cannot take Spark unbounded work"
    )
    # Or a query's columns, each within the bound.
    with pytest.raises(ColaRuleError) as raised:
        check_query("SELECT " + ", ".join(["repeat('a', 1000000)"] * 101), "query")
    assert str(raised.value) == (
        "rules: 'query' builds 101,000,000 characters or elements in all from constants (every value its calls "
        f"build, added up); a rule may build at most {MAX_BUILT_WORK:,} in all, so that it cannot take Spark "
        "unbounded work"
    )


@pytest.mark.parametrize(
    "condition",
    [
        "length(repeat(repeat('a', 1000), 1000)) > 0",  # a million, at the bound
        "aggregate(sequence(1, 1000), 0, (acc, x) -> acc + x) > 0",
        "transform(tags, x -> upper(x)) IS NOT NULL",
        "size(sequence(DATE '2024-01-01', DATE '2024-12-31')) = 366",
        "size(sequence(TIMESTAMP '2024-01-01', TIMESTAMP '2024-01-02', INTERVAL 1 HOUR)) = 25",
        "size(sequence(start_at, end_at, INTERVAL 1 SECOND)) > 0",  # the data gives the bounds: run time
        "concat(first, ' ', last) <> '' AND status IN ('a', 'b')",
        "amount * 1000000 * 1000000 > 0",
        "cast(amount AS decimal(38, 2)) > 1e30",
    ],
)
def test_expressions_within_the_bound_or_sized_by_the_data_pass(condition):
    Cola().parse([{"type": "expression", "expression": condition}])


def test_a_long_list_of_values_is_no_value_built():
    """An IN list's values are values of their own, not one text: 60,000 of 20 characters pass
    (the list a rule may hold is bounded elsewhere: params.MAX_LIST_VALUES)."""
    listed = ", ".join(f"'{number:020d}'" for number in range(60000))
    check_expression(f"code IN ({listed})")
    check_query(f"SELECT * FROM t WHERE code NOT IN ({listed})")
