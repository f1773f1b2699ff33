"""``Cola().split_write``: one evaluation of the input, both outputs published together or neither.

Failures are caused for real: a regular file where an output's folder must go makes Hadoop
refuse the write or the rename, exactly as on a cluster.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cola_core import BaseCheck, Capability, CheckResult, Cola, ColaError, ColaOutputError, SplitOutcome
from cola_helpers import sorted_rows

pytestmark = [pytest.mark.spark, pytest.mark.connect]

ORDERS = [
    (1, "ana@x.io", 10.0, "paid"),
    (2, None, 5.0, "paid"),
    (3, "bo@x.io", -2.0, "open"),
    (3, "cy@x.io", 7.0, "open"),
    (4, "di@x.io", 3.0, "paid"),
    (5, "ed@x.io", 8.0, "open"),
]
SCHEMA = "order_id int, email string, amount double, status string"
COLUMNS = ["order_id", "email", "amount", "status"]
RULES = [
    {"type": "not_null", "columns": ["email"]},
    {"type": "range", "column": "amount", "min": 0, "code": "AMOUNT_NEGATIVE"},
    {"type": "unique", "columns": ["order_id"]},
    {"type": "row_count", "min": 1},
    {"type": "avg", "column": "amount", "must_be": "> 0"},
]
VALID_ROWS = [(1, "ana@x.io", 10.0, "paid"), (4, "di@x.io", 3.0, "paid"), (5, "ed@x.io", 8.0, "open")]
INVALID_ROWS = [
    (2, None, 5.0, "paid", ["not_null(email)"]),
    (3, "bo@x.io", -2.0, "open", ["AMOUNT_NEGATIVE", "unique(order_id)"]),
    (3, "cy@x.io", 7.0, "open", ["unique(order_id)"]),
]


@pytest.fixture
def orders(spark, tmp_path):
    """The orders as a parquet source, so that every read of it is a counted file scan."""
    path = str(tmp_path / "source")
    spark.createDataFrame(ORDERS, SCHEMA).coalesce(1).write.parquet(path)
    return spark.read.parquet(path)


def rows_of(spark, path, *columns) -> list[tuple]:
    df = spark.read.parquet(str(path))
    return sorted_rows(tuple(list(v) if isinstance(v, list) else v for v in row) for row in df.select(*columns).collect())


def visible(folder: Path) -> list[str]:
    """What a listing of ``folder`` shows a person (Hadoop's hidden checksum files aside)."""
    return sorted(name for name in os.listdir(folder) if not name.startswith("."))


def test_writes_both_outputs_with_the_split_schemas_and_counts_the_rows_published(spark, orders, tmp_path):
    outcome = Cola().split_write(orders, RULES, valid=str(tmp_path / "valid"), invalid=str(tmp_path / "invalid"),
                                 annotate="codes")
    assert isinstance(outcome, SplitOutcome)
    assert (outcome.valid_count, outcome.invalid_count) == (3, 3)
    assert outcome.results == Cola().run(orders, RULES)
    assert spark.read.parquet(str(tmp_path / "valid")).columns == COLUMNS
    assert spark.read.parquet(str(tmp_path / "invalid")).columns == [*COLUMNS, "codes"]
    assert rows_of(spark, tmp_path / "valid", *COLUMNS) == VALID_ROWS
    assert rows_of(spark, tmp_path / "invalid", *COLUMNS, "codes") == sorted_rows(INVALID_ROWS)
    # Only the two outputs (and the source) are left: the staging folder is gone.
    assert visible(tmp_path) == ["invalid", "source", "valid"]
    assert "_SUCCESS" in visible(tmp_path / "valid") and "_SUCCESS" in visible(tmp_path / "invalid")


def test_the_outputs_equal_the_lazy_splits(spark, orders, tmp_path):
    rules = [*RULES, {"type": "regex", "column": "email", "pattern": "^[a-c]", "severity": "warn"}]
    Cola().split_write(orders, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"), annotate="dq",
                       quarantine_key=["status"])
    valid, invalid = Cola().split(orders, rules, annotate="dq", quarantine_key=["status"])
    assert spark.read.parquet(str(tmp_path / "v")).columns == valid.columns == [*COLUMNS, "dq_warnings"]
    assert spark.read.parquet(str(tmp_path / "i")).columns == invalid.columns == [*COLUMNS, "dq", "dq_warnings"]
    assert sorted_rows(spark.read.parquet(str(tmp_path / "v")).collect()) == sorted_rows(valid.collect())
    assert sorted_rows(spark.read.parquet(str(tmp_path / "i")).collect()) == sorted_rows(invalid.collect())
    # Every order has a rejected row in both statuses, so quarantine_key pulls every row in.
    assert spark.read.parquet(str(tmp_path / "v")).count() == 0
    assert [row.dq for row in invalid.where("order_id = 5").collect()] == [["quarantine_key(status)"]]


def test_without_annotate_both_outputs_keep_the_input_schema(spark, orders, tmp_path):
    outcome = Cola().split_write(orders, RULES, valid=str(tmp_path / "valid"), invalid=str(tmp_path / "invalid"))
    assert (outcome.valid_count, outcome.invalid_count) == (3, 3)
    assert spark.read.parquet(str(tmp_path / "invalid")).columns == COLUMNS
    assert rows_of(spark, tmp_path / "invalid", *COLUMNS) == sorted_rows(row[:4] for row in INVALID_ROWS)


def test_the_source_is_read_once_for_both_outputs_and_the_plain_aggregates(spark, orders, tmp_path, job_counter):
    plain = [rule for rule in RULES if rule["type"] != "unique"]  # a distinct count costs a pass of its own
    with job_counter.count() as counted:
        outcome = Cola().split_write(orders, plain, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"),
                                     annotate="codes")
    # One read of the 6 source rows; then the copy of the 4 valid rows without the codes
    # column reads them back from staging (file reads are input records too).
    assert (outcome.valid_count, outcome.invalid_count) == (4, 2)
    assert counted.input_records == len(ORDERS) + 4
    assert counted.jobs == 2  # the staging write, the valid rows' copy
    assert [r.passed for r in outcome.results] == [False, False, True, True]
    assert outcome.results == Cola().run(orders, plain)


def test_a_unique_rules_distinct_count_is_taken_on_the_writes_own_window(spark, orders, tmp_path, job_counter):
    with job_counter.count() as counted:
        outcome = Cola().split_write(orders, RULES, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"),
                                     annotate="codes")
    assert outcome.results == Cola().run(orders, RULES)
    assert outcome.results[2].message == "unique(order_id): 1 duplicate row (6 rows, 5 distinct)"
    # The write, and the 3 valid rows read back from staging: no pass for the distinct count.
    assert counted.input_records == len(ORDERS) + 3
    assert counted.jobs == 2


def test_reference_match_joins_the_write_and_its_codes_name_the_columns(spark, orders, tmp_path, job_counter):
    spark.createDataFrame(
        [(1, "ana@x.io", 10.0), (2, None, 5.0), (3, "bo@x.io", 2.0), (4, "DI@x.io", 3.0)],
        "order_id int, email string, amount double",
    ).createOrReplaceTempView("orders_ref")
    rules = [{"type": "reference_match", "keys": ["order_id"], "columns": ["email", "amount"],
              "reference": {"table": "orders_ref"}, "absolute_difference": {"amount": 4}}]
    with job_counter.count() as counted:
        outcome = Cola().split_write(orders, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"),
                                     annotate="codes", annotate_valid=True)
    assert outcome.results == Cola().run(orders, rules)
    assert outcome.results[0].message == (
        "reference_match(email,amount): 3 rows do not match the reference (email: 2, amount: 1, missing: 1; "
        "5 compared)"
    )
    assert (outcome.valid_count, outcome.invalid_count) == (3, 3)
    assert rows_of(spark, tmp_path / "i", "order_id", "email", "codes") == [
        (3, "cy@x.io", ["reference_match(email)", "reference_match(amount)"]),
        (4, "di@x.io", ["reference_match(email)"]),
        (5, "ed@x.io", ["reference_match(missing)"]),
    ]
    # One job reading the source once: the staging write, into which the reference (a local
    # view, so no job of its own) is broadcast; annotate_valid spares the copy of the valid rows.
    assert counted.input_records == len(ORDERS)
    assert counted.jobs == 1


@pytest.mark.parametrize("where", [None, "amount > 4"])
def test_a_scoped_unique_rule_counts_its_distinct_keys_in_scope(spark, orders, tmp_path, where):
    rules = [{"type": "unique", "columns": ["status", "order_id"], **({"where": where} if where else {})}]
    outcome = Cola().split_write(orders, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"))
    assert outcome.results == Cola().run(orders, rules)


def test_a_distinct_set_no_row_rule_windows_by_costs_one_read(spark, orders, tmp_path, job_counter):
    rules = [{"type": "not_null", "columns": ["email"]}, {"type": "duplicate_count", "columns": ["status"],
                                                          "must_be": "< 10"}]
    with job_counter.count() as counted:
        outcome = Cola().split_write(orders, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"))
    assert outcome.results == Cola().run(orders, rules)
    assert counted.input_records == 2 * len(ORDERS)  # the write, and the distinct count of status


class DistinctStatuses(BaseCheck):
    """A custom aggregate check with a DISTINCT aggregate, which Spark refuses to observe."""

    capabilities = frozenset({Capability.AGGREGATE})

    def aggregations(self, df):
        from pyspark.sql import functions as F

        return [F.count_distinct("status")]

    def from_aggregations(self, values):
        return CheckResult("distinct_statuses", values[0] == 2, f"{values[0]} statuses", metric_value=values[0])


def test_an_aggregate_spark_cannot_observe_gets_its_own_scan(spark, orders, tmp_path, job_counter):
    cola = Cola()
    cola.register("distinct_statuses", DistinctStatuses)
    rules = [{"type": "not_null", "columns": ["email"]}, {"type": "distinct_statuses"}, {"type": "row_count", "min": 1}]
    with job_counter.count() as counted:
        outcome = cola.split_write(orders, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"))
    assert outcome.results == cola.run(orders, rules)
    assert outcome.results[1] == CheckResult(
        "distinct_statuses", True, "2 statuses", metric_value=2, severity="pass", code="distinct_statuses"
    )
    assert (outcome.valid_count, outcome.invalid_count) == (5, 1)
    assert counted.input_records == 2 * len(ORDERS)  # the write, then the block's own scan


def coin_orders(spark, rows: int):
    """Orders with a coin drawn anew at every evaluation (``rand()`` would not do: its seed is
    in the plan, so every evaluation draws the same values)."""
    from pyspark.sql import functions as F

    heads = F.expr("java_method('java.lang.Math', 'random') < 0.5")
    return spark.range(rows).select(F.col("id").alias("order_id"), F.when(heads, F.lit(None)).otherwise(F.lit("x")).alias("email"))


def test_a_non_deterministic_input_really_changes_between_evaluations(spark):
    # The control for the law below: two evaluations of the same DataFrame disagree.
    df = coin_orders(spark, 2000)
    first = [row.email for row in df.orderBy("order_id").collect()]
    assert first != [row.email for row in df.orderBy("order_id").collect()]


@settings(max_examples=4, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(rows=st.integers(min_value=0, max_value=3000), annotate=st.sampled_from([None, "codes"]))
def test_every_row_of_a_non_deterministic_input_is_in_exactly_one_output(spark, tmp_path_factory, rows, annotate):
    base = tmp_path_factory.mktemp("coin")
    outcome = Cola().split_write(coin_orders(spark, rows), [{"type": "not_null", "columns": ["email"]}],
                                 valid=str(base / "v"), invalid=str(base / "i"), annotate=annotate)
    valid = [row.order_id for row in spark.read.parquet(str(base / "v")).collect()]
    invalid = spark.read.parquet(str(base / "i")).collect()
    assert sorted(valid + [row.order_id for row in invalid]) == list(range(rows))
    assert (outcome.valid_count, outcome.invalid_count) == (len(valid), len(invalid))
    assert all(row.email is None for row in invalid)
    if annotate:
        assert {tuple(row.codes) for row in invalid} <= {("not_null(email)",)}
    # The result counts the same evaluation's NULLs as the split placed.
    assert outcome.results[0].failed_count == len(invalid)


def test_appending_adds_this_runs_rows_and_counts_only_them(spark, orders, tmp_path):
    valid, invalid = {"path": str(tmp_path / "v"), "mode": "append"}, {"path": str(tmp_path / "i"), "mode": "append"}
    Cola().split_write(orders, RULES, valid=valid, invalid=invalid, annotate="codes")
    outcome = Cola().split_write(orders, RULES, valid=valid, invalid=invalid, annotate="codes")
    assert (outcome.valid_count, outcome.invalid_count) == (3, 3)
    assert rows_of(spark, tmp_path / "v", *COLUMNS) == sorted_rows(VALID_ROWS * 2)
    assert rows_of(spark, tmp_path / "i", *COLUMNS, "codes") == sorted_rows(INVALID_ROWS * 2)


def test_overwrite_replaces_the_previous_contents(spark, orders, tmp_path):
    spark.createDataFrame([(9, "old@x.io", 1.0, "old")], SCHEMA).write.parquet(str(tmp_path / "v"))
    Cola().split_write(orders, RULES, valid={"path": str(tmp_path / "v"), "mode": "overwrite"},
                       invalid=str(tmp_path / "i"))
    assert rows_of(spark, tmp_path / "v", *COLUMNS) == VALID_ROWS
    assert visible(tmp_path) == ["i", "source", "v"]  # the backup of the old output is gone


def test_partitioned_outputs_in_other_formats(spark, orders, tmp_path):
    outcome = Cola().split_write(
        orders, RULES,
        valid={"path": str(tmp_path / "v"), "partition_by": ["status"]},
        invalid={"path": str(tmp_path / "i"), "format": "json", "partition_by": ["status"]},
        annotate="codes",
    )
    assert (outcome.valid_count, outcome.invalid_count) == (3, 3)
    assert visible(tmp_path / "v") == ["_SUCCESS", "status=open", "status=paid"]
    assert visible(tmp_path / "i") == ["_SUCCESS", "status=open", "status=paid"]
    assert rows_of(spark, tmp_path / "v", *COLUMNS) == VALID_ROWS
    invalid = spark.read.json(str(tmp_path / "i"))
    assert sorted_rows((r.order_id, r.status, list(r.codes)) for r in invalid.collect()) == sorted_rows(
        (row[0], row[3], row[4]) for row in INVALID_ROWS
    )


def test_an_empty_side_is_published_as_an_empty_output_with_its_schema(spark, orders, tmp_path):
    outcome = Cola().split_write(orders, [{"type": "not_null", "columns": ["order_id"]}],
                                 valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"), annotate="codes")
    assert (outcome.valid_count, outcome.invalid_count) == (6, 0)
    empty = spark.read.parquet(str(tmp_path / "i"))
    assert (empty.columns, empty.count()) == ([*COLUMNS, "codes"], 0)


def test_appending_no_rows_leaves_the_output_as_it_was(spark, orders, tmp_path):
    Cola().split_write(orders, RULES, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"))
    before = visible(tmp_path / "i")
    rules = [{"type": "not_null", "columns": ["order_id"]}]
    outcome = Cola().split_write(orders, rules, valid={"path": str(tmp_path / "v"), "mode": "append"},
                                 invalid={"path": str(tmp_path / "i"), "mode": "append"})
    assert (outcome.valid_count, outcome.invalid_count) == (6, 0)
    assert visible(tmp_path / "i") == before


# -- refused before any job ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("valid", "invalid", "message"),
    [
        ("{v}", "{v}", "the valid output {v} and the invalid output {v} overlap; give them separate folders"),
        ("{v}", "{v}/inner", "the valid output {v} and the invalid output {v}/inner overlap; give them separate folders"),
        ({"path": "{v}", "mode": "ignore"}, "{i}",
         "mode 'ignore' cannot be used for the valid output {v}: a split publishes both outputs or neither; "
         "use append, overwrite or errorifexists"),
        ("{v}", {"path": "{i}", "format": "csv"},
         "a csv output cannot hold the array column 'codes'; write parquet, orc or json, or leave out annotate"),
        ("{existing}", "{i}",
         "the valid output {existing} already exists and its mode is 'errorifexists'; set \"mode\" to "
         "\"overwrite\" or \"append\", or choose another target"),
    ],
)
def test_outputs_that_cannot_be_published_are_refused_before_any_job(
    spark, orders, tmp_path, job_counter, valid, invalid, message
):
    (tmp_path / "existing").mkdir()
    places = {"v": str(tmp_path / "v"), "i": str(tmp_path / "i"), "existing": str(tmp_path / "existing")}

    def filled(config):
        if isinstance(config, str):
            return config.format(**places)
        return {**config, "path": config["path"].format(**places)}

    with job_counter.count() as counted, pytest.raises(ColaOutputError) as raised:
        Cola().split_write(orders, RULES, valid=filled(valid), invalid=filled(invalid), annotate="codes")
    assert str(raised.value) == message.format(**places)
    assert counted.jobs == 0
    assert visible(tmp_path) == ["existing", "source"]


@pytest.mark.parametrize("other", ["SW_SAME", "default.sw_same", "spark_catalog.default.`sw_same`"])
def test_the_same_table_for_both_outputs_is_refused_however_it_is_spelt(spark, orders, other):
    with pytest.raises(ColaOutputError) as raised:
        Cola().split_write(orders, RULES, valid={"table": "sw_same"}, invalid={"table": other, "mode": "overwrite"})
    assert str(raised.value) == f"the valid and invalid outputs are the same table, sw_same and {other}"


# -- all or nothing ------------------------------------------------------------------------------


def previous_outputs(spark, tmp_path) -> tuple[dict, dict]:
    """A valid output holding one earlier row, and an invalid output under a regular file."""
    spark.createDataFrame([(9, "old@x.io", 1.0, "old")], SCHEMA).write.parquet(str(tmp_path / "v"))
    (tmp_path / "blocker").write_text("a file where the invalid output's folder must go")
    return {"path": str(tmp_path / "v"), "mode": "append"}, {"path": str(tmp_path / "blocker" / "i")}


@pytest.mark.parametrize("annotate", [None, "codes"])
@pytest.mark.parametrize("mode", ["append", "overwrite"])
def test_a_failed_invalid_output_leaves_the_valid_one_as_it_was_and_a_retry_works(
    spark, orders, tmp_path, annotate, mode
):
    valid, invalid = previous_outputs(spark, tmp_path)
    valid["mode"] = mode
    before = visible(tmp_path / "v")
    with pytest.raises(ColaOutputError) as raised:
        Cola().split_write(orders, RULES, valid=valid, invalid=invalid, annotate=annotate)
    blocker = f"file:{tmp_path / 'blocker'}"
    if annotate:  # the staging write goes beside the invalid output, which it renames: it fails
        assert str(raised.value).startswith(f"cannot write the split to its staging folder {blocker}/_cola_staging_")
        assert str(raised.value).endswith(f"Parent path is not a directory: {blocker}; nothing was published")
    else:  # the valid output was published first, then undone
        assert str(raised.value) == (
            f"cannot publish the invalid output {tmp_path}/blocker/i: cannot create the folder {blocker}: "
            f"{blocker} is a file, not a folder; nothing was published"
        )
    assert visible(tmp_path / "v") == before
    assert rows_of(spark, tmp_path / "v", *COLUMNS) == [(9, "old@x.io", 1.0, "old")]
    assert visible(tmp_path) == ["blocker", "source", "v"]

    (tmp_path / "blocker").unlink()
    outcome = Cola().split_write(orders, RULES, valid=valid, invalid=invalid, annotate=annotate)
    assert (outcome.valid_count, outcome.invalid_count) == (3, 3)
    kept = [(9, "old@x.io", 1.0, "old")] if mode == "append" else []
    assert rows_of(spark, tmp_path / "v", *COLUMNS) == sorted_rows(kept + VALID_ROWS)
    assert spark.read.parquet(str(tmp_path / "blocker" / "i")).count() == 3


def test_a_failed_valid_output_publishes_nothing(spark, orders, tmp_path):
    (tmp_path / "blocker").write_text("x")
    with pytest.raises(ColaOutputError) as raised:
        Cola().split_write(orders, RULES, valid=str(tmp_path / "blocker" / "v"), invalid=str(tmp_path / "i"))
    assert str(raised.value).startswith(f"cannot write the split to its staging folder file:{tmp_path}/blocker/_cola_staging_")
    assert str(raised.value).endswith(f"Parent path is not a directory: file:{tmp_path / 'blocker'}; nothing was published")
    assert visible(tmp_path) == ["blocker", "source"]


def test_a_partitioned_append_is_undone_file_by_file(spark, orders, tmp_path):
    spark.createDataFrame([(9, "old@x.io", 1.0, "paid")], SCHEMA).write.partitionBy("status").parquet(str(tmp_path / "v"))
    (tmp_path / "blocker").write_text("x")
    before = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "v").rglob("*"))
    with pytest.raises(ColaOutputError):
        Cola().split_write(orders, RULES, valid={"path": str(tmp_path / "v"), "mode": "append", "partition_by": ["status"]},
                           invalid=str(tmp_path / "blocker" / "i"))
    # The new status=open folder is gone again, and status=paid holds its one old file.
    assert sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "v").rglob("*")) == before
    assert rows_of(spark, tmp_path / "v", *COLUMNS) == [(9, "old@x.io", 1.0, "paid")]


# -- tables --------------------------------------------------------------------------------------


@pytest.fixture
def tables(spark):
    names = []

    def table(name: str, rows=(), partition_by=()):
        names.append(name)
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        if rows is not None:
            writer = spark.createDataFrame(list(rows), SCHEMA).write
            if partition_by:
                writer = writer.partitionBy(*partition_by)
            writer.saveAsTable(name)
        return name

    yield table
    for name in names:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def table_rows(spark, name) -> list[tuple]:
    return sorted_rows(tuple(row[c] for c in COLUMNS) for row in spark.table(name).collect())


OLD = [(9, "old@x.io", 1.0, "paid")]


@pytest.mark.parametrize("partition_by", [(), ("status",)])
def test_tables_are_created_appended_and_overwritten(spark, orders, tables, partition_by):
    appended, swapped, created = tables("sw_appended", OLD, partition_by), tables("sw_swapped", OLD), tables("sw_new", None)
    Cola().split_write(orders, RULES, valid={"table": appended, "mode": "append"}, invalid={"table": created})
    assert table_rows(spark, appended) == sorted_rows(OLD + VALID_ROWS)
    assert table_rows(spark, created) == sorted_rows(row[:4] for row in INVALID_ROWS)
    Cola().split_write(orders, RULES, valid={"table": swapped, "mode": "overwrite"},
                       invalid={"table": created, "mode": "append"})
    assert table_rows(spark, swapped) == VALID_ROWS
    assert table_rows(spark, created) == sorted_rows([row[:4] for row in INVALID_ROWS] * 2)
    leftovers = [t.name for t in spark.catalog.listTables() if t.name.startswith("_cola")]
    assert leftovers == []


@pytest.mark.parametrize("mode", ["append", "overwrite", "new"])
@pytest.mark.parametrize("partition_by", [(), ("status",)])
def test_a_failed_invalid_table_leaves_the_valid_table_as_it_was_and_a_retry_works(
    spark, orders, tables, mode, partition_by
):
    name = tables("sw_kept", None if mode == "new" else OLD, partition_by)
    blocked = tables("sw_blocked", None)
    # A folder left where the new table's files must go (by a crashed job, say): Spark refuses
    # to name a managed table there, so the last step of the publication fails for real.
    stray = Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:")) / blocked
    stray.mkdir(parents=True)
    valid = {"table": name, "mode": "overwrite" if mode == "overwrite" else "append"}
    with pytest.raises(ColaOutputError) as raised:
        Cola().split_write(orders, RULES, valid=valid, invalid={"table": blocked}, annotate="codes")
    assert str(raised.value).startswith(f"cannot publish the invalid output table {blocked}: cannot rename table ")
    assert "[LOCATION_ALREADY_EXISTS]" in str(raised.value)
    assert str(raised.value).endswith("; nothing was published")
    if mode == "new":
        assert not spark.catalog.tableExists(name)
    else:
        assert table_rows(spark, name) == OLD
    if partition_by and mode != "new":
        assert [row[0] for row in spark.sql(f"SHOW PARTITIONS {name}").collect()] == ["status=paid"]
    assert not spark.catalog.tableExists(blocked)
    assert [t.name for t in spark.catalog.listTables() if t.name.startswith("_cola")] == []

    stray.rmdir()
    outcome = Cola().split_write(orders, RULES, valid=valid, invalid={"table": blocked}, annotate="codes")
    assert (outcome.valid_count, outcome.invalid_count) == (3, 3)
    assert table_rows(spark, name) == sorted_rows((OLD if mode == "append" else []) + VALID_ROWS)
    assert sorted_rows((r.order_id, list(r.codes)) for r in spark.table(blocked).collect()) == sorted_rows(
        (row[0], row[4]) for row in INVALID_ROWS
    )


def test_tables_that_cannot_be_published_together_are_refused_before_any_job(spark, orders, tables, job_counter):
    existing = tables("sw_exists", OLD)
    spark.sql("CREATE OR REPLACE TEMPORARY VIEW sw_view AS SELECT 1 AS id")
    cases = [
        ({"table": existing}, "the valid output table sw_exists already exists and its mode is 'errorifexists'; set "
                              "\"mode\" to \"overwrite\" or \"append\", or choose another target"),
        ({"table": "sw_view", "mode": "append"}, "output table sw_view is a view; write to a table or a path"),
    ]
    for valid, message in cases:
        with job_counter.count() as counted, pytest.raises(ColaOutputError) as raised:
            Cola().split_write(orders, RULES, valid=valid, invalid={"table": "sw_never"})
        assert (str(raised.value), counted.jobs) == (message, 0)
    assert not spark.catalog.tableExists("sw_never")


def test_appending_to_a_table_of_other_columns_is_refused(spark, orders, tables):
    name = tables("sw_narrow", None)
    spark.createDataFrame([(1,)], "order_id int").write.saveAsTable(name)
    with pytest.raises(ColaOutputError) as raised:
        Cola().split_write(orders, RULES, valid={"table": name, "mode": "append"}, invalid={"table": "sw_never"})
    assert str(raised.value) == (
        "the valid output table sw_narrow has the columns order_id, but the split writes "
        "order_id, email, amount, status to it"
    )


# -- the data ------------------------------------------------------------------------------------


def test_an_aggregate_that_fails_on_the_data_is_a_failed_result_and_the_split_is_written(spark, tmp_path):
    df = spark.createDataFrame([(1, "7"), (2, "x"), (None, "8")], "v int, s string")
    rules = [{"type": "not_null", "columns": ["v"]}, {"type": "row_count", "min": 1, "where": "cast(s AS int) > 0"}]
    outcome = Cola().split_write(df, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"))
    assert outcome.results == Cola().run(df, rules)
    assert outcome.results[1].message.startswith(
        "row_count: Spark could not evaluate the rule on this data: [CAST_INVALID_INPUT] The value 'x'"
    )
    assert (outcome.valid_count, outcome.invalid_count) == (2, 1)


def test_a_row_rule_that_fails_on_the_data_stops_the_split_before_anything_is_published(spark, tmp_path):
    df = spark.createDataFrame([(1,), (2,)], "id int")
    rules = [{"type": "expression", "expression": "id / (id - id) > 0"}]
    with pytest.raises(ColaError) as raised:
        Cola().split_write(df, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"))
    assert str(raised.value).startswith(
        "the split cannot be written, as a row rule fails on the data: expression(id / (id - id) > 0): "
        "Spark could not evaluate the rule on this data: [DIVIDE_BY_ZERO] Division by zero."
    )
    assert os.listdir(tmp_path) == []


class _Worded(BaseCheck):
    """A custom check whose own failure is worded like an unmeasured rule, but was measured."""

    def run(self, df):
        return CheckResult("worded", False, "the vendor could not evaluate this, on purpose", 1)


def test_the_split_names_only_the_rules_flagged_unmeasured_whatever_the_others_say(spark, tmp_path):
    df = spark.createDataFrame([(1,), (2,)], "id int")
    cola = Cola()
    cola.register("worded", _Worded)
    rules = [{"type": "expression", "expression": "id / (id - id) > 0"}, {"type": "worded"}]
    with pytest.raises(ColaError) as raised:
        cola.split_write(df, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"))
    assert str(raised.value) == (
        "the split cannot be written, as a row rule fails on the data: expression(id / (id - id) > 0): "
        "Spark could not evaluate the rule on this data: [DIVIDE_BY_ZERO] Division by zero. Use `try_divide` to "
        "tolerate divisor being 0 and return NULL instead. If necessary set \"spark.sql.ansi.enabled\" to \"false\" "
        "to bypass this error. SQLSTATE: 22012"
    )
    assert os.listdir(tmp_path) == []


def test_not_null_over_several_columns_carries_its_counts_per_column_through_the_split(spark, tmp_path):
    df = spark.createDataFrame([(1, "a"), (None, "b"), (3, None)], "customer_id int, email string")
    rules = [{"type": "not_null", "columns": ["customer_id", "email"]}]
    outcome = Cola().split_write(df, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"))
    assert outcome.results[0].details == {"columns": {"customer_id": 1, "email": 1}}
    assert outcome.results[0].message == "not_null(customer_id,email): 2 NULL values (customer_id: 1, email: 1)"
    assert (outcome.valid_count, outcome.invalid_count) == (1, 2)


def test_annotate_valid_keeps_the_codes_column_in_the_valid_output_and_spares_the_copy(
    spark, orders, tmp_path, job_counter
):
    with job_counter.count() as counted:
        outcome = Cola().split_write(orders, RULES, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"),
                                     annotate="codes", annotate_valid=True)
    assert (outcome.valid_count, outcome.invalid_count) == (3, 3)
    assert counted.input_records == len(ORDERS)  # both outputs renamed from the one write
    assert counted.jobs == 1
    assert spark.read.parquet(str(tmp_path / "v")).columns == [*COLUMNS, "codes"]
    assert rows_of(spark, tmp_path / "v", *COLUMNS, "codes") == [(*row, None) for row in VALID_ROWS]
    assert rows_of(spark, tmp_path / "i", *COLUMNS, "codes") == sorted_rows(INVALID_ROWS)
    with pytest.raises(ColaError) as raised:
        Cola().split_write(orders, RULES, valid=str(tmp_path / "v2"), invalid=str(tmp_path / "i2"), annotate_valid=1)
    assert str(raised.value) == "annotate_valid must be true or false, got 1"



# -- found in review: odd names and values, tables that cannot take files, lossy staging ----------


ODD_STATUSES = ["x y", "a=b%c'd", "tab\there", "back\\slash"]


@pytest.mark.parametrize("fail", [False, True])
def test_a_partitioned_table_keeps_its_rows_whatever_its_partition_values_hold(spark, tables, fail):
    rows = [(n, f"u{n}@x.io", float(n), status) for n, status in enumerate(ODD_STATUSES, start=1)]
    source = spark.createDataFrame(rows, SCHEMA)
    name = tables("sw_odd", [(9, "old@x.io", 1.0, "o ld")], ("status",))
    blocked = tables("sw_odd_blocked", None)
    # With fail, a stray folder where the invalid table's files must go fails the last step,
    # so the overwrite of the valid table, already done, is undone.
    stray = Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:")) / blocked
    if fail:
        stray.mkdir(parents=True)
    try:
        call = lambda: Cola().split_write(source, [{"type": "not_null", "columns": ["email"]}],  # noqa: E731
                                          valid={"table": name, "mode": "overwrite"}, invalid={"table": blocked})
        if fail:
            with pytest.raises(ColaOutputError):
                call()
            assert table_rows(spark, name) == [(9, "old@x.io", 1.0, "o ld")]
        else:
            assert call().valid_count == 4
            assert table_rows(spark, name) == sorted_rows(rows)
    finally:
        if fail:
            stray.rmdir()


def test_a_column_named_location_does_not_hide_the_tables_folder(spark, tables):
    schema = "order_id int, Location string, status string"
    name = tables("sw_loc", None)
    spark.createDataFrame([(9, "old", "a")], schema).write.partitionBy("status").saveAsTable(name)
    source = spark.createDataFrame([(1, "here", "a"), (2, "there", "b")], schema)
    Cola().split_write(source, [{"type": "not_null", "columns": ["order_id"]}],
                       valid={"table": name, "mode": "overwrite"}, invalid={"table": tables("sw_loc_i", None)})
    assert sorted_rows(tuple(row) for row in spark.table(name).select("order_id", "Location", "status").collect()) == [
        (1, "here", "a"), (2, "there", "b"),
    ]


def test_tables_that_cannot_take_the_splits_files_are_refused_before_anything_is_written(spark, orders, tables):
    csv = tables("sw_csv", None)
    spark.sql(f"CREATE TABLE {csv} (order_id int, email string, amount double, status string) USING csv "
              "OPTIONS (header 'true', sep '|')")
    bucketed = tables("sw_bucketed", None)
    spark.createDataFrame(OLD, SCHEMA).write.bucketBy(2, "order_id").saveAsTable(bucketed)
    typed = tables("sw_typed", None)
    spark.createDataFrame([(1, "a", 1, "s")], "order_id bigint, email string, amount int, status string") \
        .write.saveAsTable(typed)
    cases = [
        (csv, f"the valid output table {csv} is a csv table; a split appends to file-based tables (parquet, orc) "
              "only, whose new files it can publish at once"),
        (bucketed, f"the valid output table {bucketed} is bucketed; a split cannot write its files in the table's "
                   "buckets"),
        (typed, f"the valid output table {typed}'s column order_id is bigint, but the split writes int to it; "
                "cast the column first"),
    ]
    for name, message in cases:
        # Reading a table's description may start a job (a csv table's); nothing is written.
        with pytest.raises(ColaOutputError) as raised:
            Cola().split_write(orders, RULES, valid={"table": name, "mode": "append"}, invalid={"table": "sw_never"})
        assert str(raised.value) == message
        assert not spark.catalog.tableExists("sw_never")
    assert table_rows(spark, typed) == [(1, "a", 1, "s")]


@pytest.mark.parametrize(
    ("valid", "message"),
    [
        ({"path": "{v}", "format": "delta"},
         "the valid output {v} is a delta output; a split publishes files by renaming them, which a Delta table's "
         "log would not record: write parquet or orc paths, or tables"),
        ({"path": "{v}", "mode": "overwrite", "options": {"partitionOverwriteMode": "dynamic"}},
         "the valid output {v} is overwritten in dynamic partition mode (spark.sql.sources.partitionOverwriteMode"
         "=dynamic), which a split cannot publish at once; use the static mode, or append"),
        ({"table": "t; DROP TABLE t"},
         "output 'table' must be a table name such as db.orders (or `odd name`), got 't; DROP TABLE t'"),
    ],
)
def test_more_outputs_refused_before_any_job(spark, orders, tmp_path, job_counter, valid, message):
    filled = {key: value.format(v=tmp_path / "v") if isinstance(value, str) and key == "path" else value
              for key, value in valid.items()}
    with job_counter.count() as counted, pytest.raises(ColaOutputError) as raised:
        Cola().split_write(orders, RULES, valid=filled, invalid=str(tmp_path / "i"))
    assert (str(raised.value), counted.jobs) == (message.format(v=tmp_path / "v"), 0)


def test_beside_a_csv_output_the_staging_write_is_parquet_so_the_other_output_loses_nothing(spark, tables, tmp_path):
    df = spark.createDataFrame([(1, "line1\nline2", "2024-01-01 00:00:00.654321"), (2, "ok", None)],
                               "id int, note string, at string").selectExpr("id", "note", "cast(at as timestamp) as at")
    table = tables("sw_from_csv", None)
    # The invalid rows (a newline in a value, microseconds) go to a table, copied from staging.
    outcome = Cola().split_write(df, [{"type": "range", "column": "id", "min": 2}],
                                 valid={"path": str(tmp_path / "v"), "format": "csv"}, invalid={"table": table})
    assert (outcome.valid_count, outcome.invalid_count) == (1, 1)
    [row] = spark.table(table).collect()
    assert (row.id, row.note, row.at.microsecond) == (1, "line1\nline2", 654321)
    assert [tuple(r) for r in spark.read.schema("id int, note string, at timestamp").csv(str(tmp_path / "v")).collect()] \
        == [(2, "ok", None)]


def test_samples_are_taken_before_an_output_overwrites_the_source(spark, tmp_path):
    source = str(tmp_path / "orders")
    spark.createDataFrame(ORDERS, SCHEMA).write.parquet(source)
    outcome = Cola().split_write(spark.read.parquet(source), RULES, valid={"path": source, "mode": "overwrite"},
                                 invalid=str(tmp_path / "i"), samples=1)
    assert [len(r.samples or []) for r in outcome.results] == [1, 1, 1, 0, 0]
    assert rows_of(spark, source, *COLUMNS) == VALID_ROWS


# -- the rows per rejection code, observed on the staging write ------------------------------------


def codes_in(spark, path, column="codes") -> dict[str, int]:
    """Per code, the rows of the published invalid output carrying it: what ``rejections`` must say."""
    from pyspark.sql import functions as F

    counted = spark.read.parquet(str(path)).select(F.explode(column).alias("code")).groupBy("code").count()
    return {row["code"]: row["count"] for row in counted.collect()}


REJECTIONS = {"not_null(email)": 1, "AMOUNT_NEGATIVE": 1, "unique(order_id)": 2}


def test_the_rows_per_rejection_code_are_counted_as_published(spark, orders, tmp_path):
    outcome = Cola().split_write(orders, RULES, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"),
                                 annotate="codes")
    # Order 3's first row breaks two rules and counts under both; both rows of order 3 are
    # rejected by unique (its failed_count, 1, is the duplicates beyond the first).
    assert outcome.rejections == REJECTIONS
    assert list(outcome.rejections) == ["not_null(email)", "AMOUNT_NEGATIVE", "unique(order_id)"]  # rule order
    assert outcome.results[2].failed_count == 1
    assert sum(outcome.rejections.values()) == 4 >= outcome.invalid_count == 3
    assert outcome.rejections == codes_in(spark, tmp_path / "i")


def test_the_rows_per_rejection_code_cost_no_job(spark, orders, tmp_path, job_counter):
    with job_counter.count() as counted:
        outcome = Cola().split_write(orders, RULES, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"),
                                     annotate="codes")
    assert outcome.rejections == REJECTIONS
    # As many jobs and reads as without the counts: the staging write, the valid rows' copy.
    assert counted.jobs == 2
    assert counted.input_records == len(ORDERS) + 3


def test_rejections_without_annotate_and_with_annotate_valid_are_the_same(spark, orders, tmp_path):
    plain = Cola().split_write(orders, RULES, valid=str(tmp_path / "v1"), invalid=str(tmp_path / "i1"))
    kept = Cola().split_write(orders, RULES, valid=str(tmp_path / "v2"), invalid=str(tmp_path / "i2"),
                              annotate="codes", annotate_valid=True)
    assert plain.rejections == kept.rejections == REJECTIONS


def test_a_multi_column_not_null_counts_each_columns_code(spark, tmp_path):
    df = spark.createDataFrame(
        [(1, None, "paid"), (2, None, None), (3, "c@x.io", None), (4, "d@x.io", "open")],
        "order_id int, email string, status string",
    )
    rules = [{"type": "not_null", "columns": ["email", "status"]}]
    outcome = Cola().split_write(df, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"), annotate="codes")
    assert outcome.rejections == {"not_null(email)": 2, "not_null(status)": 2}
    assert (outcome.valid_count, outcome.invalid_count) == (1, 3)
    assert outcome.rejections == codes_in(spark, tmp_path / "i")


def test_a_passing_missing_or_invalid_rule_still_counts_the_rows_it_rejects(spark, orders, tmp_path):
    rules = [
        {"type": "missing_count", "column": "email", "must_be": "< 5"},
        {"type": "invalid_count", "column": "status", "valid_values": ["paid"], "must_be": "<= 3"},
        {"type": "range", "column": "amount", "min": 100, "severity": "warn"},
    ]
    outcome = Cola().split_write(orders, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"),
                                 annotate="codes")
    assert [r.severity for r in outcome.results] == ["pass", "pass", "warn"]
    # The passing rules reject their rows all the same; a warning rule rejects none.
    assert outcome.rejections == {"missing_count(email)": 1, "invalid_count(status)": 3}
    assert (outcome.valid_count, outcome.invalid_count) == (2, 4)
    assert outcome.rejections == codes_in(spark, tmp_path / "i")


def test_quarantine_key_counts_the_rows_it_pulls_in_under_its_own_code(spark, orders, tmp_path):
    rules = [{"type": "not_null", "columns": ["email"]}]
    outcome = Cola().split_write(orders, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"),
                                 annotate="codes", quarantine_key=["status"])
    # Order 2 (paid, no email) pulls in the other paid orders, 1 and 4.
    assert outcome.rejections == {"not_null(email)": 1, "quarantine_key(status)": 2}
    assert (outcome.valid_count, outcome.invalid_count) == (3, 3)
    assert outcome.rejections == codes_in(spark, tmp_path / "i")


def test_no_rejected_row_leaves_no_code(spark, orders, tmp_path):
    outcome = Cola().split_write(orders, [{"type": "not_null", "columns": ["order_id"]}],
                                 valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"))
    assert outcome.rejections == {}
    assert outcome.invalid_count == 0


def test_rejections_are_observed_when_the_aggregates_get_their_own_scan(spark, orders, tmp_path):
    cola = Cola()
    cola.register("distinct_statuses", DistinctStatuses)
    rules = [{"type": "not_null", "columns": ["email"]}, {"type": "distinct_statuses"}]
    outcome = cola.split_write(orders, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"))
    assert outcome.results[1].metric_value == 2  # measured by the block's own scan
    assert outcome.rejections == {"not_null(email)": 1}


def test_rejections_are_observed_when_an_aggregate_fails_on_the_data(spark, tmp_path):
    # The write is retried without the block's aggregates; the rows per code ride on the retry.
    df = spark.createDataFrame([(1, "7"), (2, "x"), (None, "8")], "v int, s string")
    rules = [{"type": "not_null", "columns": ["v"]}, {"type": "row_count", "min": 1, "where": "cast(s AS int) > 0"}]
    outcome = Cola().split_write(df, rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"))
    assert outcome.results[1].message.startswith("row_count: Spark could not evaluate the rule on this data")
    assert outcome.rejections == {"not_null(v)": 1}


def test_a_staged_split_publishes_only_when_its_caller_says_so_and_leaves_no_staging(spark, orders, tmp_path):
    from cola_core.plan.staged_split import staged_split

    checks = Cola().parse(RULES)
    valid, invalid = str(tmp_path / "valid"), str(tmp_path / "invalid")
    with staged_split(orders, checks, valid, invalid, annotate="codes") as staged:
        # Measured on the staging write, with nothing published: the caller may still read the source.
        assert staged.results == Cola().run(orders, RULES)
        assert visible(tmp_path) != ["source"]  # the staging folder
        assert not os.path.exists(valid) and not os.path.exists(invalid)
    assert visible(tmp_path) == ["source"]  # left unpublished: the staging is gone, and nothing else came
    finished = [CheckResult("custom", True, "finished by the caller")]
    with staged_split(orders, checks, valid, invalid, annotate="codes") as staged:
        outcome = staged.publish(finished)
    assert outcome == SplitOutcome(finished, 3, 3, {"not_null(email)": 1, "AMOUNT_NEGATIVE": 1, "unique(order_id)": 2})
    assert rows_of(spark, valid, *COLUMNS) == VALID_ROWS
    assert visible(tmp_path) == ["invalid", "source", "valid"]
