"""Every example in README.md and docs/**/*.md runs, and the output it shows is the output it prints.

The markdown read is ``README.md`` and every ``.md`` file below ``docs/``, in subfolders too
(``docs/rules/row-rules.md``), except the generated pages under ``docs/reference/`` and
anything under ``docs/data/``. The examples are the fenced code blocks of the markdown, found
automatically; each one is a test whose id is ``<path from the repository root>:<line of its
opening fence>`` (``docs/rules/row-rules.md:12``). What a block is, is said by its fence
and by at most one marker, an HTML comment on the line just above the fence:

``python``
    Run in this process, in a fresh namespace where ``spark`` is the test session (as in the
    ``pyspark`` shell), with the repository root as the working directory and ``docs/data``
    on ``sys.path`` (the examples' own package ``myproject``). Checks an example registers
    globally are unregistered after it. Blocks that import
    Airflow are DAG examples, loaded by ``tests/airflow_provider_cola/test_docs_dags.py``.
``console``
    A shell session: ``$ `` starts a command (a line ending in ``\\`` continues it), and the
    lines up to the next ``$ `` are what it prints. ``cola`` and ``python`` are the venv's.
``bash``
    A script, run with ``bash -e`` in a temporary folder; it must exit 0.
``json`` / ``yaml``
    Parsed by the engine: rules with ``Cola().parse`` (a YAML block through
    ``read_rules_file``, as a rules file is read), sources and references with the source
    parser, outputs with the output parser, results files and XCom values with
    ``CheckResult.from_dict``. A JSON block may hold several values one after another.
``text``
    Text that is shown, not run (a message, a usage synopsis, a table). Directly after a
    ``python`` block (only blank lines between), a ``text`` block is that block's expected
    output, compared exactly with what it prints.

Markers:

``<!-- not-run: REASON -->``
    The block is not run. The reason is required, and is printed when the test is skipped.
``<!-- continues -->``
    The python block runs after the python block before it, in that block's namespace (its
    output is not compared again): the example goes on where the previous one stopped.
``<!-- file: NAME -->``
    The block is the content of the file ``NAME`` in the folder where the console sessions
    run (``docs/cli.md``'s ``rules.yaml``). It is also checked as its fence says.

Console sessions run in one temporary folder per markdown file, holding a copy of
``docs/data/`` and every ``file:`` block of the docs. Sessions of one file run in document
order, since a later one may read what an earlier one wrote (the split's ``out/valid``);
selecting one session with ``-k`` runs the sessions before it first, unchecked.

What the comparisons normalise: blank lines at the very end of a python block's output (a
markdown block cannot show the blank line ``DataFrame.show()`` ends with), and nothing else
of the printed text. On a command's stderr, the lines the JVM and Spark print while starting
(``JVM_START_UP_LINES``) are dropped; Spark's log is silenced with a ``log4j2.properties``
in a temporary ``SPARK_CONF_DIR``. Everything else a command prints, on stdout and then on
stderr, is compared exactly, as are the exit statuses that ``echo $?`` shows.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS_DATA = REPO / "docs" / "data"
VENV_BIN = Path(sys.executable).parent
KINDS = ("python", "console", "bash", "json", "yaml", "text")
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>```+)(?P<info>[^`]*)$")
_MARKER = re.compile(r"^\s*<!--\s*(?P<name>not-run|file|continues)\s*:?\s*(?P<value>.*?)\s*-->\s*$")
# Printed by the JVM or by Spark's launcher on stderr before any of cola's own output.
JVM_START_UP_LINES = (
    re.compile(r"^WARNING: Using incubator modules: "),
    re.compile(r'^Setting default log level to "\w+"\.$'),
    re.compile(r"^To adjust logging level use sc\.setLogLevel\(newLevel\)\. "),
)
_SPARK_QUIET_LOG4J = """\
rootLogger.level = off
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %m%n
"""
_SPARK_DEFAULTS = """\
spark.ui.enabled false
spark.ui.showConsoleProgress false
spark.driver.host 127.0.0.1
spark.driver.bindAddress 127.0.0.1
spark.sql.shuffle.partitions 2
"""


@dataclass(frozen=True)
class Block:
    """One fenced code block of a markdown file."""

    doc: Path
    line: int  # of the opening fence, 1-based
    kind: str
    text: str
    not_run: str | None = None
    file_name: str | None = None
    output: Block | None = None
    continues: bool = False

    @property
    def id(self) -> str:
        return f"{self.doc.relative_to(REPO).as_posix()}:{self.line}"

    @property
    def is_airflow(self) -> bool:
        """A DAG example: it imports Airflow or uses the provider's operators or ``@task``."""
        return self.kind == "python" and bool(
            re.search(r"^\s*(from|import) airflow|\bCola(Check|Split)Operator\b|^@task\b", self.text, re.M)
        )


# Folders of docs/ whose markdown holds no examples of its own: the examples' data, and the
# reference pages generated from the code.
SKIPPED_DOCS = ("data", "reference")


def markdown_files() -> list[Path]:
    """README.md, then every page below docs/ (subfolders too), by path; not docs/data or docs/reference."""
    docs = REPO / "docs"
    pages = [
        page
        for page in docs.rglob("*.md")
        if page.relative_to(docs).parts[0] not in SKIPPED_DOCS
    ]
    return [REPO / "README.md", *sorted(pages, key=lambda page: page.relative_to(docs).as_posix())]


def read_blocks(doc: Path) -> list[Block]:
    """The blocks of ``doc``, in order; a ``text`` block that is an output is on its block."""
    lines = doc.read_text(encoding="utf-8").splitlines()
    raw: list[dict[str, Any]] = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        indent, fence, info = opening["indent"], opening["fence"], opening["info"].strip()
        body: list[str] = []
        end = index + 1
        while end < len(lines) and not (
            lines[end].strip() == fence and lines[end].startswith(indent)
        ):
            body.append(lines[end][len(indent):] if lines[end].startswith(indent) else lines[end].lstrip())
            end += 1
        if end == len(lines):
            raise AssertionError(f"{doc.relative_to(REPO).as_posix()}:{index + 1}: the code block is never closed")
        marker = _marker_above(lines, index)
        raw.append(
            {
                "line": index + 1,
                "end": end + 1,
                "kind": info,
                "text": "\n".join(body) + "\n",
                "not_run": marker[1] if marker and marker[0] == "not-run" else None,
                "file_name": marker[1] if marker and marker[0] == "file" else None,
                "continues": bool(marker and marker[0] == "continues"),
                "marker_line": index if marker else None,
            }
        )
        index = end + 1
    blocks: list[Block] = []
    skip_next = False
    for position, item in enumerate(raw):
        if skip_next:
            skip_next = False
            continue
        output = None
        following = raw[position + 1] if position + 1 < len(raw) else None
        if (
            item["kind"] == "python"
            and following is not None
            and following["kind"] == "text"
            and following["marker_line"] is None
            and all(not line.strip() for line in lines[item["end"]:following["line"] - 1])
        ):
            output = Block(doc, following["line"], "text", following["text"])
            skip_next = True
        blocks.append(
            Block(
                doc, item["line"], item["kind"], item["text"], item["not_run"], item["file_name"], output,
                item["continues"],
            )
        )
    return blocks


def _marker_above(lines: list[str], fence_index: int) -> tuple[str, str] | None:
    above = fence_index - 1
    if above < 0:
        return None
    marker = _MARKER.match(lines[above])
    return (marker["name"], marker["value"]) if marker else None


def all_blocks() -> list[Block]:
    return [block for doc in markdown_files() for block in read_blocks(doc)]


def _params(kinds: tuple[str, ...], airflow: bool = False) -> list[Any]:
    chosen = [b for b in all_blocks() if b.kind in kinds and b.is_airflow == airflow]
    return [pytest.param(block, id=block.id) for block in chosen]


# --- the conventions themselves -------------------------------------------------------------


def test_every_block_says_what_it_is():
    wrong = [f"{b.id}: fence '{b.kind}'" for b in all_blocks() if b.kind not in KINDS]
    wrong += [f"{b.id}: continues, but is not python" for b in all_blocks() if b.continues and b.kind != "python"]
    assert not wrong, "every code block is fenced as one of " + ", ".join(KINDS) + ":\n" + "\n".join(wrong)


def test_every_not_run_marker_gives_a_reason():
    for doc in markdown_files():
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            if "not-run" in line:
                marker = _MARKER.match(line)
                where = f"{doc.relative_to(REPO).as_posix()}:{number}"
                assert marker and marker["value"], f"{where}: write it <!-- not-run: REASON -->"


def test_shell_sessions_are_fenced_as_console():
    """A ``$ `` prompt in a text block would be a session that is never run."""
    hidden = [b.id for b in all_blocks() if b.kind in ("text", "bash") and b.text.startswith("$ ")]
    assert not hidden, "fence these blocks as console: " + ", ".join(hidden)


def test_files_named_twice_have_one_content():
    contents: dict[str, tuple[str, str]] = {}
    for block in all_blocks():
        if block.file_name:
            first = contents.setdefault(block.file_name, (block.id, block.text))
            assert first[1] == block.text, f"{block.id} and {first[0]} give two contents for {block.file_name}"


# --- python ---------------------------------------------------------------------------------


@contextlib.contextmanager
def _own_check_registry() -> Iterator[None]:
    """Checks an example registers globally (``@register_check``) are gone after it."""
    import cola_core.ruleset.registry as registry

    table = getattr(registry, "_registered", None)
    saved = dict(table) if isinstance(table, dict) else None
    try:
        yield
    finally:
        if saved is not None:
            table.clear()
            table.update(saved)


def run_python(block: Block, spark) -> str:
    """What ``block`` prints; a ``continues`` block first runs the blocks it continues."""
    chain = [block]
    if block.continues:
        earlier = [b for b in read_blocks(block.doc) if b.kind == "python" and b.line < block.line]
        while chain[0].continues:
            assert earlier, f"{chain[0].id} continues no earlier python block"
            chain.insert(0, earlier.pop())
    namespace: dict[str, Any] = {"__name__": "__docs_example__", "spark": spark}
    with _own_check_registry():
        for part in chain:
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                exec(compile(part.text, part.id, "exec"), namespace)
    return printed.getvalue()


@pytest.mark.spark
@pytest.mark.parametrize("block", _params(("python",)))
def test_python_example(block: Block, spark, monkeypatch, tmp_path):
    if block.not_run:
        pytest.skip(f"not run: {block.not_run}")
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("COLA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(DOCS_DATA))
    before = set(sys.modules)
    try:
        printed = run_python(block, spark)
    finally:
        for name in set(sys.modules) - before:
            if str(getattr(sys.modules[name], "__file__", "") or "").startswith(str(DOCS_DATA)):
                del sys.modules[name]
    if block.output is not None:
        # A markdown block cannot show the blank line ``DataFrame.show()`` ends with.
        assert printed.rstrip("\n") == block.output.text.rstrip("\n"), (
            f"{block.id} prints other text than {block.output.id} shows"
        )


# --- json and yaml --------------------------------------------------------------------------


def json_values(text: str) -> list[Any]:
    """The JSON values of a block, written one after another."""
    decoder = json.JSONDecoder()
    values, position = [], 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position == len(text):
            return values
        value, position = decoder.raw_decode(text, position)
        values.append(value)


def check_documented_value(value: Any) -> None:
    """Parse a documented JSON/YAML value with the engine, by what it is."""
    from cola_core import CheckResult, Cola, ColaRuleError

    if isinstance(value, list) or (isinstance(value, dict) and "type" in value):
        rules = value if isinstance(value, list) else [value]
        try:
            Cola().parse(rules)
        except ColaRuleError as error:
            # A rule the docs show for trusted rules only (a sql rule's own output) must
            # parse under the switch, and be refused, saying so, without it.
            if "allow_external_access=True" not in str(error):
                raise
            Cola(allow_external_access=True).parse(rules)
    elif isinstance(value, dict) and {"severity", "counts", "results"} <= value.keys():
        # A results file or XCom value; a "..." item stands for results left out.
        results = [CheckResult.from_dict(item) for item in value["results"] if item != "..."]
        assert value["passed"] == all(result.passed for result in results) or "..." in value["results"]
        assert set(value["counts"]) == {"pass", "warn", "fail"}
    elif isinstance(value, dict) and value.keys() & {"mode", "partition_by"}:
        _specs().parse_output(value)
    elif isinstance(value, dict) and value.keys() & {"path", "table", "query"}:
        _specs().parse_source(value)
    else:
        raise AssertionError(f"cannot tell what this documented value is: {value!r}")


def _specs():
    """The module that parses sources and outputs (``cola_core.io`` before the split)."""
    try:
        import cola_core.storage.specs as specs
    except ImportError:
        import cola_core.io as specs  # type: ignore[no-redef]
    return specs


@pytest.mark.parametrize("block", _params(("json",)))
def test_json_example(block: Block):
    if block.not_run:
        pytest.skip(f"not run: {block.not_run}")
    values = json_values(block.text)
    assert values, f"{block.id} holds no JSON value"
    for value in values:
        check_documented_value(value)


@pytest.mark.parametrize("block", _params(("yaml",)))
def test_yaml_example(block: Block, tmp_path):
    from cola_core import Cola
    from cola_core.language.files import read_rules_file

    if block.not_run:
        pytest.skip(f"not run: {block.not_run}")
    path = tmp_path / (block.file_name or "rules.yaml")
    path.write_text(block.text, encoding="utf-8")
    rules = read_rules_file(path)
    Cola().parse(rules)


# --- shell ----------------------------------------------------------------------------------


@dataclass
class Command:
    line: str  # the command, continuation lines joined
    expected: str  # what the session shows it prints


def console_commands(block: Block) -> list[Command]:
    commands: list[Command] = []
    pending: list[str] | None = None
    for line in block.text.splitlines():
        if pending is not None:
            pending.append(line)
            if not line.endswith("\\"):
                commands.append(Command("\n".join(pending), ""))
                pending = None
        elif line.startswith("$ "):
            pending = [line[2:]]
            if not line.endswith("\\"):
                commands.append(Command(line[2:], ""))
                pending = None
        else:
            assert commands, f"{block.id}: a console block starts with a '$ ' command"
            commands[-1].expected += line + "\n"
    assert pending is None, f"{block.id}: the last command ends with a continuation"
    return commands


def _shell_environment(home: Path) -> dict[str, str]:
    conf = home / "spark-conf"
    conf.mkdir(exist_ok=True)
    (conf / "log4j2.properties").write_text(_SPARK_QUIET_LOG4J)
    (conf / "spark-defaults.conf").write_text(_SPARK_DEFAULTS)
    environment = dict(os.environ)
    environment.update(
        {
            "PATH": os.pathsep.join([str(VENV_BIN), environment.get("PATH", "")]),
            "SPARK_CONF_DIR": str(conf),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable,
            "NO_COLOR": "1",
            "COLA_CACHE_DIR": str(home / "cache"),
        }
    )
    environment.pop("PYSPARK_SUBMIT_ARGS", None)
    return environment


def run_command(command: str, cwd: Path, environment: dict[str, str], previous_status: int) -> tuple[str, int]:
    """What ``command`` prints (stdout, then stderr without the JVM's start-up lines)."""
    script = f"(exit {previous_status})\n{command}"
    done = subprocess.run(
        ["bash", "-c", script], cwd=cwd, env=environment, capture_output=True, text=True, timeout=300
    )
    errors = [
        line
        for line in done.stderr.splitlines(keepends=True)
        if not any(pattern.match(line) for pattern in JVM_START_UP_LINES)
    ]
    printed = done.stdout
    if printed and not printed.endswith("\n") and errors:
        printed += "\n"
    return printed + "".join(errors), done.returncode


@dataclass
class ShellDoc:
    """The console sessions of one markdown file, run in order in one folder."""

    doc: Path
    folder: Path
    environment: dict[str, str]
    sessions: list[Block]
    printed: dict[int, list[tuple[str, int]]] = field(default_factory=dict)
    status: int = 0

    def run_through(self, block: Block) -> list[tuple[str, int]]:
        for session in self.sessions:
            if session.line not in self.printed:
                self.printed[session.line] = []
                for command in console_commands(session):
                    printed, self.status = run_command(command.line, self.folder, self.environment, self.status)
                    self.printed[session.line].append((printed, self.status))
            if session.line == block.line:
                return self.printed[session.line]
        raise AssertionError(f"{block.id} is not a session of {self.doc.relative_to(REPO).as_posix()}")


@pytest.fixture(scope="module")
def shell_docs(tmp_path_factory) -> dict[Path, ShellDoc]:
    return {}


def shell_doc(shell_docs: dict[Path, ShellDoc], doc: Path, tmp_path_factory) -> ShellDoc:
    if doc not in shell_docs:
        home = tmp_path_factory.mktemp("docs-shell")
        folder = home / "work"
        shutil.copytree(DOCS_DATA, folder)
        for block in all_blocks():
            if block.file_name:
                (folder / block.file_name).write_text(block.text, encoding="utf-8")
        sessions = [b for b in read_blocks(doc) if b.kind == "console" and not b.not_run]
        shell_docs[doc] = ShellDoc(doc, folder, _shell_environment(home), sessions)
    return shell_docs[doc]


@pytest.mark.spark
@pytest.mark.parametrize("block", _params(("console",)))
def test_console_example(block: Block, shell_docs, tmp_path_factory):
    if block.not_run:
        pytest.skip(f"not run: {block.not_run}")
    session = shell_doc(shell_docs, block.doc, tmp_path_factory)
    printed = session.run_through(block)
    for command, (actual, _status) in zip(console_commands(block), printed, strict=True):
        shown = _timed(actual, command.expected)
        assert shown == command.expected, f"{block.id}: `{command.line}` prints other text than the doc shows"


# The one part of a command's output that no rerun repeats: the seconds on `Spark cost:` lines.
_SECONDS = re.compile(r"^(Spark cost: .*?)\d+\.\d s$", re.MULTILINE)


def _timed(actual: str, expected: str) -> str:
    """``actual`` with the seconds of each ``Spark cost:`` line replaced by the doc's, when the
    doc has the same lines; every other character (the jobs, stages, rows and bytes too) must
    match as printed."""
    documented = iter(match.group(0)[len(match.group(1)):] for match in _SECONDS.finditer(expected))
    return _SECONDS.sub(lambda match: match.group(1) + next(documented, match.group(0)[len(match.group(1)):]), actual)


@pytest.mark.parametrize("block", _params(("bash",)))
def test_bash_example(block: Block, tmp_path):
    if block.not_run:
        pytest.skip(f"not run: {block.not_run}")
    done = subprocess.run(
        ["bash", "-e", "-c", block.text],
        cwd=tmp_path,
        env=_shell_environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
