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
from cola_core.ruleset.suggestions import learned_rules, measured_values, suggest_rules, suggestions_yaml


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
        # A day's volume is never exactly the last one's: a tenth either way.
        {"type": "row_count", "must_be": "between 180 and 220", "name": "200 rows when profiled"},
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
    assert widened[("row_count", None)] == {"type": "row_count", "must_be": "between 160 and 240", "name": "200 rows when profiled"}
    assert (widened[("range", "id")]["min"], widened[("range", "id")]["max"]) == (-19, 220)
    assert (widened[("range", "amount")]["min"], widened[("range", "amount")]["max"]) == (-10.11, 110.0)
    assert (widened[("range", "day")]["min"], widened[("range", "day")]["max"]) == ("2023-12-31", "2024-01-12")
    assert widened[("missing_percent", "status")]["must_be"] == "<= 1.65"
    assert widened[("invalid_percent", "email")]["must_be"] == "<= 0.55"


def test_a_margin_stops_at_the_largest_double_and_at_the_calendar_s_ends():
    # Found by the property test below: 1.7976931348623157e308 widened by a tenth is infinity.
    extremes = Profile(rows=2, columns=(
        ColumnProfile("x", "double", "number", 2, nulls=0, nan=0, infinite=0, minimum=-1.0, maximum=1.7976931348623157e308),
        ColumnProfile("big", "double", "number", 2, nulls=0, nan=0, infinite=0, minimum=1e16, maximum=3e16),
        ColumnProfile("d", "date", "date", 2, nulls=0, minimum=dt.date(1, 1, 1), maximum=dt.date(9999, 12, 31)),
    ))
    ranges = [(r["min"], r["max"]) for r in suggest_rules(extremes, "margin") if r["type"] == "range"]
    assert ranges == [(-1.7976931348623158e307, 1.7976931348623157e308), (8e15, 3.2e16), ("0001-01-01", "9999-12-31")]


def test_a_sample_proves_no_key_nor_a_row_count_and_an_empty_table_only_its_schema():
    sampled = suggest_rules(_profile(sample=0.5))
    assert sampled[0] == {"type": "row_count", "must_be": "> 0", "name": "rows are present (profiled from a sample)"}
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
        "name": "the newest updated was 1.5 days old at 2024-01-10 00:00:00",
    }
    assert suggest_rules(stamps, "margin", now=now)[1]["must_be"] == "< 3d"  # 1.65 days, rounded up, and one more
    assert suggest_rules(stamps, now=dt.datetime(2024, 1, 8, 12))[1]["must_be"] == "< 1d"
    # The end of the data date's day, in UTC, when no instant is given.
    at_the_end = suggest_rules(stamps, data_date=dt.date(2024, 1, 9))[1]
    assert (at_the_end["must_be"], at_the_end["name"]) == (
        "< 3d", "the newest updated was 1.5 days old at the end of the data date",
    )


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
    # Today's data date: the run judges freshness by the clock, within the day.
    today = dt.datetime.now(dt.timezone.utc).date()
    rules = cola.suggest(profile, strictness=strictness, data_date=today)
    assert rules == cola.suggest(profile, strictness=strictness, data_date=today)  # deterministic
    results = cola.run(df, rules)
    failing = [(rule, result.message) for rule, result in zip(rules, results, strict=True) if result.severity != "pass"]
    assert failing == [], failing


# -- thresholds learned from the history store ------------------------------------------------

_LEARNABLE = [
    {"type": "row_count", "must_be": "between 100 and 100", "name": "100 rows when profiled"},
    {"type": "missing_percent", "column": "email", "must_be": "<= 2", "name": "2 NULLs in 100 rows (2%)"},
    {"type": "invalid_percent", "column": "email", "valid_format": "email", "must_be": "<= 1",
     "name": "99% of present values are email"},
    {"type": "not_null", "columns": ["id"], "name": "0 NULLs in 100 rows"},
]


def test_three_earlier_runs_teach_the_row_count_its_changes_and_the_shares_their_largest_value():
    earlier = [[90.0, 80.0, 100.0], [1.5, 3.0, 0.5], [0.0, 2.5, 1.0], [0.0, 0.0, 0.0]]
    assert learned_rules(_LEARNABLE, [100.0, 2.0, 1.0, None], earlier, "exact", "sales.orders") == [
        # Oldest first: 100, 80, 90, 100: -20%, +12.5%, +11.11...%.
        {"type": "row_count", "must_be": "change between -20% and 12.5%",
         "name": "rows changed by -20% to 12.5% from one run to the next in the last 4 runs of sales.orders"},
        {"type": "missing_percent", "column": "email", "must_be": "<= 3",
         "name": "NULLs from 0.5% to 3% in the last 4 runs of sales.orders"},
        {"type": "invalid_percent", "column": "email", "valid_format": "email", "must_be": "<= 2.5",
         "name": "values not email from 0% to 2.5% in the last 4 runs of sales.orders"},
        _LEARNABLE[3],  # a rule of no metric keeps what the profile said
    ]
    margin = learned_rules(_LEARNABLE, [100.0, 2.0, 1.0, None], earlier, "margin", "sales.orders")
    # A tenth of the span (32.5 points) outwards; a tenth of the largest share above it.
    assert [rule.get("must_be") for rule in margin] == [
        "change between -23.25% and 15.75%", "<= 3.3", "<= 2.75", None,
    ]


def test_fewer_than_three_earlier_runs_teach_nothing_and_an_empty_interval_makes_changes_absolute():
    few = [[90.0, 80.0], [1.5], [], []]
    assert learned_rules(_LEARNABLE, [100.0, 2.0, 1.0, None], few, "exact", "orders") == _LEARNABLE
    # A day of no rows has no relative change from it: the changes are counted in rows.
    empty_day = [[90.0, 0.0, 100.0], [], [], []]
    assert learned_rules(_LEARNABLE, [100.0, 2.0, 1.0, None], empty_day, "exact", "orders")[0] == {
        "type": "row_count", "must_be": "change between -100 and 90",
        "name": "rows changed by -100 rows to 90 rows from one run to the next in the last 4 runs of orders",
    }
    # From a sample, the profile's row count is not the table's: only the history speaks.
    assert learned_rules(_LEARNABLE[:1], [None], [[90.0, 80.0, 100.0]], "exact", "orders")[0]["must_be"] == (
        "change between -20% and 12.5%"
    )


def test_the_profile_measures_each_learnable_rule_as_the_rule_would():
    profile = _profile()
    rules = [
        {"type": "row_count", "must_be": "between 200 and 200"},
        {"type": "missing_percent", "column": "email", "must_be": "<= 20"},
        {"type": "invalid_percent", "column": "email", "valid_format": "email", "must_be": "<= 1"},
        {"type": "not_null", "columns": ["id"]},
    ]
    # 40 NULLs of 200 rows; 160 present, 159 of them emails: 1 invalid of 200 rows.
    assert measured_values(rules, profile) == [200.0, 20.0, 0.5, None]
    assert measured_values(rules, _profile(sample=0.5)) == [None, 20.0, 0.5, None]


def _orders_of(spark, rows: int, nulls: int, bad: int):
    data = [(n, None if n < nulls else ("bad" if n < nulls + bad else f"u{n}@example.com")) for n in range(rows)]
    return spark.createDataFrame(data, "id bigint, email string")


@pytest.mark.spark
def test_suggestions_learn_from_the_intervals_before_the_data_date_and_pass_judged_against_them(spark, tmp_path):
    store = str(tmp_path / "history")
    cola = Cola()
    block = [
        {"type": "row_count", "must_be": ">= 0"},
        {"type": "missing_percent", "column": "email", "must_be": "<= 100"},
        {"type": "invalid_percent", "column": "email", "valid_format": "email", "must_be": "<= 100"},
    ]
    days = {dt.date(2024, 3, 1): (20, 1, 0), dt.date(2024, 3, 2): (25, 0, 1), dt.date(2024, 3, 3): (24, 1, 0)}
    for day, shape in days.items():
        cola.run(_orders_of(spark, *shape), block, history=store, dataset="orders", data_date=day)
    today, df = dt.date(2024, 3, 4), _orders_of(spark, 30, 1, 0)
    profile = cola.profile(df)  # profiled once: each suggestion below reads only the history
    learned = cola.suggest(profile, history=store, dataset="orders", data_date=today, spark=spark)
    assert learned[:3] == [
        # 20, 25, 24, then today's 30: +25%, -4%, +25%.
        {"type": "row_count", "must_be": "change between -4% and 25%",
         "name": "rows changed by -4% to 25% from one run to the next in the last 4 runs of orders"},
        {"type": "not_null", "columns": ["id"], "name": "0 NULLs in 30 rows"},
        {"type": "unique", "columns": ["id"], "name": "all 30 present values are distinct"},
    ]
    assert [rule for rule in learned if rule.get("column") == "email"] == [
        {"type": "missing_percent", "column": "email", "must_be": "<= 5",
         "name": "NULLs from 0% to 5% in the last 4 runs of orders"},
        {"type": "invalid_percent", "column": "email", "valid_format": "email", "must_be": "<= 4",
         "name": "values not email from 0% to 4% in the last 4 runs of orders"},
    ]
    # Judged against that history, on the data they came from, every suggestion passes.
    results = cola.run(df, learned, history=store, dataset="orders", data_date=today)
    assert [(result.rule_type, result.severity) for result in results if result.severity != "pass"] == []
    # That run is now in the store, but a rerun for the same date reads only the days before it.
    assert cola.suggest(profile, history=store, dataset="orders", data_date=today, spark=spark) == learned
    # A backfill of 3 March has two earlier days: too few to learn from, so today's bounds.
    unlearned = cola.suggest(profile, data_date=dt.date(2024, 3, 3))
    assert cola.suggest(profile, history=store, dataset="orders", data_date=dt.date(2024, 3, 3), spark=spark) == (
        unlearned
    )
    # Another dataset's runs teach nothing.
    assert cola.suggest(profile, history=store, dataset="returns", data_date=today, spark=spark) == cola.suggest(
        profile, data_date=today
    )
    assert unlearned[0] == {"type": "row_count", "must_be": "between 27 and 33", "name": "30 rows when profiled"}


def test_a_history_needs_a_dataset_and_a_dataset_needs_a_history():
    with pytest.raises(ColaError, match=r"^a history needs 'dataset', the name of what was checked"):
        Cola().suggest(_profile(), history="/tmp/h")
    refused = "^'dataset' says which earlier runs to learn from; give 'history' too$"
    with pytest.raises(ColaError, match=refused):
        Cola().suggest(_profile(), dataset="orders")
    # A data date alone is the instant a freshness age is taken at (none here: no timestamp).
    assert Cola().suggest(_profile(), data_date=dt.date(2024, 3, 4)) == suggest_rules(_profile())
