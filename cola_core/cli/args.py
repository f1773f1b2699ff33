"""The parser of the ``cola`` command line: ``check``, ``split`` and ``history``.

``check`` and ``split`` take the flags of :class:`~cola_core.job.spec.JobSpec`'s fields, and
:func:`job_spec` reads a parsed command line back as the job: it is the inverse of
``JobSpec.to_argv``, the form in which the operators hand a job to ``spark-submit``. The
values themselves are checked by ``JobSpec``; here the text of a flag becomes a value (an
``OUTPUT``'s inline JSON, a ``KEY=VALUE``), and a usage error is argparse's (exit status 2).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from typing import Any

from cola_core import exit_status
from cola_core._version import __version__
from cola_core.cli.usage import UsageParser
from cola_core.errors import ColaOutputError
from cola_core.job.spec import JobSpec, checked_moment
from cola_core.storage.specs import FORMATS, OutputSpec, history_spec, parse_output, parse_source

__all__ = [
    "build_parser", "job_from_argv", "job_spec", "output_argument", "parse_arguments", "remote_url", "source_config",
]


def parse_arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line, parsed.

    Raises:
        SystemExit: argparse's: 0 after ``--help`` or ``--version``, 2 for a usage error (said
            on stderr), such as ``--format`` without ``--input``.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command not in ("history", "schema"):
        if args.format is not None and args.input is None:
            parser.error("--format only applies with --input")
        if args.option and args.input is None:
            parser.error("--option only applies with --input")
        if args.schema is not None and args.input is None:
            parser.error("--schema only applies with --input")
    if args.command == "split":
        if args.stream and args.input is None:
            parser.error("--stream only applies with --input (a folder that files arrive in)")
        if args.stream != (args.checkpoint is not None):
            parser.error("--stream and --checkpoint go together: a stream remembers in its checkpoint "
                         "which files it has split")
    return args


def job_from_argv(argv: Sequence[str]) -> JobSpec:
    """The job a ``cola check|split`` command line describes: ``JobSpec.to_argv`` read back.

    Raises:
        SystemExit: a usage error (see :func:`parse_arguments`).
        ColaError: a value the job refuses (see :func:`job_spec`).
    """
    return job_spec(parse_arguments(argv))


def job_spec(args: argparse.Namespace) -> JobSpec:
    """The job :func:`parse_arguments` read from a ``check`` or ``split`` command line.

    Raises:
        ColaError: a source or output that is malformed, or a ``--data-date`` that names no
            instant (named by its flag); any other value the job refuses.
    """
    splitting = args.command == "split"
    return JobSpec(
        command=args.command,
        rules=args.rules,
        source=parse_source(source_config(args)),
        results=args.results,
        report=output_argument(args.report, "--report") if args.report else None,
        pipeline=args.pipeline,
        samples=args.samples,
        fail_exit_code=args.fail_exit_code,
        check_packages=tuple(args.checks),
        allow_external_access=args.allow_external_access,
        valid_output=output_argument(args.valid_output, "--valid-output") if splitting else None,
        invalid_output=output_argument(args.invalid_output, "--invalid-output") if splitting else None,
        annotate=args.annotate if splitting else None,
        quarantine_key=tuple(args.quarantine_key) if splitting else (),
        annotate_valid=bool(args.annotate_valid) if splitting else False,
        checkpoint=args.checkpoint if splitting else None,
        master=args.master,
        remote=args.remote,
        conf=tuple(args.conf),
        verbose=args.verbose,
        history=output_argument(args.history, "--history", history_spec) if args.history else None,
        dataset=args.dataset,
        dag_id=args.dag_id,
        task_id=args.task_id,
        airflow_run_id=args.airflow_run_id,
        # Checked here as well as by the job, so that the message names the flag.
        data_date=None if args.data_date is None else checked_moment(args.data_date, "--data-date"),
        data_interval_start=args.data_interval_start,
        data_interval_end=args.data_interval_end,
        logical_date=args.logical_date,
        map_index=args.map_index,
        html=args.html,
    )


def remote_url(text: str) -> str:
    """Refuse (as a usage error) a ``--remote`` that is not a Spark Connect URL."""
    if not text.startswith("sc://"):
        raise argparse.ArgumentTypeError(f"a Spark Connect URL looks like sc://host:15002, got {text!r}")
    return text


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``cola`` command: ``check`` and ``split``, whose flags are
    the fields of :class:`JobSpec`, and ``history``."""
    # Typed as argparse's own: the subcommands' parsers are UsageParsers too (add_subparsers makes them
    # of the parser's class), whatever their parents are.
    parser: argparse.ArgumentParser = UsageParser(
        prog="cola",
        description="Validate a Spark source against data-quality rules.",
        epilog="exit status: 0 nothing failed (warns are fine), 1 a check failed, "
        "2 usage/rules/source/output error, 3 unexpected error",
    )
    parser.add_argument("--version", action="version", version=f"cola {__version__}")
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="{check,split,profile,suggest,history,schema}"
    )
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
        "--annotate-valid", action="store_true",
        help="write the --annotate column (NULL) to the valid rows too, which spares copying them",
    )
    outputs.add_argument(
        "--quarantine-key", action="append", default=[], metavar="COLUMN",
        help="reject every row sharing this key with a rejected row (repeat for a composite key)",
    )
    streaming = split.add_argument_group("streaming --input")
    streaming.add_argument(
        "--stream", action="store_true",
        help="split only the files that arrived in --input since the last run, each batch published once "
        "(needs --schema and --checkpoint)",
    )
    streaming.add_argument(
        "--checkpoint", metavar="PATH",
        help="the folder where the stream remembers which files it has split; keep it between runs",
    )
    _add_profile_commands(commands)
    _add_history_command(commands.add_parser(
        "history", help="exclude a run, prune old rows, or print summaries of a history store",
        description="Work on a history store: the rows that --history appends, one per result per run.",
    ))
    schema = commands.add_parser(
        "schema", help="print the JSON Schema of rules files, for editors and CI",
        description="Print the JSON Schema of a rules file: every rule type with its parameters, custom ones "
        "included with --checks.",
    )
    schema.add_argument("--out", metavar="FILE", help="write the schema here instead of printing it")
    schema.add_argument(
        "--checks", action="append", default=[], metavar="PACKAGE",
        help="import this package of custom checks (@register_check) first, so its rule types are in the schema "
        "(repeatable)",
    )
    return parser


def _common_arguments() -> argparse.ArgumentParser:
    """The flags ``check`` and ``split`` share."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--rules", required=True, metavar="FILE", help="the rules, as a JSON or YAML file")
    common.add_argument(
        "--checks", action="append", default=[], metavar="PACKAGE",
        help="import this package of custom checks (@register_check) before reading the rules (repeatable)",
    )
    common.add_argument(
        "--allow-external-access", action="store_true",
        help="let the rules' SQL call JVM functions (reflect, java_method) and read files through "
        "path relations; only for trusted rules (see the documentation's security model)",
    )
    _add_source_arguments(common)
    results = common.add_argument_group("results")
    results.add_argument("--results", metavar="FILE", help="write the results summary here as JSON")
    results.add_argument(
        "--report", metavar="OUTPUT", help="write the report (one row per result) to this output"
    )
    results.add_argument(
        "--html", metavar="FILE",
        help="write the run's report here as one HTML page (with --history, with each rule's trend)",
    )
    results.add_argument("--pipeline", metavar="NAME", help="the pipeline name written in the report")
    results.add_argument(
        "--samples", type=int, default=0, metavar="N",
        help="keep up to N offending rows of each failed row rule in the results (one extra job)",
    )
    _add_history_arguments(common)
    results.add_argument(
        "--fail-exit-code", type=int, default=exit_status.FAILED, metavar="N",
        help="exit status when a check failed (default: 1; 0 lets a caller decide from --results)",
    )
    spark = common.add_argument_group("spark")
    spark.add_argument(
        "--master", metavar="URL",
        help="the Spark master; by default spark-submit's, or local[*] when run directly with none set",
    )
    spark.add_argument(
        "--remote", metavar="sc://HOST:PORT", type=remote_url,
        help="run as a client of this Spark Connect server instead (no spark-submit; SPARK_REMOTE works too)",
    )
    spark.add_argument(
        "--conf", action="append", default=[], type=_key_value, metavar="KEY=VALUE",
        help="a Spark setting for a session this command starts (repeatable)",
    )
    common.add_argument(
        "-v", "--verbose", action="store_true", help="say on stderr which cola_core and Spark ran"
    )
    return common


def _add_source_arguments(parser: argparse.ArgumentParser) -> None:
    """SOURCE: ``--input`` (with ``--format`` and ``--option``), ``--table`` or ``--query``."""
    source = parser.add_argument_group("source (give one)").add_mutually_exclusive_group(required=True)
    source.add_argument("--input", metavar="PATH", help="a file or folder to read")
    source.add_argument("--table", metavar="NAME", help="a catalog table, e.g. db.orders")
    source.add_argument("--query", metavar="SQL", help="a read-only SELECT or WITH query")
    reading = parser.add_argument_group("reading --input")
    # Checked by parse_source rather than argparse choices, for one message on every Python.
    reading.add_argument(
        "--format", metavar="FORMAT", help=f"the input format: {', '.join(FORMATS)} (default: parquet)"
    )
    reading.add_argument(
        "--option", action="append", default=[], type=_key_value, metavar="KEY=VALUE",
        help="a reader option, e.g. header=true (repeatable)",
    )
    reading.add_argument(
        "--schema", metavar="DDL",
        help="the columns as Spark DDL, e.g. 'id INT, name STRING', instead of inferring them",
    )


def _add_profile_commands(commands: Any) -> None:
    """``cola profile`` and ``cola suggest`` (``cola_core.cli.profiling`` carries them out)."""
    shared = argparse.ArgumentParser(add_help=False)
    _add_source_arguments(shared)
    shared.add_argument(
        "--columns", type=_names, metavar="A,B,...", help="profile only these columns, in this order"
    )
    shared.add_argument(
        "--sample", type=float, metavar="FRACTION",
        help="profile this fraction of the rows (above 0, at most 1), drawn with a fixed seed",
    )
    spark = shared.add_argument_group("spark")
    session = spark.add_mutually_exclusive_group()
    session.add_argument("--master", metavar="URL", help="the Spark master of the session started (default local[*])")
    session.add_argument(
        "--remote", metavar="sc://HOST:PORT", type=remote_url, help="run as a client of this Spark Connect server"
    )
    spark.add_argument(
        "--conf", action="append", default=[], type=_key_value, metavar="KEY=VALUE",
        help="a Spark setting for a session this command starts (repeatable)",
    )
    profile = commands.add_parser(
        "profile", parents=[shared], help="print every column's statistics, from one scan",
        description="Profile a source: per column, NULLs, distinct values, bounds, lengths, formats, top values.",
    )
    profile.add_argument("--out", metavar="FILE", help="also write the profile here as JSON")
    suggest = commands.add_parser(
        "suggest", parents=[shared], help="profile, and suggest a rule block that passes on the data",
        description="Profile a source and suggest rules, each named for why; review them before you commit them.",
    )
    suggest.add_argument(
        "--strictness", default="exact", metavar="exact|margin",
        help="bounds at the observed values (exact, the default) or widened by a tenth (margin)",
    )
    suggest.add_argument(
        "--out", metavar="FILE",
        help="write the rules here (JSON for a .json file, else YAML with a comment per rule) instead of printing them",
    )
    suggest.add_argument("--profile-out", metavar="FILE", help="also write the profile here as JSON")
    suggest.add_argument(
        "--now", metavar="DATE",
        help="the instant a freshness suggestion's age is taken at, ISO (UTC without a zone); default: the end of "
        "--data-date's day (no freshness suggestion without either)",
    )
    learned = suggest.add_argument_group("thresholds from history")
    learned.add_argument(
        "--history", metavar="OUTPUT",
        help="a history store (a path or an output): row counts and NULL and invalid shares measured on at "
        "least 3 earlier data intervals of --dataset take their thresholds from those runs",
    )
    learned.add_argument("--dataset", metavar="NAME", help="with --history, the dataset whose runs to learn from")
    learned.add_argument(
        "--data-date", metavar="DATE",
        help="the date of the data profiled (ISO; UTC without a zone): a freshness age is taken at its end, and "
        "with --history only earlier intervals are read (default: all up to now)",
    )


def _names(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"expected column names separated by commas, got {text!r}")
    return names


def _add_history_arguments(common: argparse.ArgumentParser) -> None:
    """The flags of a job's history, and the labels of the run that the operators set."""
    history = common.add_argument_group("history")
    history.add_argument(
        "--history", metavar="OUTPUT", help="append one row per result to this history store (a path or an output)"
    )
    history.add_argument(
        "--dataset", metavar="NAME", help="what was checked, in the history (default: the source's path or table)"
    )
    history.add_argument(
        "--data-date", metavar="DATE",
        help="the date of the data checked, an ISO date or timestamp (UTC without a zone); the "
        "history keys the run by it, so a rerun or backfill compares with the interval before (default: the "
        "run's own time)",
    )
    # Set by the Airflow operators: the task's ids and its DAG run's interval, for the report and the history.
    history.add_argument("--dag-id", metavar="ID", help=argparse.SUPPRESS)
    history.add_argument("--task-id", metavar="ID", help=argparse.SUPPRESS)
    history.add_argument("--airflow-run-id", metavar="ID", help=argparse.SUPPRESS)
    history.add_argument("--data-interval-start", metavar="DATE", help=argparse.SUPPRESS)
    history.add_argument("--data-interval-end", metavar="DATE", help=argparse.SUPPRESS)
    history.add_argument("--logical-date", metavar="DATE", help=argparse.SUPPRESS)
    history.add_argument("--map-index", type=int, metavar="N", help=argparse.SUPPRESS)


def _add_history_command(history: argparse.ArgumentParser) -> None:
    """``cola history`` and its actions (``cola_core.cli.history`` carries them out)."""
    actions = history.add_subparsers(
        dest="action", required=True, metavar="{exclude,prune,daily,dimensions,trend,top,html}"
    )
    store = argparse.ArgumentParser(add_help=False)
    store.add_argument("--history", required=True, metavar="OUTPUT", help="the history store (a path or an output)")
    session = store.add_mutually_exclusive_group()
    session.add_argument("--master", metavar="URL", help="the Spark master of the session started (default local[*])")
    session.add_argument(
        "--remote", metavar="sc://HOST:PORT", type=remote_url, help="run as a client of this Spark Connect server"
    )
    exclude = actions.add_parser("exclude", parents=[store], help="mark a run so that baselines skip it")
    exclude.add_argument("--run-id", required=True, metavar="ID", help="the run to exclude")
    prune = actions.add_parser("prune", parents=[store], help="delete rows written longer ago than a duration")
    prune.add_argument(
        "--older-than", required=True, metavar="DURATION",
        help="such as 90d, 12h or 3600s, counted from when each row was written (not its data's date)",
    )
    for name, words in (("daily", "runs and outcomes per data date and dataset"),
                        ("dimensions", "outcomes per data date, dataset and dimension"),
                        ("trend", "a rule's outcomes and metric per data date"),
                        ("top", "the rules with the lowest pass rate")):
        summary = actions.add_parser(name, parents=[store], help=words)
        summary.add_argument("--dataset", metavar="NAME", help="only this dataset")
        summary.add_argument("--days", type=int, metavar="N", help="only the data dates of the last N days (UTC)")
        summary.add_argument("--json", action="store_true", help="print one JSON object per row instead of a table")
        if name == "trend":
            summary.add_argument("--rule-id", metavar="ID", help="only this rule")
        if name == "top":
            summary.add_argument("--top", type=int, default=10, metavar="N", help="how many rules (default 10)")
    page = actions.add_parser(
        "html", parents=[store], help="write an HTML index: every dataset and rule, worst first, with its trend"
    )
    page.add_argument("path", metavar="PATH", help="the HTML file to write (a local path or a file: URI)")
    page.add_argument(
        "--runs", type=int, default=20, metavar="N", help="the data intervals each trend shows (default 20)"
    )


def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value


def source_config(args: argparse.Namespace) -> dict[str, Any]:
    """The source a command line names (``--input``, ``--table`` or ``--query``), as a config."""
    if args.input is not None:
        config: dict[str, Any] = {"path": args.input, "format": args.format or "parquet", "options": dict(args.option)}
        if args.schema is not None:
            config["schema"] = args.schema
        if getattr(args, "stream", False):  # only split has --stream
            config["stream"] = True
        return config
    if args.table is not None:
        return {"table": args.table}
    return {"query": args.query}


def output_argument(text: str, flag: str, parse: Callable[[Any], OutputSpec] = parse_output) -> OutputSpec:
    """An ``OUTPUT`` argument: inline JSON (``{"path": ..., "mode": ...}``) or a plain parquet path."""
    config: Any = text
    if text.lstrip().startswith("{"):
        try:
            config = json.loads(text)
        except json.JSONDecodeError as error:
            raise ColaOutputError(
                f"{flag} is not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})"
            ) from error
    try:
        return parse(config)
    except ColaOutputError as error:
        raise ColaOutputError(f"{flag}: {error}") from error
