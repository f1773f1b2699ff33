"""The results summary (results file and XCom), the report rows, and the printed table."""

from __future__ import annotations

import datetime as dt
import json
import math

import pytest

from cola_core import CheckResult, ColaError
from cola_core.plan.cost import SparkCost
from cola_core.report.results import (
    REPORT_COLUMNS,
    render_table,
    report_dataframe,
    report_rows,
    summarise,
    write_report_table,
)

PASSED = CheckResult("not_null", True, "not_null(id): no NULL values", code="not_null(id)")
WARNED = CheckResult(
    "missing_count", True, "missing_count(email) = 1 violates warn (= 0)", 0, 1, "warn", "emails", code="missing_count(email)"
)
FAILED = CheckResult(
    "range", False, "range(amount,0,): 1 value out of range (>= 0)", 1, code="AMOUNT_NEGATIVE", dimension="Validity",
    rule_id="amounts",
)
WHEN = dt.datetime(2024, 5, 1, 12, 30, 0, tzinfo=dt.timezone.utc)


def test_summarise_gives_the_xcom_shape_exactly():
    assert summarise([PASSED, WARNED, FAILED]) == {
        "severity": "fail",
        "passed": False,
        "counts": {"pass": 1, "warn": 1, "fail": 1},
        "results": [
            {
                "rule_type": "not_null",
                "passed": True,
                "message": "not_null(id): no NULL values",
                "failed_count": 0,
                "metric_value": None,
                "severity": "pass",
                "check_name": None,
                "code": "not_null(id)",
            },
            {
                "rule_type": "missing_count",
                "passed": True,
                "message": "missing_count(email) = 1 violates warn (= 0)",
                "failed_count": 0,
                "metric_value": 1,
                "severity": "warn",
                "check_name": "emails",
                "code": "missing_count(email)",
            },
            {
                "rule_type": "range",
                "passed": False,
                "message": "range(amount,0,): 1 value out of range (>= 0)",
                "failed_count": 1,
                "metric_value": None,
                "severity": "fail",
                "check_name": None,
                "code": "AMOUNT_NEGATIVE",
                "dimension": "Validity",
                "rule_id": "amounts",
            },
        ],
    }


def test_warns_keep_passed_true_and_the_severity_is_the_worst():
    summary = summarise([PASSED, WARNED])
    assert (summary["severity"], summary["passed"], summary["counts"]) == ("warn", True, {"pass": 1, "warn": 1, "fail": 0})
    assert list(summary) == ["severity", "passed", "counts", "results"]


def test_an_empty_run_is_a_pass():
    assert summarise([]) == {"severity": "pass", "passed": True, "counts": {"pass": 0, "warn": 0, "fail": 0}, "results": []}


def test_split_counts_are_added_only_for_a_split():
    summary = summarise([PASSED], valid_count=7, invalid_count=3)
    assert list(summary) == ["severity", "passed", "counts", "results", "valid_count", "invalid_count"]
    assert (summary["valid_count"], summary["invalid_count"]) == (7, 3)
    assert "valid_count" not in summarise([PASSED])


def test_one_count_without_the_other_is_refused():
    with pytest.raises(ColaError) as raised:
        summarise([PASSED], valid_count=7)
    assert str(raised.value) == "give both valid_count and invalid_count (a split), or neither (a check)"


def test_the_summary_is_strict_json_and_round_trips_to_the_results():
    nan = CheckResult("stddev", False, "stddev(amount) = nan violates must_be (< 1)", 1, math.nan, code="stddev(amount)")
    summary = summarise([PASSED, WARNED, FAILED, nan])
    text = json.dumps(summary, allow_nan=False)  # JSON has no NaN: it becomes null
    assert json.loads(text)["results"][3]["metric_value"] is None
    rebuilt = [CheckResult.from_dict(item) for item in json.loads(text)["results"][:3]]
    assert rebuilt == [PASSED, WARNED, FAILED]


def test_report_rows_follow_the_spec_columns_then_the_rule_id():
    assert REPORT_COLUMNS == (
        "pipeline", "rule_type", "check_name", "code", "dimension", "severity", "passed",
        "failed_count", "metric_value", "message", "validated_at", "rule_id",
    )
    assert report_rows([WARNED, FAILED], pipeline="orders", validated_at=WHEN) == [
        ("orders", "missing_count", "emails", "missing_count(email)", None, "warn", True, 0, 1.0,
         "missing_count(email) = 1 violates warn (= 0)", WHEN, None),
        ("orders", "range", None, "AMOUNT_NEGATIVE", "Validity", "fail", False, 1, None,
         "range(amount,0,): 1 value out of range (>= 0)", WHEN, "amounts"),
    ]


def test_report_rows_share_one_timestamp_that_defaults_to_now():
    before = dt.datetime.now(dt.timezone.utc)
    rows = report_rows([PASSED, FAILED])
    after = dt.datetime.now(dt.timezone.utc)
    assert rows[0][-2] is rows[1][-2]
    assert before <= rows[0][-2] <= after
    assert rows[0][0] is None  # no pipeline name given


@pytest.mark.spark
def test_report_dataframe_has_the_report_schema(spark):
    frame = report_dataframe(spark, [PASSED, FAILED], pipeline="orders", validated_at=WHEN)
    assert frame.schema.simpleString() == (
        "struct<pipeline:string,rule_type:string,check_name:string,code:string,dimension:string,severity:string,"
        "passed:boolean,"
        "failed_count:bigint,metric_value:double,message:string,validated_at:timestamp,rule_id:string>"
    )
    rows = [row.asDict() for row in frame.collect()]
    naive_utc = dt.datetime(2024, 5, 1, 12, 30)  # the session time zone is UTC
    assert rows == [
        {"pipeline": "orders", "rule_type": "not_null", "check_name": None, "code": "not_null(id)",
         "dimension": None, "severity": "pass", "passed": True, "failed_count": 0, "metric_value": None,
         "message": "not_null(id): no NULL values", "validated_at": naive_utc, "rule_id": None},
        {"pipeline": "orders", "rule_type": "range", "check_name": None, "code": "AMOUNT_NEGATIVE",
         "dimension": "Validity", "severity": "fail", "passed": False, "failed_count": 1, "metric_value": None,
         "message": "range(amount,0,): 1 value out of range (>= 0)", "validated_at": naive_utc, "rule_id": "amounts"},
    ]


@pytest.mark.spark
def test_write_report_writes_failed_results_too_and_appends(spark, tmp_path):
    target = {"path": str(tmp_path / "report"), "format": "json", "mode": "append"}
    write_report_table(spark, [WARNED, FAILED], target, pipeline="orders", validated_at=WHEN)
    write_report_table(spark, [PASSED], target, pipeline="orders", validated_at=WHEN)
    files = sorted((tmp_path / "report").glob("part-*.json"))
    assert len(files) == 2  # one file per run, thanks to coalesce(1)
    written = spark.read.json(str(tmp_path / "report"))
    assert sorted((row.rule_type, row.severity, row.failed_count) for row in written.collect()) == [
        ("missing_count", "warn", 0), ("not_null", "pass", 0), ("range", "fail", 1),
    ]


def test_render_table_is_plain_text_with_aligned_columns():
    assert render_table([PASSED, WARNED, FAILED]) == "\n".join([
        "SEVERITY  RULE      CODE                  VALUE  FAILED  MESSAGE",
        "PASS      not_null  not_null(id)              -       0  not_null(id): no NULL values",
        "WARN      emails    missing_count(email)      1       0  missing_count(email) = 1 violates warn (= 0)",
        "FAIL      range     AMOUNT_NEGATIVE           -       1  range(amount,0,): 1 value out of range (>= 0)",
        "",
        "3 results: 1 pass, 1 warn, 1 fail",
    ])


def test_render_table_shows_the_split_counts_and_keeps_messages_on_one_line():
    multi_line = CheckResult("avg", True, "avg(x) = 2.5\n  meets must_be (> 1)", metric_value=2.5, code="avg(x)")
    assert render_table([multi_line], valid_count=7, invalid_count=3) == "\n".join([
        "SEVERITY  RULE  CODE    VALUE  FAILED  MESSAGE",
        "PASS      avg   avg(x)    2.5       0  avg(x) = 2.5 meets must_be (> 1)",
        "",
        "1 result: 1 pass, 0 warn, 0 fail",
        "split: 7 valid rows, 3 invalid rows",
    ])
    assert render_table([multi_line], valid_count=1, invalid_count=1).splitlines()[-1] == "split: 1 valid row, 1 invalid row"


def test_the_cost_of_a_run_ends_the_table_and_is_in_the_summary():
    cost = SparkCost(2.04, 3, 4, 12_000, 52_224)
    assert render_table([PASSED], valid_count=1, invalid_count=0, cost=cost).splitlines()[-2:] == [
        "split: 1 valid row, 0 invalid rows",
        "Spark cost: 3 Spark jobs, 4 stages, 12,000 rows (51.0 KB) read, 2.0 s",
    ]
    summary = summarise([PASSED], cost=cost)
    assert summary["cost"] == {"seconds": 2.04, "jobs": 3, "stages": 4, "rows_read": 12_000, "bytes_read": 52_224}
    assert list(summary) == ["severity", "passed", "counts", "results", "cost"]
    assert "cost" not in summarise([PASSED])  # a summary made from results alone has none


def test_render_table_colours_only_the_severity_when_asked():
    lines = render_table([PASSED, WARNED, FAILED], colour=True).splitlines()
    assert lines[0].startswith("SEVERITY  RULE")  # the header stays plain
    assert lines[1].startswith("\033[32mPASS    \033[0m  not_null")
    assert lines[2].startswith("\033[33mWARN    \033[0m  emails")
    assert lines[3].startswith("\033[1;31mFAIL    \033[0m  range")
    assert "\033" not in render_table([PASSED, WARNED, FAILED])


def test_the_results_of_any_block_stay_within_their_budget():
    """The most a block gives (rules.MAX_RESULTS results), each with a message at its bound and
    samples whose every text is at its bound: the samples go first, each result saying how many;
    then every text is cut, and the summary still says every result's verdict."""
    from cola_core.language.result import MESSAGE_CHARS
    from cola_core.plan.samples import SAMPLE_TEXT_CHARS
    from cola_core.report.results import CUT_TEXT_CHARS, RESULTS_BYTES
    from cola_core.ruleset.parsing import MAX_RESULTS

    sample = {f"column_{n}": "v" * SAMPLE_TEXT_CHARS for n in range(5)}
    results = [
        CheckResult("not_null", False, "m" * MESSAGE_CHARS, 3, code=f"not_null(c{n})", rule_id=f"r{n}",
                    check_name="n" * 300, samples=[sample] * 3)
        for n in range(MAX_RESULTS)
    ]
    summary = summarise(results)
    size = len(json.dumps(summary).encode())
    assert size <= RESULTS_BYTES
    assert summary["counts"] == {"pass": 0, "warn": 0, "fail": MAX_RESULTS}
    first = summary["results"][0]
    assert "samples" not in first
    note = " (3 samples left out: the results were over their 16 MiB budget)"
    assert first["message"] == "m" * CUT_TEXT_CHARS + f"… [cut: {MESSAGE_CHARS + len(note) - CUT_TEXT_CHARS:,} characters]"
    assert first["check_name"] == "n" * CUT_TEXT_CHARS + "… [cut: 220 characters]"
    assert (first["code"], first["rule_id"], first["failed_count"]) == ("not_null(c0)", "r0", 3)

    # A few results with samples: within the budget, all kept.
    few = summarise(results[:10])
    assert few["results"][0]["samples"] == [sample] * 3
    assert few["results"][0]["message"] == "m" * MESSAGE_CHARS


def test_details_are_kept_within_the_budget_and_left_out_past_it():
    from cola_core.language.result import DETAILS_CHARS, MESSAGE_CHARS
    from cola_core.report.results import RESULTS_BYTES
    from cola_core.ruleset.parsing import MAX_RESULTS

    columns = {f"c{n:03}": n for n in range(700)}
    assert DETAILS_CHARS - 1_000 < len(json.dumps({"columns": columns})) <= DETAILS_CHARS
    results = [
        CheckResult("not_null", False, "m" * MESSAGE_CHARS, 3, code=f"not_null(c{n})", rule_id=f"r{n}",
                    details={"columns": columns})
        for n in range(MAX_RESULTS)
    ]
    summary = summarise(results)
    assert len(json.dumps(summary).encode()) <= RESULTS_BYTES
    assert all("details" not in result for result in summary["results"])
    assert summary["results"][0]["failed_count"] == 3
    assert summarise(results[:10])["results"][0]["details"] == {"columns": columns}


def test_samples_left_out_for_the_budget_are_counted_in_the_message():
    from cola_core.report.results import RESULTS_BYTES

    big = {"text": "v" * 1_000}
    results = [CheckResult("not_null", False, "m", 1, samples=[big] * 100) for _ in range(RESULTS_BYTES // 90_000)]
    summary = summarise(results)
    assert summary["results"][0]["message"] == "m (100 samples left out: the results were over their 16 MiB budget)"
    assert len(json.dumps(summary).encode()) <= RESULTS_BYTES


def test_the_results_file_is_written_atomically_as_strict_json_and_names_itself_in_errors(tmp_path):
    from cola_core.errors import ColaOutputError
    from cola_core.report.results import refusal_results, results_text, write_results_file

    path = tmp_path / "out" / "results.json"
    summary = summarise([FAILED])
    write_results_file(path, summary)
    assert path.read_text(encoding="utf-8") == results_text(summary)
    assert json.loads(path.read_text(encoding="utf-8")) == summary
    write_results_file(path, refusal_results("bad rules"))
    assert json.loads(path.read_text(encoding="utf-8")) == {"error": {"exit_code": 2, "kind": "error", "message": "bad rules"}}
    assert [p.name for p in path.parent.iterdir()] == ["results.json"]
    blocked = tmp_path / "blocked"
    blocked.write_text("")
    with pytest.raises(ColaOutputError) as raised:
        write_results_file(blocked / "results.json", summary)
    target = blocked / "results.json"
    assert str(raised.value) == f"cannot write the results file {str(target)!r}: [Errno 17] File exists: {str(blocked)!r}"
    with pytest.raises(ColaError) as refused:
        write_results_file(path, {"metric": float("nan")})
    assert str(refused.value) == "the results cannot be written as JSON: Out of range float values are not JSON compliant: nan"
    assert json.loads(path.read_text(encoding="utf-8")) == {"error": {"exit_code": 2, "kind": "error", "message": "bad rules"}}


def test_a_refusal_record_says_what_kind_of_refusal_it_is():
    from cola_core.errors import ColaError
    from cola_core.report.results import REFUSAL_KINDS, refusal_results

    assert REFUSAL_KINDS == ("usage", "rules", "source", "output", "query", "error")
    assert refusal_results("argument --samples: invalid int value: 'x'", kind="usage") == {
        "error": {"exit_code": 2, "kind": "usage", "message": "argument --samples: invalid int value: 'x'"}
    }
    with pytest.raises(ColaError) as refused:
        refusal_results("m", kind="typo")
    assert str(refused.value) == "a refusal's kind is one of usage, rules, source, output, query, error, got 'typo'"
