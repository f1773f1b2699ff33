"""``reference_match``: rows held against the reference's row with the same key, column by
column. Small hand-built DataFrames; every test compares exact results, codes and rows."""

from __future__ import annotations

from decimal import Decimal

import pytest

from cola_core import CheckResult, Cola
from cola_core.errors import ColaRuleError
from cola_helpers import jobs_of, refused, run_one, sorted_rows

pytestmark = [pytest.mark.spark, pytest.mark.connect]


def match(reference: str, **fields) -> dict:
    """A reference_match rule against the temp view ``reference``."""
    return {"type": "reference_match", "reference": {"table": reference}, **fields}


def codes_by_key(invalid, key="order_id", column="dq") -> list[tuple]:
    return sorted_rows((row[key], tuple(row[column])) for row in invalid.collect())


@pytest.fixture
def orders(spark):
    return spark.createDataFrame(
        [
            (1, 10.0, "paid"),  # the same as the reference
            (2, 20.0, "paid"),  # amount differs
            (3, 30.0, "open"),  # status differs
            (4, 41.0, "open"),  # both differ
            (5, None, None),  # NULL against NULL: the same
            (6, None, "paid"),  # NULL against 60.0
            (7, 70.0, "paid"),  # not in the reference
            (None, 80.0, "paid"),  # no key: names nothing
        ],
        "order_id int, amount double, status string",
    )


@pytest.fixture
def ledger(spark):
    # bigint keys against the orders' int keys.
    spark.createDataFrame(
        [(1, 10.0, "paid"), (2, 25.0, "paid"), (3, 30.0, "paid"), (4, 40.0, "paid"), (5, None, None),
         (6, 60.0, "paid"), (9, 90.0, "paid")],
        "order_id bigint, amount double, status string",
    ).createOrReplaceTempView("ledger")
    return "ledger"


# -- results and codes ------------------------------------------------------------------------


def test_each_differing_column_and_each_missing_key_is_counted_and_coded(orders, ledger):
    rule = match(ledger, keys=["order_id"], columns=["amount", "status"])
    assert run_one(orders, rule) == CheckResult(
        "reference_match", False,
        "reference_match(amount,status): 5 rows do not match the reference (amount: 3, status: 2, missing: 1; "
        "6 compared)",
        5, 5, code="reference_match(amount,status)",
    )
    # The counts per part, as data: what the message lists, zeros included.
    assert run_one(orders, rule).details == {"columns": {"amount": 3, "status": 2}, "missing": 1, "duplicate_key": 0}
    valid, invalid = Cola().split(orders, [rule], annotate="dq")
    assert codes_by_key(invalid) == [
        (2, ("reference_match(amount)",)),
        (3, ("reference_match(status)",)),
        (4, ("reference_match(amount)", "reference_match(status)")),
        (6, ("reference_match(amount)",)),
        (7, ("reference_match(missing)",)),
    ]
    assert sorted_rows(row.order_id for row in valid.collect()) == sorted_rows([1, 5, None])
    assert valid.columns == orders.columns


def test_a_matching_table_passes_and_says_how_many_rows_it_compared(spark, ledger):
    df = spark.createDataFrame([(1, 10.0, "paid"), (5, None, None)], "order_id int, amount double, status string")
    result = run_one(df, match(ledger, keys=["order_id"], columns=["amount", "status"]))
    assert result == CheckResult(
        "reference_match", True,
        "reference_match(amount,status): every row found in the reference matches it (2 compared)",
        0, 0, code="reference_match(amount,status)",
    )
    assert result.details == {"columns": {"amount": 0, "status": 0}, "missing": 0, "duplicate_key": 0}


def test_missing_keys_are_ignored_when_asked_and_the_message_still_counts_them(orders, ledger):
    rule = match(ledger, keys=["order_id"], columns=["status"], missing="ignore")
    assert run_one(orders, rule).message == (
        "reference_match(status): 2 rows do not match the reference (status: 2; 6 compared); "
        "1 row not in the reference, ignored"
    )
    _, invalid = Cola().split(orders, [rule], annotate="dq")
    assert codes_by_key(invalid) == [(3, ("reference_match(status)",)), (4, ("reference_match(status)",))]
    passing = run_one(orders.where("order_id IN (1, 7)"), rule)
    assert (passing.passed, passing.message) == (
        True, "reference_match(status): every row found in the reference matches it (1 compared); "
              "1 row not in the reference, ignored",
    )


def test_null_equals_null_and_null_differs_from_a_value_even_within_a_tolerance(spark):
    spark.createDataFrame(
        [(1, None, None), (2, 5.0, "x"), (3, None, "x"), (4, 5.0, None)], "k int, v double, s string"
    ).createOrReplaceTempView("nulls_ref")
    df = spark.createDataFrame(
        [(1, None, None), (2, None, None), (3, 5.0, "x"), (4, None, "y")], "k int, v double, s string"
    )
    rule = match("nulls_ref", keys=["k"], columns=["v", "s"], absolute_difference={"v": 1000})
    _, invalid = Cola().split(df, [rule], annotate="dq")
    assert codes_by_key(invalid, key="k") == [
        (2, ("reference_match(v)", "reference_match(s)")),
        (3, ("reference_match(v)",)),
        (4, ("reference_match(v)", "reference_match(s)")),
    ]


# -- tolerances, at the boundary --------------------------------------------------------------


# key: (value, reference value). The gaps: 0.01, 5.5 (55%), 0.02, 0.011, 0.1 (10%), 5 (50%), 5 (50%).
BOUNDS = {1: (10.01, 10.0), 2: (15.5, 10.0), 3: (10.02, 10.0), 4: (10.011, 10.0), 5: (1.1, 1.0), 6: (5.0, 10.0),
          7: (15.0, 10.0)}


@pytest.mark.parametrize("value_type", ["double", "decimal(10,3)"])
@pytest.mark.parametrize(
    ("limits", "differing"),
    [
        ({"absolute_difference": {"v": 0.01}}, [2, 3, 4, 5, 6, 7]),
        # 1.1 - 1.0 is 0.10000000000000009 in doubles; it is still within 0.1.
        ({"absolute_difference": {"v": 0.1}}, [2, 6, 7]),
        # 50% of 10 is 5: 5.0 and 15.0 are in, 15.5 is out.
        ({"relative_difference": {"v": 50}}, [2]),
        # Either difference is enough: 1.1 against 1.0 is exactly 10%.
        ({"absolute_difference": {"v": 0.01}, "relative_difference": {"v": 10}}, [2, 6, 7]),
    ],
    ids=["absolute 0.01", "absolute 0.1", "relative 50%", "absolute or relative"],
)
def test_differences_are_inclusive_at_the_boundary(spark, value_type, limits, differing):
    rows = [(key, Decimal(repr(value)), Decimal(repr(reference))) for key, (value, reference) in BOUNDS.items()]
    frame = spark.createDataFrame(rows, "k int, v decimal(10,3), r decimal(10,3)").selectExpr(
        "k", f"CAST(v AS {value_type}) AS v", f"CAST(r AS {value_type}) AS r"
    )
    frame.selectExpr("k", "r AS v").createOrReplaceTempView("bounds_ref")
    rule = match("bounds_ref", keys=["k"], columns=["v"], **limits)
    _, invalid = Cola().split(frame.select("k", "v"), [rule], annotate="dq")
    assert sorted(row.k for row in invalid.collect()) == differing


def test_integer_differences_are_exact_and_an_overflowing_one_is_measured_not_a_crash(spark):
    extreme = 2**63 - 1
    spark.createDataFrame(
        [(1, 100), (2, 100), (3, -extreme - 1), (4, 0)], "k int, v bigint"
    ).createOrReplaceTempView("ints_ref")
    df = spark.createDataFrame([(1, 150), (2, 151), (3, extreme), (4, 1)], "k int, v bigint")
    rule = match("ints_ref", keys=["k"], columns=["v"], relative_difference={"v": 50}, absolute_difference={"v": 1})
    _, invalid = Cola().split(df, [rule], annotate="dq")
    assert codes_by_key(invalid, key="k") == [(2, ("reference_match(v)",)), (3, ("reference_match(v)",))]


def test_nan_equals_nan_and_infinity_equals_infinity(spark):
    spark.createDataFrame(
        [(1, float("nan")), (2, float("inf")), (3, 1.0), (4, float("-inf"))], "k int, v double"
    ).createOrReplaceTempView("special_ref")
    df = spark.createDataFrame(
        [(1, float("nan")), (2, float("inf")), (3, float("nan")), (4, float("inf"))], "k int, v double"
    )
    rule = match("special_ref", keys=["k"], columns=["v"], absolute_difference={"v": 1})
    _, invalid = Cola().split(df, [rule], annotate="dq")
    assert codes_by_key(invalid, key="k") == [(3, ("reference_match(v)",)), (4, ("reference_match(v)",))]


# -- keys -------------------------------------------------------------------------------------


def test_a_key_the_reference_holds_twice_fails_its_rows_and_never_duplicates_them(spark, orders):
    spark.createDataFrame(
        [(1, 10.0, "paid"), (2, 20.0, "paid"), (2, 20.0, "paid"), (3, 30.0, "open"), (3, 31.0, "open")],
        "order_id int, amount double, status string",
    ).createOrReplaceTempView("twice")
    rule = match("twice", keys=["order_id"], columns=["amount"], missing="ignore")
    assert run_one(orders, rule).message == (
        "reference_match(amount): 2 rows do not match the reference (duplicate_key: 2; 1 compared); 2 rows have "
        "keys the reference holds more than once, so nothing says which reference row to compare with; "
        "4 rows not in the reference, ignored"
    )
    valid, invalid = Cola().split(orders, [rule], annotate="dq")
    assert codes_by_key(invalid) == [(2, ("reference_match(duplicate_key)",)), (3, ("reference_match(duplicate_key)",))]
    assert valid.count() + invalid.count() == orders.count() == 8


def test_a_composite_key_with_other_names_and_types_on_the_reference_side(spark):
    spark.createDataFrame(
        [("BR", 1, 10), ("BR", 2, 20), ("US", 1, 11), (None, 3, 30)], "country string, id bigint, total int"
    ).createOrReplaceTempView("regional")
    df = spark.createDataFrame(
        [(1, "BR", 10), (2, "BR", 21), (1, "US", 11), (2, "US", 20), (3, None, 30)], "order int, region string, sum long"
    )
    rule = match("regional", keys=["region", "order"], reference_keys=["country", "id"], columns=["sum"],
                 reference_columns=["total"])
    result = run_one(df, rule)
    assert result.message == (
        "reference_match(sum): 2 rows do not match the reference (sum: 1, missing: 1; 3 compared)"
    )
    _, invalid = Cola().split(df, [rule], annotate="dq")
    assert sorted_rows((row.order, row.region, tuple(row.dq)) for row in invalid.collect()) == [
        (2, "BR", ("reference_match(sum)",)), (2, "US", ("reference_match(missing)",)),
    ]


def test_where_scopes_the_rule_to_its_rows(orders, ledger):
    rule = match(ledger, keys=["order_id"], columns=["amount", "status"], where="status = 'paid'")
    # In scope: orders 1, 2, 6, 7 and the keyless one; 3 and 4 are open, 5 is NULL.
    assert run_one(orders, rule).message == (
        "reference_match(amount,status): 3 rows do not match the reference (amount: 2, missing: 1; 3 compared)"
    )
    _, invalid = Cola().split(orders, [rule], annotate="dq")
    assert codes_by_key(invalid) == [
        (2, ("reference_match(amount)",)), (6, ("reference_match(amount)",)), (7, ("reference_match(missing)",)),
    ]


def test_a_declared_code_stands_for_every_code_of_the_rule(orders, ledger):
    rule = match(ledger, keys=["order_id"], columns=["amount", "status"], code="LEDGER")
    _, invalid = Cola().split(orders, [rule], annotate="dq")
    assert codes_by_key(invalid) == [(2, ("LEDGER",)), (3, ("LEDGER",)), (4, ("LEDGER",)), (6, ("LEDGER",)),
                                     (7, ("LEDGER",))]
    assert run_one(orders, rule).code == "LEDGER"


def test_a_compared_column_of_another_type_is_compared_as_a_common_type(spark):
    spark.createDataFrame([(1, "10"), (2, "20")], "k int, v string").createOrReplaceTempView("texts")
    df = spark.createDataFrame([(1, 10), (2, 21)], "k int, v int")
    _, invalid = Cola().split(df, [match("texts", keys=["k"], columns=["v"])], annotate="dq")
    assert codes_by_key(invalid, key="k") == [(2, ("reference_match(v)",))]


# -- samples and cost -------------------------------------------------------------------------


def test_samples_show_the_reference_values_beside_the_row(orders, ledger):
    rule = match(ledger, keys=["order_id"], columns=["amount", "status"])
    (result,) = Cola().run(orders, [rule], samples=10)
    # Samples come in the order the scan meets them, which the join may change.
    assert sorted(result.samples, key=lambda sample: sample["order_id"]) == [
        {"order_id": 2, "amount": 20.0, "status": "paid", "reference": {"amount": 25.0, "status": "paid"}},
        {"order_id": 3, "amount": 30.0, "status": "open", "reference": {"amount": 30.0, "status": "paid"}},
        {"order_id": 4, "amount": 41.0, "status": "open", "reference": {"amount": 40.0, "status": "paid"}},
        {"order_id": 6, "amount": None, "status": "paid", "reference": {"amount": 60.0, "status": "paid"}},
        {"order_id": 7, "amount": 70.0, "status": "paid", "reference": None},
    ]


def test_a_data_column_named_reference_keeps_its_name_in_the_samples(spark, ledger):
    df = spark.createDataFrame([(2, 20.0, "x")], "order_id int, amount double, reference string")
    (result,) = Cola().run(df, [match(ledger, keys=["order_id"], columns=["amount"])], samples=1)
    assert result.samples == [{"order_id": 2, "amount": 20.0, "reference": "x", "_reference": {"amount": 25.0}}]


def test_the_rule_costs_one_job_over_the_reference(spark, job_counter, orders, ledger, tmp_path):
    spark.table(ledger).write.parquet(str(tmp_path / "ledger"))
    compared = {"type": "reference_match", "keys": ["order_id"], "columns": ["amount", "status"],
                "reference": {"path": str(tmp_path / "ledger")}}
    not_null = {"type": "not_null", "columns": ["status"]}
    assert jobs_of(job_counter, orders, [not_null]) == 1
    # A view over the files: one job, the broadcast of the reference grouped by key.
    spark.read.parquet(str(tmp_path / "ledger")).createOrReplaceTempView("ledger_files")
    by_view = {**compared, "reference": {"table": "ledger_files"}}
    assert jobs_of(job_counter, orders, [by_view, not_null]) == 2
    # A parquet folder: Spark also reads its footers for the schema, one job, as for foreign_key.
    foreign_key = {"type": "foreign_key", "column": "order_id", "reference": compared["reference"]}
    assert jobs_of(job_counter, orders, [compared, not_null]) == jobs_of(job_counter, orders, [foreign_key, not_null]) == 3


# -- malformed rules, refused before any Spark work -------------------------------------------


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"columns": ["amount"]}, "rules[0] (reference_match): missing required parameter 'keys'"),
        ({"keys": ["order_id"]}, "rules[0] (reference_match): missing required parameter 'columns'"),
        ({"keys": ["order_id"], "reference_keys": ["a", "b"], "columns": ["amount"]},
         "rules[0] (reference_match): 'reference_keys' names 2 columns for 1 key (order_id); give one reference "
         "column per key, in the same order"),
        ({"keys": ["order_id"], "columns": ["amount", "status"], "reference_columns": ["a"]},
         "rules[0] (reference_match): 'reference_columns' names 1 column for 2 compared columns (amount, status); "
         "give one reference column per compared column, in the same order"),
        ({"keys": ["order_id"], "columns": ["amount", "amount"]},
         "rules[0] (reference_match): 'columns' names amount more than once; name each compared column once"),
        ({"keys": ["order_id"], "columns": ["order_id", "amount"]},
         "rules[0] (reference_match): order_id is both a key and a compared column, against the same reference "
         "column; the join already made them equal, so list it in 'keys' only (or compare it with another "
         "reference column)"),
        ({"keys": ["order_id"], "columns": ["amount"], "absolute_difference": {"status": 1}},
         "rules[0] (reference_match): 'absolute_difference' names 'status', which is not a compared column; "
         "'columns' is amount"),
        ({"keys": ["order_id"], "columns": ["amount"], "relative_difference": {"amount": -1}},
         "rules[0] (reference_match): 'relative_difference.amount' must be a number >= 0 (a percentage of the "
         "reference value), got -1"),
        ({"keys": ["order_id"], "columns": ["amount"], "absolute_difference": {"amount": "0.1"}},
         "rules[0] (reference_match): 'absolute_difference.amount' must be a number >= 0, got '0.1'"),
        ({"keys": ["order_id"], "columns": ["amount"], "missing": "skip"},
         "rules[0] (reference_match): 'missing' must be 'fail' or 'ignore', got 'skip'"),
        ({"keys": ["order_id"], "columns": ["missing"]},
         "rules[0] (reference_match): compares a column named 'missing', whose code reference_match(missing) is "
         "the code of a key the reference lacks; declare a 'code' for the rule"),
        ({"keys": ["order_id"], "columns": ["amount"], "reference": {"table": "a; DROP TABLE b"}},
         "rules[0] (reference_match): 'reference' is not a valid input: source 'table' must be a table name such "
         "as db.orders (or `odd name`), got 'a; DROP TABLE b'"),
    ],
    ids=["no keys", "no columns", "reference_keys length", "reference_columns length", "repeated column",
         "key compared", "difference on another column", "negative difference", "text difference", "missing policy",
         "column named missing", "bad reference"],
)
def test_malformed_rules_are_refused_by_position_and_type(fields, message):
    assert refused({"type": "reference_match", "reference": {"table": "ledger"}, **fields}) == message


def test_a_declared_code_allows_a_column_named_missing(spark):
    spark.createDataFrame([(1, 2)], "k int, missing int").createOrReplaceTempView("named_missing")
    df = spark.createDataFrame([(1, 3)], "k int, missing int")
    result = run_one(df, match("named_missing", keys=["k"], columns=["missing"], code="M"))
    assert (result.code, result.failed_count) == ("M", 1)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"keys": ["order_id"], "columns": ["status"], "absolute_difference": {"status": 1}},
         "rules[0] (reference_match): 'absolute_difference' needs numbers, but status is string against string; "
         "cast it first"),
        ({"keys": ["order_id"], "columns": ["amount"], "reference_columns": ["total"]},
         "rules[0] (reference_match): reference column 'total' does not exist in the table ledger; it has "
         "order_id, amount, status"),
        ({"keys": ["order_id"], "reference_keys": ["id"], "columns": ["amount"]},
         "rules[0] (reference_match): reference column 'id' does not exist in the table ledger; it has "
         "order_id, amount, status"),
        ({"keys": ["nope"], "columns": ["amount"]},
         "rules[0] (reference_match): column 'nope' does not exist; the DataFrame has order_id, amount, status"),
    ],
    ids=["difference on text", "unknown reference column", "unknown reference key", "unknown data key"],
)
def test_rules_that_do_not_fit_the_data_are_refused_before_any_job(orders, ledger, job_counter, fields, message):
    with job_counter.count() as counted, pytest.raises(ColaRuleError) as raised:
        Cola().run(orders, [match(ledger, **fields)])
    assert str(raised.value) == message
    assert counted.jobs == 0


@pytest.mark.parametrize(
    ("schema", "row", "column", "message"),
    [
        ("k int, m map<string,int>", (1, {"a": 1}), "m",
         "cannot compare m (map<string,int>): it holds a map, which Spark cannot compare"),
        ("k int, s struct<m: map<string,int>>", (1, ({"a": 1},)), "s",
         "cannot compare s (struct<m:map<string,int>>): it holds a map, which Spark cannot compare"),
        ("k int, a array<map<string,int>>", (1, [{"a": 1}]), "a",
         "cannot compare a (array<map<string,int>>): it holds a map, which Spark cannot compare"),
    ],
    ids=["map", "map in a struct", "map in an array"],
)
@pytest.mark.parametrize("role", ["compared", "key"])
def test_values_spark_cannot_compare_are_refused_with_a_way_out(spark, job_counter, schema, row, column, message, role):
    frame = spark.createDataFrame([row], schema)
    frame.createOrReplaceTempView("uncomparable")
    rule = match("uncomparable", keys=["k"], columns=[column]) if role == "compared" else match(
        "uncomparable", keys=[column], columns=["k"])
    with job_counter.count() as counted, pytest.raises(ColaRuleError) as raised:
        Cola().split(frame, [rule])
    assert str(raised.value) == (
        f"rules[0] (reference_match): {message}; compare its parts as separate columns, or cast it to a string "
        "in a query reference first"
    )
    assert counted.jobs == 0


def test_a_variant_is_refused_as_a_key_and_as_a_compared_column(spark):
    frame = spark.sql("SELECT 1 AS k, parse_json('{\"a\": 1}') AS j")
    frame.createOrReplaceTempView("variants")
    for rule in (match("variants", keys=["k"], columns=["j"]), match("variants", keys=["j"], columns=["k"])):
        with pytest.raises(ColaRuleError, match=r"cannot compare j \(variant\): it holds a variant, which Spark "
                                                r"cannot compare"):
            Cola().run(frame, [rule])


# -- types: what each side is compared as -----------------------------------------------------


def test_text_that_is_no_number_against_a_number_is_a_difference_not_a_failed_job(spark):
    # Under ANSI mode, Spark's own comparison would cast 'ten' to a number and stop the job.
    spark.createDataFrame([(1, "10"), (2, "ten")], "k int, v string").createOrReplaceTempView("words")
    df = spark.createDataFrame([(1, 10), (2, 10)], "k int, v int")
    _, invalid = Cola().split(df, [match("words", keys=["k"], columns=["v"])], annotate="dq")
    assert codes_by_key(invalid, key="k") == [(2, ("reference_match(v)",))]
    # And as keys: the data's 10 finds the reference's '10', and 'ten' is a key no row has.
    spark.createDataFrame([("10", 1), ("ten", 2)], "k string, v int").createOrReplaceTempView("word_keys")
    rule = match("word_keys", keys=["v"], reference_keys=["k"], columns=["k"], reference_columns=["v"])
    (result,) = Cola().run(df, [rule])
    assert result.message == "reference_match(k): 1 row does not match the reference (k: 1; 2 compared)"


def test_decimals_of_other_scales_compare_without_rounding(spark):
    spark.createDataFrame([(1, Decimal("1.00")), (2, Decimal("2.00"))], "k int, v decimal(38,2)") \
        .createOrReplaceTempView("cents")
    df = spark.createDataFrame([(1, Decimal("1.0040000000")), (2, Decimal("2.0000000000"))], "k int, v decimal(38,10)")
    _, invalid = Cola().split(df, [match("cents", keys=["k"], columns=["v"])], annotate="dq")
    assert codes_by_key(invalid, key="k") == [(1, ("reference_match(v)",))]
    # As keys: 1.001 and 1.002 are two keys, neither of them 1.00.
    spark.createDataFrame([(Decimal("1.0010000000"), 1), (Decimal("1.0020000000"), 2)], "k decimal(38,10), v int") \
        .createOrReplaceTempView("fine_keys")
    keyed = spark.createDataFrame([(Decimal("1.00"), 1)], "k decimal(38,2), v int")
    _, invalid = Cola().split(keyed, [match("fine_keys", keys=["k"], columns=["v"])], annotate="dq")
    assert [tuple(row.dq) for row in invalid.collect()] == [("reference_match(missing)",)]


def test_a_value_the_other_side_cannot_hold_differs_even_from_null(spark):
    # decimal(38,10) holds 28 whole digits: a decimal(38,0) of 30 digits does not fit the
    # comparison type, so it agrees with nothing, not even the NULL it would be cast to.
    huge = Decimal(10) ** 30
    spark.createDataFrame([(1, None), (2, Decimal("5"))], "k int, v decimal(38,10)").createOrReplaceTempView("narrow")
    df = spark.createDataFrame([(1, huge), (2, Decimal("5"))], "k int, v decimal(38,0)")
    _, invalid = Cola().split(df, [match("narrow", keys=["k"], columns=["v"])], annotate="dq")
    assert codes_by_key(invalid, key="k") == [(1, ("reference_match(v)",))]
    spark.createDataFrame([(1, huge), (2, Decimal("5"))], "k int, v decimal(38,0)").createOrReplaceTempView("wide")
    narrow = spark.createDataFrame([(1, None), (2, Decimal("5"))], "k int, v decimal(38,10)")
    _, invalid = Cola().split(narrow, [match("wide", keys=["k"], columns=["v"])], annotate="dq")
    assert codes_by_key(invalid, key="k") == [(1, ("reference_match(v)",))]


def test_arrays_and_structs_compare_as_values_whatever_their_nullability(spark):
    reference = spark.sql(
        "SELECT 1 AS k, array('a', 'b') AS arr, named_struct('x', 'a', 'y', 'b, c') AS st "
        "UNION ALL SELECT 2, array('null'), named_struct('x', 'p', 'y', 'q') "
        "UNION ALL SELECT 3, array('z'), named_struct('x', 'z', 'y', 'z')"
    )
    reference.createOrReplaceTempView("nested_ref")
    df = spark.createDataFrame(
        [(1, ["a, b"], ("a, b", "c")), (2, [None], ("p", "q")), (3, ["z"], ("z", "z"))],
        "k int, arr array<string>, st struct<x: string, y: string>",
    )
    _, invalid = Cola().split(df, [match("nested_ref", keys=["k"], columns=["arr", "st"])], annotate="dq")
    # As text, ["a, b"] and ["a", "b"] would both read [a, b].
    assert codes_by_key(invalid, key="k") == [
        (1, ("reference_match(arr)", "reference_match(st)")), (2, ("reference_match(arr)",)),
    ]


def test_nested_values_of_other_types_are_refused(spark):
    spark.createDataFrame([(1, [1])], "k int, arr array<int>").createOrReplaceTempView("int_arrays")
    df = spark.createDataFrame([(1, ["1"])], "k int, arr array<string>")
    with pytest.raises(ColaRuleError) as raised:
        Cola().run(df, [match("int_arrays", keys=["k"], columns=["arr"])])
    assert str(raised.value) == (
        "rules[0] (reference_match): cannot compare arr with reference column arr: array<string> against "
        "array<int>; give both sides the same type (a query reference can cast its side)"
    )


def test_a_float_column_is_compared_at_float_precision(spark):
    spark.createDataFrame([(1, 1.0), (2, 10.0), (3, 1.1), (4, 1.2)], "k int, v double").createOrReplaceTempView(
        "doubles")
    df = spark.createDataFrame([(1, 1.1), (2, 10.01), (3, 1.1), (4, 1.1)], "k int, v float")
    # 1.1 as a float is 1.100000023841858: against the double 1.1 it is the same float.
    _, invalid = Cola().split(df, [match("doubles", keys=["k"], columns=["v"])], annotate="dq")
    assert sorted(row.k for row in invalid.collect()) == [1, 2, 4]
    _, invalid = Cola().split(df, [match("doubles", keys=["k"], columns=["v"], absolute_difference={"v": 0.1})],
                              annotate="dq")
    assert sorted(row.k for row in invalid.collect()) == []
    _, invalid = Cola().split(df, [match("doubles", keys=["k"], columns=["v"], absolute_difference={"v": 0.01})],
                              annotate="dq")
    assert sorted(row.k for row in invalid.collect()) == [1, 4]


@pytest.mark.parametrize(
    ("reference", "value", "limits", "differs"),
    [
        # The slack is at most two units in the last place of the larger value: 8 off 1e16 is 4 units.
        (1e16, 1e16 + 8, {"absolute_difference": {"v": 1}}, True),
        (1e12, 1e12 + 0.0005, {"absolute_difference": {"v": 0.0001}}, True),
        # A limit of 0 is equality.
        (1e16, 1e16 + 2, {"absolute_difference": {"v": 0}}, True),
        # Magnitudes whose sum passes the largest double: still compared.
        (1e308, 1.7e308, {"absolute_difference": {"v": 0.01}}, True),
        (-1.7e308, 1.7e308, {"relative_difference": {"v": 1}}, True),
        (1.7e308, 1.7e308, {"absolute_difference": {"v": 0.01}}, False),
    ],
    ids=["8 off 1e16", "0.0005 off 1e12", "limit 0", "near the top", "opposite signs", "equal at the top"],
)
def test_the_rounding_slack_of_doubles_stays_tiny(spark, reference, value, limits, differs):
    spark.createDataFrame([(1, reference)], "k int, v double").createOrReplaceTempView("big_doubles")
    df = spark.createDataFrame([(1, value)], "k int, v double")
    (result,) = Cola().run(df, [match("big_doubles", keys=["k"], columns=["v"], **limits)])
    assert result.failed_count == (1 if differs else 0)


def test_decimal_differences_are_exact_where_doubles_could_not_tell(spark):
    # 10**16 + 10**-18 is 10**16 as a double.
    spark.createDataFrame([(1, Decimal(10) ** 16)], "k int, v decimal(38,18)").createOrReplaceTempView("exact_ref")
    df = spark.createDataFrame([(1, Decimal("10000000000000000.000000000000000001"))], "k int, v decimal(38,18)")
    for limits, failed in (({"absolute_difference": {"v": 0}}, 1), ({"absolute_difference": {"v": 1e-18}}, 0),
                           ({"relative_difference": {"v": 0}}, 1)):
        (result,) = Cola().run(df, [match("exact_ref", keys=["k"], columns=["v"], **limits)])
        assert result.failed_count == failed, limits


@pytest.mark.parametrize(
    ("limits", "failed"),
    [
        ({"absolute_difference": {"v": 1e-40}}, 1),  # smaller than any decimal gap: equality
        ({"absolute_difference": {"v": 1e40}}, 0),  # larger than any decimal gap
        ({"absolute_difference": {"v": 10**38 - 1}}, 0),
        ({"relative_difference": {"v": 1e-40}}, 1),
        ({"relative_difference": {"v": 1e40}}, 0),
    ],
)
def test_limits_beyond_what_a_decimal_holds_are_measured_not_a_failed_job(spark, limits, failed):
    spark.createDataFrame([(1, 100)], "k int, v bigint").createOrReplaceTempView("limit_ref")
    df = spark.createDataFrame([(1, 101)], "k int, v bigint")
    rule = match("limit_ref", keys=["k"], columns=["v"], **limits)
    (result,) = Cola().run(df, [rule])
    assert (result.failed_count, result.message.startswith("reference_match(v): ")) == (failed, True)
    _, invalid = Cola().split(df, [rule])
    assert invalid.count() == failed


def test_an_overflowing_decimal_gap_is_compared_as_doubles(spark):
    # -9e37 against 9e37: the gap 1.8e38 does not fit decimal(38,0), but it is 200% of 9e37.
    big = Decimal(9) * Decimal(10) ** 37
    spark.createDataFrame([(1, big)], "k int, v decimal(38,0)").createOrReplaceTempView("huge_ref")
    df = spark.createDataFrame([(1, -big)], "k int, v decimal(38,0)")
    for percent, failed in ((300, 0), (199, 1)):
        (result,) = Cola().run(df, [match("huge_ref", keys=["k"], columns=["v"], relative_difference={"v": percent})])
        assert result.failed_count == failed, percent


def test_a_key_may_be_compared_with_another_reference_column(spark):
    spark.createDataFrame([(1, 1), (2, 7)], "id int, legacy_id int").createOrReplaceTempView("renumbered")
    df = spark.createDataFrame([(1,), (2,)], "order_id int")
    rule = match("renumbered", keys=["order_id"], reference_keys=["id"], columns=["order_id"],
                 reference_columns=["legacy_id"])
    _, invalid = Cola().split(df, [rule], annotate="dq")
    assert codes_by_key(invalid) == [(2, ("reference_match(order_id)",))]


def test_column_names_with_dots_spaces_and_backticks_on_both_sides(spark):
    spark.createDataFrame([(1, 5.0, "x"), (2, 6.0, "y")], "`the id` int, `a.b` double, `we``ird` string") \
        .createOrReplaceTempView("odd_names")
    df = spark.createDataFrame([(1, 5.0, "x"), (2, 7.0, "y")], "`order id` int, `a.b` double, `c d` string")
    rule = match("odd_names", keys=["order id"], reference_keys=["the id"], columns=["a.b", "c d"],
                 reference_columns=["a.b", "we`ird"], absolute_difference={"a.b": 0.5})
    (result,) = Cola().run(df, [rule], samples=5)
    assert result.message == "reference_match(a.b,c d): 1 row does not match the reference (a.b: 1; 2 compared)"
    assert result.samples == [{"order id": 2, "a.b": 7.0, "c d": "y", "reference": {"a.b": 6.0, "c d": "y"}}]
    _, invalid = Cola().split(df, [rule], annotate="dq")
    assert [(row["order id"], tuple(row.dq)) for row in invalid.collect()] == [(2, ("reference_match(a.b)",))]
