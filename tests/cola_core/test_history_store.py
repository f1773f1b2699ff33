"""The history store: what a row holds, reading and checking a store (one an earlier Cola wrote
too), and the failed-records store beside it; a part that cannot be read is an error naming it."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os

import pytest

from cola_core import Cola, ColaError, ColaOutputError
from cola_core.cli.args import job_from_argv
from cola_core.history.retention import exclude_run
from cola_core.history.store import ADDED_COLUMNS, HISTORY_COLUMNS, HISTORY_SCHEMA, RunInfo, read_history
from cola_core.history.summaries import history_trends, index_rows
from cola_core.job.spec import JobSpec
from cola_core.storage.specs import history_spec, parse_source
from cola_helpers import DATA, HISTORY_RULES, history_day

pytestmark = [pytest.mark.spark, pytest.mark.connect]


def test_without_a_data_date_a_run_is_keyed_by_its_own_time_and_a_split_says_so(spark, people, tmp_path):
    store = str(tmp_path / "history")
    at = dt.datetime(2026, 5, 1, 12, 30, tzinfo=dt.timezone.utc)
    Cola().run(people, HISTORY_RULES[:1], history=store, run_info=RunInfo(dataset="p", run_id="run-1", validated_at=at))
    Cola().split_write(people, HISTORY_RULES[:1], str(tmp_path / "v"), str(tmp_path / "i"), history=store, dataset="p",
                       data_date=dt.datetime(2026, 5, 1, 8, 0, tzinfo=dt.timezone(dt.timedelta(hours=2))))
    rows = sorted(spark.read.parquet(store).select("data_date", "run_kind", "map_index").collect())
    assert [tuple(row) for row in rows] == [
        (dt.datetime(2026, 5, 1, 6, 0), "split", None), (dt.datetime(2026, 5, 1, 12, 30), "check", None),
    ]


def test_a_table_store(spark, people):
    spark.sql("DROP TABLE IF EXISTS cola_history_test")
    try:
        Cola().run(people, HISTORY_RULES, history={"table": "cola_history_test"}, dataset="crm.people")
        Cola().run(people, HISTORY_RULES, history={"table": "cola_history_test"}, dataset="crm.people")
        assert spark.table("cola_history_test").count() == 6
        assert read_history(spark, {"table": "cola_history_test"}).count() == 6
    finally:
        spark.sql("DROP TABLE IF EXISTS cola_history_test")


def test_a_store_that_is_not_a_history_is_refused_before_anything_is_written(spark, people, tmp_path, job_counter):
    store = tmp_path / "other"
    spark.range(3).write.parquet(str(store))
    before = sorted(os.listdir(store))
    with pytest.raises(ColaOutputError) as raised:
        Cola().split_write(people, HISTORY_RULES[:1], str(tmp_path / "v"), str(tmp_path / "i"), history=str(store),
                           dataset="p")
    assert str(raised.value) == (
        f"{store} is not a Cola history store: it lacks {', '.join(HISTORY_COLUMNS)}; it has id, which a history "
        "has not. Use a new path or table for the history, or one Cola wrote"
    )
    assert sorted(os.listdir(store)) == before
    assert sorted(os.listdir(tmp_path)) == ["other"]


def test_a_column_of_another_type_is_named(spark, people, tmp_path):
    store = tmp_path / "history"
    Cola().run(people, HISTORY_RULES[:1], history=str(store), dataset="p")
    spark.read.parquet(str(store)).selectExpr(*[
        "CAST(failed_count AS string) AS failed_count" if c == "failed_count" else c for c in HISTORY_COLUMNS
    ]).write.parquet(str(tmp_path / "retyped"))
    with pytest.raises(ColaOutputError, match=r"is not a Cola history store: failed_count is string, not bigint\."):
        Cola().run(people, HISTORY_RULES[:1], history=str(tmp_path / "retyped"), dataset="p")


@pytest.mark.parametrize(
    ("store", "message"),
    [
        ({"path": "/h", "mode": "overwrite"},
         "a history store is only appended to, but its mode is 'overwrite'; leave 'mode' out or set it to \"append\""),
        ({"path": "/h", "partition_by": ["dataset"]}, "a history store is not partitioned; leave 'partition_by' out"),
        ({"path": "/h", "format": "csv"},
         "a history store on a path is parquet or orc, not 'csv' (a table may be any format)"),
        ({"path": "/h", "format": "json"},
         "a history store on a path is parquet or orc, not 'json' (a table may be any format)"),
        ({"table": "a b"}, "output 'table' must be a table name such as db.orders (or `odd name`), got 'a b'"),
    ],
    ids=["overwrite", "partitioned", "csv", "json", "bad table"],
)
def test_malformed_stores_are_refused_in_pure_python(store, message):
    with pytest.raises(ColaOutputError) as raised:
        history_spec(store)
    assert str(raised.value) == message


def test_a_history_needs_a_dataset_and_a_dataset_needs_a_history(people, tmp_path):
    with pytest.raises(ColaError, match=r"^a history needs 'dataset', the name of what was checked"):
        Cola().run(people, HISTORY_RULES, history=str(tmp_path / "h"))
    with pytest.raises(ColaError, match=r"^'dataset', 'data_date' and 'run_info' say what a history row is about; give"):
        Cola().run(people, HISTORY_RULES, dataset="p")
    assert not (tmp_path / "h").exists()


# -- the command line and the job spec --------------------------------------------------------


def test_the_job_spec_carries_the_history_through_its_command_line(tmp_path):
    spec = JobSpec(rules=str(DATA / "rules_split.json"), source=None, history=str(tmp_path / "h"), dataset="x",
                   dag_id="d", task_id="t", airflow_run_id="r")
    assert spec.history.mode == "append"
    argv = dataclasses.replace(spec, source=parse_source({"path": "/in", "format": "csv"})).to_argv()
    again = job_from_argv(argv)
    assert (again.history, again.dataset, again.dag_id, again.task_id, again.airflow_run_id) == (
        spec.history, "x", "d", "t", "r",
    )
    assert job_from_argv(again.to_argv()) == again
    with pytest.raises(ColaError, match=r"^dataset is written beside the results in a history store; give history"):
        JobSpec(rules=(), dataset="x")


def test_the_job_spec_carries_the_data_interval_and_the_task_s_ids_with_or_without_a_history():
    # What the operators give: the task's ids and its DAG run's interval, shown in the report
    # even without a history.
    spec = JobSpec(rules="/r.yaml", source=parse_source({"path": "/in", "format": "csv"}), dag_id="d", task_id="t",
                   airflow_run_id="r", data_date="2024-01-02", data_interval_start="2024-01-01T00:00:00+00:00",
                   data_interval_end="2024-01-02T02:00:00+02:00", logical_date="2024-01-02T00:00:00Z", map_index=2)
    # Every time is kept as the ISO text of its UTC instant; a date is its midnight in UTC.
    assert (spec.data_date, spec.data_interval_start, spec.data_interval_end, spec.logical_date) == (
        "2024-01-02T00:00:00+00:00", "2024-01-01T00:00:00+00:00", "2024-01-02T00:00:00+00:00",
        "2024-01-02T00:00:00+00:00",
    )
    argv = spec.to_argv()
    assert argv[argv.index("--data-date"):argv.index("--fail-exit-code")] == [
        "--data-date", "2024-01-02T00:00:00+00:00", "--data-interval-start", "2024-01-01T00:00:00+00:00",
        "--data-interval-end", "2024-01-02T00:00:00+00:00", "--logical-date", "2024-01-02T00:00:00+00:00",
        "--map-index", "2",
    ]
    assert job_from_argv(argv) == spec
    with pytest.raises(ColaError) as raised:
        job_from_argv([*argv[:argv.index("--data-date")], "--data-date", "2024-02-30"])
    assert str(raised.value) == (
        "--data-date must be an ISO date or timestamp such as 2024-01-31 or 2024-01-31T06:00:00Z: "
        "day is out of range for month"
    )
    with pytest.raises(ColaError, match=r"^map_index must be a whole number, got '2'$"):
        JobSpec(rules=(), map_index="2")


# -- found in review ----------------------------------------------------------------------------


def test_the_failed_records_store_is_checked_before_a_split_is_written(spark, people, tmp_path):
    store = str(tmp_path / "h")
    spark.range(3).write.parquet(store + "_failed_records")
    with pytest.raises(ColaOutputError, match=r"_failed_records is not a Cola history store"):
        Cola().split_write(people, HISTORY_RULES[:1], str(tmp_path / "v"), str(tmp_path / "i"), samples=2,
                           history=store, dataset="p")
    assert sorted(os.listdir(tmp_path)) == ["h_failed_records"]


def test_a_quoted_table_store_gets_its_failed_records_beside_it(spark, people):
    spark.sql("DROP TABLE IF EXISTS cola_quoted_h")
    spark.sql("DROP TABLE IF EXISTS cola_quoted_h_failed_records")
    try:
        Cola().run(people, HISTORY_RULES[:1], samples=1, history={"table": "`default`.`cola_quoted_h`"}, dataset="p")
        assert spark.table("cola_quoted_h_failed_records").count() == 1
    finally:
        spark.sql("DROP TABLE IF EXISTS cola_quoted_h")
        spark.sql("DROP TABLE IF EXISTS cola_quoted_h_failed_records")


def test_a_derived_id_never_takes_an_id_another_rule_declares():
    base = Cola().parse([{"type": "row_count", "must_be": "> 0"}])[0].rule_id
    rules = [{"type": "row_count", "must_be": "> 0"}, {"type": "row_count", "min": 1, "id": base}]
    assert [check.rule_id for check in Cola().parse(rules)] == [f"{base}#2", base]


# -- stores written before the data's date was recorded ------------------------------------------

FIRST_COLUMNS = [column for column in HISTORY_COLUMNS if column not in ADDED_COLUMNS]


def test_a_path_store_of_an_earlier_cola_is_read_as_keyed_by_run_time_and_appended_to(spark, tmp_path):
    rules = [{"type": "row_count", "must_be": "change between -10% and 10%", "id": "volume"}]
    written = tmp_path / "written"
    Cola().run(spark.range(100), rules, history=str(written),
               run_info=RunInfo(dataset="d", validated_at=history_day(1)))
    # What an earlier Cola left: parts without the added columns.
    store = str(tmp_path / "legacy")
    spark.read.parquet(str(written)).select(*FIRST_COLUMNS).write.parquet(store)
    assert [(r.data_date, r.run_kind, r.map_index) for r in read_history(spark, store).collect()] == [
        (dt.datetime(2026, 3, 1, 6, 0), None, None),
    ]
    # A new run compares with it (a row without a kind counts for both kinds), and appends a
    # part with every column beside the old one; the store reads both.
    outcome = Cola().split_write(spark.range(95), rules, str(tmp_path / "v"), str(tmp_path / "i"), history=store,
                                 dataset="d", data_date=dt.date(2026, 3, 2))
    assert (outcome.results[0].severity, outcome.results[0].baseline) == ("pass", 100.0)
    assert sorted((r.data_date, r.run_kind, r.metric_value) for r in read_history(spark, store).collect()) == [
        (dt.datetime(2026, 3, 1, 6, 0), None, 100.0), (dt.datetime(2026, 3, 2, 0, 0), "split", 95.0),
    ]
    assert [[point[1] for point in entry["trend"]] for entry in index_rows(spark, store)] == [[100.0, 95.0]]


def test_a_table_store_of_an_earlier_cola_gets_the_added_columns_on_its_next_append(spark, people):
    spark.sql("DROP TABLE IF EXISTS cola_legacy_history")
    try:
        Cola().run(people, HISTORY_RULES[:2], history={"table": "cola_legacy_history"}, dataset="p")
        legacy = spark.table("cola_legacy_history").select(*FIRST_COLUMNS).collect()
        spark.sql("DROP TABLE cola_legacy_history")
        first_schema = ", ".join(HISTORY_SCHEMA.split(", ")[:len(FIRST_COLUMNS)])
        spark.createDataFrame(legacy, first_schema).write.saveAsTable("cola_legacy_history")
        assert read_history(spark, {"table": "cola_legacy_history"}).count() == 2
        Cola().run(people, HISTORY_RULES[:2], history={"table": "cola_legacy_history"}, dataset="p",
                   data_date=dt.date(2026, 3, 2))
        assert tuple(spark.table("cola_legacy_history").columns) == HISTORY_COLUMNS
        rows = read_history(spark, {"table": "cola_legacy_history"}).collect()
        assert sorted((r.data_date == r.validated_at, r.run_kind) for r in rows) == [
            (False, "check"), (False, "check"), (True, None), (True, None),
        ]
        # Excluding a run rewrites the table with every column.
        assert exclude_run(spark, {"table": "cola_legacy_history"}, rows[0].run_id) == 2
    finally:
        spark.sql("DROP TABLE IF EXISTS cola_legacy_history")


# -- history files are checked, not trusted -----------------------------------------------------


CHANGE = [{"type": "row_count", "must_be": "change < 50%", "id": "volume"}]


def test_a_part_with_a_column_of_another_type_is_refused_before_anything_is_written(spark, tmp_path):
    """The store used to be checked on one part's footer, whichever Spark listed first: a part
    holding metric_value as text was appended to, or not, by the listing order."""
    store = tmp_path / "history"
    Cola().run(spark.range(3), CHANGE, history=str(store), dataset="d")
    retyped = tmp_path / "retyped"
    spark.read.parquet(str(store)).selectExpr(*[
        "CAST(metric_value AS string) AS metric_value" if c == "metric_value" else c for c in HISTORY_COLUMNS
    ]).coalesce(1).write.parquet(str(retyped))
    (written,) = retyped.glob("part-*.parquet")
    written.rename(store / "part-zz-retyped.parquet")  # listed after the run's own part
    before = sorted(p.name for p in store.iterdir())
    for action in (
        lambda: Cola().run(spark.range(3), CHANGE, history=str(store), dataset="d"),
        lambda: Cola().run(spark.range(3), [{"type": "row_count", "min": 1}], history=str(store), dataset="d"),
    ):
        with pytest.raises(ColaOutputError) as raised:
            action()
        assert str(raised.value) == (
            f"cannot read the history store {store}: its part {store}/part-zz-retyped.parquet holds "
            "metric_value as string, where an earlier part holds it as double; a Cola history's parts all have "
            "the history's columns"
        )
    assert sorted(p.name for p in store.iterdir()) == before


def test_an_unreadable_part_is_an_output_error_naming_it_for_every_run_that_reads_the_store(spark, tmp_path):
    """A part whose footer reads but whose pages do not: a plain run appends (its footer checks
    out), but every run that reads the rows (baselines, summaries, the index) met a raw Py4J
    error."""
    from cola_helpers import broken_history_file

    store = tmp_path / "history"
    broken = broken_history_file(store)
    Cola().run(spark.range(3), [{"type": "row_count", "min": 1}], history=str(store), dataset="d")
    for action in (
        lambda: Cola().run(spark.range(3), [{"type": "row_count", "must_be": "change < 50%"}], history=str(store),
                           dataset="orders"),
        lambda: index_rows(spark, str(store)),
        lambda: history_trends(spark, str(store), "orders"),
    ):
        with pytest.raises(ColaOutputError) as raised:
            action()
        assert str(raised.value).startswith(f"cannot read the history store {store}: ")
        assert f"Encountered error while reading file file://{broken}" in str(raised.value)
    # The summaries, as the command line prints them: exit status 2 and the message.
    from cola_core.cli.main import main

    assert main(["history", "daily", "--history", str(store)]) == 2


def test_a_truncated_part_is_an_output_error_naming_it(spark, tmp_path):
    store = tmp_path / "history"
    Cola().run(spark.range(3), CHANGE, history=str(store), dataset="d")
    (part,) = store.glob("part-*")
    part.write_bytes(part.read_bytes()[:40])  # cut short: its footer is gone
    with pytest.raises(ColaOutputError) as raised:
        Cola().run(spark.range(3), CHANGE, history=str(store), dataset="d")
    assert str(raised.value).startswith(f"cannot read the history store {store}: its part {part} cannot be read: ")
