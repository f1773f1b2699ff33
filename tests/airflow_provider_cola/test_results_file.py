"""Reading back the job's results file: a whole, consistent summary, or a ColaJobError.

The files are real files written here: the job cannot be made to write most of these (a
non-UTF-8 file, a deeply nested one), but a broken disk, a half-synced share or another
program writing to the same path can.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airflow_provider_cola._rules import load_rules
from airflow_provider_cola.errors import ColaJobError, ColaJobRefused
from airflow_provider_cola.operators._results import Refusal, ResultsFile
from cola_core.report.results import refusal_results, results_text
from cola_expected import ORDERS_PASS_SUMMARY, result, summary
from cola_testenv import EXAMPLES

pytestmark = pytest.mark.airflow

TAIL = "26/01/01 ERROR Something: the end of the log"
ROW_COUNT = {**result("row_count", "pass", "row_count = 3 is within bounds (min 1)", "row_count", thresholds={"min": "1"}),
             "rule_id": "row_count:51432f82cae8", "rows_checked": 3}
FIRST = ORDERS_PASS_SUMMARY["results"][0]
# The checks the worker validated: what each result must be the result of, in order.
ORDERS_CHECKS = load_rules(EXAMPLES / "rules" / "orders.yaml").checks
ROW_COUNT_CHECKS = load_rules([{"type": "row_count", "min": 1}]).checks
REMOVED = object()


def tail() -> str:
    return TAIL


def written(tmp_path: Path, content: str | bytes | None) -> ResultsFile:
    results = ResultsFile(tmp_path)
    if isinstance(content, str):
        Path(results.target).write_text(content, encoding="utf-8")
    elif content is not None:
        Path(results.target).write_bytes(content)
    return results


def with_first(**changes) -> str:
    """ORDERS_PASS_SUMMARY with its first result changed (``REMOVED`` removes a key)."""
    first = {key: value for key, value in {**FIRST, **changes}.items() if value is not REMOVED}
    return json.dumps({**ORDERS_PASS_SUMMARY, "results": [first, *ORDERS_PASS_SUMMARY["results"][1:]]})


def test_results_file_is_read_then_removed(tmp_path):
    results = written(tmp_path, results_text(ORDERS_PASS_SUMMARY))
    assert results.read(split=False, checks=ORDERS_CHECKS, log_tail=tail) == ORDERS_PASS_SUMMARY
    assert not Path(results.target).exists()


def test_details_and_evaluation_failed_are_read_back(tmp_path):
    # The engine writes them (a not_null over several columns, a rule Spark failed on): they
    # are part of the summary the provider reads, as they are of the XCom.
    content = with_first(details={"columns": {"order_id": 0, "email": 0}}, evaluation_failed=True)
    results = written(tmp_path, content)
    read = results.read(split=False, checks=ORDERS_CHECKS, log_tail=tail)
    assert read == json.loads(content)
    assert read["results"][0]["details"] == {"columns": {"order_id": 0, "email": 0}}
    assert read["results"][0]["evaluation_failed"] is True


def test_results_uri_gets_a_unique_file_per_run(tmp_path):
    first, second = ResultsFile(tmp_path, f"file://{tmp_path}/shared/"), ResultsFile(tmp_path, str(tmp_path))
    assert first.target.startswith(f"file://{tmp_path}/shared/cola-results-") and first.target.endswith(".json")
    assert second.target.startswith(f"{tmp_path}/cola-results-")
    assert ResultsFile(tmp_path, str(tmp_path)).target != second.target


def test_split_results_need_the_counts(tmp_path):
    split_summary = summary(ROW_COUNT, valid_count=3, invalid_count=0)
    results = written(tmp_path, json.dumps(split_summary))
    assert results.read(split=True, checks=ROW_COUNT_CHECKS, log_tail=tail) == split_summary


REFUSAL_FORM = ("its 'error' must be {\"exit_code\": 2, \"kind\": \"...\", \"message\": \"...\"} alone, its kind "
                "one of usage, rules, source, output, query, error")
CORRUPT = [
    ("", "Expecting value: line 1 column 1 (char 0)"),
    (b'{"severity": "pass", "message": "caf\xe9"}', "not UTF-8: invalid continuation byte at byte 36"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply to be a results file"),
    ("[]", "expected a JSON object, got a list"),
    ("null", "expected a JSON object, got null"),
    ('{"results": []}', "the summary has missing counts, passed, severity"),
    (json.dumps({**ORDERS_PASS_SUMMARY, "extra": 1}), "the summary has unknown extra"),
    (json.dumps({**ORDERS_PASS_SUMMARY, "results": {}}), "'results' must be a list, got an object"),
    # A job that measured nothing must never pass for a block of rules.
    (json.dumps(summary()), "it holds 0 results for a block of 5 rules"),
    (json.dumps(summary(ROW_COUNT)), "it holds 1 result for a block of 5 rules"),
    (json.dumps({**ORDERS_PASS_SUMMARY, "results": [7, *ORDERS_PASS_SUMMARY["results"][1:]]}),
     "results[0] must be an object, got a number"),
    (with_first(colour="red"), "results[0] has unknown colour"),
    (with_first(message=REMOVED), "results[0] has missing message"),
    (with_first(passed="yes"), "results[0].passed must be a boolean, got a string"),
    (with_first(failed_count="0"), "results[0].failed_count must be a whole number, got a string"),
    (with_first(failed_count=True), "results[0].failed_count must be a whole number, got a boolean"),
    (with_first(failed_count=1.5), "results[0].failed_count must be a whole number, got a number"),
    (with_first(failed_count=-3), "results[0].failed_count must be a whole number >= 0, got -3"),
    (with_first(metric_value="6"), "results[0].metric_value must be a number or null, got a string"),
    (with_first(rule_type=["row_count"]), "results[0].rule_type must be a string, got a list"),
    (with_first(check_name=1), "results[0].check_name must be a string or null, got a number"),
    (with_first(severity="ok"), "results[0].severity must be one of pass, warn, fail, got 'ok'"),
    (with_first(passed=False), "results[0].passed is False for severity 'pass'"),
    (with_first(samples=[1]), "results[0].samples must be a list of objects"),
    (with_first(thresholds=["> 0"]), "results[0].thresholds must be an object, got a list"),
    (with_first(thresholds={"must_be": 5}), "results[0].thresholds must be an object of strings"),
    (with_first(details=[1]), "results[0].details must be an object, got a list"),
    (with_first(details={"columns": {"a": float("inf")}}), "Infinity is not a JSON number"),
    (with_first(details={"columns": {f"c{n:04}": n for n in range(1_000)}}),
     "results[0].details are over their bound of 10,000 characters"),
    (with_first(evaluation_failed="yes"), "results[0].evaluation_failed must be a boolean, got a string"),
    (with_first(evaluation_failed=False), "results[0].evaluation_failed is only written when true"),
    (json.dumps({**ORDERS_PASS_SUMMARY, "passed": False}), "its passed do not match its results"),
    (json.dumps({**ORDERS_PASS_SUMMARY, "counts": {"pass": 6, "warn": -1, "fail": 0}}),
     "its counts do not match its results"),
    (json.dumps({**ORDERS_PASS_SUMMARY, "severity": "warn"}), "its severity do not match its results"),
    # Python's json reads NaN and Infinity, which are not JSON and which the job never writes.
    (with_first(metric_value=float("nan")), "NaN is not a JSON number"),
    (json.dumps({"error": "no"}), REFUSAL_FORM),
    # A record of an earlier form, or of a kind the engine does not write, is no refusal either.
    (json.dumps({"error": {"exit_code": 2, "message": "m"}}), REFUSAL_FORM),
    (json.dumps({"error": {"exit_code": 2, "kind": "typo", "message": "m"}}), REFUSAL_FORM),
    # json.loads would keep the last of two equal keys: the job never writes one twice.
    (json.dumps(ORDERS_PASS_SUMMARY)[:-1] + ', "passed": true}', "duplicate key 'passed'"),
    (with_first().replace('"severity": "pass", "check_name"', '"severity": "pass", "severity": "pass", "check_name"', 1),
     "duplicate key 'severity'"),
    # Each result must be the result of the block's rule at its place.
    (json.dumps({**ORDERS_PASS_SUMMARY, "results": [ORDERS_PASS_SUMMARY["results"][i] for i in (0, 2, 1, 3, 4)]}),
     "results[1].rule_type is 'unique', but the block's rule 2 gives 'not_null'"),
    (with_first(code="NEGATIVE_AMOUNT"), "results[0].code is 'NEGATIVE_AMOUNT', but the block's rule 1 gives 'row_count'"),
]


@pytest.mark.parametrize(("content", "problem"), CORRUPT)
def test_a_corrupt_results_file_is_never_a_pass(tmp_path, content, problem):
    results = written(tmp_path, content)
    with pytest.raises(ColaJobError) as error:
        results.read(split=False, checks=ORDERS_CHECKS, log_tail=tail)
    assert str(error.value) == (
        f"the results file is corrupt ({problem}): {results.target}\nLast lines of the Spark log:\n{TAIL}"
    )
    # Read once, then removed: nothing stale is left for a later read.
    assert not Path(results.target).exists()


NOT_NULL = {**result("not_null", "pass", "not_null(order_id): no NULL values", "not_null(order_id)"),
            "rule_id": "not_null:25e1c5105f3d", "rows_checked": 3}


@pytest.mark.parametrize(
    ("rule", "found", "problem"),
    [
        # The shape of a real result, but of no rule in the block.
        ({"type": "not_null", "columns": ["order_id"]}, {**NOT_NULL, "rule_type": "whatever", "code": None},
         "results[0].rule_type is 'whatever', but the block's rule 1 gives 'not_null'"),
        ({"type": "not_null", "columns": ["order_id"]}, {**NOT_NULL, "code": None},
         "results[0].code is None, but the block's rule 1 gives 'not_null(order_id)'"),
        ({"type": "not_null", "columns": ["order_id"], "code": "NO_ID"}, NOT_NULL,
         "results[0].code is 'not_null(order_id)', but the block's rule 1 gives 'NO_ID'"),
        ({"type": "not_null", "columns": ["order_id"], "name": "ids"}, NOT_NULL,
         "results[0].check_name is None, but the block's rule 1 gives 'ids'"),
        ({"type": "not_null", "columns": ["order_id"], "name": "ids"}, {**NOT_NULL, "check_name": "emails"},
         "results[0].check_name is 'emails', but the block's rule 1 gives 'ids'"),
        ({"type": "not_null", "columns": ["order_id"], "id": "ids"}, NOT_NULL,
         "results[0].rule_id is 'not_null:25e1c5105f3d', but the block's rule 1 gives 'ids'"),
        ({"type": "not_null", "columns": ["order_id"]}, {**NOT_NULL, "rule_id": None},
         "results[0].rule_id must be a string, got null"),
        ({"type": "not_null", "columns": ["order_id"]}, {**NOT_NULL, "rows_checked": -1},
         "results[0].rows_checked must be a whole number >= 0, got -1"),
    ],
)
def test_each_result_must_be_of_the_validated_rule_at_its_place(tmp_path, rule, found, problem):
    results = written(tmp_path, json.dumps(summary(found)))
    with pytest.raises(ColaJobError) as error:
        results.read(split=False, checks=load_rules([rule]).checks, log_tail=tail)
    assert str(error.value) == (
        f"the results file is corrupt ({problem}): {results.target}\nLast lines of the Spark log:\n{TAIL}"
    )


def test_the_result_of_a_named_rule_carries_its_name(tmp_path):
    named = {**NOT_NULL, "check_name": "ids"}
    results = written(tmp_path, json.dumps(summary(named)))
    rule = {"type": "not_null", "columns": ["order_id"], "name": "ids"}
    assert results.read(split=False, checks=load_rules([rule]).checks, log_tail=tail) == summary(named)


def test_a_corrupt_file_in_results_uri_is_removed(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    results = ResultsFile(tmp_path, f"file://{shared}")
    Path(results._path()).write_text('{"severity": "pass"', encoding="utf-8")
    with pytest.raises(ColaJobError, match=r"^the results file is corrupt \("):
        results.read(split=False, checks=ORDERS_CHECKS, log_tail=tail)
    assert list(shared.iterdir()) == []


@pytest.mark.parametrize(
    ("counts", "problem"),
    [
        ({}, "the summary has missing invalid_count, valid_count"),
        ({"valid_count": -1, "invalid_count": 4}, "valid_count must be a whole number >= 0, got -1"),
        ({"valid_count": 3, "invalid_count": "0"}, "invalid_count must be a whole number >= 0, got '0'"),
        ({"valid_count": 3, "invalid_count": False}, "invalid_count must be a whole number >= 0, got False"),
    ],
)
def test_split_counts_must_be_whole_and_not_negative(tmp_path, counts, problem):
    results = written(tmp_path, json.dumps({**summary(ROW_COUNT), **counts}))
    with pytest.raises(ColaJobError) as error:
        results.read(split=True, checks=ROW_COUNT_CHECKS, log_tail=tail)
    assert str(error.value).startswith(f"the results file is corrupt ({problem}): ")


STREAM_LINES = {"batch_count": 2, "batches": [
    {"batch_id": 4, "severity": "pass", "valid_count": 2, "invalid_count": 0},
    {"batch_id": 5, "severity": "pass", "valid_count": 1, "invalid_count": 0},
]}


def test_a_streaming_split_carries_its_batches(tmp_path):
    streamed = {**summary(ROW_COUNT, valid_count=3, invalid_count=0), "stream": STREAM_LINES}
    results = written(tmp_path, json.dumps(streamed))
    assert results.read(split=True, checks=ROW_COUNT_CHECKS, log_tail=tail, stream=True) == streamed
    # A batch split's file has no stream part, and a streaming split's file must have one.
    results = written(tmp_path, json.dumps(streamed))
    with pytest.raises(ColaJobError, match=r"^the results file is corrupt \(the summary has unknown stream\)"):
        results.read(split=True, checks=ROW_COUNT_CHECKS, log_tail=tail)
    results = written(tmp_path, json.dumps(summary(ROW_COUNT, valid_count=3, invalid_count=0)))
    with pytest.raises(ColaJobError, match=r"^the results file is corrupt \(the summary has missing stream\)"):
        results.read(split=True, checks=ROW_COUNT_CHECKS, log_tail=tail, stream=True)


@pytest.mark.parametrize(
    ("lines", "problem"),
    [
        ([], "'stream' must be an object, got a list"),
        ({"batch_count": 2}, "stream has missing batches"),
        ({**STREAM_LINES, "batch_count": 1}, "stream.batches must be a list of at most 1 batches"),
        ({**STREAM_LINES, "batch_count": -2}, "stream.batch_count must be a whole number >= 0, got -2"),
        ({"batch_count": 2, "batches": [{**STREAM_LINES["batches"][0], "rows": 1}, STREAM_LINES["batches"][1]]},
         "stream.batches[0] has unknown rows"),
        ({"batch_count": 2, "batches": [{**STREAM_LINES["batches"][0], "severity": "bad"}, STREAM_LINES["batches"][1]]},
         "stream.batches[0].severity must be one of pass, warn, fail, got 'bad'"),
        ({"batch_count": 2, "batches": [{**STREAM_LINES["batches"][0], "valid_count": 5}, STREAM_LINES["batches"][1]]},
         "the batches' valid_count do not add up to the split's"),
    ],
)
def test_a_streaming_splits_batches_must_be_whole_and_add_up(tmp_path, lines, problem):
    results = written(tmp_path, json.dumps({**summary(ROW_COUNT, valid_count=3, invalid_count=0), "stream": lines}))
    with pytest.raises(ColaJobError) as error:
        results.read(split=True, checks=ROW_COUNT_CHECKS, log_tail=tail, stream=True)
    assert str(error.value).startswith(f"the results file is corrupt ({problem}): ")


def test_missing_results_file(tmp_path):
    results = written(tmp_path, None)
    with pytest.raises(ColaJobError) as error:
        results.read(split=False, checks=ORDERS_CHECKS, log_tail=tail)
    assert str(error.value) == (
        f"the Cola Spark job finished but wrote no results file: {results.target}\nLast lines of the Spark log:\n{TAIL}"
    )


def test_a_results_file_recording_a_refusal_fails_without_retry(tmp_path):
    refusal = refusal_results("cannot read the json at /data/x: no such path", kind="source")
    results = written(tmp_path, results_text(refusal))
    assert results.refusal() == Refusal("source", "cannot read the json at /data/x: no such path")
    with pytest.raises(ColaJobRefused) as error:
        results.read(split=False, checks=ORDERS_CHECKS, log_tail=tail)
    assert str(error.value) == (
        "the Cola job refused its inputs (exit code 2, so it is not retried): "
        "cannot read the json at /data/x: no such path"
    )
    assert error.value.kind == "source"
    assert not Path(results.target).exists()
    # Its command line: said as such.
    usage = written(tmp_path, results_text(refusal_results("unrecognized arguments: --bogus", kind="usage")))
    with pytest.raises(ColaJobRefused) as error:
        usage.read(split=False, checks=ORDERS_CHECKS, log_tail=tail)
    assert str(error.value) == (
        "the Cola job refused its command line (exit code 2, so it is not retried): unrecognized arguments: --bogus"
    )
    assert written(tmp_path, results_text(ORDERS_PASS_SUMMARY)).refusal() is None
    assert written(tmp_path, b"\xff").refusal() is None


def test_the_reader_takes_the_result_form_from_cola_core_with_no_copy_of_its_own(tmp_path, monkeypatch):
    """A result's keys and their types are CheckResult's (``RESULT_KEYS``, read off the dataclass):
    a key the engine gains is read (and a key it loses refused) with nothing changed here."""
    from cola_core.language import result as result_module
    from cola_core.language.result import ResultKey

    gained = {**result_module.RESULT_KEYS, "confidence": ResultKey("confidence", (float, int), None, optional=False)}
    monkeypatch.setattr("airflow_provider_cola.operators._results.RESULT_KEYS", gained)
    # Were the reader's table its own, it would refuse the new key as unknown, or take it as text.
    with pytest.raises(ColaJobError, match=r"results\[0\]\.confidence must be a number, got a string"):
        written(tmp_path, with_first(confidence="high")).read(split=False, checks=ORDERS_CHECKS, log_tail=tail)
    with pytest.raises(ColaJobError, match=r"results\[0\] has missing confidence\)"):
        written(tmp_path, with_first()).read(split=False, checks=ORDERS_CHECKS, log_tail=tail)
    lost = {name: key for name, key in result_module.RESULT_KEYS.items() if name != "message"}
    monkeypatch.setattr("airflow_provider_cola.operators._results.RESULT_KEYS", lost)
    with pytest.raises(ColaJobError, match=r"results\[0\] has unknown message\)"):
        written(tmp_path, with_first()).read(split=False, checks=ORDERS_CHECKS, log_tail=tail)


def test_a_contracts_gaps_are_read_back_as_a_field_of_the_results(tmp_path):
    gaps = ["schema[0].quality[1] (text, no single mustBe* operator)"]
    content = json.dumps({**ORDERS_PASS_SUMMARY, "contract_gaps": gaps})
    read = written(tmp_path, content).read(split=False, checks=ORDERS_CHECKS, log_tail=tail)
    assert read == {**ORDERS_PASS_SUMMARY, "contract_gaps": gaps}  # what XCom gets
    for bad in ([], "schema[0]", [1]):
        with pytest.raises(ColaJobError, match=r"contract_gaps must be a list of one string or more"):
            written(tmp_path, json.dumps({**ORDERS_PASS_SUMMARY, "contract_gaps": bad})).read(
                split=False, checks=ORDERS_CHECKS, log_tail=tail)
