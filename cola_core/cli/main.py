"""The ``cola`` command line (also ``python -m cola_core``): the program spark-submit runs.

``cola check`` measures a source against a rules file; ``cola split`` also writes its valid
and invalid rows; ``cola profile`` and ``cola suggest`` describe a source and suggest rules
for it (``cola_core.cli.profiling``). Both print a table of results, and can write the results as JSON (the same
dict the Airflow operators push to XCom) and the report.

Exit status: 0 when nothing failed (warns included), 1 when a check failed (``--fail-exit-code``
changes it), 2 for a usage, rules, source or output error (the message only, no traceback),
3 for anything unexpected (with the traceback).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import traceback
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from cola_core import exit_status
from cola_core._version import __version__
from cola_core.cli.args import build_parser, job_spec, parse_arguments
from cola_core.cli.history import checked_history_arguments, run_history_command
from cola_core.cli.profiling import run_profile_command
from cola_core.cli.usage import UsageError, record_paths
from cola_core.cola import Cola
from cola_core.common.spark_errors import first_line
from cola_core.errors import ColaError, ColaOutputError, ColaRuleError, ColaSourceError, ThresholdError
from cola_core.job.runner import (
    LoadedJob,
    load_job,
    remove_earlier_file,
    run_job,
    write_report_page,
    write_results_file,
)
from cola_core.job.spec import JobSpec
from cola_core.language.contracts import ContractWarning, unchecked_message
from cola_core.report.pages import checked_page_path, replace_file
from cola_core.report.results import refusal_results, render_table
from cola_core.ruleset.registry import load_checks
from cola_core.storage.readwrite import missing_input, missing_local_path
from cola_core.storage.session import connect_mode, master_configured, spark_session, stop_session
from cola_core.storage.specs import without_file_scheme

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["EXIT_ERROR", "EXIT_FAILED", "EXIT_INTERNAL", "EXIT_OK", "build_parser", "main"]

# Kept under their old names: scripts read them from here.
EXIT_OK = exit_status.OK
EXIT_FAILED = exit_status.FAILED
EXIT_ERROR = exit_status.REFUSED
EXIT_INTERNAL = exit_status.INTERNAL


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit status (see the module docstring)."""
    words = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parse_arguments(words)
    except UsageError as error:  # said on stderr already, as argparse says it
        _write_refusal(record_paths(words), error.message, "usage")
        return EXIT_ERROR
    except SystemExit as exit_:  # argparse exits on --help and --version (0)
        return int(exit_.code or 0)
    if args.command == "history":
        return _run_history(args)
    if args.command in ("profile", "suggest"):
        return _run_profiling(args, record_paths(words))
    if args.command == "schema":
        return _run_schema(args)
    try:
        return _run(args)
    except ColaError as error:
        return _refuse([args.results] if args.results else [], str(error), _kind(error))
    except KeyboardInterrupt:
        return 130
    except Exception as error:
        analysis = _analysis_error(error)
        if analysis is not None:
            return _refuse([args.results] if args.results else [], f"Spark refused a query: {analysis}", "query")
        traceback.print_exc()
        return EXIT_INTERNAL


def _run_history(args: argparse.Namespace) -> int:
    try:
        store = checked_history_arguments(args)  # before any JVM starts
        spark, started_here = spark_session(args.remote or args.master, ())
        try:
            print(run_history_command(args, spark, store), flush=True)
        finally:
            if started_here:
                stop_session(spark)
    except ColaError as error:
        _say_error(str(error))
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except Exception:
        traceback.print_exc()
        return EXIT_INTERNAL
    return EXIT_OK


def _run_schema(args: argparse.Namespace) -> int:
    """``cola schema``: pure Python, no JVM."""
    try:
        for package in args.checks:
            load_checks(package)
        text = json.dumps(Cola().rules_schema(), indent=2, ensure_ascii=False) + "\n"
        if args.out is None:
            sys.stdout.write(text)
        else:
            replace_file(Path(args.out), text, "the rules schema")
            print(f"cola: wrote the rules schema to {args.out}", flush=True)
    except ColaError as error:
        _say_error(str(error))
        return EXIT_ERROR
    return EXIT_OK


def _run_profiling(args: argparse.Namespace, records: list[str]) -> int:
    """``cola profile|suggest``; a refusal is written to each JSON file it was to write."""
    try:
        run_profile_command(args)
    except ColaError as error:
        return _refuse(records, str(error), _kind(error))
    except KeyboardInterrupt:
        return 130
    except Exception as error:
        analysis = _analysis_error(error)
        if analysis is not None:
            return _refuse(records, f"Spark refused a query: {analysis}", "query")
        traceback.print_exc()
        return EXIT_INTERNAL
    return EXIT_OK


def _refuse(records: Sequence[str], message: str, kind: str) -> int:
    """Say why the run was refused (exit 2), and write that down in each JSON file the command
    was to write (``--results``...): its caller reads the record, not this process's exit
    status and log (in cluster deploy mode they are not the job's), and a refused run must not
    be retried like a crash."""
    _say_error(message)
    _write_refusal(records, message, kind)
    return EXIT_ERROR


def _write_refusal(records: Sequence[str], message: str, kind: str) -> None:
    record = refusal_results(message, kind=kind)
    for text in records:
        # If the path itself is the problem, the message said so already. A record never makes
        # a folder: a missing folder may be the very thing refused, and nobody reads one there.
        with contextlib.suppress(ColaError):
            path = _local_results_path(text)
            if path.parent.is_dir():
                write_results_file(path, record)


def _kind(error: ColaError) -> str:
    """What a refusal refused (``report.results.REFUSAL_KINDS``), from cola_core's error."""
    for kind, classes in (("rules", (ColaRuleError, ThresholdError)), ("source", (ColaSourceError,)),
                          ("output", (ColaOutputError,))):
        if isinstance(error, classes):
            return kind
    return "error"


def _run(args: argparse.Namespace) -> int:
    results_path = _local_results_path(args.results) if args.results else None
    html_path = checked_page_path(args.html) if args.html else None
    # A results file or report left by an earlier run must never pass for this run's, if this one fails.
    if results_path is not None:
        remove_earlier_file(results_path, "results file")
    if html_path is not None:
        remove_earlier_file(html_path, "HTML report")
    # Everything that can be checked without Spark is checked first: no JVM for a typo.
    job = _loaded_keeping_contract_gaps(args)
    _refuse_missing_local_paths(job)
    spark, started_here = spark_session(job.spec.remote or job.spec.master, job.spec.conf)
    try:
        if job.spec.verbose:
            _say_provenance(spark)
        outcome = run_job(job, spark)
        print(
            render_table(
                outcome.results, valid_count=outcome.valid_count, invalid_count=outcome.invalid_count,
                colour=_colour_wanted(), cost=outcome.cost,
            ),
            flush=True,
        )
        if job.contract_gaps:
            # After the results, which come first (under spark-submit, in the task's log too).
            print(f"cola: warning: {unchecked_message(job.contract_gaps)}", file=sys.stderr, flush=True)
        if html_path is not None:
            # A page that cannot be written after the run is a warning: the run stands.
            warning = write_report_page(spark, job.spec, outcome, html_path)
            if warning is not None:
                print(f"cola: warning: {warning}", file=sys.stderr, flush=True)
        if results_path is not None:
            # Written last, so an existing results file always means a complete run.
            write_results_file(results_path, outcome.summary)
    finally:
        if started_here:
            stop_session(spark)
    return EXIT_OK if outcome.passed else job.spec.fail_exit_code


def _loaded_keeping_contract_gaps(args: argparse.Namespace) -> LoadedJob:
    """The job, its rules read. What a contract states that no rule checks is kept as the
    job's ``contract_gaps``, said once after the results (one plain ``cola: warning:`` line,
    not Python's warning with its source line); other warnings pass on as they are."""
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always", ContractWarning)
        job = load_job(job_spec(args))
    for warning in warned:
        if not issubclass(warning.category, ContractWarning):
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    return job


def _refuse_missing_local_paths(job: LoadedJob) -> None:
    """Refuse, before a JVM starts, a path on this machine the run would read and that does
    not exist: the source, then each rule's references in rule order, with the messages the
    run would give once Spark had started (``storage.read_source``, and
    ``preflight.read_inputs`` naming the rule). The rules file was read already.

    Only when the session is one ``cola`` starts here on a local master
    (:func:`_local_session_here`), whose driver reads this machine's files. A path with a
    scheme other than ``file:``, and a glob, are left to Spark (``storage.missing_local_path``).

    Raises:
        ColaSourceError: the source's path, or a reference's, does not exist.
    """
    if not _local_session_here(job.spec):
        return
    source = job.spec.source
    if source is not None and source.path is not None and missing_local_path(source.path):
        raise missing_input(source.path)
    for check in job.checks:
        for name, reference in check.references().items():
            if reference.path is not None and missing_local_path(reference.path):
                # Worded as preflight.read_inputs words a reference it cannot read.
                location = check.rule_error("").location
                raise ColaSourceError(f"{location}: cannot read the {name}: {missing_input(reference.path)}")


def _local_session_here(spec: JobSpec) -> bool:
    """Whether the run's session will be one ``cola`` starts in this process on a local
    master (``local``, ``local[n]``...), as ``session.spark_session`` decides: ``--master``,
    else ``spark.master`` in ``--conf``, else ``local[*]`` when nothing else names one. Not
    under spark-submit (its JVM is running already), over Spark Connect, beside a session
    already running in the process, or when PYSPARK_SUBMIT_ARGS or spark-defaults.conf
    choose the master: then the run's own checks say what is missing."""
    if spec.remote is not None or connect_mode() or "PYSPARK_GATEWAY_PORT" in os.environ:
        return False
    sql = sys.modules.get("pyspark.sql")  # never imported: no session can be running
    if sql is not None and sql.SparkSession.getActiveSession() is not None:
        return False
    master = spec.master or dict(spec.conf).get("spark.master")
    if master is None:
        if master_configured(()):
            return False
        master = "local[*]"
    return master.startswith("local")


def _local_results_path(text: str) -> Path:
    path = without_file_scheme(text)
    if "://" in path:
        raise ColaOutputError(
            f"--results must be a file the driver can write (a local path or a file: URI), got {text!r}"
        )
    return Path(path)


def _colour_wanted() -> bool:
    # Colour only for a person at a terminal: piped output (logs, files, grep) stays plain.
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def _say_error(message: str) -> None:
    print(f"cola: error: {message}", file=sys.stderr, flush=True)


def _say_provenance(spark: SparkSession) -> None:
    location = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the cola_core package
    try:
        master = spark.conf.get("spark.master", "unknown")
    except Exception:  # Spark Connect
        master = "spark connect"
    print(
        f"cola: cola_core {__version__} from {location}; Spark {spark.version}, master {master}",
        file=sys.stderr,
        flush=True,
    )


def _analysis_error(error: BaseException) -> str | None:
    """The first line of a Spark analysis error (bad SQL in a rule, say), else ``None``."""
    from pyspark.errors import AnalysisException

    return first_line(error) if isinstance(error, AnalysisException) else None
