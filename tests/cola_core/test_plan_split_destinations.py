"""The destinations of ``split_write``: how each output is published, and both or neither.

Paths appended to, overwritten, partitioned and in other formats; outputs refused before any
job; tables created, appended to and swapped; every step undone when one fails.

Failures are caused for real: a regular file where an output's folder must go makes Hadoop
refuse the write or the rename, exactly as on a cluster.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cola_core import Cola, ColaOutputError
from cola_helpers import (
    SPLIT_COLUMNS,
    SPLIT_INVALID_ROWS,
    SPLIT_RULES,
    SPLIT_SCHEMA,
    SPLIT_VALID_ROWS,
    parquet_rows,
    sorted_rows,
    visible_files,
)

pytestmark = [pytest.mark.spark, pytest.mark.connect]


# -- paths -----------------------------------------------------------------------------------------


def test_appending_adds_this_runs_rows_and_counts_only_them(spark, split_orders, tmp_path):
    valid, invalid = {"path": str(tmp_path / "v"), "mode": "append"}, {"path": str(tmp_path / "i"), "mode": "append"}
    Cola().split_write(split_orders, SPLIT_RULES, valid=valid, invalid=invalid, annotate="codes")
    outcome = Cola().split_write(split_orders, SPLIT_RULES, valid=valid, invalid=invalid, annotate="codes")
    assert (outcome.valid_count, outcome.invalid_count) == (3, 3)
    assert parquet_rows(spark, tmp_path / "v", *SPLIT_COLUMNS) == sorted_rows(SPLIT_VALID_ROWS * 2)
    assert parquet_rows(spark, tmp_path / "i", *SPLIT_COLUMNS, "codes") == sorted_rows(SPLIT_INVALID_ROWS * 2)


def test_overwrite_replaces_the_previous_contents(spark, split_orders, tmp_path):
    spark.createDataFrame([(9, "old@x.io", 1.0, "old")], SPLIT_SCHEMA).write.parquet(str(tmp_path / "v"))
    Cola().split_write(split_orders, SPLIT_RULES, valid={"path": str(tmp_path / "v"), "mode": "overwrite"},
                       invalid=str(tmp_path / "i"))
    assert parquet_rows(spark, tmp_path / "v", *SPLIT_COLUMNS) == SPLIT_VALID_ROWS
    assert visible_files(tmp_path) == ["i", "source", "v"]  # the backup of the old output is gone


def test_partitioned_outputs_in_other_formats(spark, split_orders, tmp_path):
    outcome = Cola().split_write(
        split_orders, SPLIT_RULES,
        valid={"path": str(tmp_path / "v"), "partition_by": ["status"]},
        invalid={"path": str(tmp_path / "i"), "format": "json", "partition_by": ["status"]},
        annotate="codes",
    )
    assert (outcome.valid_count, outcome.invalid_count) == (3, 3)
    assert visible_files(tmp_path / "v") == ["_SUCCESS", "status=open", "status=paid"]
    assert visible_files(tmp_path / "i") == ["_SUCCESS", "status=open", "status=paid"]
    assert parquet_rows(spark, tmp_path / "v", *SPLIT_COLUMNS) == SPLIT_VALID_ROWS
    invalid = spark.read.json(str(tmp_path / "i"))
    assert sorted_rows((r.order_id, r.status, list(r.codes)) for r in invalid.collect()) == sorted_rows(
        (row[0], row[3], row[4]) for row in SPLIT_INVALID_ROWS
    )


def test_an_empty_side_is_published_as_an_empty_output_with_its_schema(spark, split_orders, tmp_path):
    outcome = Cola().split_write(split_orders, [{"type": "not_null", "columns": ["order_id"]}],
                                 valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"), annotate="codes")
    assert (outcome.valid_count, outcome.invalid_count) == (6, 0)
    empty = spark.read.parquet(str(tmp_path / "i"))
    assert (empty.columns, empty.count()) == ([*SPLIT_COLUMNS, "codes"], 0)


def test_appending_no_rows_leaves_the_output_as_it_was(spark, split_orders, tmp_path):
    Cola().split_write(split_orders, SPLIT_RULES, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"))
    before = visible_files(tmp_path / "i")
    rules = [{"type": "not_null", "columns": ["order_id"]}]
    outcome = Cola().split_write(split_orders, rules, valid={"path": str(tmp_path / "v"), "mode": "append"},
                                 invalid={"path": str(tmp_path / "i"), "mode": "append"})
    assert (outcome.valid_count, outcome.invalid_count) == (6, 0)
    assert visible_files(tmp_path / "i") == before


# -- refused before any job ------------------------------------------------------------------------


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
    spark, split_orders, tmp_path, job_counter, valid, invalid, message
):
    (tmp_path / "existing").mkdir()
    places = {"v": str(tmp_path / "v"), "i": str(tmp_path / "i"), "existing": str(tmp_path / "existing")}

    def filled(config):
        if isinstance(config, str):
            return config.format(**places)
        return {**config, "path": config["path"].format(**places)}

    with job_counter.count() as counted, pytest.raises(ColaOutputError) as raised:
        Cola().split_write(split_orders, SPLIT_RULES, valid=filled(valid), invalid=filled(invalid), annotate="codes")
    assert str(raised.value) == message.format(**places)
    assert counted.jobs == 0
    assert visible_files(tmp_path) == ["existing", "source"]


@pytest.mark.parametrize("other", ["SW_SAME", "default.sw_same", "spark_catalog.default.`sw_same`"])
def test_the_same_table_for_both_outputs_is_refused_however_it_is_spelt(spark, split_orders, other):
    with pytest.raises(ColaOutputError) as raised:
        Cola().split_write(split_orders, SPLIT_RULES, valid={"table": "sw_same"}, invalid={"table": other, "mode": "overwrite"})
    assert str(raised.value) == f"the valid and invalid outputs are the same table, sw_same and {other}"


# -- all or nothing --------------------------------------------------------------------------------


def previous_outputs(spark, tmp_path) -> tuple[dict, dict]:
    """A valid output holding one earlier row, and an invalid output under a regular file."""
    spark.createDataFrame([(9, "old@x.io", 1.0, "old")], SPLIT_SCHEMA).write.parquet(str(tmp_path / "v"))
    (tmp_path / "blocker").write_text("a file where the invalid output's folder must go")
    return {"path": str(tmp_path / "v"), "mode": "append"}, {"path": str(tmp_path / "blocker" / "i")}


@pytest.mark.parametrize("annotate", [None, "codes"])
@pytest.mark.parametrize("mode", ["append", "overwrite"])
def test_a_failed_invalid_output_leaves_the_valid_one_as_it_was_and_a_retry_works(
    spark, split_orders, tmp_path, annotate, mode
):
    valid, invalid = previous_outputs(spark, tmp_path)
    valid["mode"] = mode
    before = visible_files(tmp_path / "v")
    with pytest.raises(ColaOutputError) as raised:
        Cola().split_write(split_orders, SPLIT_RULES, valid=valid, invalid=invalid, annotate=annotate)
    blocker = f"file:{tmp_path / 'blocker'}"
    if annotate:  # the staging write goes beside the invalid output, which it renames: it fails
        assert str(raised.value).startswith(f"cannot write the split to its staging folder {blocker}/_cola_staging_")
        assert str(raised.value).endswith(f"Parent path is not a directory: {blocker}; nothing was published")
    else:  # the valid output was published first, then undone
        assert str(raised.value) == (
            f"cannot publish the invalid output {tmp_path}/blocker/i: cannot create the folder {blocker}: "
            f"{blocker} is a file, not a folder; nothing was published"
        )
    assert visible_files(tmp_path / "v") == before
    assert parquet_rows(spark, tmp_path / "v", *SPLIT_COLUMNS) == [(9, "old@x.io", 1.0, "old")]
    assert visible_files(tmp_path) == ["blocker", "source", "v"]

    (tmp_path / "blocker").unlink()
    outcome = Cola().split_write(split_orders, SPLIT_RULES, valid=valid, invalid=invalid, annotate=annotate)
    assert (outcome.valid_count, outcome.invalid_count) == (3, 3)
    kept = [(9, "old@x.io", 1.0, "old")] if mode == "append" else []
    assert parquet_rows(spark, tmp_path / "v", *SPLIT_COLUMNS) == sorted_rows(kept + SPLIT_VALID_ROWS)
    assert spark.read.parquet(str(tmp_path / "blocker" / "i")).count() == 3


def test_a_partitioned_append_is_undone_file_by_file(spark, split_orders, tmp_path):
    spark.createDataFrame([(9, "old@x.io", 1.0, "paid")], SPLIT_SCHEMA).write.partitionBy("status").parquet(str(tmp_path / "v"))
    (tmp_path / "blocker").write_text("x")
    before = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "v").rglob("*"))
    with pytest.raises(ColaOutputError):
        Cola().split_write(split_orders, SPLIT_RULES, valid={"path": str(tmp_path / "v"), "mode": "append", "partition_by": ["status"]},
                           invalid=str(tmp_path / "blocker" / "i"))
    # The new status=open folder is gone again, and status=paid holds its one old file.
    assert sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "v").rglob("*")) == before
    assert parquet_rows(spark, tmp_path / "v", *SPLIT_COLUMNS) == [(9, "old@x.io", 1.0, "paid")]


# -- tables ----------------------------------------------------------------------------------------


def table_rows(spark, name) -> list[tuple]:
    return sorted_rows(tuple(row[c] for c in SPLIT_COLUMNS) for row in spark.table(name).collect())


OLD = [(9, "old@x.io", 1.0, "paid")]


@pytest.mark.parametrize("partition_by", [(), ("status",)])
def test_tables_are_created_appended_and_overwritten(spark, split_orders, split_tables, partition_by):
    appended, swapped, created = split_tables("sw_appended", OLD, partition_by), split_tables("sw_swapped", OLD), split_tables("sw_new", None)
    Cola().split_write(split_orders, SPLIT_RULES, valid={"table": appended, "mode": "append"}, invalid={"table": created})
    assert table_rows(spark, appended) == sorted_rows(OLD + SPLIT_VALID_ROWS)
    assert table_rows(spark, created) == sorted_rows(row[:4] for row in SPLIT_INVALID_ROWS)
    Cola().split_write(split_orders, SPLIT_RULES, valid={"table": swapped, "mode": "overwrite"},
                       invalid={"table": created, "mode": "append"})
    assert table_rows(spark, swapped) == SPLIT_VALID_ROWS
    assert table_rows(spark, created) == sorted_rows([row[:4] for row in SPLIT_INVALID_ROWS] * 2)
    leftovers = [t.name for t in spark.catalog.listTables() if t.name.startswith("_cola")]
    assert leftovers == []


@pytest.mark.parametrize("mode", ["append", "overwrite", "new"])
@pytest.mark.parametrize("partition_by", [(), ("status",)])
def test_a_failed_invalid_table_leaves_the_valid_table_as_it_was_and_a_retry_works(
    spark, split_orders, split_tables, mode, partition_by
):
    name = split_tables("sw_kept", None if mode == "new" else OLD, partition_by)
    blocked = split_tables("sw_blocked", None)
    # A folder left where the new table's files must go (by a crashed job, say): Spark refuses
    # to name a managed table there, so the last step of the publication fails for real.
    stray = Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:")) / blocked
    stray.mkdir(parents=True)
    valid = {"table": name, "mode": "overwrite" if mode == "overwrite" else "append"}
    with pytest.raises(ColaOutputError) as raised:
        Cola().split_write(split_orders, SPLIT_RULES, valid=valid, invalid={"table": blocked}, annotate="codes")
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
    outcome = Cola().split_write(split_orders, SPLIT_RULES, valid=valid, invalid={"table": blocked}, annotate="codes")
    assert (outcome.valid_count, outcome.invalid_count) == (3, 3)
    assert table_rows(spark, name) == sorted_rows((OLD if mode == "append" else []) + SPLIT_VALID_ROWS)
    assert sorted_rows((r.order_id, list(r.codes)) for r in spark.table(blocked).collect()) == sorted_rows(
        (row[0], row[4]) for row in SPLIT_INVALID_ROWS
    )


def test_tables_that_cannot_be_published_together_are_refused_before_any_job(spark, split_orders, split_tables, job_counter):
    existing = split_tables("sw_exists", OLD)
    spark.sql("CREATE OR REPLACE TEMPORARY VIEW sw_view AS SELECT 1 AS id")
    cases = [
        ({"table": existing}, "the valid output table sw_exists already exists and its mode is 'errorifexists'; set "
                              "\"mode\" to \"overwrite\" or \"append\", or choose another target"),
        ({"table": "sw_view", "mode": "append"}, "output table sw_view is a view; write to a table or a path"),
    ]
    for valid, message in cases:
        with job_counter.count() as counted, pytest.raises(ColaOutputError) as raised:
            Cola().split_write(split_orders, SPLIT_RULES, valid=valid, invalid={"table": "sw_never"})
        assert (str(raised.value), counted.jobs) == (message, 0)
    assert not spark.catalog.tableExists("sw_never")


def test_appending_to_a_table_of_other_columns_is_refused(spark, split_orders, split_tables):
    name = split_tables("sw_narrow", None)
    spark.createDataFrame([(1,)], "order_id int").write.saveAsTable(name)
    with pytest.raises(ColaOutputError) as raised:
        Cola().split_write(split_orders, SPLIT_RULES, valid={"table": name, "mode": "append"}, invalid={"table": "sw_never"})
    assert str(raised.value) == (
        "the valid output table sw_narrow has the columns order_id, but the split writes "
        "order_id, email, amount, status to it"
    )


# -- found in review: odd names and values, tables that cannot take files --------------------------


ODD_STATUSES = ["x y", "a=b%c'd", "tab\there", "back\\slash"]


@pytest.mark.parametrize("fail", [False, True])
def test_a_partitioned_table_keeps_its_rows_whatever_its_partition_values_hold(spark, split_tables, fail):
    rows = [(n, f"u{n}@x.io", float(n), status) for n, status in enumerate(ODD_STATUSES, start=1)]
    source = spark.createDataFrame(rows, SPLIT_SCHEMA)
    name = split_tables("sw_odd", [(9, "old@x.io", 1.0, "o ld")], ("status",))
    blocked = split_tables("sw_odd_blocked", None)
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


def test_a_column_named_location_does_not_hide_the_tables_folder(spark, split_tables):
    schema = "order_id int, Location string, status string"
    name = split_tables("sw_loc", None)
    spark.createDataFrame([(9, "old", "a")], schema).write.partitionBy("status").saveAsTable(name)
    source = spark.createDataFrame([(1, "here", "a"), (2, "there", "b")], schema)
    Cola().split_write(source, [{"type": "not_null", "columns": ["order_id"]}],
                       valid={"table": name, "mode": "overwrite"}, invalid={"table": split_tables("sw_loc_i", None)})
    assert sorted_rows(tuple(row) for row in spark.table(name).select("order_id", "Location", "status").collect()) == [
        (1, "here", "a"), (2, "there", "b"),
    ]


def test_tables_that_cannot_take_the_splits_files_are_refused_before_anything_is_written(spark, split_orders, split_tables):
    csv = split_tables("sw_csv", None)
    spark.sql(f"CREATE TABLE {csv} (order_id int, email string, amount double, status string) USING csv "
              "OPTIONS (header 'true', sep '|')")
    bucketed = split_tables("sw_bucketed", None)
    spark.createDataFrame(OLD, SPLIT_SCHEMA).write.bucketBy(2, "order_id").saveAsTable(bucketed)
    typed = split_tables("sw_typed", None)
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
            Cola().split_write(split_orders, SPLIT_RULES, valid={"table": name, "mode": "append"}, invalid={"table": "sw_never"})
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
def test_more_outputs_refused_before_any_job(spark, split_orders, tmp_path, job_counter, valid, message):
    filled = {key: value.format(v=tmp_path / "v") if isinstance(value, str) and key == "path" else value
              for key, value in valid.items()}
    with job_counter.count() as counted, pytest.raises(ColaOutputError) as raised:
        Cola().split_write(split_orders, SPLIT_RULES, valid=filled, invalid=str(tmp_path / "i"))
    assert (str(raised.value), counted.jobs) == (message.format(v=tmp_path / "v"), 0)
