"""Suggested rule blocks: named for why, ordinary rules, and passing on the data they came from."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cola_core import Cola
from cola_core.errors import ColaError
from cola_core.language.profiles import ColumnProfile, Profile
from cola_core.ruleset.suggestions import suggest_rules, suggestions_yaml


def _profile(sample: float | None = None) -> Profile:
    return Profile(
        rows=200,
        sample=sample,
        columns=(
            ColumnProfile("id", "bigint", "number", 200, nulls=0, distinct=200, distinct_exact=True, minimum=1, maximum=200),
            ColumnProfile("status", "string", "text", 200, nulls=3, distinct=3, distinct_exact=True,
                          top_values=(("paid", 120), ("pending", 50), ("shipped", 27)), formats={"alphanumeric": 197}),
            ColumnProfile("email", "string", "text", 200, nulls=40, distinct=160, distinct_exact=True,
                          formats={"email": 159, "alphanumeric": 1}),
            ColumnProfile("amount", "decimal(10,2)", "number", 200, nulls=0, distinct=150,
                          minimum=Decimal("-0.10"), maximum=Decimal("99.99")),
            ColumnProfile("ratio", "double", "number", 200, nulls=0, distinct=150, nan=1, infinite=0,
                          minimum=0.5, maximum=2.0),
            ColumnProfile("day", "date", "date", 200, nulls=0, distinct=10, distinct_exact=True,
                          minimum=dt.date(2024, 1, 1), maximum=dt.date(2024, 1, 11)),
            ColumnProfile("tags", "array<string>", "collection", 200, nulls=0),
            ColumnProfile("nested", "struct<a:int>", "skipped", 200, skipped="a struct column"),
        ),
    )


def test_each_suggestion_says_why_and_holds_the_observed_bounds():
    assert suggest_rules(_profile()) == [
        {"type": "row_count", "min": 200, "max": 200, "name": "200 rows when profiled"},
        {"type": "not_null", "columns": ["id"], "name": "0 NULLs in 200 rows"},
        {"type": "unique", "columns": ["id"], "name": "all 200 present values are distinct"},
        {"type": "range", "column": "id", "min": 1, "max": 200, "name": "values from 1 to 200 when profiled"},
        {"type": "missing_percent", "column": "status", "must_be": "<= 1.5", "name": "3 NULLs in 200 rows (1.5%)"},
        {"type": "invalid_count", "column": "status", "valid_values": ["paid", "pending", "shipped"],
         "must_be": "= 0", "name": "3 distinct values"},
        {"type": "invalid_percent", "column": "status", "valid_format": "alphanumeric", "must_be": "<= 0",
         "name": "100% of present values are alphanumeric"},
        # 20% NULLs are not rare, and 40 NULLs are no key: only the format (159 of 160 emails).
        {"type": "invalid_percent", "column": "email", "valid_format": "email", "must_be": "<= 0.5",
         "name": "99.375% of present values are email"},
        {"type": "not_null", "columns": ["amount"], "name": "0 NULLs in 200 rows"},
        {"type": "range", "column": "amount", "min": -0.1, "max": 99.99, "name": "values from -0.1 to 99.99 when profiled"},
        # NaN lies in no range: none for ratio.
        {"type": "not_null", "columns": ["ratio"], "name": "0 NULLs in 200 rows"},
        {"type": "not_null", "columns": ["day"], "name": "0 NULLs in 200 rows"},
        {"type": "range", "column": "day", "min": "2024-01-01", "max": "2024-01-11",
         "name": "values from 2024-01-01 to 2024-01-11 when profiled"},
        {"type": "not_null", "columns": ["tags"], "name": "0 NULLs in 200 rows"},
    ]


def test_a_margin_widens_every_bound_by_a_tenth_outwards():
    widened = {(r["type"], r.get("column")): r for r in suggest_rules(_profile(), "margin")}
    assert widened[("row_count", None)] == {"type": "row_count", "min": 180, "max": 220, "name": "200 rows when profiled"}
    assert (widened[("range", "id")]["min"], widened[("range", "id")]["max"]) == (-19, 220)
    assert (widened[("range", "amount")]["min"], widened[("range", "amount")]["max"]) == (-10.11, 110.0)
    assert (widened[("range", "day")]["min"], widened[("range", "day")]["max"]) == ("2023-12-31", "2024-01-12")
    assert widened[("missing_percent", "status")]["must_be"] == "<= 1.65"
    assert widened[("invalid_percent", "email")]["must_be"] == "<= 0.55"


def test_a_sample_proves_no_key_nor_a_row_count_and_an_empty_table_only_its_schema():
    sampled = suggest_rules(_profile(sample=0.5))
    assert sampled[0] == {"type": "row_count", "min": 1, "name": "rows are present (profiled from a sample)"}
    assert [r for r in sampled if r["type"] == "unique"] == []
    empty = Profile(0, (ColumnProfile("id", "bigint", "number", 0, nulls=0, distinct=0, distinct_exact=True),
                        ColumnProfile("tags", "array<string>", "collection", 0, nulls=0)))
    assert suggest_rules(empty) == [{
        "type": "schema", "name": "the profiled table's columns and types (it had no rows)",
        "column_types": {"id": "bigint", "tags": "array<string>"},
    }]


def test_an_unknown_strictness_is_refused():
    with pytest.raises(ColaError) as raised:
        suggest_rules(_profile(), "loose")
    assert str(raised.value) == "strictness must be 'exact' or 'margin', got 'loose'"
    with pytest.raises(ColaError):
        Cola().suggest(_profile(), strictness="loose")
    # Every suggestion is an ordinary rule block.
    assert len(Cola().parse(suggest_rules(_profile(), "margin"))) == 14


def test_the_newest_timestamp_column_gets_a_freshness_rule_in_whole_days():
    stamps = Profile(10, (
        ColumnProfile("created", "timestamp", "timestamp", 10, nulls=0, minimum=dt.datetime(2024, 1, 1),
                      maximum=dt.datetime(2024, 1, 5, 6)),
        ColumnProfile("updated", "timestamp", "timestamp", 10, nulls=1, minimum=dt.datetime(2024, 1, 1),
                      maximum=dt.datetime(2024, 1, 8, 12)),
    ))
    now = dt.datetime(2024, 1, 10)
    assert suggest_rules(stamps, now=now)[1] == {
        "type": "freshness", "column": "updated", "must_be": "< 3d",
        "name": "the newest updated was 1.5 days old when profiled",
    }
    assert suggest_rules(stamps, "margin", now=now)[1]["must_be"] == "< 3d"  # 1.65 days, rounded up, and one more
    assert suggest_rules(stamps, now=dt.datetime(2024, 1, 8, 12))[1]["must_be"] == "< 1d"


def test_the_yaml_file_has_a_comment_per_rule_and_json_values():
    rules = [
        {"type": "not_null", "columns": ["id"], "name": "0 NULLs in 2 rows"},
        {"type": "range", "column": "day", "min": "2024-01-01", "max": "2024-01-02", "name": "values from\n2024"},
    ]
    assert suggestions_yaml(rules) == (
        "# Rules suggested by `cola suggest` from a profile of the data. Each passes on the data\n"
        "# it was profiled from; review the bounds before you commit the file.\n"
        "rules:\n"
        "  # 0 NULLs in 2 rows\n"
        '  - type: "not_null"\n'
        '    columns: ["id"]\n'
        '    name: "0 NULLs in 2 rows"\n'
        "  # values from 2024\n"
        '  - type: "range"\n'
        '    column: "day"\n'
        '    min: "2024-01-01"\n'
        '    max: "2024-01-02"\n'
        '    name: "values from\\n2024"\n'
    )


# -- on real data: every suggestion passes where it came from -----------------------------

_TABLES = st.lists(
    st.tuples(
        st.one_of(st.none(), st.integers(-(2**40), 2**40)),
        st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True, width=64)),
        st.one_of(st.none(), st.sampled_from(["paid", "pending", "a@b.com", "x y", "", "2024-01-02", "ß"])),
        st.one_of(st.none(), st.dates(dt.date(1900, 1, 1), dt.date(2100, 12, 31))),
        st.one_of(st.none(), st.decimals(-1000, 1000, places=2, allow_nan=False)),
        st.one_of(st.none(), st.datetimes(dt.datetime(1990, 1, 1), dt.datetime(2025, 12, 31))),
    ),
    max_size=25,
)


@pytest.mark.spark
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(rows=_TABLES, strictness=st.sampled_from(["exact", "margin"]))
def test_every_suggested_rule_passes_on_the_data_it_was_profiled_from(spark, rows, strictness):
    df = spark.createDataFrame(rows, "n bigint, x double, s string, d date, m decimal(10,2), t timestamp")
    cola = Cola()
    profile = cola.profile(df)
    rules = cola.suggest(profile, strictness=strictness)
    assert rules == cola.suggest(profile, strictness=strictness)  # deterministic
    results = cola.run(df, rules)
    failing = [(rule, result.message) for rule, result in zip(rules, results, strict=True) if result.severity != "pass"]
    assert failing == [], failing
