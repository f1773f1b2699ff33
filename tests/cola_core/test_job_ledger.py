"""Streaming splits run again (``job/stream.py``, ``job/ledger.py``): change and anomaly rules over
several runs, a rerun under changed rules, a driver killed while it records a run, two runs
started together on one checkpoint, an unreadable ledger file, and a custom rule that compares
rows on a watermarked stream."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_job_stream import FILES, RULES, SCHEMA, _rows, _stream, _write_files

from cola_core import BaseCheck, Capability, Cola, JobSpec, run_job
from cola_core.errors import ColaError, ColaOutputError
from cola_core.storage.specs import history_spec, parse_output, parse_source

pytestmark = pytest.mark.spark


def _job(tmp_path: Path, rules: list[dict], data_date: str, **options) -> JobSpec:
    return JobSpec(
        command="split", rules=tuple(rules), checkpoint=str(tmp_path / "checkpoint"),
        source=parse_source({"path": str(tmp_path / "in"), "format": "json", "schema": SCHEMA, "stream": True,
                             "options": {"maxFilesPerTrigger": 1}}),
        valid_output=parse_output(str(tmp_path / "valid")), invalid_output=parse_output(str(tmp_path / "invalid")),
        data_date=data_date, **options,
    )


def test_change_and_anomaly_rules_compare_each_run_with_the_earlier_ones(spark, tmp_path):
    rules = [
        {"type": "not_null", "columns": ["order_id"]},
        {"type": "row_count", "must_be": "change between -10% and 10%", "id": "orders.volume"},
        {"type": "max", "column": "amount", "must_be": "anomaly < 3", "id": "orders.top"},
    ]
    (tmp_path / "in").mkdir()
    seen = []
    for day, rows in ((1, 10), (2, 7), (3, 7)):
        lines = [json.dumps({"order_id": n, "amount": float(n), "country": "BR"}) for n in range(rows)]
        (tmp_path / "in" / f"day-{day}.json").write_text("\n".join(lines) + "\n")
        job = _job(tmp_path, rules, f"2026-12-0{day}", history=history_spec(str(tmp_path / "history")),
                   dataset="orders")
        outcome = run_job(job, spark)
        assert (outcome.valid_count, outcome.invalid_count) == (rows, 0)
        seen.append([(r.severity, r.baseline, r.message) for r in outcome.results])
    batch = "in batch {}: "
    assert seen == [
        [("pass", None, batch.format(0) + "not_null(order_id): no NULL values"),
         ("pass", None, batch.format(0) + "row_count = 10: no baseline yet, so must_be (change between -10% and "
                                          "10%) passes"),
         ("pass", None, batch.format(0) + "max(amount) = 9: warming up (0 of 5 earlier runs), so must_be "
                                          "(anomaly < 3) passes")],
        [("pass", None, batch.format(1) + "not_null(order_id): no NULL values"),
         ("fail", 10.0, batch.format(1) + "row_count = 7, change -30% from baseline 10 violates must_be (change "
                                          "between -10% and 10%)"),
         ("pass", None, batch.format(1) + "max(amount) = 6: warming up (1 of 5 earlier runs), so must_be "
                                          "(anomaly < 3) passes")],
        [("pass", None, batch.format(2) + "not_null(order_id): no NULL values"),
         ("pass", 7.0, batch.format(2) + "row_count = 7, change 0% from baseline 7 meets must_be (change between "
                                         "-10% and 10%)"),
         ("pass", None, batch.format(2) + "max(amount) = 6: warming up (2 of 5 earlier runs), so must_be "
                                          "(anomaly < 3) passes")],
    ]


@pytest.mark.parametrize("changed", [
    pytest.param([*RULES, {"type": "not_null", "columns": ["country"]}], id="one-rule-more"),
    pytest.param([*RULES[:2], {"type": "not_null", "columns": ["country"]}, RULES[3]], id="same-count-other-rules"),
])
def test_a_rerun_of_a_run_under_changed_rules_is_refused_before_it_splits(spark, tmp_path, changed):
    _write_files(tmp_path / "in")
    first = run_job(_job(tmp_path, RULES, "2026-12-01"), spark)
    assert (first.valid_count, first.invalid_count, first.summary["stream"]["batch_count"]) == (4, 5, 3)
    offsets = sorted(os.listdir(tmp_path / "checkpoint" / "offsets"))
    # A new file too: nothing of it is split under the changed rules.
    (tmp_path / "in" / "orders-3.json").write_text('{"order_id": 9, "amount": 4.0, "country": "BR"}\n')
    with pytest.raises(ColaError) as raised:
        run_job(_job(tmp_path, changed, "2026-12-01"), spark)
    assert type(raised.value) is ColaError
    assert str(raised.value) == (
        'the run [null, null, null, "2026-12-01T00:00:00+00:00"] split batches 0, 1, 2 under other rules than these (the rules '
        "changed since): a run's answer combines its batches' results rule by rule, and their rows are published, "
        "so they cannot be judged again. Rerun it with the rules it was split with, or split with the new rules as "
        "a new run (the next data date)"
    )
    assert sorted(os.listdir(tmp_path / "checkpoint" / "offsets")) == offsets
    assert len(_rows(spark, tmp_path / "valid")) + len(_rows(spark, tmp_path / "invalid")) == 9
    # The rules it was split with give the first attempt's answer (and split the new file);
    # the new rules run as the next date's run.
    again = run_job(_job(tmp_path, RULES, "2026-12-01"), spark)
    assert (again.valid_count, again.invalid_count, again.summary["stream"]["batch_count"]) == (5, 5, 4)
    new = run_job(_job(tmp_path, changed, "2026-12-02"), spark)
    assert (new.valid_count, new.invalid_count, new.summary["stream"]["batch_count"]) == (0, 0, 0)


# A driver running the streaming job of the two first files as one run (a data date), with
# the kills and the meeting point the tests below ask for in its environment:
# - COLA_KILL_AT_RUN_RECORD=N: SIGKILL right after the N-th change (a delete or a rename) the
#   ledger makes to the runs' records (under _cola/runs/);
# - COLA_MEET=<folder>: wait for the other driver to be ready before starting the query.
DRIVER = textwrap.dedent("""
    import json, os, signal, sys, time
    from pyspark.sql import SparkSession
    import cola_core.storage.publish as publish
    from cola_core import JobSpec, run_job
    from cola_core.errors import ColaError
    from cola_core.storage.specs import parse_output, parse_source

    source, out, me = sys.argv[1], sys.argv[2], sys.argv[3]
    kill_at, meet = os.environ.get("COLA_KILL_AT_RUN_RECORD"), os.environ.get("COLA_MEET")
    if kill_at is not None:
        changes = []
        def killing(method):
            def call(self, *paths):
                method(self, *paths)
                if "/_cola/runs/" in paths[-1]:
                    changes.append(paths[-1])
                    if len(changes) == int(kill_at):
                        os.kill(os.getpid(), signal.SIGKILL)
            return call
        publish.FileSystem.delete = killing(publish.FileSystem.delete)
        publish.FileSystem.rename = killing(publish.FileSystem.rename)
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    if meet is not None:
        from pyspark.sql.streaming.readwriter import DataStreamWriter
        start = DataStreamWriter.start
        def meeting(self, *args, **kwargs):
            open(os.path.join(meet, me), "w").close()
            while len(os.listdir(meet)) < 2:
                time.sleep(0.005)
            return start(self, *args, **kwargs)
        DataStreamWriter.start = meeting
    rules = [{"type": "not_null", "columns": ["order_id"]}, {"type": "range", "column": "amount", "min": 0},
             {"type": "unique", "columns": ["order_id"]}, {"type": "row_count", "min": 1}]
    job = JobSpec(command="split", rules=tuple(rules), checkpoint=out + "/checkpoint", data_date="2026-12-01",
                  source=parse_source({"path": source, "format": "json", "stream": True,
                                       "schema": "order_id bigint, amount double, country string",
                                       "options": {"maxFilesPerTrigger": 1}}),
                  valid_output=parse_output(out + "/valid"), invalid_output=parse_output(out + "/invalid"))
    try:
        outcome = run_job(job, spark)
    except ColaError as error:
        print(json.dumps({"error": type(error).__name__, "message": str(error)}))
    else:
        print(json.dumps({"valid": outcome.valid_count, "invalid": outcome.invalid_count,
                          "batches": outcome.summary["stream"]["batch_count"]}))
""")


def _two_files(folder: Path) -> None:
    _write_files(folder)
    (folder / "orders-2.json").unlink()


def _driver(tmp_path: Path, me: str = "a", **env: str) -> subprocess.Popen[str]:
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    environment = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
                   "PYTHONPATH": os.pathsep.join(sys.path), **env}
    return subprocess.Popen([sys.executable, str(script), str(tmp_path / "in"), str(tmp_path / "out"), me],
                            env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finished(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=600)
    return process.returncode, out, err


def test_a_driver_killed_while_it_records_a_batch_as_the_runs_loses_none_of_the_runs_batches(spark, tmp_path):
    _two_files(tmp_path / "in")
    # The second change to the runs' records is batch 1's: batch 0 is listed already.
    code, _, err = _finished(_driver(tmp_path, COLA_KILL_AT_RUN_RECORD="2"))
    assert code == -9, err[-3000:]
    code, out, err = _finished(_driver(tmp_path))
    assert code == 0, err[-3000:]
    # The retry (Spark runs batch 1 again, which was published) answers for both batches.
    assert json.loads(out.splitlines()[-1]) == {"valid": 2, "invalid": 4, "batches": 2}
    published = [row[:3] for row in _rows(spark, tmp_path / "out" / "valid") + _rows(spark, tmp_path / "out" / "invalid")]
    assert sorted(published, key=repr) == sorted(FILES[0] + FILES[1], key=repr)


def test_two_runs_started_together_on_a_fresh_checkpoint_publish_each_row_once_and_one_is_told_why_it_stopped(
    spark, tmp_path
):
    _two_files(tmp_path / "in")
    (tmp_path / "meet").mkdir()
    drivers = [_driver(tmp_path, me, COLA_MEET=str(tmp_path / "meet")) for me in ("a", "b")]
    outcomes = []
    for driver in drivers:
        code, out, err = _finished(driver)
        assert code == 0, err[-3000:]
        outcomes.append(json.loads(out.splitlines()[-1]))
    refused = [outcome for outcome in outcomes if "error" in outcome]
    assert len(refused) >= 1, outcomes
    for outcome in refused:
        assert outcome["error"] == "ColaOutputError"
        assert outcome["message"].startswith(f"another run holds the checkpoint {tmp_path / 'out' / 'checkpoint'}: "
                                             "a streaming query on it was started at the same time (an earlier "
                                             "attempt still running?), and only one may use a checkpoint; ")
        assert outcome["message"].endswith(". Wait for the other run to end (or stop it), then run again: it "
                                           "splits what is left")
    published = [row[:3] for row in _rows(spark, tmp_path / "out" / "valid") + _rows(spark, tmp_path / "out" / "invalid")]
    assert sorted(published, key=repr) == sorted(FILES[0] + FILES[1], key=repr)


def test_a_truncated_batch_record_stops_the_run_naming_the_file_and_what_to_do(spark, tmp_path):
    _write_files(tmp_path / "in")
    split = {"valid": str(tmp_path / "valid"), "invalid": str(tmp_path / "invalid"),
                 "checkpoint": str(tmp_path / "checkpoint")}
    assert Cola().split_stream(_stream(spark, tmp_path / "in"), RULES, **split).valid_count == 4
    # Batch 2 published, and its commit lost (the query stopped before Spark recorded it):
    # Spark runs it again, and the ledger's record of it is cut in half.
    record = tmp_path / "checkpoint" / "_cola" / "done" / "2.json"
    text = record.read_text()[:100]
    record.write_text(text)
    for name in ("2", ".2.crc"):
        (tmp_path / "checkpoint" / "commits" / name).unlink()
    advice = (
        "; it records that batch 2 was published, with its counts and results. Restore it from a copy of the "
        "checkpoint; deleting it makes the next run publish the batch's rows again (remove them from the outputs "
        "first)"
    )
    opening = f"the streaming split's ledger file {record.parent.parent.parent}/_cola/done/2.json cannot be read: "
    # On the local file system its checksum refuses it first.
    with pytest.raises(ColaOutputError) as raised:
        Cola().split_stream(_stream(spark, tmp_path / "in"), RULES, **split)
    message = str(raised.value)
    assert message.startswith(f"{opening}org.apache.hadoop.fs.ChecksumException: Checksum error: {record} at 0 exp: ")
    assert message.endswith(advice) and "\n" not in message
    # Where no checksum is kept (an object store), the JSON does.
    (record.parent / ".2.json.crc").unlink()
    try:
        json.loads(text)
    except ValueError as error:
        reason = str(error)
    with pytest.raises(ColaOutputError) as raised:
        Cola().split_stream(_stream(spark, tmp_path / "in"), RULES, **split)
    assert str(raised.value) == f"{opening}it is not complete JSON ({reason}){advice}"
    assert len(_rows(spark, tmp_path / "valid")) + len(_rows(spark, tmp_path / "invalid")) == 9


class _SameAmount(BaseCheck):
    """Flags the rows whose amount another row of the batch has too."""

    capabilities = frozenset({Capability.ROW})
    compares_rows = True

    def violation(self, df):
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        return F.count("*").over(Window.partitionBy("amount")) > 1


def test_a_custom_rule_that_compares_rows_is_refused_on_a_watermarked_stream(spark, tmp_path):
    _write_files(tmp_path / "in")
    cola = Cola()
    cola.register("same_amount", _SameAmount)
    watermarked = (spark.readStream.schema(SCHEMA + ", at timestamp").json(str(tmp_path / "in"))
                   .withWatermark("at", "10 minutes"))
    with pytest.raises(ColaError) as raised:
        cola.split_stream(watermarked, [{"type": "same_amount"}], valid=str(tmp_path / "v"),
                          invalid=str(tmp_path / "i"), checkpoint=str(tmp_path / "c"))
    assert str(raised.value).startswith(
        "the stream has a watermark on at, which asks for keys to be matched across batches, but Cola splits each "
        "batch alone and keeps no key state: same_amount would only compare the rows of one batch."
    )
    assert not (tmp_path / "c").exists()
    # Every built-in rule that compares rows says so.
    assert [check.compares_rows for check in cola.parse([
        {"type": "unique", "columns": ["order_id"]}, {"type": "distinct_count", "column": "country", "must_be": "> 0"},
        {"type": "not_null", "columns": ["order_id"]}, {"type": "range", "column": "amount", "min": 0},
    ])] == [True, True, False, False]
