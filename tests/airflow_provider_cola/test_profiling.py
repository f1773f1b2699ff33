"""``ColaProfileOperator``: its arguments, checked in the worker before any JVM (no Spark), the
XCom bound (no Spark), and one real DAG run through spark-submit (``dags/cola_test_profile.py``).

Over Spark Connect it runs in ``test_connect.py``, beside the other tasks of its DAGs.
"""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest

from airflow_provider_cola.errors import ColaConfigError
from airflow_provider_cola.operators import ColaProfileOperator
from airflow_provider_cola.operators._profile_runs import ProfileRequest
from airflow_provider_cola.operators.profiling import PROFILE_XCOM_BYTES, bounded_profile
from cola_core.job.spec import source_argv
from cola_core.language.profiles import ColumnProfile, Profile
from cola_core.storage.specs import history_spec, parse_source
from cola_expected import ORDERS_PROFILE, ORDERS_PROFILE_TABLE

pytestmark = pytest.mark.airflow

SOURCE = {"path": "/data/orders/{{ ds }}", "format": "json"}


def test_template_fields():
    assert ColaProfileOperator.template_fields == (
        "source", "suggestions", "history", "dataset", "results_uri", "conf", "files", "py_files", "archives", "jars",
        "packages", "driver_class_path", "env_vars", "name", "keytab", "principal", "proxy_user", "properties_file",
    )


def test_init_only_stores_its_arguments():
    operator = ColaProfileOperator(
        task_id="profile", source=SOURCE, suggestions="relative/is/refused/at/run/time.yaml", strictness="loose",
        sample=7, executor_memory="2g",
    )
    assert (operator.source, operator.suggestions, operator.strictness, operator.sample) == (
        SOURCE, "relative/is/refused/at/run/time.yaml", "loose", 7,
    )
    assert (operator.conn_id, operator.columns, operator.history, operator.executor_memory) == (
        "spark_default", None, None, "2g",
    )


def test_the_spark_submit_arguments_are_the_check_operators():
    import inspect

    from airflow_provider_cola.operators import ColaCheckOperator
    from airflow_provider_cola.operators._submit_args import SUBMIT_ARGUMENTS

    own = ("self", "source", "suggestions", "conn_id", "columns", "sample", "strictness", "history", "dataset",
           "results_uri", "kwargs")
    parameters = inspect.signature(ColaProfileOperator.__init__).parameters
    assert [name for name in parameters if name not in own] == [argument.name for argument in SUBMIT_ARGUMENTS]
    checks = inspect.signature(ColaCheckOperator.__init__).parameters
    for argument in SUBMIT_ARGUMENTS:
        parameter = parameters[argument.name]
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY
        assert (parameter.default, parameter.annotation) == (argument.default, checks[argument.name].annotation)


def _cases(tmp: str) -> list[tuple[dict, str]]:
    return [
        ({"source": {"path": "/x", "fromat": "json"}},
         "invalid Cola source: unknown source key 'fromat'; valid keys are path, table, query, format, options, "
         "schema, stream"),
        ({"source": {"path": "/x", "format": "json", "stream": True, "schema": "id INT"}},
         "invalid Cola source: a streaming source is split, not profiled: profile the folder as a batch source "
         "(leave 'stream' out)"),
        ({"columns": "order_id,email"},
         "columns must be a list of column names (None for all of them), got 'order_id,email'"),
        ({"columns": []}, "columns must be a list of column names (None for all of them), got []"),
        ({"columns": ["order_id", "a,b"]},
         "columns: 'a,b' cannot be profiled by name: cola suggest --columns separates names with commas and trims "
         "spaces; leave columns out to profile every column"),
        ({"sample": 0}, "sample must be a fraction of the rows above 0 and at most 1, got 0"),
        ({"sample": 1.5}, "sample must be a fraction of the rows above 0 and at most 1, got 1.5"),
        ({"sample": True}, "sample must be a fraction of the rows above 0 and at most 1, got True"),
        ({"strictness": "loose"}, "strictness must be 'exact' or 'margin', got 'loose'"),
        ({"dataset": "shop.orders"}, "dataset names what a history row is about; give history too"),
        ({"history": {"path": f"{tmp}/history", "mode": "overwrite"}},
         "invalid history: a history store is only appended to, but its mode is 'overwrite'; leave 'mode' out or "
         'set it to "append"'),
        ({"suggestions": "rules/orders.suggested.yaml"},
         "suggestions must be an absolute path in this worker, got 'rules/orders.suggested.yaml': the task does not "
         "write beside the DAG file"),
        ({"suggestions": f"{tmp}/missing/orders.yaml"}, f"suggestions: the folder '{tmp}/missing' does not exist"),
        ({"suggestions": tmp}, f"suggestions: {tmp!r} is a folder, not a file"),
        ({"suggestions": "s3://bucket/orders.yaml"},
         "suggestions must be a file in this worker (an absolute path or a file: URI), got 's3://bucket/orders.yaml'"),
        ({"suggestions": ""}, "suggestions must be the path of a file in this worker, got ''"),
        ({"deploy_mode": "cluster"},
         "cluster deploy mode runs the driver on the cluster, so the results cannot come back through a local "
         "file: set results_uri to a folder both this worker and the driver reach"),
        ({"results_uri": "s3://bucket/results"},
         "results_uri must be a folder on storage that this worker and the Spark driver both mount (a path or a "
         "file: URI), got 's3://bucket/results'"),
    ]


@pytest.mark.parametrize("case", range(18))
def test_every_argument_is_checked_in_the_worker_before_any_jvm(case, tmp_path):
    arguments, message = _cases(str(tmp_path))[case]
    operator = ColaProfileOperator(
        task_id="profile", **{"source": SOURCE, "suggestions": f"{tmp_path}/orders.yaml", **arguments}
    )
    with pytest.raises(ColaConfigError) as error:  # an AirflowFailException: never retried
        operator.execute(context={})
    assert str(error.value) == message
    assert operator._hook is None  # no hook was even built
    assert list(tmp_path.iterdir()) == []


def test_over_spark_connect_the_spark_submit_arguments_are_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_CONNECT_HERE", json.dumps({"conn_type": "spark_connect", "host": "127.0.0.1"}))
    operator = ColaProfileOperator(
        task_id="profile", source=SOURCE, suggestions=f"{tmp_path}/orders.yaml", conn_id="spark_connect_here",
        executor_memory="2g", results_uri=str(tmp_path),
    )
    with pytest.raises(ColaConfigError) as error:
        operator.execute(context={})
    assert str(error.value) == (
        "executor_memory, results_uri only apply to spark-submit; the spark_connect connection 'spark_connect_here' "
        "runs the engine in this worker as a Spark Connect client (Spark settings go in conf)"
    )


def test_the_job_is_cola_suggest_with_the_operators_arguments():
    source = parse_source({"path": "/data/orders", "format": "csv", "options": {"header": "true", "sep": ";"}})
    request = ProfileRequest(
        source, ("order_id", "email"), 0.25, "margin", history_spec({"path": "/h"}), "shop.orders",
        "2024-01-03T00:00:00+00:00", "2024-01-04T00:00:00+00:00",
    )
    assert request.argv("/tmp/w/profile.json", "/tmp/w/suggestions.json") == [
        "suggest", "--input", "/data/orders", "--format", "csv", "--option", "header=true", "--option", "sep=;",
        "--columns", "order_id,email", "--sample", "0.25", "--strictness", "margin",
        "--profile-out", "/tmp/w/profile.json", "--out", "/tmp/w/suggestions.json",
        "--now", "2024-01-04T00:00:00+00:00", "--history", '{"path": "/h", "mode": "append"}', "--dataset", "shop.orders",
        "--data-date", "2024-01-03T00:00:00+00:00",
    ]
    assert request.learning() == {
        "now": dt.datetime(2024, 1, 4, tzinfo=dt.timezone.utc), "history": history_spec("/h"), "dataset": "shop.orders",
        "data_date": dt.datetime(2024, 1, 3, tzinfo=dt.timezone.utc),
    }
    plain = ProfileRequest(parse_source({"table": "db.orders"}))
    assert plain.argv("p", "o") == ["suggest", "--table", "db.orders", "--strictness", "exact", "--profile-out", "p",
                                    "--out", "o"]
    assert plain.learning() == {}
    assert source_argv(parse_source({"query": "SELECT 1 AS one"})) == ["--query", "SELECT 1 AS one"]


def _wide_profile(columns: int, top_values: int) -> dict:
    """A profile of ``columns`` text columns, each with ``top_values`` values of 200 characters."""
    return Profile(100, tuple(
        ColumnProfile(
            f"column_{index}", "string", "text", 100, nulls=0, distinct=top_values, distinct_exact=True,
            min_length=200, max_length=200,
            top_values=tuple((f"{index}-{value}".ljust(200, "x"), 5) for value in range(top_values)),
        )
        for index in range(columns)
    )).to_dict()


def test_the_pushed_profile_is_bounded():
    assert PROFILE_XCOM_BYTES == 512 * 1024
    small = _wide_profile(3, 2)
    assert bounded_profile(small) == (small, None)

    # 1,000 columns of 20 top values of 200 characters: 4.5 MB of JSON, 354 kB without the values.
    wide = _wide_profile(1_000, 20)
    pushed, warning = bounded_profile(wide)
    assert (len(json.dumps(wide)), len(json.dumps(pushed))) == (4_529_955, 353_983)
    assert pushed == {
        **wide, "columns": [{**column, "top_values": None} for column in wide["columns"]], "top_values_dropped": True,
    }
    assert warning == (
        "The profile is 4,529,955 bytes of JSON, over the 524,288 bytes of its XCom: it is pushed without the top "
        'values of its columns ("top_values_dropped": true)'
    )


def test_past_the_top_values_only_the_leading_columns_that_fit_are_pushed():
    wider = _wide_profile(2_000, 1)
    pushed, warning = bounded_profile(wider)
    slim = [{**column, "top_values": None} for column in wider["columns"]]
    assert pushed == {**wider, "columns": slim[:1_483], "top_values_dropped": True, "columns_dropped": 517}
    assert len(json.dumps(pushed)) == 523_989
    # The next column would not have fitted.
    assert len(json.dumps({**pushed, "columns": slim[:1_484]})) > PROFILE_XCOM_BYTES
    assert warning == (
        "The profile is 1,116,955 bytes of JSON, over the 524,288 bytes of its XCom: it is pushed without the top "
        'values of its columns ("top_values_dropped": true) and without its last 517 columns ("columns_dropped": 517)'
    )


# -- a real DAG run: spark-submit on local Spark, the real metadata database ---------------------

# What the task writes for the orders of 2024-01-03 (cola_expected.ORDERS_PROFILE) with the history
# of the test below: the suggestions of cola_expected.ORDERS_SUGGESTIONS, with the row count and the
# share of invalid emails learned from the three days before (8, 6 and 8 rows, then 6: -25%,
# +33.33%, -25%), never from the later day (20 rows).
LEARNED_SUGGESTIONS = """\
# Rules suggested by `cola suggest` from a profile of the data. Each passes on the data
# it was profiled from; review the bounds before you commit the file.
rules:
  # rows changed by -25% to 33.33% from one run to the next in the last 4 runs of shop.orders
  - type: "row_count"
    must_be: "change between -25% and 33.34%"
    name: "rows changed by -25% to 33.33% from one run to the next in the last 4 runs of shop.orders"
  # 0 NULLs in 6 rows
  - type: "not_null"
    columns: ["amount"]
    name: "0 NULLs in 6 rows"
  # values from -15 to 300 when profiled
  - type: "range"
    column: "amount"
    min: -15.0
    max: 300.0
    name: "values from -15 to 300 when profiled"
  # 0 NULLs in 6 rows
  - type: "not_null"
    columns: ["country"]
    name: "0 NULLs in 6 rows"
  # 100% of present values are alphanumeric
  - type: "invalid_percent"
    column: "country"
    valid_format: "alphanumeric"
    must_be: "<= 0"
    name: "100% of present values are alphanumeric"
  # 0 NULLs in 6 rows
  - type: "not_null"
    columns: ["email"]
    name: "0 NULLs in 6 rows"
  # values not email from 0% to 0% in the last 4 runs of shop.orders
  - type: "invalid_percent"
    column: "email"
    valid_format: "email"
    must_be: "<= 0"
    name: "values not email from 0% to 0% in the last 4 runs of shop.orders"
  # values from 3001 to 3005 when profiled
  - type: "range"
    column: "order_id"
    min: 3001
    max: 3005
    name: "values from 3001 to 3005 when profiled"
"""


def _xcom(dag_id: str, day: str, key: str) -> dict:
    """The XCom value ``key`` of each task of the DAG run of ``day`` (run_dag gives return_value only)."""
    from airflow.models.dagrun import DagRun
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    logical_date = dt.datetime.fromisoformat(day).replace(tzinfo=dt.timezone.utc)
    with create_session() as session:
        run = session.scalars(select(DagRun).where(DagRun.dag_id == dag_id, DagRun.logical_date == logical_date)).one()
        rows = session.scalars(XComModel.get_many(run_id=run.run_id, dag_ids=dag_id, key=key))
        return {row.task_id: XComModel.deserialize_value(row) for row in rows}


@pytest.mark.spark
def test_a_dag_run_profiles_a_day_writes_the_suggestions_and_learns_from_the_days_before(run_dag, session, tmp_path):
    from cola_core import Cola

    # Checks of the orders of three earlier days (8, 6 and 8 rows) in the history store, and of a
    # later day (20 rows), which a suggestion for 3 January must not learn from. The row count in
    # its metric form: the bounds form ({"min": 1}) records no value in the history to learn from.
    store = str(tmp_path / "history")
    block = [{"type": "row_count", "must_be": ">= 0"},
             {"type": "invalid_percent", "column": "email", "valid_format": "email", "must_be": "<= 100"}]
    for day, rows in {"2023-12-31": 8, "2024-01-01": 6, "2024-01-02": 8, "2024-01-05": 20}.items():
        orders = session.createDataFrame([(f"buyer{row}@example.com",) for row in range(rows)], "email string")
        Cola().run(orders, block, history=store, dataset="shop.orders", data_date=dt.date.fromisoformat(day))
    folder = tmp_path / "suggested"
    folder.mkdir()
    suggestions = folder / "orders.suggested.yaml"
    suggestions.write_text("an earlier run's file, replaced whole\n")

    outcome = run_dag("cola_test_profile", "2024-01-03", {"folder": str(folder), "history": store})

    assert outcome.states == {"profile_orders": "success", "profile_unknown_column": "failed"}
    assert outcome.tries["profile_unknown_column"] == 1  # refused: not retried, though retries=2
    assert outcome.xcom == {"profile_orders": ORDERS_PROFILE}
    assert _xcom("cola_test_profile", "2024-01-03", "cola_suggestions") == {
        "profile_orders": {"path": str(suggestions), "rules": 8},
    }
    assert suggestions.read_text() == LEARNED_SUGGESTIONS
    assert sorted(path.name for path in folder.iterdir()) == ["orders.suggested.yaml"]  # no partial file
    log = outcome.log
    # The profile table first (the driver prints it, a line a record), then where the suggestions went.
    table = [log.index(f"] {line} ") for line in ORDERS_PROFILE_TABLE]
    wrote = log.index(f"] Cola wrote 8 suggested rules to {suggestions}: review them before you commit them")
    assert table == sorted(table) and table[-1] < wrote
    assert re.search(
        # The freshness age at the end of the run's data interval (a run by hand: the day before, to the logical date).
        r"--now 2024-01-03T00:00:00\+00:00 "
        r"--history \{\"path\": \"[^\"]+/history\", \"mode\": \"append\"\} --dataset shop\.orders "
        r"--data-date 2024-01-03T00:00:00\+00:00", log,
    )
    # The scan is a plan of some 80 aggregates; Spark's warnings that it cut its printed form and
    # shipped a big task binary are not news.
    assert "Truncated the string representation of a plan" not in log
    assert "Broadcasting large task binary" not in log
    assert (
        "ColaJobRefused: the Cola job refused its inputs (exit code 2, so it is not retried): no column 'emails' in "
        "the DataFrame; its columns are amount, country, email, order_id"
    ) in log
    assert "\tat org.apache" not in log  # no Java stack trace for what is expected
