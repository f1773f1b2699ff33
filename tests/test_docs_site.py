"""The documentation site (issue 27): its generated references cover the code, it builds with
``mkdocs build --strict``, and a real browser finds its navigation and a working search.

The site is built once per session into a temporary folder, with the venv's ``mkdocs`` (the
``docs`` extra), exactly as ``.ci/run`` and a user build it. The browser is Debian's headless
chromium driven over the DevTools protocol (a websocket), against a static HTTP server on
127.0.0.1 over the built site: the search index is fetched by the page, so ``file://`` would
not do.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import griffe
import pytest

from cola_core import Cola
from cola_core.ruleset import registry as registry_module
from cola_core.ruleset.registry import default_checks

REPO = Path(__file__).resolve().parents[1]
MKDOCS = Path(sys.executable).parent / "mkdocs"
CHROMIUM = shutil.which("chromium")
SITE_SCREENSHOT = REPO / "docs" / "site.png"
BROWSER_TIMEOUT = 60.0  # seconds for a page to show what is waited for


def _docs_reference():
    spec = importlib.util.spec_from_file_location("docs_reference", REPO / "scripts" / "docs_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


docs_reference = _docs_reference()


def _text(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


# -- every registered type and operator argument is described ---------------------------------


def test_every_built_in_rule_type_says_in_one_line_what_it_checks(monkeypatch):
    monkeypatch.setattr(registry_module, "_registered", {})
    problems = []
    for rule_type, cls in sorted(default_checks().items()):
        summary = cls.summary(rule_type)
        if not summary or "\n" in summary or len(summary) > 160 or not summary.endswith("."):
            problems.append(f"{rule_type}: {summary!r}")
    assert problems == []
    # Each type of a class that serves several says what it checks itself, not the class.
    assert default_checks()["max"].summary("max") == "The largest value of a numeric column meets thresholds."
    assert default_checks()["sql"].summary("sql") == (
        "A read-only SQL query over the data: its rows are the failures, or its one number is judged."
    )


def test_a_custom_check_without_a_docstring_has_an_empty_summary():
    from cola_core import BaseCheck

    class Undocumented(BaseCheck):
        pass

    class Documented(BaseCheck):
        """Counts the widgets. More words here."""

    assert (Undocumented.summary("u"), Documented.summary("d")) == ("", "Counts the widgets.")


def _documented_arguments(path: str) -> tuple[list[str], dict[str, str]]:
    """The parameters of a class's ``__init__`` (or a function) and their docstring descriptions,
    read by griffe, the parser mkdocstrings renders the reference with (no Airflow import)."""
    package = griffe.load("airflow_provider_cola", search_paths=[str(REPO)], docstring_parser="google")
    obj = package[path.removeprefix("airflow_provider_cola.")]
    function = obj.members["__init__"] if obj.is_class else obj
    names = [p.name for p in function.parameters if p.name not in ("self", "kwargs")]
    described: dict[str, str] = {}
    for section in obj.docstring.parse("google"):
        if section.kind.value == "parameters":
            described.update({p.name: p.description for p in section.value})
    return names, described


@pytest.mark.parametrize("path", [
    "airflow_provider_cola.operators.cola.ColaCheckOperator",
    "airflow_provider_cola.operators.cola.ColaSplitOperator",
    "airflow_provider_cola.decorators.cola.cola_check",
    "airflow_provider_cola.operators.profiling.ColaProfileOperator",
])
def test_every_operator_and_decorator_argument_has_a_description(path):
    names, described = _documented_arguments(path)
    assert [name for name in names if not described.get(name, "").strip()] == []
    assert sorted(set(described) - set(names) - {"**kwargs"}) == []  # nothing described that is not taken
    expected = {"ColaCheckOperator": 40, "ColaSplitOperator": 6, "cola_check": 19, "ColaProfileOperator": 34}[
        path.rsplit(".", 1)[1]
    ]
    assert len(names) == expected


# -- the built site ------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The site, built strictly (a broken link, anchor or reference fails the build)."""
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [str(MKDOCS), "build", "--strict", "--site-dir", str(out)], cwd=REPO, capture_output=True, text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(REPO)}, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "WARNING" not in done.stderr, done.stderr[-4000:]
    return out


def test_every_rule_type_has_its_entry_in_the_rule_reference(site):
    page = (site / "reference" / "rules" / "index.html").read_text()
    anchors = set(re.findall(r'<h2 id="([a-z_]+)"', page))
    assert anchors == set(default_checks())
    text = _text(page)
    assert "| parameter |" not in text  # the tables are rendered, not shown as text
    assert ("range ¶ min <= column <= max (inclusive; at least one bound). Kind: row-level · Capabilities: row "
            "· Code: range(<column>,<min>,<max>) · Check class: cola_core.checks.core.RangeCheck") in text
    assert "column a non-empty string yes Column whose present values must lie within the bounds; NULLs pass" in text


def test_every_available_rule_type_appears_in_the_site(site):
    pages = {path: path.read_text() for path in site.rglob("*.html")}
    missing = [name for name in Cola().available
               if not any(f"<code>{name}</code>" in html for html in pages.values())]
    assert missing == []
    summary = _text((site / "rules" / "index.html").read_text())
    assert "not_null Every listed column is non-NULL. row-level not_null(<columns>)" in summary


def test_every_operator_argument_appears_in_the_operator_reference(site):
    page = (site / "reference" / "operators" / "index.html").read_text()
    for path in ("airflow_provider_cola.operators.cola.ColaCheckOperator",
                 "airflow_provider_cola.operators.cola.ColaSplitOperator",
                 "airflow_provider_cola.decorators.cola.cola_check",
                 "airflow_provider_cola.operators.profiling.ColaProfileOperator"):
        names, _ = _documented_arguments(path)
        # Each is a row of the parameters table: its name in a code cell.
        cells = set(re.findall(r"<td>\s*<code>(\w+)</code>\s*</td>", page))
        assert [name for name in names if name not in cells] == []


def test_the_command_line_reference_is_what_the_parser_prints(site):
    text = (site / "reference" / "cli" / "index.html").read_text()
    for command in ("cola", "cola-check", "cola-split", "cola-history", "cola-history-prune", "cola-history-html"):
        assert f'id="{command}"' in text
    assert "--quarantine-key COLUMN" in unescape(text)
    assert "--older-than DURATION" in unescape(text)


# -- in a browser --------------------------------------------------------------------------------


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def served(site) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class Browser:
    """One headless chromium page, driven over the DevTools protocol."""

    def __init__(self, chromium: str, scratch: str) -> None:
        self.process = subprocess.Popen(
            [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--hide-scrollbars", "--window-size=1280,900", "--remote-debugging-port=0",
             f"--user-data-dir={scratch}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        port_file = Path(scratch) / "DevToolsActivePort"
        deadline = time.monotonic() + BROWSER_TIMEOUT
        while not (port_file.exists() and len(port_file.read_text().splitlines()) == 2):
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise AssertionError("chromium did not start its DevTools endpoint")
            time.sleep(0.1)
        port = port_file.read_text().splitlines()[0]
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as answer:
            target = next(t for t in json.load(answer) if t["type"] == "page")
        self.url = target["webSocketDebuggerUrl"]
        self.socket: Any = None  # the DevTools websocket, opened by the fixture
        self.next_id = 0

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv(timeout=BROWSER_TIMEOUT))
            if message.get("id") == self.next_id:
                assert "error" not in message, message
                return message["result"]

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        assert "exceptionDetails" not in result, result
        return result["result"].get("value")

    def wait_for(self, expression: str) -> Any:
        """Poll a JavaScript expression until it is truthy; its value."""
        deadline = time.monotonic() + BROWSER_TIMEOUT
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {expression}")

    def open(self, url: str) -> None:
        self.call("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete' && document.querySelector('.md-content') !== null")

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture(scope="module")
def browser(tmp_path_factory) -> Iterator[Browser]:
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set and chromium is not installed (.ci/run installs it)")
        pytest.skip("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    from websockets.sync.client import connect

    page = Browser(CHROMIUM, tempfile.mkdtemp(prefix="chromium-", dir=tmp_path_factory.mktemp("browser")))
    try:
        with connect(page.url, max_size=None, open_timeout=30) as page.socket:
            yield page
    finally:
        page.close()


NAV = "[...document.querySelectorAll('.md-nav--primary > .md-nav__list > .md-nav__item')].map(i => i.querySelector('a, label').textContent.trim())"


def test_the_site_in_a_browser_has_its_navigation_a_search_that_works_and_the_references(served, browser):
    browser.open(served)
    assert browser.evaluate("document.title") == "airflow-provider-cola"
    assert browser.evaluate(NAV) == [
        "Home", "Getting started", "The engine", "Rules", "Profiling and suggested rules", "Data contracts (ODCS)",
        "Thresholds",
        "Codes and the quarantine", "Streams: each new batch split once",
        "Quality over time", "The HTML report", "Airflow", "Spark Connect", "The cola command",
        "Security model", "Performance", "Reference", "Architecture", "Contributing", "Changelog",
    ]
    assert browser.evaluate("document.querySelector('input.md-search__input').placeholder") == "Search"

    # The search runs offline, in the page: its index is the site's own search_index.json.
    browser.evaluate("""(() => {
        const box = document.querySelector('input.md-search__input');
        box.focus(); box.value = 'quarantine_key';
        box.dispatchEvent(new Event('input', {bubbles: true}));
        box.dispatchEvent(new KeyboardEvent('keyup', {bubbles: true, key: 'y'}));
    })()""")
    found = browser.wait_for(
        "[...document.querySelectorAll('.md-search-result__item a')].map(a => a.getAttribute('href'))"
    )
    assert any(href.startswith(served + "quarantine/") for href in found), found

    browser.open(served + "rules/")
    assert browser.evaluate("document.querySelector('.md-content h1').textContent.trim()").startswith("Rules")
    rows = browser.evaluate("[...document.querySelectorAll('.md-content table tbody tr')].map(r => r.cells[0].textContent)")
    assert [row for row in rows if row in default_checks()] == sorted(default_checks())

    browser.open(served + "reference/operators/")
    headings = browser.evaluate("[...document.querySelectorAll('.md-content h2')].map(h => h.textContent.replace('¶', '').trim())")
    assert headings[:3] == ["ColaCheckOperator", "ColaSplitOperator", "cola_check"]

    if os.environ.get("COLA_UPDATE_SCREENSHOT") or not SITE_SCREENSHOT.exists():
        browser.open(served + "rules/")
        shot = browser.call("Page.captureScreenshot", format="png")
        import base64

        SITE_SCREENSHOT.write_bytes(base64.b64decode(shot["data"]))
    assert SITE_SCREENSHOT.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
