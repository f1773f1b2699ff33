"""The threshold language: parsing, judging, errors with a caret, and parse(str(t)) == t."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cola_core.errors import ThresholdError
from cola_core.language.thresholds import MAX_THRESHOLD_DIGITS, Quantity, Threshold, parse_threshold, threshold_of
from cola_helpers import THRESHOLD_HINT


@pytest.mark.parametrize(
    ("text", "operator", "values", "shown"),
    [
        ("> 0", ">", (0.0,), "> 0"),
        ("< 5", "<", (5.0,), "< 5"),
        (">= 100", ">=", (100.0,), ">= 100"),
        ("<= 10", "<=", (10.0,), "<= 10"),
        ("= 0", "=", (0.0,), "= 0"),
        ("== 3", "=", (3.0,), "= 3"),
        ("!= 0", "!=", (0.0,), "!= 0"),
        ("0", "=", (0.0,), "= 0"),
        ("12.50", "=", (12.5,), "= 12.5"),
        ("< 5%", "<", (5.0,), "< 5%"),
        ("<5%", "<", (5.0,), "< 5%"),
        ("between 10 and 20", "between", (10.0, 20.0), "between 10 and 20"),
        ("BETWEEN 1 AND 2", "between", (1.0, 2.0), "between 1 and 2"),
        ("not between 1 and 2", "not between", (1.0, 2.0), "not between 1 and 2"),
        ("> -1.5", ">", (-1.5,), "> -1.5"),
        ("< 30s", "<", (30.0,), "< 30s"),
        ("> 30m", ">", (1800.0,), "> 30m"),
        ("<= 2h", "<=", (7200.0,), "<= 2h"),
        ("< 1d", "<", (86400.0,), "< 1d"),
        ("< 1.5w", "<", (907200.0,), "< 1.5w"),
        ("between 1h and 2d", "between", (3600.0, 172800.0), "between 1h and 2d"),
    ],
)
def test_parses_every_form(text, operator, values, shown):
    threshold = parse_threshold(text)
    assert threshold.operator == operator
    assert tuple(bound.value for bound in threshold.bounds) == values
    assert str(threshold) == shown


@pytest.mark.parametrize(
    ("text", "accepted", "refused"),
    [
        ("> 0", [0.1, 5], [0, -1]),
        (">= 100", [100, 101], [99.99]),
        ("< 5%", [4.99, 0], [5, 6]),
        ("<= 10", [10, -3], [10.01]),
        ("= 0", [0, 0.0], [1e-9]),
        ("!= 0", [1, -1], [0]),
        ("between 10 and 20", [10, 15, 20], [9.99, 20.01]),
        ("not between 1 and 2", [0.99, 2.01], [1, 1.5, 2]),
        ("< 1d", [86399], [86400]),
    ],
)
def test_judges_values_inclusively(text, accepted, refused):
    threshold = parse_threshold(text)
    assert [threshold.accepts(v) for v in accepted] == [True] * len(accepted)
    assert [threshold.accepts(v) for v in refused] == [False] * len(refused)


def test_equal_thresholds_compare_on_the_normalised_value():
    assert parse_threshold("0") == parse_threshold("= 0") == parse_threshold("== 0.0")
    assert parse_threshold("< 1d") == parse_threshold("< 24h") == parse_threshold("< 86400")
    assert parse_threshold("< 5%") == parse_threshold("< 5")
    assert parse_threshold("< 5") != parse_threshold("<= 5")
    assert len({parse_threshold("< 1d"), parse_threshold("< 24h")}) == 1


@pytest.mark.parametrize(
    ("text", "problem", "caret"),
    [
        ("", "the threshold is empty", 0),
        ("between 10 and", "expected a number, got the end", 14),
        ("< abc", "unexpected 'a'", 2),
        ("5 6", "unexpected '6' after the threshold", 2),
        ("<< 5", "expected a number, got '<'", 1),
        ("not 5", "expected 'between' after 'not'", 4),
        ("between 20 and 10", "the lower bound 20 is above the upper bound 10", 8),
        ("between 1 2", "expected 'and' between the two bounds", 10),
        ("< 5x", "unexpected 'x'", 3),
        ("and 5", "expected a comparison such as '<' or 'between', got 'and'", 0),
        # Non-finite and unbounded numbers never reach a float comparison (issue 10).
        ("< inf", "a threshold number must be finite, got 'inf'", 2),
        ("> -Infinity", "a threshold number must be finite, got '-Infinity'", 2),
        ("!= NaN", "a threshold number must be finite, got 'NaN'", 3),
        ("< 1e400", "exponents such as '1e3' are not part of the language; write the number in digits (1000)", 3),
        ("between 1 and 2E5", "exponents such as '1e3' are not part of the language; write the number in digits (1000)", 15),
        ("< " + "9" * 39, "the number has 39 digits; a threshold number has at most 38", 2),
        ("< 0." + "1" * 38, "the number has 39 digits; a threshold number has at most 38", 2),
        ("between 1 and " + "9" * 5000, "the number has 5000 digits; a threshold number has at most 38", 14),
        ("not between -" + "9" * 4301 + " and 0", "the number has 4301 digits; a threshold number has at most 38", 12),
        ("< \u0663", "unexpected '\u0663'", 2),  # an Arabic-Indic digit: only ASCII digits are numbers
    ],
)
def test_errors_show_the_text_with_a_caret(text, problem, caret):
    with pytest.raises(ThresholdError) as raised:
        parse_threshold(text)
    assert str(raised.value) == f"{problem}; {THRESHOLD_HINT}\n    {text}\n    {' ' * caret}^"
    assert raised.value.offset == caret
    assert isinstance(raised.value, ValueError)


_amounts = st.decimals(min_value=-10**6, max_value=10**6, places=3, allow_nan=False, allow_infinity=False)
_suffixes = st.sampled_from(["", "%", "s", "m", "h", "d", "w"])
_quantities = st.builds(Quantity, _amounts, _suffixes)


@st.composite
def _thresholds(draw) -> Threshold:
    operator = draw(st.sampled_from([">", ">=", "<", "<=", "=", "!=", "between", "not between"]))
    if operator in ("between", "not between"):
        low, high = sorted([draw(_quantities), draw(_quantities)], key=lambda q: q.value)
        return Threshold(operator, (low, high))
    return Threshold(operator, (draw(_quantities),))


@given(_thresholds())
def test_parse_of_str_round_trips(threshold):
    assert parse_threshold(str(threshold)) == threshold


@given(st.text(max_size=30))
def test_any_text_parses_or_raises_threshold_error(text):
    try:
        parse_threshold(text)
    except ThresholdError as error:
        assert 0 <= error.offset <= len(text)


def test_quantity_keeps_the_written_number():
    assert str(Quantity(Decimal("1.50"), "h")) == "1.5h"
    assert str(Quantity(Decimal("100"), "")) == "100"


def test_numbers_of_38_digits_are_the_widest_kept_exactly():
    widest = "9" * MAX_THRESHOLD_DIGITS
    assert str(parse_threshold(f"<= {widest}")) == f"<= {widest}"
    assert str(threshold_of(10**37)) == "= 1" + "0" * 37


def test_a_plain_float_too_wide_to_write_in_38_digits_is_refused():
    with pytest.raises(ThresholdError) as raised:
        threshold_of(1e300)
    assert raised.value.problem == "the number has 301 digits; a threshold number has at most 38"


def test_a_whole_float_keeps_every_digit_as_a_threshold():
    # 1e20 read from YAML is the number 100000000000000000000, never the text '1e+20'.
    assert str(threshold_of(1e20)) == "= 100000000000000000000"


# -- change and anomaly forms ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind", "relative", "operator", "values", "shown"),
    [
        ("change between -10% and 10%", "change", True, "between", [-10.0, 10.0], "change between -10% and 10%"),
        ("CHANGE < 500", "change", False, "<", [500.0], "change < 500"),
        ("change not between -5 and 5", "change", False, "not between", [-5.0, 5.0], "change not between -5 and 5"),
        ("change < 1h", "change", False, "<", [3600.0], "change < 1h"),
        ("anomaly < 3", "anomaly", False, "<", [3.0], "anomaly < 3"),
        ("anomaly <= 2.5", "anomaly", False, "<=", [2.5], "anomaly <= 2.5"),
    ],
)
def test_parses_the_change_and_anomaly_forms(text, kind, relative, operator, values, shown):
    threshold = parse_threshold(text)
    assert (threshold.kind, threshold.is_relative, threshold.operator) == (kind, relative, operator)
    assert [bound.value for bound in threshold.bounds] == values
    assert threshold.compares_with_history
    assert str(threshold) == shown
    assert parse_threshold(shown) == threshold


def test_a_change_is_not_the_value_it_bounds():
    assert parse_threshold("change < 5") != parse_threshold("< 5")
    assert parse_threshold("change < 5%") != parse_threshold("change < 5")
    assert not parse_threshold("< 5%").compares_with_history


@pytest.mark.parametrize(
    ("text", "problem", "caret"),
    [
        ("change", "expected a comparison after 'change', such as 'change < 10%'", 6),
        ("change between -10% and 10", "write both bounds of a change in % (relative) or neither (absolute)", 0),
        ("anomaly > 3", "an anomaly threshold bounds the score from above, such as 'anomaly < 3'", 8),
        ("anomaly < 3%", "an anomaly score is a plain number, not 3%", 8),
        ("anomaly", "an anomaly threshold bounds the score from above, such as 'anomaly < 3'", 7),
    ],
)
def test_malformed_change_and_anomaly_forms(text, problem, caret):
    with pytest.raises(ThresholdError) as raised:
        parse_threshold(text)
    assert str(raised.value) == f"{problem}; {THRESHOLD_HINT}\n    {text}\n    {' ' * caret}^"
