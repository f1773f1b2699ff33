"""Streaming splits (``job/stream.py``): every micro-batch split as ``split_write`` splits it and
published exactly once, through a real crash (SIGKILL of the driver half-way through a batch)
and a real failed write, each followed by a restart on the same checkpoint."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cola_core import CheckResult, Cola, JobSpec, run_job
from cola_core.errors import ColaError, ColaOutputError
from cola_core.history.store import read_history
from cola_core.job.stream import NOTHING_NEW, BatchRecord, StreamSummary
from cola_core.storage.specs import history_spec, parse_output, parse_source
from cola_helpers import persisted_rdds, remove_blocks_persisted_since

pytestmark = pytest.mark.spark

SCHEMA = "order_id bigint, amount double, country string"
# One file per micro-batch (maxFilesPerTrigger=1); each breaks the rules on some rows.
FILES = [
    [(1, 10.0, "BR"), (2, -5.0, "BR"), (None, 7.0, "PT")],
    [(4, 3.0, "PT"), (4, 3.0, "PT"), (5, 8.0, "XX")],
    [(6, 1.0, "BR"), (7, -1.0, "XX"), (8, 2.0, "BR")],
]
RULES = [
    {"type": "not_null", "columns": ["order_id"]},
    {"type": "range", "column": "amount", "min": 0},
    {"type": "unique", "columns": ["order_id"]},  # per batch (docs/streaming.md)
    {"type": "row_count", "min": 1},
]


def _write_files(folder: Path) -> None:
    folder.mkdir(parents=True)
    for number, rows in enumerate(FILES):
        lines = [json.dumps(dict(zip(("order_id", "amount", "country"), row, strict=True))) for row in rows]
        path = folder / f"orders-{number}.json"
        path.write_text("\n".join(lines) + "\n")
        # A file source takes files oldest first: one second apart, they are batches 0, 1, 2.
        os.utime(path, (1_700_000_000 + number, 1_700_000_000 + number))


def _rows(spark, path: Path, annotate: str = "cola_codes") -> list[tuple]:
    if not path.exists():
        return []
    frame = spark.read.parquet(str(path))
    codes = [annotate] if annotate in frame.columns else []
    return sorted(
        (tuple(row[:3]) + tuple(sorted(row[3]) if codes else ()) for row in frame.select("order_id", "amount",
                                                                                         "country", *codes).collect()),
        key=repr,
    )


def _stream(spark, source: Path):
    return spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(source))


# Over Spark Connect too: each batch then runs in a Python worker of the server, which must
# import cola_core (docs/streaming.md).
@pytest.mark.connect
def test_three_files_are_split_batch_by_batch_with_the_codes_of_a_batch_split(spark, tmp_path):
    source = tmp_path / "in"
    _write_files(source)
    summary = Cola().split_stream(
        _stream(spark, source), RULES, valid=str(tmp_path / "valid"), invalid=str(tmp_path / "invalid"),
        checkpoint=str(tmp_path / "checkpoint"), annotate="cola_codes",
    )
    assert summary.to_dict() == {
        "severity": "fail", "passed": False, "valid_count": 4, "invalid_count": 5, "batch_count": 3,
        "batches": [
            {"batch_id": 0, "severity": "fail", "valid_count": 1, "invalid_count": 2},
            {"batch_id": 1, "severity": "fail", "valid_count": 1, "invalid_count": 2},
            {"batch_id": 2, "severity": "fail", "valid_count": 2, "invalid_count": 1},
        ],
    }
    # The same rows and codes as split_write gives each file on its own.
    expected_valid, expected_invalid = [], []
    for number, rows in enumerate(FILES):
        batch = spark.createDataFrame(rows, SCHEMA)
        outcome = Cola().split_write(batch, RULES, valid=str(tmp_path / f"v{number}"),
                                     invalid=str(tmp_path / f"i{number}"), annotate="cola_codes")
        assert [r.to_dict() for r in outcome.results] == [r.to_dict() for r in summary.batches[number].results]
        expected_valid += _rows(spark, tmp_path / f"v{number}")
        expected_invalid += _rows(spark, tmp_path / f"i{number}")
    assert _rows(spark, tmp_path / "valid") == sorted(expected_valid, key=repr)
    assert _rows(spark, tmp_path / "invalid") == sorted(expected_invalid, key=repr)
    assert sorted(expected_invalid, key=repr) == sorted([
        (None, 7.0, "PT", "not_null(order_id)"),
        (2, -5.0, "BR", "range(amount,0,)"),
        (4, 3.0, "PT", "unique(order_id)"),
        (4, 3.0, "PT", "unique(order_id)"),
        (7, -1.0, "XX", "range(amount,0,)"),
    ], key=repr)
    # Run again on the same checkpoint: no new file, so nothing more is published.
    again = Cola().split_stream(
        _stream(spark, source), RULES, valid=str(tmp_path / "valid"), invalid=str(tmp_path / "invalid"),
        checkpoint=str(tmp_path / "checkpoint"), annotate="cola_codes",
    )
    assert again.batches == []
    assert len(_rows(spark, tmp_path / "valid")) + len(_rows(spark, tmp_path / "invalid")) == 9


def _losing_pinned_rows(spark, monkeypatch, times: int) -> list[str]:
    """Make the first ``times`` side writes of a batch split find their pinned rows gone.

    A mock, of losing the executors that hold a batch's pinned rows, which local mode cannot
    cause: the blocks of the RDDs persisted since the start are removed for real just before
    the write, which then fails as it would (CHECKPOINT_RDD_BLOCK_ID_NOT_FOUND)."""
    import cola_core.plan.pinned_split as pinned

    before = persisted_rdds(spark)
    real_write = pinned.write_output
    lost: list[str] = []

    def write_output(rows, spec):
        if len(lost) < times:
            lost.append(spec.path)
            remove_blocks_persisted_since(spark, before)
        return real_write(rows, spec)

    monkeypatch.setattr(pinned, "write_output", write_output)
    return lost


def test_a_batch_whose_pinned_rows_are_lost_is_split_again_and_published_once(spark, tmp_path, monkeypatch, caplog):
    source = tmp_path / "in"
    _write_files(source)
    lost = _losing_pinned_rows(spark, monkeypatch, times=1)
    with caplog.at_level("WARNING", logger="cola_core.job.stream"):
        summary = Cola().split_stream(
            _stream(spark, source), RULES, valid=str(tmp_path / "valid"), invalid=str(tmp_path / "invalid"),
            checkpoint=str(tmp_path / "checkpoint"), annotate="cola_codes",
        )
    assert len(lost) == 1 and lost[0].endswith("/_cola/staging/0/valid")
    (warning,) = [record.getMessage() for record in caplog.records]
    assert warning.startswith("batch 0: the split's rows were lost before the valid side was written: ")
    assert warning.endswith("; splitting it again")
    assert [(b.batch_id, b.valid_count, b.invalid_count) for b in summary.batches] == [(0, 1, 2), (1, 1, 2), (2, 2, 1)]
    # Every row once: the first attempt left nothing behind.
    published = [row[:3] for row in _rows(spark, tmp_path / "valid") + _rows(spark, tmp_path / "invalid")]
    assert sorted(published, key=repr) == sorted((row for rows in FILES for row in rows), key=repr)


def test_a_batch_whose_pinned_rows_are_lost_twice_stops_the_query_with_nothing_of_it_published(
    spark, tmp_path, monkeypatch
):
    source = tmp_path / "in"
    _write_files(source)
    _losing_pinned_rows(spark, monkeypatch, times=2)
    with pytest.raises(ColaOutputError) as raised:
        Cola().split_stream(
            _stream(spark, source), RULES, valid=str(tmp_path / "valid"), invalid=str(tmp_path / "invalid"),
            checkpoint=str(tmp_path / "checkpoint"), annotate="cola_codes",
        )
    message = str(raised.value)
    assert message.startswith("batch 0: the split's rows were lost before the valid side was written: ")
    assert "[CHECKPOINT_RDD_BLOCK_ID_NOT_FOUND]" in message
    assert message.endswith("; nothing of the batch was published")
    assert not (tmp_path / "valid").exists() and not (tmp_path / "invalid").exists()
    # The ledger holds no file: no batch done, none pending, no staged rows.
    assert [name for _, _, names in os.walk(tmp_path / "checkpoint" / "_cola") for name in names] == []


def test_a_table_destination_and_a_batch_frame_are_refused_before_the_query_starts(spark, tmp_path):
    source = tmp_path / "in"
    _write_files(source)
    with pytest.raises(ColaOutputError) as raised:
        Cola().split_stream(_stream(spark, source), RULES, valid={"table": "db.valid"}, invalid=str(tmp_path / "i"),
                            checkpoint=str(tmp_path / "c"))
    assert str(raised.value).startswith("valid: a streaming split writes to paths; ")
    with pytest.raises(Exception, match="split_stream needs a streaming DataFrame"):
        Cola().split_stream(spark.range(1), RULES, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"),
                            checkpoint=str(tmp_path / "c"))


def test_a_run_sums_up_as_each_rules_worst_batch_and_lists_at_most_100_batch_lines():
    checks = Cola().parse([{"type": "not_null", "columns": ["id"]}, {"type": "row_count", "min": 1}])
    batches = [
        BatchRecord(batch_id, 1, 0, [CheckResult("not_null", severity != "fail", f"null {batch_id}", severity=severity),
                                     CheckResult("row_count", True, f"rows {batch_id}")])
        for batch_id, severity in ((0, "fail"), (1, "warn"), (2, "fail"), (3, "pass"))
    ]
    combined = StreamSummary(batches).combined_results(checks)
    # The worst batch of each rule, the latest among equals.
    assert [(result.severity, result.message) for result in combined] == [
        ("fail", "in batch 2 (the worst of 4 batches): null 2"),
        ("pass", "in batch 3 (the worst of 4 batches): rows 3"),
    ]
    assert StreamSummary(batches[:1]).combined_results(checks)[0].message == "in batch 0: null 0"
    # No batch: each rule passes, saying that nothing was judged, with its identity.
    nothing = StreamSummary([]).combined_results(checks)
    assert [(r.rule_type, r.severity, r.message, r.code, r.rule_id, r.rows_checked) for r in nothing] == [
        ("not_null", "pass", NOTHING_NEW, "not_null(id)", checks[0].rule_id, 0),
        ("row_count", "pass", NOTHING_NEW, "row_count", checks[1].rule_id, 0),
    ]
    many = StreamSummary([BatchRecord(n, 1, 1, []) for n in range(250)]).batch_lines()
    assert (many["batch_count"], len(many["batches"]), many["batches"][0]["batch_id"]) == (250, 100, 150)


def test_a_watermark_with_a_rule_that_compares_rows_is_refused_before_the_query_starts(spark, tmp_path):
    source = tmp_path / "in"
    _write_files(source)
    watermarked = (spark.readStream.schema(SCHEMA + ", at timestamp").json(str(source))
                   .withWatermark("at", "10 minutes"))
    with pytest.raises(ColaError) as raised:
        Cola().split_stream(watermarked, RULES, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"),
                            checkpoint=str(tmp_path / "c"), quarantine_key=["order_id"])
    assert str(raised.value) == (
        "the stream has a watermark on at, which asks for keys to be matched across batches, but Cola splits each "
        "batch alone and keeps no key state: unique(order_id), quarantine_key would only compare the rows of one "
        "batch. Drop duplicates upstream (dropDuplicatesWithinWatermark), or check the whole table with a batch run"
    )
    assert not (tmp_path / "c").exists()


def test_trusted_rules_that_read_a_path_run_in_every_batch(spark, tmp_path):
    source = tmp_path / "in"
    _write_files(source)
    spark.range(3).write.parquet(str(tmp_path / "ref"))
    # A path relation reads files: refused unless the rules are trusted (allow_external_access).
    rules = [{"type": "sql", "query": f"SELECT (SELECT COUNT(*) FROM parquet.`{tmp_path / 'ref'}`) = 3"}]
    with pytest.raises(ColaError, match="SQL that reaches outside the data is refused by default"):
        Cola().parse(rules)
    summary = Cola(allow_external_access=True).split_stream(
        _stream(spark, source), rules, valid=str(tmp_path / "v"), invalid=str(tmp_path / "i"),
        checkpoint=str(tmp_path / "c"),
    )
    assert (summary.valid_count, summary.invalid_count, summary.severity) == (9, 0, "pass")
    assert [batch.results[0].severity for batch in summary.batches] == ["pass", "pass", "pass"]


def test_a_streaming_job_splits_only_the_files_that_arrived_since_its_last_run(spark, tmp_path):
    source = tmp_path / "in"
    _write_files(source)
    job = JobSpec(
        command="split", rules=tuple(RULES), checkpoint=str(tmp_path / "checkpoint"),
        source=parse_source({"path": str(source), "format": "json", "schema": SCHEMA, "stream": True,
                             "options": {"maxFilesPerTrigger": 1}}),
        valid_output=parse_output(str(tmp_path / "valid")), invalid_output=parse_output(str(tmp_path / "invalid")),
        annotate="cola_codes", history=history_spec(str(tmp_path / "history")), dataset="orders",
        data_date="2026-12-01",
    )
    first = run_job(job, spark)
    summary = {key: value for key, value in first.summary.items() if key not in ("results", "cost")}
    assert summary == {
        "severity": "fail", "passed": False, "counts": {"pass": 1, "warn": 0, "fail": 3},
        "valid_count": 4, "invalid_count": 5,
        "stream": {"batch_count": 3, "batches": [
            {"batch_id": 0, "severity": "fail", "valid_count": 1, "invalid_count": 2},
            {"batch_id": 1, "severity": "fail", "valid_count": 1, "invalid_count": 2},
            {"batch_id": 2, "severity": "fail", "valid_count": 2, "invalid_count": 1},
        ]},
    }
    assert [(r["code"], r["failed_count"], r["message"].split(":")[0]) for r in first.summary["results"]] == [
        ("not_null(order_id)", 1, "in batch 0 (the worst of 3 batches)"),
        ("range(amount,0,)", 1, "in batch 2 (the worst of 3 batches)"),
        ("unique(order_id)", 1, "in batch 1 (the worst of 3 batches)"),
        ("row_count", 0, "in batch 2 (the worst of 3 batches)"),
    ]
    # The query's own jobs are the run's cost (they run in its job group, not the caller's).
    assert first.cost is not None and first.cost.jobs is not None and first.cost.jobs >= 3
    # The same run again (a retry, a cleared task: the same data date): its files were split
    # already, so nothing is published again, and it gives the answer its first attempt gave.
    rerun = run_job(job, spark)
    assert {k: v for k, v in rerun.summary.items() if k != "cost"} == {
        k: v for k, v in first.summary.items() if k != "cost"
    }
    assert len(_rows(spark, tmp_path / "valid")) + len(_rows(spark, tmp_path / "invalid")) == 9
    # The next data date, with nothing new: no batch, every rule passes saying so.
    again = run_job(dataclasses.replace(job, data_date="2026-12-02"), spark)
    assert (again.summary["severity"], again.summary["stream"], again.valid_count, again.invalid_count) == (
        "pass", {"batch_count": 0, "batches": []}, 0, 0,
    )
    assert {result.message for result in again.results} == {NOTHING_NEW}
    # A new file: only it is split, as batch 3.
    (source / "orders-3.json").write_text('{"order_id": 9, "amount": 4.0, "country": "BR"}\n')
    third = run_job(dataclasses.replace(job, data_date="2026-12-03"), spark)
    assert (third.summary["stream"], third.valid_count, third.invalid_count) == (
        {"batch_count": 1, "batches": [{"batch_id": 3, "severity": "pass", "valid_count": 1, "invalid_count": 0}]},
        1, 0,
    )
    assert len(_rows(spark, tmp_path / "valid")) + len(_rows(spark, tmp_path / "invalid")) == 10
    history = read_history(spark, history_spec(str(tmp_path / "history")))
    runs = sorted({(row.run_id.rsplit("-", 1)[-1], str(row.data_date)[:10]) for row in history.collect()})
    assert runs == [("0", "2026-12-01"), ("1", "2026-12-01"), ("2", "2026-12-01"), ("3", "2026-12-03")]


def test_a_checkpoint_needs_a_streaming_frame_and_a_streaming_frame_a_split(spark, tmp_path):
    outputs = {"valid_output": parse_output(str(tmp_path / "v")), "invalid_output": parse_output(str(tmp_path / "i"))}
    with pytest.raises(ColaError, match=r"^checkpoint only applies to a streaming source"):
        run_job(JobSpec(command="split", rules=tuple(RULES), checkpoint=str(tmp_path / "c"), **outputs), spark,
                df=spark.range(1).withColumnRenamed("id", "order_id"))
    source = tmp_path / "in"
    _write_files(source)
    with pytest.raises(ColaError, match=r"^a streaming DataFrame is split, not checked: give the split.s two outputs"):
        run_job(JobSpec(rules=tuple(RULES)), spark, df=_stream(spark, source))


# The driver: a streaming split of the source, one file per batch, with a history. With
# COLA_KILL_IN_BATCH=N it kills itself (SIGKILL) right after moving the first file of batch
# N into a destination: a batch half-published, as a lost driver leaves it.
DRIVER = textwrap.dedent("""
    import os, signal, sys
    from pyspark.sql import SparkSession
    from cola_core import Cola
    import cola_core.storage.publish as publish

    source, out, kill_in = sys.argv[1], sys.argv[2], os.environ.get("COLA_KILL_IN_BATCH")
    if kill_in is not None:
        original = publish.FileSystem.rename
        def rename(self, old, new):
            original(self, old, new)
            if f"/staging/{kill_in}/" in old and "/_cola/" not in new:
                os.kill(os.getpid(), signal.SIGKILL)
        publish.FileSystem.rename = rename
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    stream = (spark.readStream.schema("order_id bigint, amount double, country string")
              .option("maxFilesPerTrigger", 1).json(source))
    rules = [{"type": "not_null", "columns": ["order_id"]}, {"type": "range", "column": "amount", "min": 0},
             {"type": "unique", "columns": ["order_id"]}, {"type": "row_count", "min": 1}]
    invalid = {"path": out + "/invalid", "partition_by": ["country"]}
    summary = Cola().split_stream(stream, rules, valid=out + "/valid", invalid=invalid,
                                  checkpoint=out + "/checkpoint", annotate="cola_codes",
                                  history=out + "/history", dataset="orders")
    print(summary.to_dict()["batches"])
""")


def _driver(tmp_path: Path, kill_in: int | None = None) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    env.pop("COLA_KILL_IN_BATCH", None)
    if kill_in is not None:
        env["COLA_KILL_IN_BATCH"] = str(kill_in)
    return subprocess.run([sys.executable, str(script), str(tmp_path / "in"), str(tmp_path / "out")], env=env,
                          capture_output=True, text=True, timeout=600, check=False)


def _all_rows(spark, out: Path) -> list[tuple]:
    valid = [row[:3] for row in _rows(spark, out / "valid")]
    invalid = [row[:3] for row in _rows(spark, out / "invalid")] if (out / "invalid").exists() else []
    return sorted(valid + invalid, key=repr)


INPUT = sorted((row for rows in FILES for row in rows), key=repr)


def test_a_driver_killed_half_way_through_a_batch_loses_and_repeats_nothing_after_a_restart(spark, tmp_path):
    _write_files(tmp_path / "in")
    killed = _driver(tmp_path, kill_in=1)
    assert killed.returncode == -9, killed.stderr[-3000:]
    # Batch 0 is published; batch 1 was half-moved when the driver died.
    assert (tmp_path / "out" / "checkpoint" / "_cola" / "pending" / "1.json").exists()
    restarted = _driver(tmp_path)
    assert restarted.returncode == 0, restarted.stderr[-3000:]
    # A batch's pinned rows are freed quietly (RDD.unpersist warns about each one).
    assert "was locally checkpointed" not in restarted.stderr
    assert _all_rows(spark, tmp_path / "out") == INPUT
    history = spark.read.parquet(str(tmp_path / "out" / "history"))
    runs = sorted(row["run_id"].rsplit("-", 1)[1] for row in history.select("run_id").distinct().collect())
    assert runs == ["0", "1", "2"]
    assert history.count() == 3 * len(RULES)
    assert not (tmp_path / "out" / "checkpoint" / "_cola" / "pending" / "1.json").exists()


def test_a_failed_invalid_write_publishes_nothing_of_its_batch_and_a_restart_after_the_fix_completes(spark, tmp_path):
    _write_files(tmp_path / "in")
    # Batch 2 rejects a row of country XX: its partition folder cannot be made where a file is.
    blocker = tmp_path / "out" / "invalid" / "country=XX"
    blocker.parent.mkdir(parents=True)
    blocker.write_text("not a folder")
    failed = _driver(tmp_path)
    assert failed.returncode == 1
    assert "batch 2: cannot publish: " in failed.stderr
    assert "nothing of the batch was published" in failed.stderr
    blocker.unlink()  # the fix; what the failed run left is read after it
    assert _all_rows(spark, tmp_path / "out") == sorted(FILES[0] + FILES[1], key=repr)  # batches 0 and 1, whole
    fixed = _driver(tmp_path)
    assert fixed.returncode == 0, fixed.stderr[-3000:]
    assert _all_rows(spark, tmp_path / "out") == INPUT
