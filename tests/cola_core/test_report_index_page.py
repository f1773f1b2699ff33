"""A history's index page (``cola_core.report.index_page``): one row per dataset and rule, worst
first, from a real history store; escaped, cut, and with nothing that reaches outside the file."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from cola_core import CheckResult
from cola_core.history.append import append_history
from cola_core.history.store import RunInfo
from cola_core.history.summaries import index_rows
from cola_core.report.index_page import render_index
from cola_helpers import assert_self_contained, at, rows_of

pytestmark = [pytest.mark.spark, pytest.mark.connect]


def test_the_index_has_one_row_per_dataset_and_rule_worst_first(spark, tmp_path):
    store = str(tmp_path / "history")

    def result(rule_id: str, severity: str, value: float | None) -> CheckResult:
        return CheckResult("row_count", severity != "fail", f"m {rule_id}", int(severity == "fail"), value, severity,
                           code=f"code-{rule_id}", rule_id=rule_id, check_name=f"name {rule_id}")

    runs = [
        ("b-data", 1, [result("r1", "fail", 1.0), result("r2", "pass", 5.0)]),
        ("b-data", 2, [result("r1", "pass", 2.0), result("r2", "warn", 6.0)]),
        ("a-data", 1, [result("r1", "pass", None), result("r3", "fail", 0.0)]),
        ("c-data", 3, [result("r1", "fail", 3.0)]),
    ]
    for dataset, day, results in runs:
        append_history(spark, store, results, RunInfo(dataset=dataset, run_id=f"{dataset}-{day}", validated_at=at(day)))
    rows = index_rows(spark, store, runs=5)
    assert [(r["dataset"], r["rule_id"], r["severity"], r["code"], r["check_name"], len(r["trend"])) for r in rows] == [
        ("a-data", "r1", "pass", "code-r1", "name r1", 1),
        ("a-data", "r3", "fail", "code-r3", "name r3", 1),
        ("b-data", "r1", "pass", "code-r1", "name r1", 2),
        ("b-data", "r2", "warn", "code-r2", "name r2", 2),
        ("c-data", "r1", "fail", "code-r1", "name r1", 1),
    ]
    assert rows[2]["trend"] == [(at(1), 1.0, "fail"), (at(2), 2.0, "pass")]
    assert rows[2]["validated_at"] == at(2) and rows[2]["validated_at"].tzinfo == dt.timezone.utc
    page = render_index(rows)
    assert "<title>Cola quality</title>" in page
    assert "<p>5 rules, worst first</p>" in page
    listed = [re.findall(r"<td>(.*?)</td>", row)[:2] for row in rows_of(page)]
    assert listed == [
        ['<span class="sev fail">FAIL</span>', "a-data"],
        ['<span class="sev fail">FAIL</span>', "c-data"],
        ['<span class="sev warn">WARN</span>', "b-data"],
        ['<span class="sev pass">PASS</span>', "a-data"],
        ['<span class="sev pass">PASS</span>', "b-data"],
    ]
    assert [re.findall(r"<code>(.*?)</code>", row)[1] for row in rows_of(page)] == ["r3", "r1", "r2", "r1", "r1"]
    assert page.count("<circle") == 7
    assert_self_contained(page)
    assert index_rows(spark, str(tmp_path / "none")) == []
    assert "<p>0 rules, worst first</p>" in render_index([])


def test_the_index_lists_rules_not_in_their_datasets_newest_data_interval_after_the_others():
    def row(dataset: str, rule_id: str, severity: str, **current: bool) -> dict:
        return {"dataset": dataset, "rule_id": rule_id, "severity": severity, "code": f"code-{rule_id}",
                "check_name": None, "validated_at": at(1), "trend": [(at(1), 1.0, severity)], **current}

    rows = [
        row("a", "gone-pass", "pass", current=False), row("b", "kept-pass", "pass", current=True),
        row("a", "gone-fail", "fail", current=False), row("b", "kept-warn", "warn"),  # no key: current
        row("a", "kept-fail", "fail", current=True), row("b", "gone-fail", "fail", current=False),
    ]
    page = render_index(rows)
    assert "<p>6 rules: 3 in their dataset's newest data interval, worst first, then 3 not in it</p>" in page
    current, former = page.split("<h2>Rules not in their dataset's newest data interval</h2>")
    assert "<p>3 rules that ran before but not in their dataset's newest data interval (removed since, most " \
           "likely), worst first; the severity is that of their own newest interval</p>" in former
    assert [re.findall(r"<code>(.*?)</code>", line)[1] for line in re.findall(r"<tr><td>.*?</tr>", current)] == [
        "kept-fail", "kept-warn", "kept-pass",
    ]
    assert [re.findall(r"<td>(.*?)</td>", line)[:2] + re.findall(r"<code>(.*?)</code>", line)[1:]
            for line in re.findall(r"<tr><td>.*?</tr>", former)] == [
        ['<span class="sev fail">FAIL</span>', "a", "gone-fail"],
        ['<span class="sev fail">FAIL</span>', "b", "gone-fail"],
        ['<span class="sev pass">PASS</span>', "a", "gone-pass"],
    ]
    assert page.count("<table>") == 2 and page.count("<circle") == 6
    assert_self_contained(page)
    # Every rule current (or no key at all): one table, no second heading.
    alone = render_index([row("a", "kept", "pass", current=True), row("b", "old", "fail")])
    assert "<p>2 rules, worst first</p>" in alone
    assert "<h2>" not in alone and alone.count("<table>") == 1


def test_the_index_cuts_its_datasets_and_rule_ids_and_its_title():
    quotes = '"' * 5000
    page = render_index([{"dataset": quotes, "rule_id": quotes, "code": "c", "check_name": None,
                          "severity": "pass", "validated_at": quotes, "trend": []}], title=quotes)
    cut = "&quot;" * 26 + "…"
    assert f"<title>{cut}</title>" in page and f"<h1>{cut}</h1>" in page
    assert re.findall(r"<td>(.*?)</td>", rows_of(page)[0]) == [
        '<span class="sev pass">PASS</span>', cut, "<code>c</code>", "", f"<code>{cut}</code>", cut, "",
    ]
    assert len(page.encode()) < 3_000


def test_the_index_takes_a_severity_that_is_not_even_hashable():
    rows = [
        {"dataset": "d", "rule_id": "odd", "code": "c", "check_name": None, "severity": ["fail"], "validated_at": None,
         "trend": [(at(1), 1.0, ["fail"])]},
        {"dataset": "d", "rule_id": "ok", "code": "c", "check_name": None, "severity": "pass", "validated_at": None,
         "trend": []},
    ]
    page = render_index(rows)
    badges = [re.findall(r"<td>(.*?)</td>", row)[0] for row in rows_of(page)]
    # Known severities first; the odd one after them, shown as text, with no colour of ours.
    assert badges == ['<span class="sev pass">PASS</span>', '<span class="sev ">[&#x27;FAIL&#x27;]</span>']
    assert '<circle cx="4.0" cy="12.0" r="2.5" fill="#59636e"><title>2026-05-01 12:00:00+00:00: 1 ' \
           "([&#x27;fail&#x27;])</title></circle>" in page
    assert_self_contained(page)
