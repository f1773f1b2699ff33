"""One run's HTML report (``cola_core.report.pages``), rendered from real runs; escaped, small,
and with nothing that reaches outside the file; and how a page is written.

The index page is tested in ``test_report_index_page.py``, what both pages share (escaping,
times, sparklines) in ``test_report_page_parts.py``."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from pathlib import Path

import pytest

from cola_core import CheckResult, Cola, ColaError, ColaOutputError
from cola_core.history.store import RunInfo
from cola_core.history.summaries import history_trends
from cola_core.report.page_parts import TEXT_BYTES
from cola_core.report.pages import (
    MESSAGE_BYTES,
    PAGE_BYTES,
    SAMPLE_BUDGET,
    checked_page_path,
    render_html,
    write_page,
)
from cola_helpers import HOSTILE, HOSTILE_TEXT, assert_self_contained, at, rows_of

pytestmark = [pytest.mark.spark, pytest.mark.connect]


RULES = [
    {"type": "not_null", "columns": ["email"]},
    {"type": "range", "column": "age", "min": 1, "max": 99, "severity": "warn"},
    {"type": "row_count", "must_be": "> 5", "warn": "> 10"},
    {"type": "avg", "column": "age", "must_be": "< 500", "warn": "< 10"},
    {"type": "not_null", "columns": ["id"], "name": "ids", "dimension": "Completeness"},
]
AT = dt.datetime(2026, 5, 1, 12, 30, tzinfo=dt.timezone.utc)


@pytest.fixture
def people(spark):
    return spark.createDataFrame([(1, None, 5), (2, "b@x.io", 200), (3, None, 7)], "id int, email string, age int")


def test_a_report_shows_the_run_the_verdict_and_every_result(people):
    results = Cola().run(people, RULES)
    page = render_html(results, dataset="crm.people", pipeline="nightly", validated_at=AT, dag_id="dq",
                       task_id="check", airflow_run_id="manual__1")
    assert page.startswith("<!DOCTYPE html>\n")
    assert "<title>Cola report: crm.people</title>" in page
    assert "<h1>Cola report <span class=\"sev fail\">FAIL</span></h1>" in page
    assert (
        "<dl><dt>dataset</dt><dd>crm.people</dd><dt>pipeline</dt><dd>nightly</dd><dt>validated at</dt>"
        "<dd>2026-05-01 12:30:00+00:00</dd><dt>DAG</dt><dd>dq</dd><dt>task</dt><dd>check</dd>"
        "<dt>Airflow run</dt><dd>manual__1</dd></dl>"
    ) in page
    assert "<p>5 results: 1 pass, 2 warn, 2 fail</p>" in page
    # With the data's date and its Airflow data interval, the run says which data it checked.
    dated = render_html(results, dataset="crm.people", validated_at=AT,
                        data_date=dt.datetime(2026, 4, 30, tzinfo=dt.timezone.utc),
                        data_interval=(dt.datetime(2026, 4, 29, 22, tzinfo=dt.timezone(dt.timedelta(hours=-2))),
                                       dt.datetime(2026, 5, 1, tzinfo=dt.timezone.utc)))
    assert re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", dated.split("</dl>", 1)[0]) == [
        ("dataset", "crm.people"), ("data date", "2026-04-30 00:00:00+00:00"),
        ("data interval", "2026-04-30 00:00:00+00:00 to 2026-05-01 00:00:00+00:00"),
        ("validated at", "2026-05-01 12:30:00+00:00"),
    ]
    priced = render_html(results, validated_at=AT, spark_cost="2 Spark jobs, 3 stages, 3 rows (1.0 KB) read, 0.4 s")
    assert re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", priced.split("</dl>", 1)[0]) == [
        ("validated at", "2026-05-01 12:30:00+00:00"),
        ("Spark cost", "2 Spark jobs, 3 stages, 3 rows (1.0 KB) read, 0.4 s"),
    ]
    assert "<h2>Split</h2>" not in page
    assert [r.severity for r in results] == ["fail", "warn", "fail", "warn", "pass"]
    assert [r.message for r in results] == [
        "not_null(email): 2 NULL values (email: 2)",
        "range(age,1,99): 1 value out of range (between 1 and 99)",
        "row_count = 3 violates must_be (> 5)",
        "avg(age) = 70.6667 violates warn (< 10)",
        "not_null(id): no NULL values",
    ]
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows_of(page)]
    assert [cell[:8] for cell in cells] == [
        ['<span class="sev fail">FAIL</span>', "<code>not_null(email)</code>", "", "", "", "2", "",
         "not_null(email): 2 NULL values (email: 2)"],
        ['<span class="sev warn">WARN</span>', "<code>range(age,1,99)</code>", "", "", "", "1", "",
         "range(age,1,99): 1 value out of range (between 1 and 99)"],
        ['<span class="sev fail">FAIL</span>', "<code>row_count</code>", "", "", "3", "1",
         "must_be &gt; 5<br>warn &gt; 10", "row_count = 3 violates must_be (&gt; 5)"],
        ['<span class="sev warn">WARN</span>', "<code>avg(age)</code>", "", "", "70.6667", "0",
         "must_be &lt; 500<br>warn &lt; 10", "avg(age) = 70.6667 violates warn (&lt; 10)"],
        ['<span class="sev pass">PASS</span>', "<code>not_null(id)</code>", "ids", "Completeness", "", "0", "",
         "not_null(id): no NULL values"],
    ]
    assert [cell[8] for cell in cells] == ["", "", "", "", ""]  # no history, no trend
    assert_self_contained(page)


def test_a_rule_shows_its_thresholds_as_written_whether_it_passed_or_failed(people):
    rules = [
        {"type": "row_count", "must_be": "> 1", "warn": "> 2"},
        {"type": "not_null", "columns": ["email"], "tolerance": "< 90%"},
        {"type": "row_count", "min": 1, "max": 100},
        {"type": "avg", "column": "age", "warn": "< 50", "must_be": "< 1000"},
        {"type": "row_count", "must_be": 3},
        {"type": "not_null", "columns": ["id"]},
    ]
    results = Cola().run(people, rules)
    assert [(r.severity, r.message, r.thresholds) for r in results] == [
        ("pass", "row_count = 3 meets must_be (> 1)", {"must_be": "> 1", "warn": "> 2"}),
        ("pass", "not_null(email): 2 NULL values (email: 2); 66.6667% of rows, within tolerance (< 90%)",
         {"tolerance": "< 90%"}),
        ("pass", "row_count = 3 is within bounds (min 1, max 100)", {"min": "1", "max": "100"}),
        ("warn", "avg(age) = 70.6667 violates warn (< 50)", {"must_be": "< 1000", "warn": "< 50"}),
        ("pass", "row_count = 3 meets must_be (3)", {"must_be": "3"}),
        ("pass", "not_null(id): no NULL values", None),
    ]
    # must_be and warn first, then min before max, whatever order the rule wrote them in; the
    # text is the rule's own.
    assert [list(r.thresholds or ()) for r in results] == [
        ["must_be", "warn"], ["tolerance"], ["min", "max"], ["must_be", "warn"], ["must_be"], [],
    ]
    assert list(Cola().run(people, [{"type": "row_count", "max": 100, "min": 1}])[0].thresholds or ()) == ["min", "max"]
    assert [re.findall(r"<td[^>]*>(.*?)</td>", row)[6] for row in rows_of(render_html(results))] == [
        "must_be &gt; 1<br>warn &gt; 2", "tolerance &lt; 90%", "min 1<br>max 100", "must_be &lt; 1000<br>warn &lt; 50",
        "must_be 3", "",
    ]
    changed = CheckResult("avg", True, "m", metric_value=3.0, baseline=2.5, thresholds={"must_be": "change < 50%"})
    assert re.findall(r"<td[^>]*>(.*?)</td>", rows_of(render_html([changed]))[0])[6] == (
        "must_be change &lt; 50%<br>baseline 2.5"
    )
    # A custom check may give any number of thresholds: the first THRESHOLDS_SHOWN, then a count.
    many = CheckResult("mine", True, "m", thresholds={f"t{n}": f"&{n}" for n in range(1000)})
    assert re.findall(r"<td[^>]*>(.*?)</td>", rows_of(render_html([many]))[0])[6] == (
        "t0 &amp;0<br>t1 &amp;1<br>t2 &amp;2<br>t3 &amp;3<br>t4 &amp;4<br>t5 &amp;5<br>… and 994 more"
    )


def test_a_split_shows_its_counts_and_the_rows_per_rejection_code(people, tmp_path):
    split = Cola().split_write(people, [*RULES[:2], {"type": "unique", "columns": ["id"]}],
                               str(tmp_path / "valid"), str(tmp_path / "invalid"))
    assert (split.valid_count, split.invalid_count) == (1, 2)
    # What the engine counts: the warn rule quarantines nothing, and the unique rule passed.
    page = render_html(split.results, valid_count=split.valid_count, invalid_count=split.invalid_count,
                       rejections={"not_null(email)": 2})
    assert "<title>Cola report</title>" in page
    assert (
        "<h2>Split</h2><p>1 valid row, 2 invalid rows</p><table><thead><tr><th>rejection code</th>"
        "<th>rows</th></tr></thead><tbody>"
        '<tr><td><code>not_null(email)</code></td><td class="num">2</td></tr></tbody></table>'
        "<p>A row that breaks several rules counts under each of their codes.</p>"
    ) in page
    assert_self_contained(page)


def test_the_rejection_codes_are_listed_most_rows_first_then_by_code_and_escaped():
    rejections = {"b": 2, HOSTILE: 1, "c": 5, "a": 2, "long": 0, "é" * 100: 3}
    page = render_html([], valid_count=0, invalid_count=7, rejections=rejections)
    table = page.split("<h2>Split</h2>", 1)[1].split("</table>", 1)[0]
    assert re.findall(r"<tr><td><code>(.*?)</code></td><td class=\"num\">(\d+)</td></tr>", table) == [
        ("c", "5"), ("é" * 78 + "…", "3"), ("a", "2"), ("b", "2"), (HOSTILE_TEXT, "1"), ("long", "0"),
    ]  # a code is cut at TEXT_BYTES (160): 78 two-byte characters and the ellipsis's three bytes
    assert "<script" not in page
    assert_self_contained(page)


def test_a_split_without_rejection_counts_shows_only_its_row_counts(people, tmp_path):
    split = Cola().split_write(people, [{"type": "not_null", "columns": ["id"]}],
                               str(tmp_path / "valid"), str(tmp_path / "invalid"))
    page = render_html(split.results, valid_count=split.valid_count, invalid_count=split.invalid_count)
    assert "<h2>Split</h2><p>3 valid rows, 0 invalid rows</p>\n<h2>Results</h2>" in page
    assert "rejection code" not in page
    none_rejected = render_html(split.results, valid_count=3, invalid_count=0, rejections={})
    assert "<h2>Split</h2><p>3 valid rows, 0 invalid rows</p><p>No row carries a rejection code.</p>" in none_rejected


def test_samples_are_a_table_under_their_result(people):
    results = Cola().run(people, RULES[:1], samples=1)
    assert results[0].samples == [{"id": 1, "email": None, "age": 5}]
    page = render_html(results)
    assert (
        '<tr><td colspan="9"><details open><summary>1 sample</summary><table class="samples"><thead><tr>'
        "<th>id</th><th>email</th><th>age</th></tr></thead><tbody><tr><td>1</td><td>NULL</td><td>5</td></tr>"
        "</tbody></table></details></td></tr>"
    ) in page
    assert_self_contained(page)


def test_many_samples_and_long_values_are_cut():
    samples = [{"text": "x" * 500, "n": index} for index in range(25)]
    page = render_html([CheckResult("check", False, "m", 25, samples=samples)])
    assert "<summary>25 samples, 20 shown</summary>" in page
    assert page.count('<tr><td>' + "x" * 200 + "…</td>") == 20
    assert "x" * 201 not in page


def test_a_50_rule_block_with_samples_and_trends_stays_under_300_kb(spark):
    df = spark.createDataFrame([(index, None, "v" * 40) for index in range(5)], "id int, email string, note string")
    rules = [{"type": "not_null", "columns": ["email"], "id": f"rule-{number}", "name": f"email {number}"}
             for number in range(50)]
    results = Cola().run(df, rules, samples=5)
    assert [len(r.samples or ()) for r in results] == [5] * 50
    trends = {f"rule-{number}": [(at(1 + run % 28), float(run), ("pass", "warn", "fail")[run % 3]) for run in range(20)]
              for number in range(50)}
    page = render_html(results, dataset="big", validated_at=AT, trends=trends)
    assert page.count("<circle") == 50 * 20
    assert page.count('<table class="samples">') == 50
    assert len(page.encode()) < 300_000
    assert_self_contained(page)


def test_wide_samples_stop_at_the_page_budget_and_are_then_only_counted():
    trends = {f"rule-{number}": [(at(1), float(run), "fail") for run in range(20)] for number in range(50)}
    samples = [{"id": row, "left": "l" * 300, "right": "r" * 300} for row in range(20)]
    results = [CheckResult("not_null", False, "m", 20, code="c", rule_id=f"rule-{number}", samples=samples)
               for number in range(50)]
    page = render_html(results, trends=trends)
    table = page.split('<tr><td colspan="9">', 2)[1].split("</details>", 1)[0] + "</details>"
    # Each table is the same size: as many fit as the budget holds, in rule order.
    assert page.count('<table class="samples">') == SAMPLE_BUDGET // len(table.encode()) == 11
    assert page.count(
        "<p>20 samples, not shown: the page has no room left for samples (the results file holds them)</p>"
    ) == 39
    assert len(page.encode()) < 300_000
    assert_self_contained(page)
    # The budget is bytes: cells of three-byte characters make tables near three times the size.
    euros = [{"id": row, "left": "€" * 300, "right": "€" * 300} for row in range(20)]
    page = render_html([dataclasses.replace(result, samples=euros) for result in results], trends=trends)
    table = page.split('<tr><td colspan="9">', 2)[1].split("</details>", 1)[0] + "</details>"
    assert (len(table), len(table.encode())) == (8_951, 25_031)
    assert page.count('<table class="samples">') == SAMPLE_BUDGET // len(table.encode()) == 3


def test_a_50_rule_block_of_long_multibyte_text_stays_under_300_kib_counted_in_bytes():
    euro, kanji = "€", "数"  # three bytes each in UTF-8
    trends = {f"rule-{number}": [(at(1 + run), float(run), "fail") for run in range(20)] for number in range(50)}
    samples = [{"id": row, "left": euro * 300, "right": kanji * 300} for row in range(20)]
    results = [
        CheckResult("not_null", False, kanji * 5000, 20, code=euro * 500, check_name=kanji * 500, dimension=euro * 500,
                    rule_id=f"rule-{number}", samples=samples, thresholds={"must_be": euro * 500})
        for number in range(50)
    ]
    page = render_html(results, dataset="big", validated_at=AT, trends=trends, valid_count=0, invalid_count=20,
                       rejections={f"{euro * 500}{number}": 20 for number in range(50)})
    assert len(page.encode()) < PAGE_BYTES < 300 * 1024
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr><td><span.*?</svg></td></tr>", page)]
    assert len(cells) == 50
    # A message is cut to MESSAGE_BYTES and says how long it was (the result's own, already cut
    # at MESSAGE_CHARS: 2,000 characters and its mark); a name, code, dimension or threshold to
    # TEXT_BYTES, with an ellipsis: whole characters only.
    assert results[0].message == kanji * 2000 + "… [cut: 3,000 characters]"
    mark = "… [cut: 2,025 characters]"
    assert cells[0][7] == kanji * ((MESSAGE_BYTES - len(mark.encode())) // 3) + mark == kanji * 324 + mark
    assert (TEXT_BYTES - len("…".encode())) // 3 == 52
    assert cells[0][1:4] == [f"<code>{euro * 52}…</code>", kanji * 52 + "…", euro * 52 + "…"]
    assert cells[0][6] == "must_be " + euro * 52 + "…"
    assert {tuple(row[1:8]) for row in cells} == {tuple(cells[0][1:8])}
    assert re.findall(r"<td><code>(.*?)</code></td>", page.split("</table>", 1)[0])[:2] == [
        euro * 52 + "…", euro * 52 + "…",  # the rejection codes, cut alike (their number was beyond the cut)
    ]
    # A samples table is 20 rows of two cells of 200 three-byte characters and an ellipsis (24,120
    # bytes of text). The page with every samples table left out (a note instead) leaves room
    # under PAGE_BYTES for two of them.
    table = len((page.split('<tr><td colspan="9">', 2)[1].split("</details>", 1)[0] + "</details>").encode())
    assert table == 25_031
    note = len(b"<p>20 samples, not shown: the page has no room left for samples (the results file holds them)</p>")
    without_samples = len(page.encode()) - 2 * table + 2 * note
    assert 2 * table <= PAGE_BYTES - without_samples < 3 * table
    assert page.count('<table class="samples">') == 2
    assert page.count("<p>20 samples, not shown: the page has no room left for samples") == 48
    assert page.count("<circle") == 50 * 20
    assert_self_contained(page)


def test_trends_from_the_history_draw_the_last_runs_of_each_rule(spark, tmp_path):
    store = str(tmp_path / "history")
    rules = [{"type": "row_count", "must_be": "> 2", "warn": "> 3", "id": "volume"},
             {"type": "sql", "query": "SELECT count(*) > 2 FROM _validation_df", "id": "sql-rule"}]
    for day, size in ((1, 2), (2, 3), (3, 4), (4, 5)):
        df = spark.range(size).toDF("id")
        Cola().run(df, rules, history=store, run_info=RunInfo(dataset="orders", run_id=f"r{day}", validated_at=at(day)))
    Cola().run(spark.range(9).toDF("id"), rules[:1], history=store, dataset="other")
    when = [at(day) for day in (2, 3, 4)]  # tz-aware UTC, as written (test_history_store: on a host in Paris too)
    trends = history_trends(spark, store, "orders", runs=3)
    assert trends == {
        "volume": [(when[0], 3.0, "warn"), (when[1], 4.0, "pass"), (when[2], 5.0, "pass")],
        "sql-rule": [(when[0], None, "pass"), (when[1], None, "pass"), (when[2], None, "pass")],
    }
    assert {point[0].tzinfo for points in trends.values() for point in points} == {dt.timezone.utc}
    results = Cola().run(spark.range(5).toDF("id"), rules)
    page = render_html(results, trends=trends)
    first, second = rows_of(page)
    assert re.findall(r'fill="(#\w+)"><title>', first) == ["#b35900", "#1a7f37", "#1a7f37"]
    assert re.findall(r' cy="([\d.]+)"', first) == ["20.0", "12.0", "4.0"]
    assert re.findall(r' cy="([\d.]+)"', second) == ["12.0", "12.0", "12.0"]
    assert "<polyline" not in second
    assert history_trends(spark, str(tmp_path / "none"), "orders") == {}
    with pytest.raises(ColaError) as raised:
        history_trends(spark, store, "orders", runs=0)
    assert str(raised.value) == "runs must be a whole number >= 1, got 0"


def test_a_page_path_is_refused_when_the_driver_cannot_write_it(tmp_path):
    assert checked_page_path(f"file://{tmp_path}/new/report.html") == tmp_path / "new" / "report.html"
    afile = tmp_path / "afile"
    afile.write_text("x")
    cases = [
        ("s3://bucket/report.html",
         "--html must be a file the driver can write (a local path or a file: URI), got 's3://bucket/report.html'"),
        (str(tmp_path), f"--html {str(tmp_path)!r} is a folder; give the path of the page to write"),
        (f"{afile}/deeper/report.html",
         f"--html {str(afile) + '/deeper/report.html'!r} cannot be written: {str(afile)!r} is not a writable folder"),
    ]
    for text, message in cases:
        with pytest.raises(ColaOutputError) as raised:
            checked_page_path(text)
        assert str(raised.value) == message


def test_a_page_is_written_atomically_and_replaces_the_last(tmp_path):
    path = tmp_path / "deep" / "index.html"
    write_page(path, "one")
    write_page(path, "two é")
    assert path.read_text(encoding="utf-8") == "two é"
    assert sorted(p.name for p in path.parent.iterdir()) == ["index.html"]
    blocked = tmp_path / "blocked"
    blocked.write_text("")
    with pytest.raises(ColaOutputError) as raised:
        write_page(blocked / "index.html", "x")
    target = blocked / "index.html"
    assert str(raised.value) == f"cannot write the page {str(target)!r}: [Errno 17] File exists: {str(blocked)!r}"


def test_a_lone_surrogate_in_a_sample_is_shown_as_a_replacement_character_and_the_page_is_written(tmp_path):
    # As json.loads gives it from a results file's "\ud800" escape: a str with no UTF-8 form.
    samples = [{"note": "a\ud800b", "\udfff": 1}]
    result = CheckResult("not_null", False, "m \ud800", 1, code="c\ud800", check_name="n\udc00", samples=samples)
    page = render_html([result], dataset="d\ud800")
    assert "<th>\ufffd</th>" in page and "<td>a\ufffdb</td>" in page
    assert "<td><code>c\ufffd</code></td><td>n\ufffd</td>" in page and "<td>m \ufffd</td>" in page
    assert "<title>Cola report: d\ufffd</title>" in page
    path = tmp_path / "report.html"
    write_page(path, page)
    assert path.read_text(encoding="utf-8") == page
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_a_page_that_cannot_be_encoded_or_written_leaves_no_partial_file(tmp_path, monkeypatch):
    path = tmp_path / "report.html"
    write_page(path, "previous")
    with pytest.raises(ColaOutputError) as raised:
        write_page(path, "<p>\ud800</p>")  # built by hand, not by render_html
    assert str(raised.value) == (
        f"cannot write the page {str(path)!r}: 'utf-8' codec can't encode character '\\ud800' in position 3: "
        "surrogates not allowed"
    )
    assert [(p.name, p.read_text()) for p in tmp_path.iterdir()] == [("report.html", "previous")]

    def interrupted(source, target):
        assert Path(source).read_text(encoding="utf-8") == "next"  # the partial file, complete
        raise KeyboardInterrupt

    monkeypatch.setattr("cola_core.report.pages.os.replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_page(path, "next")
    assert [(p.name, p.read_text()) for p in tmp_path.iterdir()] == [("report.html", "previous")]


def test_the_runs_facts_and_the_title_are_cut_and_counted_so_huge_quoted_facts_stay_under_300_kib():
    # A '"' is six bytes escaped (&quot;): 5,000 of them are 30 KB a fact, which uncut took a
    # 50-rule page to 464 KB.
    quotes = '"' * 5000
    trends = {f"rule-{number}": [(at(1 + run), float(run), "fail") for run in range(20)] for number in range(50)}
    samples = [{"id": row, "left": '"' * 300, "right": '"' * 300} for row in range(20)]
    results = [
        CheckResult("not_null", False, quotes, 20, code=quotes[:500], check_name=quotes[:500], dimension=quotes[:500],
                    rule_id=f"rule-{number}", samples=samples, thresholds={quotes[:500]: quotes[:500]})
        for number in range(50)
    ]
    page = render_html(results, dataset=quotes, pipeline=quotes, validated_at=AT, dag_id=quotes, task_id=quotes,
                       airflow_run_id=quotes, trends=trends, valid_count=0, invalid_count=20,
                       rejections={f"{quotes[:500]}{number}": 20 for number in range(50)})
    assert len(page.encode()) < PAGE_BYTES < 300 * 1024
    # Each fact at TEXT_BYTES (160): 26 quotes of six bytes and the ellipsis's three.
    assert (TEXT_BYTES - len("…".encode())) // 6 == 26
    cut = "&quot;" * 26 + "…"
    assert re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", page.split("</dl>", 1)[0]) == [
        ("dataset", cut), ("pipeline", cut), ("validated at", "2026-05-01 12:30:00+00:00"), ("DAG", cut),
        ("task", cut), ("Airflow run", cut),
    ]
    # The title too: "Cola report: " (13 bytes), then 24 quotes.
    assert f"<title>Cola report: {'&quot;' * 24}…</title>" in page
    assert re.findall(r'<td class="limits">(.*?)</td>', page)[0] == f"{cut} {cut}"  # a threshold's name and value
    assert page.count("<circle") == 50 * 20
    assert_self_contained(page)


def test_a_hand_built_value_and_every_part_of_a_tooltip_are_cut_so_the_page_stays_under_300_kib():
    # A metric of 5,000 quotes was 30 KB a value cell, and a tooltip's time, value or severity
    # was shown whole a thousand times (50 rules, 20 runs): 1.7 MB for a 50-rule page.
    quotes = '"' * 5000
    trends = {f"rule-{number}": [(quotes, 10**400, quotes)] * 20 for number in range(50)}
    results = [
        CheckResult("not_null", False, quotes, 20, quotes, code=quotes[:500], check_name=quotes[:500],
                    dimension=quotes[:500], rule_id=f"rule-{number}", thresholds={quotes[:500]: quotes[:500]})
        for number in range(50)
    ]
    page = render_html(results, dataset=quotes, pipeline=quotes, validated_at=quotes, dag_id=quotes, task_id=quotes,
                       airflow_run_id=quotes, trends=trends, valid_count=0, invalid_count=20,
                       rejections={f"{quotes[:500]}{number}": 20 for number in range(50)})
    assert len(page.encode()) < PAGE_BYTES < 300 * 1024
    cut = "&quot;" * 26 + "…"  # TEXT_BYTES (160): 26 quotes of six bytes and the ellipsis's three
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr><td><span.*?</svg></td></tr>", page)]
    assert {tuple(row[4:6]) for row in cells} == {(cut, "20")}  # the value, then the failed count
    # Each part of a tooltip at TIP_BYTES (32): 4 quotes and the ellipsis, 29 digits and the ellipsis.
    tip = "&quot;" * 4 + "…"
    assert page.count(f"<title>{tip}: {'1' + '0' * 28}… ({tip})</title>") == 50 * 20
    assert_self_contained(page)


def test_a_value_is_cut_at_text_bytes_in_the_results_table():
    values = ["€" * 100, 10**400, 2.5, None]
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row)[4] for row in rows_of(render_html(
        [CheckResult("x", True, "m", 0, value) for value in values]
    ))]
    assert cells == ["€" * 52 + "…", "1" + "0" * 156 + "…", "2.5", ""]


def test_a_failed_count_that_is_no_whole_number_is_shown_as_it_is():
    results = [CheckResult("x", False, "m", value) for value in (float("nan"), float("inf"), 2.0, "many")]
    assert [re.findall(r"<td[^>]*>(.*?)</td>", row)[5] for row in rows_of(render_html(results))] == [
        "nan", "inf", "2", "many",
    ]


def test_a_sample_with_keys_json_cannot_sort_or_write_shows_them_as_python_does():
    samples = [{"mixed": {1: "a", "b": 2}, "dates": {dt.date(2026, 5, 1): 1}, 3: "int key", dt.date(2026, 1, 2): "x"}]
    page = render_html([CheckResult("x", False, "m", 1, samples=samples)])
    assert (
        "<thead><tr><th>mixed</th><th>dates</th><th>3</th><th>2026-01-02</th></tr></thead><tbody><tr>"
        "<td>{1: &#x27;a&#x27;, &#x27;b&#x27;: 2}</td><td>{datetime.date(2026, 5, 1): 1}</td><td>int key</td>"
        "<td>x</td></tr></tbody>"
    ) in page
    assert_self_contained(page)


def test_a_sample_that_is_no_mapping_is_shown_whole_across_its_table():
    samples = [{"id": 1}, ["a", 1], "<b>text</b>", 7]
    page = render_html([CheckResult("x", False, "m", 4, samples=samples)])
    assert (
        '<thead><tr><th>id</th></tr></thead><tbody><tr><td>1</td></tr><tr><td colspan="1">[&quot;a&quot;, 1]</td></tr>'
        '<tr><td colspan="1">&lt;b&gt;text&lt;/b&gt;</td></tr><tr><td colspan="1">7</td></tr></tbody>'
    ) in page
    alone = render_html([CheckResult("x", False, "m", 1, samples=[[1, 2]])])
    assert '<thead><tr></tr></thead><tbody><tr><td colspan="1">[1, 2]</td></tr></tbody>' in alone
    assert_self_contained(page)
