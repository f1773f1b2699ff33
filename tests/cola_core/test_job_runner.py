"""``load_job`` and ``run_job`` (``job/runner.py``): a job read from its source, measured, split
and written, with its rules parsed exactly once; and the files a run leaves on the driver (the
HTML page, whose failure is a warning, and the results file)."""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest

import cola_core.cola as cola_module
import cola_core.job.runner as runner_module
from cola_core import CheckResult, Cola, ColaOutputError, ColaRuleError, JobSpec, run_job
from cola_core.history.store import read_history
from cola_core.job.runner import (
    JobOutcome,
    LoadedJob,
    load_job,
    remove_earlier_file,
    report_page,
    write_report_page,
    write_results_file,
)
from cola_core.report.results import refusal_results, summarise
from cola_core.storage.specs import history_spec, parse_output, parse_source

pytestmark = pytest.mark.spark

RULES = (
    {"type": "not_null", "columns": ["email"]},
    {"type": "range", "column": "amount", "min": 0, "code": "AMOUNT_NEGATIVE"},
    {"type": "row_count", "min": 1},
)
RESULTS = [
    {"rule_type": "not_null", "passed": False, "message": "not_null(email): 1 NULL value (email: 1)",
     "failed_count": 1, "metric_value": None, "severity": "fail", "check_name": None, "code": "not_null(email)",
     "rule_id": "not_null:43d1d544559c", "rows_checked": 3},
    {"rule_type": "range", "passed": False, "message": "range(amount,0,): 1 value out of range (>= 0)",
     "failed_count": 1, "metric_value": None, "severity": "fail", "check_name": None, "code": "AMOUNT_NEGATIVE",
     "rule_id": "range:698a0cb41184", "rows_checked": 3},
    {"rule_type": "row_count", "passed": True, "message": "row_count = 3 is within bounds (min 1)",
     "failed_count": 0, "metric_value": None, "severity": "pass", "check_name": None, "code": "row_count",
     "rule_id": "row_count:51432f82cae8", "rows_checked": 3, "thresholds": {"min": "1"}},
]


@pytest.fixture(scope="module")
def source(spark, tmp_path_factory):
    """Three orders as parquet: one without an email, one with a negative amount."""
    path = tmp_path_factory.mktemp("runner") / "orders"
    spark.createDataFrame(
        [(1, "a@x.io", 5.0), (2, None, 7.0), (3, "c@x.io", -1.0)], "id int, email string, amount double"
    ).write.parquet(str(path))
    return parse_source({"path": str(path)})


@pytest.fixture
def parse_calls(monkeypatch):
    """Every call of the rule parser, recorded: ``Cola.parse`` and ``load_job`` both call it."""
    calls: list[tuple] = []
    original = cola_module.parse_rules

    def recording(*args):
        calls.append(args)
        return original(*args)

    monkeypatch.setattr(cola_module, "parse_rules", recording)
    monkeypatch.setattr(runner_module, "parse_rules", recording)
    return calls


def assert_cost(spark, cost, **expected):
    assert cost is not None and cost.seconds > 0
    if not hasattr(spark, "_jvm"):
        assert (cost.jobs, cost.stages, cost.rows_read, cost.bytes_read) == (None, None, None, None)
        assert cost.describe() == f"{cost.seconds:.1f} s (no Spark job metrics over Spark Connect)"
        return
    assert {key: getattr(cost, key) for key in expected} == expected
    assert cost.bytes_read > 0
    assert cost.describe().startswith(f"{expected['jobs']} Spark jobs, {expected['stages']} stages, ")


def test_a_check_job_reads_its_source_and_summarises(spark, source, parse_calls):
    outcome = run_job(JobSpec(rules=RULES, source=source), spark)
    assert outcome.summary == {
        "severity": "fail", "passed": False, "counts": {"pass": 1, "warn": 0, "fail": 2}, "results": RESULTS,
        "cost": outcome.cost.to_dict(),  # the XCom and the results file carry it
    }
    assert (outcome.passed, outcome.valid_count, outcome.invalid_count) == (False, None, None)
    assert [result.code for result in outcome.results] == ["not_null(email)", "AMOUNT_NEGATIVE", "row_count"]
    assert len(parse_calls) == 1
    # What it cost Spark, from its own bookkeeping (over Spark Connect only the time is known).
    assert_cost(spark, outcome.cost, jobs=2, stages=3, rows_read=3)


def test_a_split_job_writes_both_outputs_and_parses_its_rules_once(spark, source, tmp_path, parse_calls):
    valid, invalid = tmp_path / "valid", tmp_path / "invalid"
    spec = JobSpec(command="split", rules=RULES, source=source, valid_output=parse_output(str(valid)),
                   invalid_output=parse_output(str(invalid)), annotate="dq")
    outcome = run_job(spec, spark)
    assert outcome.summary == {
        "severity": "fail", "passed": False, "counts": {"pass": 1, "warn": 0, "fail": 2}, "results": RESULTS,
        "valid_count": 1, "invalid_count": 2, "cost": outcome.cost.to_dict(),
    }
    assert (outcome.valid_count, outcome.invalid_count) == (1, 2)
    assert [row.id for row in spark.read.parquet(str(valid)).collect()] == [1]
    assert sorted((row.id, tuple(row.dq)) for row in spark.read.parquet(str(invalid)).collect()) == [
        (2, ("not_null(email)",)), (3, ("AMOUNT_NEGATIVE",)),
    ]
    assert len(parse_calls) == 1  # the split and the measurement share one parse
    assert_cost(spark, outcome.cost, jobs=3, stages=3, rows_read=4)


def test_checks_handed_to_load_job_are_not_parsed_again(spark, source, parse_calls):
    checks = Cola().parse(list(RULES))
    parse_calls.clear()
    loaded = load_job(JobSpec(rules=RULES, source=source), checks=checks)
    assert isinstance(loaded, LoadedJob) and loaded.checks == tuple(checks)
    outcome = run_job(loaded, spark)
    assert (outcome.summary["results"], parse_calls) == (RESULTS, [])


def test_load_job_refuses_a_malformed_rule_before_spark(parse_calls):
    with pytest.raises(ColaRuleError) as raised:
        load_job(JobSpec(rules=({"type": "range", "min": 0},)))
    assert str(raised.value) == "rules[0] (range): missing required parameter 'column'"


def test_a_dataframe_run_needs_no_source(spark):
    df = spark.createDataFrame([(1, None, 2.0)], "id int, email string, amount double")
    outcome = run_job(JobSpec(rules=RULES), spark, df=df)
    assert [(r["code"], r["severity"], r["failed_count"]) for r in outcome.summary["results"]] == [
        ("not_null(email)", "fail", 1), ("AMOUNT_NEGATIVE", "pass", 0), ("row_count", "pass", 0),
    ]


def test_a_job_without_a_source_or_a_dataframe_is_refused(spark):
    with pytest.raises(ValueError) as raised:
        run_job(JobSpec(rules=RULES), spark)
    assert str(raised.value) == "run_job needs a job with a source, or a DataFrame"


def test_a_split_job_counts_the_rows_per_rejection_code_and_a_check_has_none(spark, source, tmp_path):
    spec = JobSpec(command="split", rules=RULES, source=source, valid_output=parse_output(str(tmp_path / "v")),
                   invalid_output=parse_output(str(tmp_path / "i")))
    split = run_job(spec, spark)
    assert split.rejections == {"not_null(email)": 1, "AMOUNT_NEGATIVE": 1}
    assert run_job(JobSpec(rules=RULES, source=source), spark).rejections is None


def test_the_report_page_shows_the_runs_validated_at_as_its_history_rows_carry_it(spark, source, tmp_path):
    from pyspark.sql import functions as F

    store = str(tmp_path / "history")
    before = dt.datetime.now(dt.timezone.utc)
    spec = JobSpec(command="split", rules=RULES, source=source, valid_output=parse_output(str(tmp_path / "v")),
                   invalid_output=parse_output(str(tmp_path / "i")), history=history_spec(store), dataset="orders")
    outcome = run_job(spec, spark)
    assert outcome.validated_at is not None and before <= outcome.validated_at <= dt.datetime.now(dt.timezone.utc)
    page = report_page(spark, spec, outcome)
    assert write_report_page(spark, spec, outcome, tmp_path / "report.html") is None
    assert (tmp_path / "report.html").read_text(encoding="utf-8") == page
    [shown] = re.findall(r"<dt>validated at</dt><dd>(.*?)</dd>", page)
    assert shown == outcome.validated_at.isoformat(sep=" ", timespec="seconds")
    # The history's timestamps, formatted in the session's time zone (UTC in the tests).
    stored = read_history(spark, store).select(F.date_format("validated_at", "yyyy-MM-dd HH:mm:ss").alias("at"))
    assert [row.at for row in stored.collect()] == [shown.removesuffix("+00:00")] * len(RULES)
    assert "<dt>dataset</dt><dd>orders</dd>" in page
    assert (
        '<h2>Split</h2><p>1 valid row, 2 invalid rows</p><table><thead><tr><th>rejection code</th><th>rows</th>'
        '</tr></thead><tbody><tr><td><code>AMOUNT_NEGATIVE</code></td><td class="num">1</td></tr>'
        '<tr><td><code>not_null(email)</code></td><td class="num">1</td></tr></tbody></table>'
    ) in page
    # With a history, each rule draws the trend of its runs: one so far.
    assert page.count("<svg") == len(RULES)


# -- the files a run leaves on the driver --------------------------------------------------------


def test_a_page_not_written_after_the_run_is_a_warning_with_the_errors_type_unless_it_is_ours_or_spark_names_it(
    tmp_path, monkeypatch
):
    class Py4JJavaError(Exception):  # as py4j raises it: the JVM's class is in its text
        __module__ = "py4j.protocol"

    errors = [
        KeyError("x"),  # a bug: without its type, "'x'" said nothing
        KeyError(),
        RuntimeError("boom\nthe rest"),
        ColaOutputError("cannot write the page 'p': [Errno 28] No space left on device"),
        Py4JJavaError("An error occurred while calling o1.collectToPython.\n: org.apache.spark.SparkException: bad"),
        Py4JJavaError("no class named"),
    ]
    warnings = []
    for error in errors:
        def fail(*_, error=error):
            raise error

        monkeypatch.setattr(runner_module, "report_page", fail)
        warnings.append(write_report_page(None, None, None, tmp_path / "report.html"))
    reasons = ["KeyError: 'x'", "KeyError", "RuntimeError: boom",
               "cannot write the page 'p': [Errno 28] No space left on device",
               "org.apache.spark.SparkException: bad", "Py4JJavaError: no class named"]
    assert warnings == [f"the HTML report was not written: {reason}" for reason in reasons]
    assert not (tmp_path / "report.html").exists()


def test_an_interrupt_while_the_page_is_built_is_no_warning(tmp_path, monkeypatch):
    def interrupted(*_):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner_module, "report_page", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_report_page(None, None, None, tmp_path / "report.html")


def test_the_results_file_holds_the_summary_or_the_refusal_and_replaces_the_earlier_one(tmp_path):
    path = tmp_path / "out" / "results.json"
    summary = summarise([CheckResult("row_count", True, "row_count = 3", rule_id="r")])
    write_results_file(path, summary)
    assert json.loads(path.read_text(encoding="utf-8")) == summary
    write_results_file(path, refusal_results("no such table"))
    assert json.loads(path.read_text(encoding="utf-8")) == {"error": {"exit_code": 2, "kind": "error", "message": "no such table"}}
    remove_earlier_file(path, "results file")
    remove_earlier_file(path, "results file")  # none left: nothing to do
    assert sorted(p.name for p in path.parent.iterdir()) == []


def test_an_earlier_file_that_cannot_be_removed_is_an_output_error(tmp_path):
    folder = tmp_path / "results.json"
    folder.mkdir()
    with pytest.raises(ColaOutputError) as raised:
        remove_earlier_file(folder, "results file")
    assert str(raised.value) == (
        f"cannot remove the earlier results file {str(folder)!r}: [Errno 21] Is a directory: {str(folder)!r}"
    )


def test_job_outcome_passes_as_its_summary_says():
    assert JobOutcome([], {"passed": True}).passed and not JobOutcome([], {"passed": False}).passed


def test_a_contracts_gaps_are_carried_by_the_loaded_job_as_data(tmp_path):
    import warnings

    from cola_core.job.runner import load_job
    from cola_core.job.spec import JobSpec
    from cola_core.report.results import summarise

    contract = {
        "apiVersion": "v3.0.2", "kind": "DataContract", "id": "ids", "version": "1", "status": "active",
        "schema": [{"name": "ids", "properties": [{"name": "id", "required": True}],
                    "quality": [{"type": "text", "description": "free text"}]}],
    }
    path = tmp_path / "ids.odcs.json"
    path.write_text(json.dumps(contract))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        job = load_job(JobSpec(rules=str(path)))
    assert job.contract_gaps == ("schema[0].quality[0] (text, no single mustBe* operator)",)
    assert summarise([], contract_gaps=job.contract_gaps)["contract_gaps"] == list(job.contract_gaps)
    assert "contract_gaps" not in summarise([])
