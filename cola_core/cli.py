"""The ``cola`` command line (also ``python -m cola_core``): the program spark-submit runs.

``cola check`` measures a source against a rules file; ``cola split`` also writes its valid
and invalid rows. Both print a table of results, and can write the results as JSON (the same
dict the Airflow operators push to XCom) and the report.

Exit status: 0 when nothing failed (warns included), 1 when a check failed (``--fail-exit-code``
changes it), 2 for a usage, rules, source or output error (the message only, no traceback),
3 for anything unexpected (with the traceback).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import traceback
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from cola_core.cola import Cola
from cola_core.errors import ColaError, ColaOutputError
from cola_core.io import (
    FORMATS,
    OutputSpec,
    ensure_writable,
    parse_output,
    parse_source,
    read_rules_file,
    read_source,
    write_counted,
)
from cola_core.registry import load_checks
from cola_core.report import refusal_results, render_table, results_text, summarise, write_report
from cola_core.sqlguard import allowing_outside_access

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["EXIT_ERROR", "EXIT_FAILED", "EXIT_INTERNAL", "EXIT_OK", "build_parser", "main"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_ERROR = 2
EXIT_INTERNAL = 3


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``cola`` command."""
    from cola_core import __version__

    parser = argparse.ArgumentParser(
        prog="cola",
        description="Validate a Spark source against data-quality rules.",
        epilog="exit status: 0 nothing failed (warns are fine), 1 a check failed, "
        "2 usage/rules/source/output error, 3 unexpected error",
    )
    parser.add_argument("--version", action="version", version=f"cola {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{check,split}")
    common = _common_arguments()
    commands.add_parser(
        "check", parents=[common], help="measure the source against the rules",
        description="Measure a source against rules; print, and optionally save, the results.",
    )
    split = commands.add_parser(
        "split", parents=[common], help="check, and write the valid and invalid rows",
        description="Check a source, and write its rows to a valid and an invalid output.",
    )
    outputs = split.add_argument_group("split outputs")
    outputs.add_argument("--valid-output", required=True, metavar="OUTPUT", help="where the valid rows go")
    outputs.add_argument("--invalid-output", required=True, metavar="OUTPUT", help="where the invalid rows go")
    outputs.add_argument(
        "--annotate", metavar="COLUMN", help="add this array<string> column of broken rule codes to the invalid rows"
    )
    outputs.add_argument(
        "--quarantine-key", action="append", default=[], metavar="COLUMN",
        help="reject every row sharing this key with a rejected row (repeat for a composite key)",
    )
    return parser


def _common_arguments() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--rules", required=True, metavar="FILE", help="the rules, as a JSON or YAML file")
    common.add_argument(
        "--checks", action="append", default=[], metavar="PACKAGE",
        help="import this package of custom checks (@register_check) before reading the rules (repeatable)",
    )
    common.add_argument(
        "--allow-external-access", action="store_true",
        help="let the rules' SQL call JVM functions (reflect, java_method) and read files through "
        "path relations; only for trusted rules (see the README's Security model)",
    )
    source = common.add_argument_group("source (give one)").add_mutually_exclusive_group(required=True)
    source.add_argument("--input", metavar="PATH", help="a file or folder to read")
    source.add_argument("--table", metavar="NAME", help="a catalog table, e.g. db.orders")
    source.add_argument("--query", metavar="SQL", help="a read-only SELECT or WITH query")
    reading = common.add_argument_group("reading --input")
    # Checked by parse_source rather than argparse choices, for one message on every Python.
    reading.add_argument(
        "--format", metavar="FORMAT", help=f"the input format: {', '.join(FORMATS)} (default: parquet)"
    )
    reading.add_argument(
        "--option", action="append", default=[], type=_key_value, metavar="KEY=VALUE",
        help="a reader option, e.g. header=true (repeatable)",
    )
    results = common.add_argument_group("results")
    results.add_argument("--results", metavar="FILE", help="write the results summary here as JSON")
    results.add_argument(
        "--report", metavar="OUTPUT", help="write the report (one row per result) to this output"
    )
    results.add_argument("--pipeline", metavar="NAME", help="the pipeline name written in the report")
    results.add_argument(
        "--samples", type=int, default=0, metavar="N",
        help="keep up to N offending rows of each failed row rule in the results (one extra job)",
    )
    results.add_argument(
        "--fail-exit-code", type=int, default=EXIT_FAILED, metavar="N",
        help="exit status when a check failed (default: 1; 0 lets a caller decide from --results)",
    )
    spark = common.add_argument_group("spark")
    spark.add_argument(
        "--master", metavar="URL",
        help="the Spark master; by default spark-submit's, or local[*] when run directly with none set",
    )
    spark.add_argument(
        "--conf", action="append", default=[], type=_key_value, metavar="KEY=VALUE",
        help="a Spark setting for a session this command starts (repeatable)",
    )
    common.add_argument(
        "-v", "--verbose", action="store_true", help="say on stderr which cola_core and Spark ran"
    )
    return common


def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit status (see the module docstring)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.format is not None and args.input is None:
            parser.error("--format only applies with --input")
        if args.option and args.input is None:
            parser.error("--option only applies with --input")
    except SystemExit as exit_:  # argparse exits on --help (0) and on usage errors (2)
        return int(exit_.code or 0)
    try:
        return _run(args)
    except ColaError as error:
        return _refuse(args, str(error))
    except KeyboardInterrupt:
        return 130
    except Exception as error:
        analysis = _analysis_error(error)
        if analysis is not None:
            return _refuse(args, f"Spark refused a query: {analysis}")
        traceback.print_exc()
        return EXIT_INTERNAL


def _refuse(args: argparse.Namespace, message: str) -> int:
    """Say why the run was refused (exit 2) and, with --results, write that down as well:
    in cluster deploy mode the caller sees the results file, not this process's exit status,
    and a refused run must not be retried like a crash."""
    _say_error(message)
    if args.results:
        try:
            _write_results(_local_results_path(args.results), refusal_results(message))
        except ColaError:
            pass  # the results path itself is the problem, and the message above says so
    return EXIT_ERROR


def _run(args: argparse.Namespace) -> int:
    results_path = _local_results_path(args.results) if args.results else None
    if results_path is not None:
        # A results file left by an earlier run must never pass for this run's, if this one fails.
        _remove_stale(results_path)
    # The source query is checked under the same switch as the rules' SQL.
    with allowing_outside_access(args.allow_external_access):
        return _run_in_scope(args, results_path)


def _run_in_scope(args: argparse.Namespace, results_path: Path | None) -> int:
    # Everything that can be checked without Spark is checked first: no JVM for a typo.
    source = parse_source(_source_config(args))
    report = _output_argument(args.report, "--report") if args.report else None
    splitting = args.command == "split"
    valid = _output_argument(args.valid_output, "--valid-output") if splitting else None
    invalid = _output_argument(args.invalid_output, "--invalid-output") if splitting else None
    rules = read_rules_file(args.rules)
    for package in args.checks:
        load_checks(package)
    cola = Cola(allow_external_access=args.allow_external_access)
    checks = cola.parse(rules)
    failed_rows_outputs = [parse_output(check.params["output"]) for check in checks if _writes_failed_rows(check)]

    spark, started_here = _session(args.master, args.conf)
    try:
        if args.verbose:
            _say_provenance(spark)
        df = read_source(spark, source)
        for output in (report, valid, invalid, *failed_rows_outputs):
            if output is not None:
                ensure_writable(spark, output)
        counts: dict[str, int] = {}
        if splitting:
            # Built first: a bad annotate column is refused before any Spark job runs.
            split = cola.split(df, rules, annotate=args.annotate, quarantine_key=args.quarantine_key or None)
        results = cola.run(df, rules, samples=args.samples)
        validated_at = dt.datetime.now(dt.timezone.utc)
        if splitting:
            counts["valid_count"] = write_counted(split.valid, valid)
            counts["invalid_count"] = write_counted(split.invalid, invalid)
        summary = summarise(results, **counts)
        print(render_table(results, **counts, colour=_colour_wanted()), flush=True)
        if report is not None:
            write_report(spark, results, report, pipeline=args.pipeline, validated_at=validated_at)
        if results_path is not None:
            # Written last, so an existing results file always means a complete run.
            _write_results(results_path, summary)
    finally:
        if started_here:
            spark.stop()
    return EXIT_OK if summary["passed"] else args.fail_exit_code


def _source_config(args: argparse.Namespace) -> dict[str, Any]:
    if args.input is not None:
        return {"path": args.input, "format": args.format or "parquet", "options": dict(args.option)}
    if args.table is not None:
        return {"table": args.table}
    return {"query": args.query}


def _output_argument(text: str, flag: str) -> OutputSpec:
    """An OUTPUT argument: inline JSON (``{"path": ..., "mode": ...}``) or a plain parquet path."""
    if not text.lstrip().startswith("{"):
        return _with_flag(parse_output, text, flag)
    try:
        config = json.loads(text)
    except json.JSONDecodeError as error:
        raise ColaOutputError(
            f"{flag} is not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})"
        ) from error
    return _with_flag(parse_output, config, flag)


def _with_flag(parse: Any, value: Any, flag: str) -> OutputSpec:
    try:
        return parse(value)
    except ColaOutputError as error:
        raise ColaOutputError(f"{flag}: {error}") from error


def _writes_failed_rows(check: Any) -> bool:
    from cola_core.checks.sql import SqlCheck

    return isinstance(check, SqlCheck) and "output" in check.params


def _local_results_path(text: str) -> Path:
    path = text.removeprefix("file://") if text.startswith("file://") else text.removeprefix("file:")
    if "://" in path:
        raise ColaOutputError(
            f"--results must be a file the driver can write (a local path or a file: URI), got {text!r}"
        )
    return Path(path)


def _remove_stale(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError as error:
        raise ColaOutputError(f"cannot remove the earlier results file {str(path)!r}: {error}") from error


def _write_results(path: Path, summary: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{uuid.uuid4().hex}.partial")
        partial.write_text(results_text(summary), encoding="utf-8")
        # Atomic: a reader sees the previous file or the complete new one, never half of it.
        os.replace(partial, path)
    except OSError as error:
        raise ColaOutputError(f"cannot write the results file {str(path)!r}: {error}") from error


def _session(master: str | None, conf: Sequence[tuple[str, str]]) -> tuple[SparkSession, bool]:
    """The session to run in, and whether this command started it (and so must stop it)."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active, False
    builder = SparkSession.builder
    for key, value in conf:
        builder = builder.config(key, value)
    launched_by_spark_submit = "PYSPARK_GATEWAY_PORT" in os.environ
    if master:
        builder = builder.master(master)
    elif not launched_by_spark_submit and not _connect_mode() and not _master_configured(conf):
        builder = builder.master("local[*]")
    if not launched_by_spark_submit and not any(key == "spark.app.name" for key, _ in conf):
        builder = builder.appName("cola")
    return builder.getOrCreate(), True


def _connect_mode() -> bool:
    return bool(os.environ.get("SPARK_REMOTE") or os.environ.get("SPARK_CONNECT_MODE_ENABLED"))


def _master_configured(conf: Sequence[tuple[str, str]]) -> bool:
    """Whether a direct run already has a master: --conf, PYSPARK_SUBMIT_ARGS or spark-defaults.conf."""
    if any(key == "spark.master" for key, _ in conf):
        return True
    if "--master" in os.environ.get("PYSPARK_SUBMIT_ARGS", ""):
        return True
    conf_dir = os.environ.get("SPARK_CONF_DIR") or (
        os.path.join(os.environ["SPARK_HOME"], "conf") if os.environ.get("SPARK_HOME") else None
    )
    if conf_dir is None:
        return False
    try:
        lines = Path(conf_dir, "spark-defaults.conf").read_text(encoding="utf-8").splitlines()
    except OSError:
        return False
    return any(line.split(None, 1)[0] == "spark.master" for line in lines if line.strip())


def _colour_wanted() -> bool:
    # Colour only for a person at a terminal: piped output (logs, files, grep) stays plain.
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def _say_error(message: str) -> None:
    print(f"cola: error: {message}", file=sys.stderr, flush=True)


def _say_provenance(spark: SparkSession) -> None:
    import cola_core

    location = os.path.dirname(cola_core.__file__ or "")
    try:
        master = spark.conf.get("spark.master", "unknown")
    except Exception:  # Spark Connect
        master = "spark connect"
    print(
        f"cola: cola_core {cola_core.__version__} from {location}; Spark {spark.version}, master {master}",
        file=sys.stderr,
        flush=True,
    )


def _analysis_error(error: BaseException) -> str | None:
    """The first line of a Spark analysis error (bad SQL in a rule, say), else ``None``."""
    try:
        from pyspark.errors import AnalysisException
    except ImportError:  # pyspark too old to have it; treat everything as unexpected
        return None
    if not isinstance(error, AnalysisException):
        return None
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__
