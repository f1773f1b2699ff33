"""Validity settings (``checks/conditions.py``), through the ``invalid_count`` / ``invalid_percent``
metrics: every setting, every named ``valid_format``, and the malformed configurations.

Results are compared whole (``CheckResult`` equality covers every field but ``failed_rows``).
"""

from __future__ import annotations

import datetime as dt
import math

import pytest

from cola_core import Cola
from cola_helpers import metric, refused, run_one

pytestmark = [pytest.mark.spark, pytest.mark.connect]


# -- invalid_count / invalid_percent: validity settings ----------------------------------


def invalid_values_of(df, column, settings) -> list:
    """The values the rule counts as invalid, read back through the split."""
    rule = {"type": "invalid_count", "column": column, "must_be": "= 0", **settings}
    return sorted((row[column] for row in Cola().split(df, [rule]).invalid.collect()), key=repr)


@pytest.fixture
def countries(spark):
    return spark.createDataFrame([("BR",), ("US",), ("XX",), ("usa",), (None,)], "country string")


@pytest.mark.parametrize(
    ("settings", "invalid"),
    [
        ({"valid_values": ["BR", "US"]}, ["XX", "usa"]),
        ({"invalid_values": ["XX"]}, ["XX"]),
        ({"valid_regex": "^[A-Z]{2}$"}, ["usa"]),
        ({"valid_format": "alphanumeric"}, []),
        ({"valid_min_length": 3}, ["BR", "US", "XX"]),
        ({"valid_max_length": 2}, ["usa"]),
        ({"valid_length": 2}, ["usa"]),
        # Soda: valid only when every setting holds; breaking any one is enough to be invalid.
        ({"valid_length": 2, "invalid_values": ["XX"]}, ["XX", "usa"]),
        ({"valid_values": ["BR", "US", "usa"], "valid_regex": "^[A-Z]+$"}, ["XX", "usa"]),
        # A value listed in missing_values is missing, never invalid.
        ({"valid_length": 2, "missing_values": ["usa"]}, []),
    ],
)
def test_each_validity_setting_on_strings(countries, settings, invalid):
    assert invalid_values_of(countries, "country", settings) == invalid


def test_invalid_count_result_and_percent(countries):
    assert run_one(countries, {"type": "invalid_count", "column": "country", "valid_values": ["BR", "US"],
                               "must_be": "= 0"}) == metric(
        "invalid_count", False, "invalid_count(country) = 2 violates must_be (= 0)", 2, 2, code="invalid_count(country)"
    )
    # The percentage is over every row (5), NULLs included.
    assert run_one(countries, {"type": "invalid_percent", "column": "country", "valid_values": ["BR", "US"],
                               "must_be": "< 50%", "warn": "< 10%"}) == metric(
        "invalid_percent", True, "invalid_percent(country) = 40 violates warn (< 10%)", 0, 40.0, "warn",
        code="invalid_percent(country)",
    )


@pytest.mark.parametrize(
    ("settings", "invalid"),
    [
        ({"valid_min": 0}, [-5.0, float("nan")]),
        ({"valid_max": 10}, [50.0, float("nan")]),
        ({"valid_min": 0, "valid_max": 10}, [-5.0, 50.0, float("nan")]),
        ({"valid_values": [1, 2.5]}, [-5.0, 50.0, float("nan")]),
        ({"invalid_values": [50, "N/A"]}, [50.0]),
    ],
)
def test_numeric_validity_on_a_double_column(spark, settings, invalid):
    df = spark.createDataFrame([(1.0,), (2.5,), (-5.0,), (50.0,), (float("nan"),), (None,)], "amount double")

    def readable(values):  # NaN != NaN, so compare its name
        return sorted(("NaN" if math.isnan(v) else v for v in values), key=repr)

    assert readable(invalid_values_of(df, "amount", settings)) == readable(invalid)


def test_numeric_validity_on_strings_holding_numbers(spark):
    # Under ANSI Spark a bare comparison of 'abc' with 0 fails the job; here it is invalid.
    df = spark.createDataFrame([("5",), ("50",), ("abc",), ("",), (None,)], "amount string")
    assert invalid_values_of(df, "amount", {"valid_min": 0, "valid_max": 10}) == ["", "50", "abc"]
    assert invalid_values_of(df, "amount", {"valid_values": [5, 50]}) == ["", "abc"]


def test_validity_on_an_empty_dataframe_and_an_all_null_column(spark):
    for rows in ([], [(None,), (None,)]):
        df = spark.createDataFrame(rows, "email string")
        assert run_one(df, {"type": "invalid_percent", "column": "email", "valid_format": "email",
                            "must_be": "= 0"}) == metric(
            "invalid_percent", True, "invalid_percent(email) = 0 meets must_be (= 0)", 0, 0.0,
            code="invalid_percent(email)",
        )


@pytest.mark.parametrize(
    ("settings", "reason"),
    [
        ({}, "invalid_count needs at least one validity setting (valid_values, invalid_values, valid_format, "
             "valid_regex, valid_min, valid_max, valid_min_length, valid_max_length, valid_length), "
             'e.g. {"valid_format": "email"}'),
        ({"valid_format": "mail"}, "unknown valid_format 'mail'; known formats are alphanumeric, boolean, "
                                   "cnpj, cpf, credit_card, date, decimal, email, integer, ip, ipv4, number, "
                                   "percentage, phone, timestamp, url, uuid"),
        ({"valid_min": 10, "valid_max": 1}, "'valid_min' (10) is greater than 'valid_max' (1)"),
        ({"valid_regex": "[a-"}, "'valid_regex' is not a valid regex (unterminated character set at position 0)\n"
                                 "    [a-\n    ^"),
    ],
)
def test_malformed_validity_config(settings, reason):
    rule = {"type": "invalid_count", "column": "c", "must_be": "= 0", **settings}
    assert refused(rule) == f"rules[0] (invalid_count): {reason}"


# -- every named valid_format ------------------------------------------------------------

NAMED_FORMAT_CASES = {
    "email": (
        ["first.last+tag@mail.example.co.uk", "o'brien@example.ie", "USER@EXAMPLE.COM", "a_b@sub-domain.example.com",
         "user@example.xn--p1ai"],
        ["plainaddress", "a..b@x.com", ".a@x.com", "user@localhost", "user@-example.com", "a b@x.com",
         "user@example.c", "user@@example.com"],
    ),
    "uuid": (
        ["123e4567-e89b-12d3-a456-426614174000", "123E4567-E89B-12D3-A456-426614174000",
         "00000000-0000-0000-0000-000000000000"],
        ["123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456-42661417400g", "{123e4567-e89b-12d3-a456-426614174000}"],
    ),
    "phone": (
        ["+55 (11) 98765-4321", "(11) 98765-4321", "+1 555-123-4567", "555-2368", "+44 20 7946 0958", "11987654321",
         "+33.1.23.45.67.89"],
        ["12345", "555-ABC", "call me", "+55 (11) 98765-4321 ext. 2", "1234567890123456"],
    ),
    "integer": (["42", "-7", "+0", "007"], ["4.2", "1e3", "", " 42", "forty"]),
    "decimal": (["3.14", "-0,5", ".5", "42"], ["1e3", "3.", "1.2.3", "abc"]),
    "number": (["1e-3", "-2.5E10", "42", "3,14"], ["e10", "1e", "--1", "1,000.5"]),
    "percentage": (["12%", "12.5 %", "-3,5%"], ["12", "%12", "12 percent"]),
    "date": (["2024-02-29", "1999-12-31"], ["2024-13-01", "31/12/2024", "2024-1-5", "2024-01-32"]),
    "timestamp": (
        ["2024-01-31 23:59:59", "2024-01-31T23:59:59.123Z", "2024-01-31T10:00+05:30", "2024-01-31 10:00",
         "2024-01-31 10:00:00.123456"],
        ["2024-01-31", "2024-01-31 24:00:00", "31/01/2024 10:00", "2024-01-31 10"],
    ),
    "ip": (
        ["192.168.0.1", "2001:db8::1", "::1", "::", "fe80::1%eth0", "::ffff:192.0.2.128",
         "2001:0db8:85a3:0000:0000:8a2e:0370:7334", "64:ff9b::192.0.2.33"],
        ["256.1.1.1", "1::2::3", "12345::1", "192.168.0", "gggg::1", "1:2:3:4:5:6:7:8:9", ":::"],
    ),
    "ipv4": (["10.0.0.255", "0.0.0.0", "255.255.255.255"], ["2001:db8::1", "01.2.3.4", "1.2.3.4.5", "1.2.3"]),
    "url": (
        ["https://example.com", "http://localhost:8080/path?q=1#top", "HTTPS://Example.COM/a",
         "ftp://user@files.example.org/x.csv", "http://192.168.0.1/", "http://[2001:db8::1]:8080/"],
        ["www.example.com", "https://", "http://exa mple.com", "mailto:a@b.com", "https://-bad-.com"],
    ),
    "boolean": (["true", "FALSE", "Y", "0", "no"], ["maybe", "2", "truee"]),
    "alphanumeric": (["abc123", "ABC", "7"], ["abc-123", "São", "a b"]),
    "credit_card": (
        ["4111 1111 1111 1111", "4111-1111-1111-1111", "4111111111111111", "3782 822463 10005", "6011000990139424"],
        ["4111 1111 1111", "4111  1111 1111 1111", "abcd efgh ijkl mnop", "41111111111111111111"],
    ),
    "cpf": (["123.456.789-09", "12345678909"], ["123.456.789.09", "1234567890", "123.45678909", "123.456.789-0X"]),
    "cnpj": (
        ["12.345.678/0001-95", "12345678000195", "12.ABC.345/01DE-35", "12ABC34501DE35"],
        ["12.345.678/0001-9X", "1234567800019", "12.345.678/0001/95", "12.abc.345/01de-35"],
    ),
}


def test_every_named_format_has_cases():
    from cola_core.checks.conditions import NAMED_FORMATS

    assert sorted(NAMED_FORMAT_CASES) == sorted(NAMED_FORMATS)


@pytest.mark.parametrize("fmt", sorted(NAMED_FORMAT_CASES))
def test_named_valid_format_on_real_world_values(spark, fmt):
    good, bad = NAMED_FORMAT_CASES[fmt]
    df = spark.createDataFrame([(v,) for v in [*good, *bad, None]], "value string")
    assert invalid_values_of(df, "value", {"valid_format": fmt}) == sorted(bad, key=repr)


def test_named_formats_read_typed_columns_through_their_text(spark):
    df = spark.createDataFrame(
        [(7, True, dt.date(2024, 1, 31), dt.datetime(2024, 1, 31, 10, 0, 0))], "n int, ok boolean, d date, ts timestamp"
    )
    for column, fmt in (("n", "integer"), ("ok", "boolean"), ("d", "date"), ("ts", "timestamp")):
        assert invalid_values_of(df, column, {"valid_format": fmt}) == []


# -- long value lists: one JVM call for the list, the same verdicts -----------------------


LONG_LIST = 200  # over common.columns.ONE_TEXT_FROM: the list travels as one JSON text


@pytest.fixture
def typed(spark):
    schema = "s string, i int, l bigint, d double, b boolean, dec decimal(10,2), day date"
    from decimal import Decimal

    rows = [
        ("v1", 1, 2**62, 0.5, True, Decimal("1.25"), dt.date(2024, 1, 1)),
        ("v2", 2, -(2**62), -1.5, True, Decimal("2.50"), dt.date(2024, 1, 2)),
        ("é\\'\"😀", 300, 7, 1e300, False, Decimal("3.75"), dt.date(2024, 1, 3)),
        (None, None, None, None, None, None, None),
    ]
    return spark.createDataFrame(rows, schema)


@pytest.mark.parametrize(
    ("column", "values", "invalid"),
    [
        ("s", [f"v{n}" for n in range(LONG_LIST)] + ["é\\'\"😀"], []),
        ("s", [f"v{n}" for n in range(2, LONG_LIST)], ["v1", "é\\'\"😀"]),
        # Text that is no number, and numbers of another kind, can never equal an int.
        ("i", ["N/A", 2.5, *range(2, LONG_LIST)], [1, 300]),
        ("l", [2**62, 7, *range(-LONG_LIST, 0)], [-(2**62)]),
        ("d", [0.5, "1e300", *[n / 4 for n in range(LONG_LIST)]], [-1.5]),
        ("b", [True] * LONG_LIST, [False]),
        ("dec", ["1.25", 2.5, *range(100, 100 + LONG_LIST)], [3.75]),
        ("day", ["2024-01-01", "2022-02-30", *[f"2023-01-{n % 28 + 1:02d}" for n in range(LONG_LIST)]],
         [dt.date(2024, 1, 2), dt.date(2024, 1, 3)]),
    ],
)
def test_a_long_value_list_gives_the_verdicts_a_short_one_gives(typed, column, values, invalid):
    from decimal import Decimal

    found = invalid_values_of(typed, column, {"valid_values": values})
    expected = [Decimal(str(v)).quantize(Decimal("0.01")) if column == "dec" else v for v in invalid]
    assert found == sorted(expected, key=repr)
    # The same list as invalid_values: exactly the other present values.
    present = [row[column] for row in typed.select(column).collect() if row[column] is not None]
    assert invalid_values_of(typed, column, {"invalid_values": values}) == sorted(
        (v for v in present if v not in expected), key=repr
    )


def test_a_long_value_list_costs_a_few_py4j_calls_not_one_per_value(typed):
    from benchmarks.py4j_calls import count_py4j_calls
    from cola_helpers import CONNECT

    if CONNECT:
        pytest.skip("classic mode only: Spark Connect builds its literals without Py4J")
    rules = [{"type": "invalid_count", "column": "s", "valid_values": [f"v{n}" for n in range(10_000)], "must_be": "= 0"}]
    Cola().run(typed, rules)  # warm: pyspark's lookups cached
    with count_py4j_calls() as calls:
        [result] = Cola().run(typed, rules)
    assert result.message == "invalid_count(s) = 1 violates must_be (= 0)"
    assert calls.total < 150, calls.by_kind
