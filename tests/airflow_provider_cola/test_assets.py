"""Airflow assets: the Cola summary on outlet asset events, and the gates of a consumer DAG.

The producer DAGs run with ``dag.test()``; their events are read back from the metadata DB.
The consumer DAG is triggered as the scheduler triggers it: the scheduler's own DAG-run
creation (``SchedulerJobRunner._create_dagruns_for_dags``) turns the queued asset events into
an asset-triggered run that consumes them, and that run's tasks then run one by one as
``dag.test()`` runs a run's tasks. ``dag.test()`` itself cannot run it: it always creates a
manual run of its own, with no asset events. The helpers' own cases run on the event objects
Airflow hands a task (``AssetEventDagRunReferenceResult``, in a ``TriggeringAssetEventsAccessor``).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

import pytest

from cola_expected import ids_of

pytestmark = [pytest.mark.airflow, pytest.mark.spark]

# The rules of cola_test_assets_producer.py, and the first three of them, which are the rules
# of cola_test_assets_outlets.py.
PRODUCER_RULES = [
    {"type": "not_null", "columns": ["order_id"]},
    {"type": "unique", "columns": ["order_id"]},
    {"type": "range", "column": "amount", "min": 0, "code": "NEGATIVE_AMOUNT"},
    {"type": "missing_count", "column": "email", "must_be": "< 5", "warn": "= 0"},
    {"type": "row_count", "min": 1, "id": "orders.volume"},
]
PRODUCER_IDS = ids_of(PRODUCER_RULES)
OUTLETS_IDS = PRODUCER_IDS[:3]
FAILED_CODES = ["not_null(order_id)", "unique(order_id)", "NEGATIVE_AMOUNT"]

DOCS = Path(__file__).resolve().parents[2] / "docs" / "airflow" / "assets.md"
# The extra of the producer's event on each sample day.
PASSED_DAY = {
    "severity": "pass", "counts": {"pass": 5, "warn": 0, "fail": 0}, "failed_codes": [], "warned_codes": [],
    "rule_ids": PRODUCER_IDS, "failed_rule_ids": [],
}
WARNED_DAY = {
    "severity": "warn", "counts": {"pass": 4, "warn": 1, "fail": 0}, "failed_codes": [],
    "warned_codes": ["missing_count(email)"], "rule_ids": PRODUCER_IDS, "failed_rule_ids": [],
}
FAILED_DAY = {
    "severity": "fail", "counts": {"pass": 2, "warn": 0, "fail": 3}, "failed_codes": FAILED_CODES,
    "warned_codes": [], "rule_ids": PRODUCER_IDS, "failed_rule_ids": PRODUCER_IDS[:3],
}
# cola_test_assets_outlets.py's three rules on the failing day (6 rows: 2 valid, 4 invalid).
OUTLETS_CHECK = {
    "severity": "fail", "counts": {"pass": 0, "warn": 0, "fail": 3}, "failed_codes": FAILED_CODES,
    "warned_codes": [], "rule_ids": OUTLETS_IDS, "failed_rule_ids": OUTLETS_IDS,
}
OUTLETS_SPLIT = {**OUTLETS_CHECK, "valid_count": 2, "invalid_count": 4}


@pytest.fixture(scope="module")
def spark():
    """One session for the module: the decorated tasks use the active one instead of starting theirs."""
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    yield session
    session.stop()


def _events_from(dag_id: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(asset name, task id, extra) of every asset event the DAG's tasks emitted, oldest first."""
    from airflow.models.asset import AssetEvent, AssetModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        rows = session.execute(
            select(AssetModel.name, AssetEvent.source_task_id, AssetEvent.extra)
            .join(AssetModel, AssetEvent.asset_id == AssetModel.id)
            .where(AssetEvent.source_dag_id == dag_id)
            .order_by(AssetEvent.id)
        ).all()
    return [(name, task_id, extra) for name, task_id, extra in rows]


def _sync_and_unpause(dag_id: str) -> None:
    """Write the dags folder's DAGs to the DB (as ``dag.test()`` does) and unpause ``dag_id``.

    Airflow queues an asset-triggered run only for a DAG that is known and unpaused when the
    event is emitted, and new DAGs start paused.
    """
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.dag_processing.dagbag import BundleDagBag, sync_bag_to_db
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session

    manager = DagBundlesManager()
    manager.sync_bundles_to_db()
    for bundle in manager.get_all_dag_bundles():
        if not bundle.is_initialized:
            bundle.initialize()
        bag = BundleDagBag(dag_folder=bundle.path, bundle_path=bundle.path, bundle_name=bundle.name)
        sync_bag_to_db(bag, bundle.name, bundle.version)
    with create_session() as session:
        session.get(DagModel, dag_id).is_paused = False


def _run_asset_triggered(dag_id: str, capfd, caplog) -> dict[str, Any]:
    """Let the scheduler create the asset-triggered run of ``dag_id``, then run its tasks.

    Returns:
        ``states`` (task id -> state), ``xcom`` (task id -> return_value), ``consumed`` (the
        severity in each consumed event's Cola extra, oldest first) and ``log``.
    """
    from airflow.dag_processing.dagbag import DagBag
    from airflow.jobs.job import Job
    from airflow.jobs.scheduler_job_runner import SchedulerJobRunner
    from airflow.models.dagbag import DBDagBag
    from airflow.models.dagrun import DagRun
    from airflow.models.xcom import XComModel
    from airflow.sdk import timezone
    from airflow.sdk.definitions.dag import _run_task
    from airflow.utils.session import create_session
    from airflow.utils.sqlalchemy import prohibit_commit
    from airflow.utils.state import DagRunState, TaskInstanceState
    from airflow.utils.types import DagRunType
    from sqlalchemy import select

    from cola_testenv import DAGS_FOLDER

    capfd.readouterr()
    caplog.clear()
    with create_session() as session, prohibit_commit(session) as guard:
        SchedulerJobRunner(job=Job())._create_dagruns_for_dags(guard, session)
    dag = DagBag(dag_folder=str(DAGS_FOLDER)).get_dag(dag_id)
    with create_session() as session:
        run = session.scalar(
            select(DagRun)
            .where(DagRun.dag_id == dag_id, DagRun.run_type == DagRunType.ASSET_TRIGGERED)
            .order_by(DagRun.id.desc())
        )
        assert run is not None, "the scheduler created no asset-triggered run"
        consumed = [event.extra["cola"]["severity"] for event in sorted(run.consumed_asset_events,
                                                                         key=lambda e: e.id)]
        # What dag.test() does with its own run, from the point where the run exists.
        run.dag = DBDagBag().get_dag_for_run(run, session)
        run.state = DagRunState.RUNNING
        session.commit()
        while run.state == DagRunState.RUNNING:
            session.expire_all()
            schedulable, _ = run.update_state(session=session)
            for ti in schedulable:
                ti.try_number += 1
                ti.state = TaskInstanceState.SCHEDULED
                ti.scheduled_dttm = timezone.utcnow()
            session.commit()
            for ti in run.get_task_instances(session=session):
                if ti.state == TaskInstanceState.SCHEDULED:
                    _run_task(ti=ti, task=dag.task_dict[ti.task_id])
        states = {ti.task_id: getattr(ti.state, "value", ti.state) for ti in run.get_task_instances(session=session)}
        rows = session.scalars(XComModel.get_many(run_id=run.run_id, dag_ids=dag_id, key="return_value"))
        xcom = {row.task_id: XComModel.deserialize_value(row) for row in rows}
    out, err = capfd.readouterr()
    # The tasks' records reach the captured streams or, when an earlier test left the logging
    # handlers on another stream, pytest's log capture: both are read.
    return {"states": states, "xcom": xcom, "consumed": consumed, "log": out + err + caplog.text}


# --- producers: the extra on each kind of outlet ------------------------------------------


def test_every_kind_of_outlet_gets_the_summary_and_a_failed_task_emits_none(run_dag, spark, tmp_path):
    outcome = run_dag("cola_test_assets_outlets", "2024-01-03", {"output_dir": str(tmp_path)})

    assert outcome.states == {
        "gated_orders": "success",  # it branched: every downstream task is skipped
        "publish": "skipped",
        "split_orders": "success",
        "submitted_split": "success",
        "strict_orders": "failed",
    }
    assert sorted(_events_from("cola_test_assets_outlets")) == [
        # Asset.ref outlet of a branching task: the event is emitted, and says the checks failed.
        ("cola_test_orders_gated", "gated_orders", {"cola": OUTLETS_CHECK}),
        # The one real spark-submit: the split operator's counts, from its results file.
        ("cola_test_orders_submitted", "submitted_split", {"cola": OUTLETS_SPLIT}),
        # Asset alias: the event the task added carries its own extra and the summary.
        ("cola_test_orders_valid", "split_orders", {"written_by": "split_orders", "cola": OUTLETS_SPLIT}),
        # strict_orders (on_failure="fail") failed: no event for cola_test_orders_strict.
    ]
    # A ref to an asset Airflow does not know gets no summary, and does not fail the task.
    assert (
        "Cola: no summary attached to outlet AssetNameRef(name='cola_test_no_such_asset'): "
        "ASSET_NOT_FOUND: {'name': 'cola_test_no_such_asset'}"
    ) in outcome.log
    # ...and Airflow emits no event for it either.
    assert 'Task has inactive assets "Asset.ref(name=cola_test_no_such_asset)" in inlets or outlets' in outcome.log
    # The extra stays small: codes and ids, never messages or samples.
    assert len(json.dumps(OUTLETS_SPLIT)) < 400


# --- a consumer DAG gated on the producer's events ----------------------------------------


def test_a_consumer_dag_goes_on_with_checked_data_and_refuses_failed_data(run_dag, spark, capfd, caplog):
    _sync_and_unpause("cola_test_assets_consumer")

    run_dag("cola_test_assets_producer", "2024-01-01")
    run_dag("cola_test_assets_producer", "2024-01-02")
    assert _events_from("cola_test_assets_producer")[-2:] == [
        ("cola_test_orders", "checked_orders", {"cola": PASSED_DAY}),
        ("cola_test_orders", "checked_orders", {"cola": WARNED_DAY}),
    ]
    first = _run_asset_triggered("cola_test_assets_consumer", capfd, caplog)
    # Airflow 3.3 hands this run only the first of the two events: the asset's queue entry
    # keeps the time of the first, and the run consumes the events up to that time. The
    # second one waits for the next run.
    assert first["consumed"] == ["pass"]
    assert first["states"] == {
        "gate": "success", "load": "success", "route": "success", "publish": "success",
        "quarantine": "skipped", "quality": "success",
    }
    assert first["xcom"]["gate"] is True
    assert first["xcom"]["quality"] == {"cola_test_orders": PASSED_DAY}
    assert "Cola quality gate: open (accepting pass, warn)" in first["log"]

    run_dag("cola_test_assets_producer", "2024-01-03")
    second = _run_asset_triggered("cola_test_assets_consumer", capfd, caplog)
    # Two events of one asset: the latest one decides.
    assert second["consumed"] == ["warn", "fail"]
    assert second["states"] == {
        "gate": "success", "load": "skipped", "route": "success", "publish": "skipped",
        "quarantine": "success", "quality": "success",
    }
    # A closed short-circuit skips by raising, so it pushes no XCom.
    assert "gate" not in second["xcom"]
    assert second["xcom"]["quality"] == {"cola_test_orders": FAILED_DAY}
    assert "Cola: asset 'cola_test_orders' is fail (from cola_test_assets_producer.checked_orders, run manual__" in (
        second["log"]
    )
    assert "; failed: not_null(order_id), unique(order_id), NEGATIVE_AMOUNT)" in second["log"]
    assert "Cola quality gate: closed (accepting pass, warn)" in second["log"]
    assert "Cola quality branch: fail, following ['quarantine']" in second["log"]


# --- the helpers on the events Airflow hands a task ---------------------------------------

T0 = dt.datetime(2024, 1, 1, 6, 0, tzinfo=dt.timezone.utc)


def _event(name: str, extra: dict[str, Any], minutes: int = 0, *, aliases: tuple[str, ...] = (),
           source_dag_id: str | None = "producer") -> Any:
    from airflow.sdk.execution_time.comms import AssetEventDagRunReferenceResult

    return AssetEventDagRunReferenceResult(
        asset={"name": name, "uri": f"file:///data/{name}", "extra": {}},
        extra=extra,
        source_task_id="check" if source_dag_id else None,
        source_dag_id=source_dag_id,
        source_run_id=f"manual__{minutes}" if source_dag_id else None,
        source_map_index=-1 if source_dag_id else None,
        source_aliases=[{"name": alias} for alias in aliases],
        timestamp=T0 + dt.timedelta(minutes=minutes),
    )


def _triggering(*events: Any) -> Any:
    from airflow.sdk.execution_time.context import TriggeringAssetEventsAccessor

    return TriggeringAssetEventsAccessor.build(events)


def _cola(severity: str, *failed_codes: str) -> dict[str, Any]:
    counts = {"pass": int(severity == "pass"), "warn": int(severity == "warn"), "fail": len(failed_codes)}
    return {"cola": {"severity": severity, "counts": counts, "failed_codes": list(failed_codes),
                     "warned_codes": [], "rule_ids": [], "failed_rule_ids": []}}


def test_the_latest_event_of_each_asset_decides_whatever_the_order_given():
    from airflow_provider_cola.assets import cola_quality_branch, cola_quality_extras, cola_quality_gate

    # The latest is neither the first nor the last given: the timestamp decides, not the
    # position. The alias lists the orders events a second time, as Airflow's accessor does.
    events = _triggering(
        _event("orders", _cola("fail", "NEGATIVE_AMOUNT"), minutes=10, aliases=("daily",)),
        _event("orders", _cola("pass"), minutes=30, aliases=("daily",)),
        _event("orders", _cola("warn"), minutes=20, aliases=("daily",)),
        _event("customers", _cola("warn"), minutes=20),
    )

    assert cola_quality_extras(events) == {"orders": _cola("pass")["cola"], "customers": _cola("warn")["cola"]}
    assert cola_quality_gate(events) is True
    assert cola_quality_gate(events, accept="pass") is False
    assert cola_quality_gate(events, accept="pass", assets=["orders"]) is True
    branch = {"pass": "load", "warn": ["load", "notify"], "fail": "quarantine"}
    assert cola_quality_branch(events, branch=branch) == ["load", "notify"]
    assert cola_quality_branch(events, branch=branch, assets=["file:///data/orders"]) == ["load"]
    # A severity the mapping leaves out follows no task.
    assert cola_quality_branch(events, branch={"pass": "load"}) == []
    # A plain list of events (as inlet_events[asset] gives) is read the same way.
    listed = [_event("orders", _cola("warn"), 1), _event("orders", _cola("fail"), 5), _event("orders", _cola("pass"), 3)]
    assert cola_quality_extras(listed) == {"orders": _cola("fail")["cola"]}


def test_the_gates_log_line_shows_an_events_codes_on_one_line(caplog):
    """An event's extra comes from any producer (or the API): its codes are data, and the line
    that names them stays one line."""
    import logging

    from airflow_provider_cola.assets import cola_quality_gate

    code = "BAD\nCola: asset 'orders' is pass (forged)\u2028\x1b[2J"
    with caplog.at_level(logging.INFO, logger="airflow_provider_cola.assets"):
        assert cola_quality_gate(_triggering(_event("orders", _cola("fail", code, "OTHER")))) is False
    (line,) = [record.getMessage() for record in caplog.records if record.getMessage().startswith("Cola: asset")]
    assert line == (
        "Cola: asset 'orders' is fail (from producer.check, run manual__0; failed: "
        "BAD\\nCola: asset 'orders' is pass (forged)\\u2028\\x1b[2J, OTHER)"
    )


def test_an_asset_the_gate_names_is_matched_by_asset_name_or_uri():
    from airflow.sdk import Asset

    from airflow_provider_cola.assets import cola_quality_gate

    events = _triggering(_event("orders", _cola("fail", "NEGATIVE_AMOUNT")), _event("customers", _cola("pass")))

    assert cola_quality_gate(events, assets=[Asset(name="customers", uri="file:///data/customers")]) is True
    assert cola_quality_gate(events, assets="file:///data/customers") is True
    assert cola_quality_gate(events, assets=["customers", "orders"]) is False
    # Same name, another URI: another asset.
    with pytest.raises(Exception, match="asset 'customers' sent no triggering event"):
        cola_quality_gate(events, assets=[Asset(name="customers", uri="s3://elsewhere/customers")])


def test_an_event_without_a_cola_summary_raises_by_default_naming_the_asset_and_its_source():
    from airflow_provider_cola.assets import ColaAssetError, cola_quality_branch, cola_quality_extras, cola_quality_gate
    from airflow_provider_cola.errors import ColaProviderError

    # An older event had a summary: the latest, created through the API, has none.
    events = _triggering(
        _event("orders", _cola("pass"), minutes=0),
        _event("orders", {"note": "reloaded by hand"}, minutes=5, source_dag_id=None),
        _event("customers", _cola("pass"), minutes=1),
    )

    assert cola_quality_extras(events) == {"orders": None, "customers": _cola("pass")["cola"]}
    with pytest.raises(ColaAssetError) as raised:
        cola_quality_gate(events)
    assert str(raised.value) == (
        "Cola cannot judge the data: the latest event of asset 'orders' (not from a task: created through the "
        "API or the UI) carries no Cola summary (extra['cola']). Pass unchecked='refuse' to refuse such data, "
        "or unchecked='accept' to let it through"
    )
    assert isinstance(raised.value, ColaProviderError)
    assert cola_quality_gate(events, unchecked="refuse") is False
    assert cola_quality_gate(events, unchecked="accept") is True
    branch = {"pass": "load", "fail": "quarantine"}
    assert cola_quality_branch(events, branch=branch, unchecked="refuse") == ["quarantine"]
    assert cola_quality_branch(events, branch=branch, unchecked="accept") == ["load"]
    # Not judged, not in the way.
    assert cola_quality_gate(events, assets=["customers"]) is True


def test_the_documented_extra_and_error_are_the_real_ones():
    from airflow_provider_cola.assets import ColaAssetError, cola_quality_gate

    text_blocks = re.findall(r"^```text\n(.*?)^```$", DOCS.read_text(), re.M | re.S)
    (extra,) = [json.loads(block) for block in text_blocks if block.startswith('{"cola"')]
    assert extra == {"cola": FAILED_DAY}
    with pytest.raises(ColaAssetError) as raised:
        cola_quality_gate(_triggering(_event("orders", {}, source_dag_id=None)))
    assert f"airflow_provider_cola.assets.ColaAssetError: {raised.value}\n" in text_blocks


def test_an_event_from_a_task_without_a_summary_names_its_source():
    from airflow_provider_cola.assets import ColaAssetError, cola_quality_gate

    # Not a Cola summary: a "cola" key of some other shape.
    events = _triggering(_event("orders", {"cola": "checked"}, minutes=3))

    with pytest.raises(ColaAssetError, match=(
        r"^Cola cannot judge the data: the latest event of asset 'orders' \(from producer.check, run manual__3\) "
        r"carries no Cola summary"
    )):
        cola_quality_gate(events)


def test_a_run_with_no_event_for_the_gated_assets():
    from airflow_provider_cola.assets import ColaAssetError, cola_quality_branch, cola_quality_gate

    events = _triggering(_event("customers", _cola("pass")))
    with pytest.raises(ColaAssetError) as raised:
        cola_quality_gate(events, assets=["orders"])
    assert str(raised.value).startswith(
        "Cola cannot judge the data: asset 'orders' sent no triggering event to this run (assets that did: "
        "'customers'). Pass unchecked='refuse'"
    )
    assert cola_quality_gate(events, assets=["orders"], unchecked="refuse") is False
    assert cola_quality_gate(events, assets=["orders"], unchecked="accept") is True

    # A run not triggered by any asset (a manual run of the consumer).
    nothing = _triggering()
    with pytest.raises(ColaAssetError, match="this run has no triggering asset events"):
        cola_quality_gate(nothing)
    assert cola_quality_gate(nothing, unchecked="refuse") is False
    assert cola_quality_branch(nothing, branch={"pass": "load", "fail": "stop"}, unchecked="refuse") == ["stop"]
    assert cola_quality_gate(nothing, unchecked="accept") is True


def test_malformed_gate_arguments_are_refused():
    from airflow_provider_cola.assets import cola_quality_branch, cola_quality_gate

    events = _triggering(_event("orders", _cola("pass")))
    with pytest.raises(ValueError, match=r"^accept must name severities among pass, warn, fail, got \['ok'\]$"):
        cola_quality_gate(events, accept=["ok"])
    with pytest.raises(ValueError, match=r"^accept must name severities among pass, warn, fail, got \[\]$"):
        cola_quality_gate(events, accept=[])
    with pytest.raises(ValueError, match=r"^unchecked must be one of raise, refuse, accept, got 'skip'$"):
        cola_quality_gate(events, unchecked="skip")
    with pytest.raises(ValueError, match=r"^assets must be Asset objects, or asset names or URIs, got \[1\]$"):
        cola_quality_gate(events, assets=[1])
    with pytest.raises(ValueError, match=r"^branch keys are pass, warn, fail, got 'ok'$"):
        cola_quality_branch(events, branch={"ok": "load"})


def test_the_helpers_read_the_running_tasks_context_when_given_no_events():
    from airflow.sdk.execution_time.context import set_current_context

    from airflow_provider_cola.assets import cola_quality_extras, cola_quality_gate

    context = {"triggering_asset_events": _triggering(_event("orders", _cola("warn")))}
    with set_current_context(context):  # type: ignore[arg-type]
        assert cola_quality_extras() == {"orders": _cola("warn")["cola"]}
        assert cola_quality_gate(accept=["pass"]) is False


# --- the producer side on the SDK's own objects -------------------------------------------


def test_asset_extra_keeps_codes_and_ids_only():
    from airflow_provider_cola.assets import asset_extra

    summary = {
        "severity": "warn", "passed": True, "counts": {"pass": 1, "warn": 1, "fail": 0},
        "results": [
            {"rule_type": "row_count", "severity": "pass", "code": "row_count", "rule_id": "orders.volume",
             "message": "row_count = 6 is within bounds (min 1)"},
            {"rule_type": "my_check", "severity": "warn", "code": None, "rule_id": "my_check:1a2b",
             "message": "3 odd rows", "samples": [{"id": 1}]},
        ],
        "valid_count": 5, "invalid_count": 1,
    }
    assert asset_extra(summary) == {
        "severity": "warn", "counts": {"pass": 1, "warn": 1, "fail": 0}, "failed_codes": [],
        "warned_codes": ["my_check"],  # no code: named by its type
        "rule_ids": ["orders.volume", "my_check:1a2b"], "failed_rule_ids": [],
        "valid_count": 5, "invalid_count": 1,
    }


def test_attach_to_outlets_keeps_the_tasks_own_extras(capfd):
    from airflow.providers.standard.operators.empty import EmptyOperator
    from airflow.sdk import Asset, AssetAlias
    from airflow.sdk.execution_time.context import OutletEventAccessors

    from airflow_provider_cola._outcome import asset_extra, attach_to_outlets

    orders = Asset(name="orders", uri="file:///data/orders")
    written, unused = AssetAlias(name="written"), AssetAlias(name="unused")
    task = EmptyOperator(task_id="check", outlets=[orders, written, unused])
    events = OutletEventAccessors()
    events[orders].extra["rows"] = 6
    theirs = {"by": "check"}
    events[written].add(Asset(name="valid", uri="file:///data/valid"), extra=theirs)
    summary = {"severity": "pass", "passed": True, "counts": {"pass": 1, "warn": 0, "fail": 0},
               "results": [{"rule_type": "row_count", "severity": "pass", "code": "row_count", "rule_id": "r"}]}

    attach_to_outlets(task, {"outlet_events": events}, summary)  # type: ignore[arg-type]

    assert events[orders].extra == {"rows": 6, "cola": asset_extra(summary)}
    (added,) = events[written].asset_alias_events
    assert added.extra == {"by": "check", "cola": asset_extra(summary)}
    assert theirs == {"by": "check"}  # the dict given to add() is the caller's
    assert events[unused].asset_alias_events == []
    assert (
        "Cola: outlet AssetAlias('unused') has no asset event added by the task, so no summary is attached "
        "(add its asset with outlet_events[alias].add(asset) in the task)"
    ) in "".join(capfd.readouterr())
