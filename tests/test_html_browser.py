"""The HTML report and index in a real browser (issue 16): pages rendered from real runs with a
history are opened from ``file://`` in headless chromium (Debian's ``chromium``, which ``.ci/run``
installs), and the assertions read the DOM the browser built (``--dump-dom``), not the HTML text.
The report's screenshot is the README's ``docs/report.png``: ``COLA_UPDATE_SCREENSHOT=1`` (or a
missing file) writes it again."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest

from cola_core import Cola
from cola_core.history.store import RunInfo
from cola_core.history.summaries import history_trends, index_rows
from cola_core.report.index_page import render_index
from cola_core.report.pages import render_html, write_page

# Debian's chromium. Missing, the module skips locally (before Spark starts); in CI, which
# installs it (.ci/run), each test fails instead.
CHROMIUM = shutil.which("chromium")
MISSING = "chromium is not installed (apt-get install -y chromium; .ci/run installs it)"
pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"), reason=f"{MISSING}; CI is unset"),
]

DOCS_SCREENSHOT = Path(__file__).resolve().parent.parent / "docs" / "report.png"
BROWSER_TIMEOUT = 120  # seconds; a cold start takes about one
HOSTILE = "<script>alert(1)</script> \"q\" 'a' & b"
SCHEMA = "id int, email string, note string"
ROWS = [
    (1, "a@x.io", "ok"),
    (2, None, "ok"),
    (3, "c@x.io", HOSTILE),
    (4, None, "ok"),
    (5, "e@x.io", "ok"),
    (6, "f@x.io", "ok"),
]
RULES = [
    {"type": "not_null", "columns": ["email"], "id": "emails", "name": "emails present", "dimension": "Completeness"},
    {"type": "regex", "column": "note", "pattern": "^ok$", "id": "notes", "name": HOSTILE, "code": HOSTILE,
     "dimension": HOSTILE},
    {"type": "row_count", "must_be": "> 2", "warn": "> 5", "id": "volume", "name": "volume"},
    {"type": "not_null", "columns": ["id"], "id": "ids", "name": "ids present"},
]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def at(day: int) -> dt.datetime:
    return dt.datetime(2026, 5, day, 6, 0, tzinfo=dt.timezone.utc)


# -- the browser -----------------------------------------------------------------------------------


@pytest.fixture(scope="session")  # session: set up before Spark, so CI fails fast
def chromium() -> str:
    """chromium's path; reached without it only when CI is set (else the module skips)."""
    if CHROMIUM is None:
        pytest.fail(f"CI is set and {MISSING}")
    return CHROMIUM


def browse(chromium: str, page: Path, scratch: Path, *flags: str) -> str:
    """Open ``page`` from ``file://`` in headless chromium with ``flags`` and return its stdout.
    Its stderr is noise (D-Bus, GPU) unless it exits non-zero."""
    profile = tempfile.mkdtemp(prefix="chromium-", dir=scratch)  # a fresh profile per run
    command = [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--no-first-run", "--hide-scrollbars", f"--user-data-dir={profile}", *flags, page.as_uri()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=BROWSER_TIMEOUT, check=False)
    if done.returncode != 0:
        pytest.fail(f"chromium exited with {done.returncode}; stderr ends:\n{done.stderr[-3000:]}")
    return done.stdout


class Node:
    def __init__(self, tag: str, attrs: dict[str, str | None]) -> None:
        self.tag, self.attrs = tag, attrs
        self.children: list[Node | str] = []

    @property
    def text(self) -> str:
        return "".join(child if isinstance(child, str) else child.text for child in self.children)

    def all(self, tag: str) -> list[Node]:
        """The elements named ``tag`` under this one, in document order."""
        found = []
        for child in self.children:
            if isinstance(child, Node):
                found.extend([child] if child.tag == tag else [])
                found.extend(child.all(tag))
        return found


class _Tree(HTMLParser):
    """The browser's serialized DOM as a tree of Nodes (it closes every non-void element)."""

    VOID = frozenset({"meta", "br", "link", "img", "input", "hr"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs))
        self.stack[-1].children.append(node)
        if tag not in self.VOID:
            self.stack.append(node)

    def handle_endtag(self, tag):
        assert self.stack[-1].tag == tag, (tag, [node.tag for node in self.stack])
        self.stack.pop()

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def dom_of(dumped: str) -> Node:
    tree = _Tree()
    tree.feed(dumped)
    tree.close()
    assert [node.tag for node in tree.stack] == ["#document"]
    return tree.root


def cells(row: Node) -> list[str]:
    return [cell.text for cell in row.all("td")]


def tables(dom: Node) -> list[Node]:
    """The page's top-level tables (a samples table sits inside a results row)."""
    return [table for table in dom.all("table") if table.attrs.get("class") != "samples"]


def body_rows(table: Node) -> list[Node]:
    """A table's own body rows: those of a samples table nested in it left out."""
    return [row for row in table.all("tbody")[0].children if isinstance(row, Node) and row.tag == "tr"]


# -- the pages -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pages(spark, tmp_path_factory) -> dict[str, Path]:
    """Three runs of RULES on a growing ``crm.people``, the last one a split, each recorded in a
    history store; one run on ``crm.accounts``; then the last run's report and the store's index."""
    out = tmp_path_factory.mktemp("html-browser")
    store = str(out / "history")
    cola = Cola()
    for day, size in ((1, 2), (2, 4)):
        cola.run(spark.createDataFrame(ROWS[:size], SCHEMA), RULES, samples=2, history=store,
                 run_info=RunInfo(dataset="crm.people", pipeline="nightly", run_id=f"r{day}", validated_at=at(day)))
    last = RunInfo(dataset="crm.people", pipeline="nightly", dag_id="dq_people", task_id="split_people",
                   airflow_run_id="scheduled__2026-05-03", run_id="r3", validated_at=at(3))
    split = cola.split_write(spark.createDataFrame(ROWS, SCHEMA), RULES, str(out / "valid"), str(out / "invalid"),
                             samples=2, history=store, run_info=last)
    cola.run(spark.range(7).toDF("id"), RULES[2:3], history=store,
             run_info=RunInfo(dataset="crm.accounts", run_id="a1", validated_at=at(2)))
    trends = history_trends(spark, store, "crm.people")
    report = out / "report.html"
    write_page(report, render_html(
        split.results, dataset=last.dataset, pipeline=last.pipeline, validated_at=last.validated_at,
        dag_id=last.dag_id, task_id=last.task_id, airflow_run_id=last.airflow_run_id,
        valid_count=split.valid_count, invalid_count=split.invalid_count, rejections=split.rejections, trends=trends,
    ))
    index = out / "quality.html"
    write_page(index, render_index(index_rows(spark, store)))
    return {"report": report, "index": index, "scratch": out}


# -- the tests -------------------------------------------------------------------------------------


def test_the_report_in_a_browser_shows_the_run_its_results_the_split_and_the_trends(chromium, pages):
    dumped = browse(chromium, pages["report"], pages["scratch"], "--dump-dom")
    dom = dom_of(dumped)
    assert dom.all("title")[0].text == "Cola report: crm.people"
    heading = dom.all("h1")[0]
    assert heading.text == "Cola report FAIL"
    assert heading.all("span")[0].attrs["class"] == "sev fail"
    facts = dom.all("dl")[0]
    assert [(term.text, value.text) for term, value in zip(facts.all("dt"), facts.all("dd"), strict=True)] == [
        ("dataset", "crm.people"), ("pipeline", "nightly"), ("validated at", "2026-05-03 06:00:00+00:00"),
        ("DAG", "dq_people"), ("task", "split_people"), ("Airflow run", "scheduled__2026-05-03"),
    ]
    paragraphs = [p.text for p in dom.all("p")]
    assert paragraphs == [
        "4 results: 2 pass, 0 warn, 2 fail", "3 valid rows, 3 invalid rows",
        "A row that breaks several rules counts under each of their codes.",
    ]
    split_table, results_table = tables(dom)
    assert [th.text for th in split_table.all("th")] == ["rejection code", "rows"]
    assert [cells(row) for row in body_rows(split_table)] == [["not_null(email)", "2"], [HOSTILE, "1"]]

    rows = body_rows(results_table)
    results = [row for row in rows if len(row.all("td")) == 9]
    assert [cells(row)[:8] for row in results] == [
        ["FAIL", "not_null(email)", "emails present", "Completeness", "", "2", "",
         "not_null(email): 2 NULL values (email: 2)"],
        ["FAIL", HOSTILE, HOSTILE, HOSTILE, "", "1", "",
         "regex(note,^ok$): 1 value does not match (NULL counts as not matching)"],
        ["PASS", "row_count", "volume", "", "6", "0", "must_be > 2warn > 5", "row_count = 6 meets must_be (> 2)"],
        ["PASS", "not_null(id)", "ids present", "", "", "0", "", "not_null(id): no NULL values"],
    ]
    assert [row.all("span")[0].attrs["class"] for row in results] == ["sev fail", "sev fail", "sev pass", "sev pass"]
    assert len(results[2].all("td")[6].all("br")) == 1  # the two thresholds on two lines
    # One circle per run of each rule, coloured by that run's severity, oldest first.
    fail, warn, passed = "#cf222e", "#b35900", "#1a7f37"
    assert [[circle.attrs["fill"] for circle in row.all("circle")] for row in results] == [
        [fail, fail, fail], [passed, fail, fail], [fail, warn, passed], [passed, passed, passed],
    ]
    assert len(dom.all("circle")) == 12
    assert [circle.all("title")[0].text for circle in results[2].all("circle")] == [
        "2026-05-01 06:00:00+00:00: 2 (fail)", "2026-05-02 06:00:00+00:00: 4 (warn)",
        "2026-05-03 06:00:00+00:00: 6 (pass)",  # in UTC, as the run's own time above
    ]
    # The samples: two rows under the emails rule, the hostile note under the regex rule.
    samples = dom.all("details")
    assert [detail.all("summary")[0].text for detail in samples] == ["2 samples", "1 sample"]
    assert sorted(cells(row) for row in samples[0].all("tbody")[0].all("tr")) == [
        ["2", "NULL", "ok"], ["4", "NULL", "ok"],
    ]
    assert [cells(row) for row in samples[1].all("tbody")[0].all("tr")] == [["3", "c@x.io", HOSTILE]]
    # The hostile strings are text: in the code cell, name, dimension, split table and sample, and
    # nowhere an element; the browser serializes that text with <, > and & escaped.
    assert [code.text for code in dom.all("code")].count(HOSTILE) == 2  # the split's code, the result's
    assert dom.all("script") == []
    assert "<script" not in dumped.lower()
    assert dumped.count("&lt;script&gt;alert(1)&lt;/script&gt; \"q\" 'a' &amp; b") == 5


def test_the_index_in_a_browser_lists_every_dataset_and_rule_worst_first(chromium, pages):
    dumped = browse(chromium, pages["index"], pages["scratch"], "--dump-dom")
    dom = dom_of(dumped)
    assert dom.all("title")[0].text == "Cola quality"
    assert dom.all("h1")[0].text == "Cola quality"
    assert [p.text for p in dom.all("p")] == ["5 rules, worst first"]
    (table,) = tables(dom)
    assert [th.text for th in table.all("th")] == ["severity", "dataset", "code", "name", "rule id", "data date", "trend"]
    rows = body_rows(table)
    assert [cells(row)[:6] for row in rows] == [
        ["FAIL", "crm.people", "not_null(email)", "emails present", "emails", "2026-05-03 06:00:00+00:00"],
        ["FAIL", "crm.people", HOSTILE, HOSTILE, "notes", "2026-05-03 06:00:00+00:00"],
        ["PASS", "crm.accounts", "row_count", "volume", "volume", "2026-05-02 06:00:00+00:00"],
        ["PASS", "crm.people", "not_null(id)", "ids present", "ids", "2026-05-03 06:00:00+00:00"],
        ["PASS", "crm.people", "row_count", "volume", "volume", "2026-05-03 06:00:00+00:00"],
    ]
    assert [row.all("span")[0].attrs["class"] for row in rows] == ["sev fail"] * 2 + ["sev pass"] * 3
    assert [len(row.all("circle")) for row in rows] == [3, 3, 1, 3, 3]
    assert len(dom.all("circle")) == 13
    assert dom.all("script") == []
    assert "<script" not in dumped.lower()
    assert dumped.count("&lt;script&gt;alert(1)&lt;/script&gt; \"q\" 'a' &amp; b") == 2


def test_a_screenshot_of_the_report_is_a_real_png(chromium, pages):
    shot = pages["scratch"] / "report.png"
    browse(chromium, pages["report"], pages["scratch"], f"--screenshot={shot}", "--window-size=1280,900")
    data = shot.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")  # the IHDR chunk
    assert (width, height) == (1280, 900)
    assert len(data) > 10_000  # a blank page is a few hundred bytes
    if os.environ.get("COLA_UPDATE_SCREENSHOT") == "1" or not DOCS_SCREENSHOT.exists():
        shutil.copyfile(shot, DOCS_SCREENSHOT)
