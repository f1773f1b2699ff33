"""``cola history``: exclude a run, prune old rows and print the summaries, from the command line."""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest

from cola_core import CheckResult
from cola_core.cli.main import main
from cola_core.history.append import append_history
from cola_core.history.store import RunInfo

pytestmark = pytest.mark.spark


@pytest.fixture
def store(spark, tmp_path):
    path = str(tmp_path / "history")
    for day, severity in ((1, "fail"), (2, "pass")):
        result = CheckResult("row_count", severity == "pass", "m", int(severity == "fail"), 10.0 * day, severity,
                             code="row_count", rule_id="volume")
        append_history(spark, path, [result], RunInfo(dataset="orders", run_id=f"run-{day}",
                                                     validated_at=dt.datetime(2026, 3, day, tzinfo=dt.timezone.utc)))
    return path


def test_daily_prints_a_table_and_json_lines(store, capsys):
    assert main(["history", "daily", "--history", store]) == 0
    assert capsys.readouterr().out == (
        "DATA_DATE   DATASET  RUNS  RESULTS  PASSED  WARNED  FAILED  PASS_RATE\n"
        "2026-03-02  orders   1     1        1       0       0       100.0\n"
        "2026-03-01  orders   1     1        0       0       1       0.0\n"
    )
    assert main(["history", "top", "--history", store, "--json", "--top", "1"]) == 0
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == [
        {"dataset": "orders", "rule_id": "volume", "code": "row_count", "results": 2, "passed": 1, "warned": 0,
         "failed": 1, "pass_rate": 50.0},
    ]


def test_trend_and_dimensions_filter_by_dataset(store, capsys):
    assert main(["history", "trend", "--history", store, "--rule-id", "volume", "--dataset", "other"]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == ["(no rows)"]
    assert main(["history", "dimensions", "--history", store, "--dataset", "orders"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 3


def test_exclude_marks_a_run_and_refuses_an_unknown_one(spark, store, capsys):
    assert main(["history", "exclude", "--history", store, "--run-id", "run-1"]) == 0
    assert capsys.readouterr().out == "excluded run run-1: 1 row no longer count in baselines\n"
    assert sorted((r.run_id, r.excluded) for r in spark.read.parquet(store).collect()) == [
        ("run-1", True), ("run-2", False),
    ]
    assert main(["history", "exclude", "--history", store, "--run-id", "nope"]) == 2
    assert capsys.readouterr().err.endswith(f"cola: error: the history store {store} holds no run 'nope'\n")


def test_prune_deletes_old_rows_and_refuses_a_non_duration(spark, store, capsys):
    reach = f"{(dt.datetime.now(dt.timezone.utc) - dt.datetime(2026, 3, 1, tzinfo=dt.timezone.utc)).days + 2}d"
    assert main(["history", "prune", "--history", store, "--older-than", reach]) == 0
    assert capsys.readouterr().out == f"pruned 0 rows older than {reach}\n"
    assert main(["history", "prune", "--history", store, "--older-than", "1d"]) == 0
    assert capsys.readouterr().out == "pruned 2 rows older than 1d\n"
    assert spark.read.parquet(store).count() == 0
    assert main(["history", "prune", "--history", store, "--older-than", "later"]) == 2
    assert capsys.readouterr().err.endswith(
        "cola: error: --older-than must be a duration such as 90d, 12h or 3600s, got 'later'\n"
    )


def test_a_store_that_is_not_a_history_is_refused(spark, tmp_path, capsys):
    other = str(tmp_path / "other")
    spark.range(1).write.parquet(other)
    assert main(["history", "daily", "--history", other]) == 2
    assert "is not a Cola history store: it lacks run_id" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["daily", "--history", '{"path": '], "--history is not valid JSON: Expecting value (line 1, column 10)"),
        (["daily", "--history", "/h", "--days", "0"], "--days must be a whole number >= 1, got 0"),
        (["top", "--history", "/h", "--top", "-1"], "--top must be a whole number >= 1, got -1"),
        (["daily", "--history", '{"path": "/h", "mode": "overwrite"}'],
         "--history: a history store is only appended to, but its mode is 'overwrite'; leave 'mode' out or set it "
         "to \"append\""),
    ],
    ids=["bad json", "days", "top", "mode"],
)
def test_bad_arguments_are_refused_before_spark_starts(argv, message, capsys):
    assert main(["history", *argv]) == 2
    assert capsys.readouterr().err == f"cola: error: {message}\n"


def test_a_duration_beyond_any_timestamp_is_refused(store, capsys):
    assert main(["history", "prune", "--history", store, "--older-than", "100000000000w"]) == 2
    assert capsys.readouterr().err.endswith(
        "cola: error: --older-than must be a duration such as 90d, 12h or 3600s, got '100000000000w'\n"
    )


def test_html_writes_the_index_with_the_last_runs_of_each_rule(store, tmp_path, capsys):
    page_path = tmp_path / "site" / "index.html"
    assert main(["history", "html", "--history", store, str(page_path)]) == 0
    assert capsys.readouterr().out == f"wrote the index of 1 rule to {page_path}\n"
    page = page_path.read_text(encoding="utf-8")
    assert "<title>Cola quality</title>" in page
    [row] = re.findall(r"<tr><td>.*?</tr>", page)
    assert re.findall(r"<td>(.*?)</td>", row)[:6] == [
        '<span class="sev pass">PASS</span>', "orders", "<code>row_count</code>", "", "<code>volume</code>",
        "2026-03-02 00:00:00+00:00",
    ]
    # Oldest first: the failed run of day 1 (10), then the passed run of day 2 (20), higher.
    assert re.findall(r'<circle cx="[\d.]+" cy="([\d.]+)" r="2.5" fill="(#\w+)">', row) == [
        ("20.0", "#cf222e"), ("4.0", "#1a7f37"),
    ]
    assert main(["history", "html", "--history", store, f"file://{page_path}", "--runs", "1"]) == 0
    capsys.readouterr()
    assert page_path.read_text(encoding="utf-8").count("<circle") == 1
    assert sorted(p.name for p in page_path.parent.iterdir()) == ["index.html"]


def test_html_over_a_store_that_does_not_exist_yet_is_an_empty_index(tmp_path, capsys, spark):
    page_path = tmp_path / "index.html"
    assert main(["history", "html", "--history", str(tmp_path / "none"), str(page_path)]) == 0
    assert capsys.readouterr().out == f"wrote the index of 0 rules to {page_path}\n"
    assert "<p>0 rules, worst first</p>" in page_path.read_text(encoding="utf-8")


def test_html_arguments_are_refused_before_spark_starts(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("")
    assert main(["history", "html", "--history", "/h", str(tmp_path / "i.html"), "--runs", "0"]) == 2
    assert capsys.readouterr().err == "cola: error: --runs must be a whole number >= 1, got 0\n"
    bad = f"{afile}/index.html"
    assert main(["history", "html", "--history", "/h", bad]) == 2
    assert capsys.readouterr().err == f"cola: error: PATH {bad!r} cannot be written: {str(afile)!r} is not a writable folder\n"
    assert main(["history", "html", "--history", "/h", "https://host/index.html"]) == 2
    assert capsys.readouterr().err == (
        "cola: error: PATH must be a file the driver can write (a local path or a file: URI), "
        "got 'https://host/index.html'\n"
    )


def test_the_tables_show_the_stores_codes_and_ids_on_one_line_each(spark, tmp_path, capsys):
    """A code and a rule id of the store (the rules wrote them; a result may come from a custom
    check or a results file) with line breaks, a fake row and ESC: one line per rule, escaped."""
    path = str(tmp_path / "history")
    code = "C\n  orders   forged  1  1  0  0  0  100.0\x1b[2J"
    result = CheckResult("row_count", False, "m", 1, 1.0, "fail", code=code, rule_id="id\u2028x\x85y")
    append_history(spark, path, [result], RunInfo(dataset="orders", run_id="run-1",
                                                 validated_at=dt.datetime(2026, 3, 1, tzinfo=dt.timezone.utc)))
    assert main(["history", "top", "--history", path]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == out.split("\n")[:-1]  # no \x85 or \u2028 line either
    header, line = out.splitlines()
    assert header.split() == ["DATASET", "RULE_ID", "CODE", "RESULTS", "PASSED", "WARNED", "FAILED", "PASS_RATE"]
    assert line == "orders   id\\u2028x\\x85y  C\\n  orders   forged  1  1  0  0  0  100.0\\x1b[2J  1        0       0       1       0.0"
