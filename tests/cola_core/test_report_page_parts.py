"""What both HTML pages share (``cola_core.report.page_parts``): every value escaped, every time
in UTC, and the trend sparkline, alone and on the run's report and the index."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from cola_core import CheckResult, Cola
from cola_core.report.index_page import render_index
from cola_core.report.page_parts import TIP_BYTES, sparkline
from cola_core.report.pages import render_html
from cola_helpers import HOSTILE, HOSTILE_TEXT, assert_self_contained, at

pytestmark = [pytest.mark.spark, pytest.mark.connect]


def test_every_value_from_the_data_or_the_rules_is_escaped(spark):
    df = spark.createDataFrame([(1, HOSTILE)], "id int, note string")
    rule = {"type": "regex", "column": "note", "pattern": "^ok$", "name": HOSTILE, "code": HOSTILE,
            "dimension": HOSTILE}
    results = Cola().run(df, [rule], samples=1)
    assert results[0].samples == [{"id": 1, "note": HOSTILE}]
    trends = {results[0].rule_id: [(HOSTILE, 1.0, "fail"), (at(1), "<b>'\"&", "<i>")]}
    page = render_html(results, dataset=HOSTILE, pipeline=HOSTILE, dag_id=HOSTILE, task_id=HOSTILE,
                       airflow_run_id=HOSTILE, trends=trends)
    assert f"<title>Cola report: {HOSTILE_TEXT}</title>" in page
    assert f"<dt>dataset</dt><dd>{HOSTILE_TEXT}</dd><dt>pipeline</dt><dd>{HOSTILE_TEXT}</dd>" in page
    assert f"<dt>Airflow run</dt><dd>{HOSTILE_TEXT}</dd>" in page
    assert f"<td><code>{HOSTILE_TEXT}</code></td><td>{HOSTILE_TEXT}</td><td>{HOSTILE_TEXT}</td>" in page
    assert f"<td>1</td><td>{HOSTILE_TEXT}</td></tr>" in page  # the sample value
    # The sparkline's tooltips, each part cut at TIP_BYTES (32): 29 bytes and the ellipsis.
    assert "<title>&lt;script&gt;alert(1)&lt;/sc…: 1 (fail)</title>" in page
    assert "<title>2026-05-01 12:00:00+00:00: &lt;b&gt;&#x27;&quot;&amp; (&lt;i&gt;)</title>" in page
    assert "<script" not in page
    assert HOSTILE not in page
    index = render_index([{"dataset": HOSTILE, "rule_id": HOSTILE, "code": HOSTILE, "check_name": HOSTILE,
                           "severity": HOSTILE, "validated_at": HOSTILE, "trend": []}], title=HOSTILE)
    assert f"<h1>{HOSTILE_TEXT}</h1>" in index
    assert index.count(HOSTILE_TEXT) == 7  # title, heading, dataset, code, name, rule id, latest
    assert '<span class="sev ">&lt;SCRIPT&gt;ALERT(1)&lt;/SCRIPT&gt; &quot;Q&quot; &#x27;A&#x27; &amp; B</span>' in index
    assert "<script" not in index.lower()
    assert_self_contained(page)
    assert_self_contained(index)


def test_a_sparkline_draws_one_point_per_run_coloured_by_severity():
    points = [(at(1), 10.0, "pass"), (at(2), None, "fail"), (at(3), 30.0, "warn")]
    svg = sparkline(points, width=100, height=20)
    assert svg.startswith('<svg width="100" height="20" viewBox="0 0 100 20" role="img">')
    circles = re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)" r="2.5" fill="(#\w+)">', svg)
    # x spaced evenly inside a 4px margin; the highest value on top, NULL on the mid line.
    assert circles == [("4.0", "16.0", "#1a7f37"), ("50.0", "10.0", "#cf222e"), ("96.0", "4.0", "#b35900")]
    assert '<polyline points="4.0,16.0 96.0,4.0" fill="none"' in svg
    assert "<title>2026-05-02 12:00:00+00:00: - (fail)</title>" in svg
    assert sparkline([]) == ""
    one = sparkline([(at(1), 5.0, "pass")], width=100, height=20)
    assert re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)"', one) == [("4.0", "10.0")]
    assert "<polyline" not in one


def test_a_sparkline_puts_an_infinite_or_nan_metric_on_the_mid_line_and_says_what_it_was():
    points = [(at(1), 10.0, "pass"), (at(2), float("inf"), "fail"), (at(3), 30.0, "warn"),
              (at(4), float("nan"), "pass"), (at(5), float("-inf"), "warn")]
    svg = sparkline(points, width=100, height=20)
    circles = re.findall(r'<circle cx="([^"]+)" cy="([^"]+)" r="2.5" fill="#\w+"><title>[^<]*: ([^<]*) \(', svg)
    # The scale is that of the finite values; the line joins only them.
    assert circles == [("4.0", "16.0", "10"), ("27.0", "10.0", "inf"), ("50.0", "4.0", "30"), ("73.0", "10.0", "nan"),
                       ("96.0", "10.0", "-inf")]
    assert re.findall(r'<polyline points="([^"]*)"', svg) == ["4.0,16.0 50.0,4.0"]
    unscaled = sparkline([(at(1), float("nan"), "fail"), (at(2), float("inf"), "fail")], width=100, height=20)
    assert re.findall(r'<circle cx="([^"]+)" cy="([^"]+)"', unscaled) == [("4.0", "10.0"), ("96.0", "10.0")]
    assert "<polyline" not in unscaled
    assert "nan" not in re.sub(r"<title>.*?</title>", "", svg + unscaled)  # no coordinate is NaN or inf
    assert "inf" not in re.sub(r"<title>.*?</title>", "", svg + unscaled)


def test_every_time_is_shown_in_utc_with_its_zone(monkeypatch):
    import time

    summer = dt.timezone(dt.timedelta(hours=2), "CEST")
    in_paris = dt.datetime(2026, 5, 1, 14, 30, tzinfo=summer)
    result = CheckResult("row_count", True, "m", 0, 3.0, rule_id="volume")
    page = render_html([result], validated_at=in_paris, trends={"volume": [(in_paris, 3.0, "pass")]})
    assert "<dt>validated at</dt><dd>2026-05-01 12:30:00+00:00</dd>" in page
    assert "<title>2026-05-01 12:30:00+00:00: 3 (pass)</title>" in page
    index = render_index([{"dataset": "d", "rule_id": "r", "code": "c", "check_name": None, "severity": "pass",
                           "validated_at": in_paris, "trend": [(in_paris, 3.0, "pass")]}])
    assert "<td>2026-05-01 12:30:00+00:00</td>" in index
    assert "<title>2026-05-01 12:30:00+00:00: 3 (pass)</title>" in index
    # A naive datetime is local time, as Python and Spark's collect() have it: on a host in
    # Paris, 14:30 is 12:30 UTC.
    monkeypatch.setenv("TZ", "Europe/Paris")
    time.tzset()
    try:
        naive = render_html([result], validated_at=dt.datetime(2026, 5, 1, 14, 30),
                            trends={"volume": [(dt.datetime(2026, 1, 1, 13, 0), 3.0, "pass")]})
    finally:
        monkeypatch.undo()
        time.tzset()
    assert "<dt>validated at</dt><dd>2026-05-01 12:30:00+00:00</dd>" in naive
    assert "<title>2026-01-01 12:00:00+00:00: 3 (pass)</title>" in naive  # winter: one hour ahead
    # A text is shown as it is; at the calendar's edge a datetime is shown as given.
    assert "<title>yesterday: 3 (pass)</title>" in sparkline([("yesterday", 3.0, "pass")])
    edge = dt.datetime(1, 1, 1, 0, 30, tzinfo=summer)
    assert "<title>0001-01-01 00:30:00+02:00: 3 (pass)</title>" in sparkline([(edge, 3.0, "pass")])


@pytest.mark.parametrize(("zone", "offset"), [("UTC", "+00:00"), ("Europe/Paris", "+01:00"),
                                              ("America/New_York", "-05:00")])
def test_a_naive_time_at_the_calendars_edge_is_shown_as_given_with_the_local_zones_offset(monkeypatch, zone, offset):
    import time

    # UTC has no time for them on this host (Python's conversion of a naive datetime.min fails
    # even on a UTC host): each is shown as given, with the zone every other time shows, the
    # local zone's standard offset (no summer time at the calendar's edges).
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        result = CheckResult("row_count", True, "m", 0, 3.0, rule_id="volume")
        page = render_html([result], validated_at=dt.datetime.min, trends={"volume": [(dt.datetime.min, 3.0, "pass")]})
        index = render_index([{"dataset": "d", "rule_id": "r", "code": "c", "check_name": None, "severity": "pass",
                               "validated_at": dt.datetime.min, "trend": []}])
        latest = sparkline([(dt.datetime.max, 3.0, "pass")])
    finally:
        monkeypatch.undo()
        time.tzset()
    assert f"<dt>validated at</dt><dd>0001-01-01 00:00:00{offset}</dd>" in page
    assert f"<title>0001-01-01 00:00:00{offset}: 3 (pass)</title>" in page
    assert f"<td>0001-01-01 00:00:00{offset}</td>" in index
    if zone == "UTC":  # converted: on a UTC host its UTC time is its own
        assert "<title>9999-12-31 23:59:59+00:00: 3 (pass)</title>" in latest
    else:  # where UTC would be past 9999, or Python's conversion fails on the way
        assert f"<title>9999-12-31 23:59:59{offset}: 3 (pass)</title>" in latest


def test_a_sparkline_draws_an_int_beyond_a_floats_range_as_infinite_and_gives_its_first_digits():
    points = [(at(1), 10**400, "pass"), (at(2), 1.0, "fail"), (at(3), -(10**400), "warn"), (at(4), 3.0, "pass"),
              (at(5), "n/a", "pass")]
    svg = sparkline(points, width=100, height=20)
    circles = re.findall(r'<circle cx="([^"]+)" cy="([^"]+)" r="2.5" fill="#\w+"><title>[^<]*: ([^<]*) \(', svg)
    # Its 401 digits cut at TIP_BYTES (32): 29 characters and the ellipsis's three bytes.
    assert TIP_BYTES == 32
    assert circles == [("4.0", "10.0", "1" + "0" * 28 + "…"), ("27.0", "16.0", "1"),
                       ("50.0", "10.0", "-1" + "0" * 27 + "…"), ("73.0", "4.0", "3"), ("96.0", "10.0", "n/a")]
    # Any double's digits fit whole.
    assert "<title>2026-05-01 12:00:00+00:00: -1.7976931348623157e+308 (pass)</title>" in sparkline(
        [(at(1), -1.7976931348623157e308, "pass")]
    )
    assert re.findall(r'<polyline points="([^"]*)"', svg) == ["27.0,16.0 73.0,4.0"]
    # Floats at both ends of their range: their span is past it, their places are not.
    ends = sparkline([(at(1), -1.7e308, "pass"), (at(2), 1.7e308, "pass")], width=100, height=20)
    assert re.findall(r'<circle cx="([^"]+)" cy="([^"]+)"', ends) == [("4.0", "16.0"), ("96.0", "4.0")]
