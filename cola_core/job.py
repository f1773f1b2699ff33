"""``JobSpec``: everything one Cola job is asked to do, as one frozen, typed value.

The command line, the Airflow operators and the decorator all describe a job with it, and
:func:`cola_core.runner.run_job` is its one consumer. It has two forms besides the object:

- the command line (:func:`job_parser`, :meth:`JobSpec.from_args`, :meth:`JobSpec.to_argv`),
  which is how the operators hand a job to ``spark-submit``;
- JSON (:meth:`JobSpec.to_json`, :meth:`JobSpec.from_json`).

Everything here is pure Python: a malformed spec fails before any Spark work. An engine
option is added here (a field, its flag) and read in ``run_job``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from cola_core import exit_status
from cola_core._values import utc_datetime
from cola_core._version import __version__
from cola_core.errors import ColaError, ColaOutputError
from cola_core.specs import FORMATS, OutputSpec, SourceSpec, history_spec, parse_output, parse_source

__all__ = [
    "COMMANDS", "Command", "JobSpec", "checked_moment", "checked_samples", "job_parser", "remote_url",
]

Command = Literal["check", "split"]
COMMANDS: tuple[Command, ...] = ("check", "split")
# The exit status of a run in which a check failed, unless the job says otherwise.


def checked_samples(samples: Any) -> int:
    """``samples`` as given, when it is a whole number >= 0; a ColaError otherwise."""
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 0:
        raise ColaError(f"samples must be a whole number >= 0, got {samples!r}")
    return samples


def checked_moment(value: Any, name: str) -> str:
    """``value`` (ISO text, a date or a datetime) as the ISO text of its UTC instant.

    Raises:
        ColaError: naming ``name``, for a value that names no instant.
    """
    try:
        return utc_datetime(value).isoformat()
    except ValueError as error:
        raise ColaError(
            f"{name} must be an ISO date or timestamp such as 2024-01-31 or 2024-01-31T06:00:00Z: {error}"
        ) from error


@dataclass(frozen=True)
class JobSpec:
    """One Cola job: what to read, which rules to run, and what to write.

    Attributes:
        command: ``check`` measures; ``split`` also writes the valid and invalid rows.
        rules: the path of a JSON or YAML rules file, or the rule dicts themselves.
        source: what to read; ``None`` when the caller hands ``run_job`` a DataFrame.
        results: the file the results summary is written to, as JSON.
        report: where the report (one row per result) is written.
        pipeline: the pipeline name written in the report.
        samples: keep up to this many offending rows of each failed row rule.
        fail_exit_code: the command's exit status when a check failed.
        check_packages: packages of custom checks to import before the rules are read.
        allow_external_access: let the rules' SQL reach outside the data
            (``Cola(allow_external_access=True)``).
        valid_output: for ``split``, where the rows that break no rule go.
        invalid_output: for ``split``, where the other rows go.
        annotate: for ``split``, the column of broken rule codes added to the invalid rows.
        quarantine_key: for ``split``, columns naming an entity whose rows are rejected together.
        annotate_valid: for ``split`` with ``annotate``, write its column (NULL) to the valid
            output as well, which spares a copy of the valid rows.
        master: the Spark master of a session the job starts.
        remote: instead of ``master``, a Spark Connect server (``sc://host:15002``): the job
            runs as its client, with no spark-submit.
        conf: Spark settings of a session the job starts.
        verbose: say on stderr which cola_core and Spark ran.
        history: the history store each result is appended to (append only).
        dataset: with ``history``, what was checked; the source's path, table or query hash
            by default.
        dag_id: from Airflow, shown in the HTML report and written beside each result in
            the history.
        task_id: from Airflow, likewise.
        airflow_run_id: from Airflow, likewise.
        data_date: the date of the data the job checks, ISO text (``2024-01-02``,
            ``2024-01-02T06:00:00+00:00``; without a zone, UTC): the history keys the run by
            it (see ``cola_core.history``), and the report shows it. From Airflow, the DAG
            run's logical date; without it, the run's own time.
        data_interval_start: from Airflow, the DAG run's data interval start (ISO text).
        data_interval_end: from Airflow, its end (ISO text).
        logical_date: from Airflow, the DAG run's logical date (ISO text).
        map_index: from Airflow, the mapped task instance's index.
        html: the local file the run's HTML report is written to, by the command line that
            runs the job (``cola check|split --html``; see ``cola_core.pages``); with
            ``history``, each rule's trend over its last 20 runs is drawn in it.
    """

    command: Command = "check"
    rules: str | tuple[Mapping[str, Any], ...] = ()
    source: SourceSpec | None = None
    results: str | None = None
    report: OutputSpec | None = None
    pipeline: str | None = None
    samples: int = 0
    fail_exit_code: int = exit_status.FAILED
    check_packages: tuple[str, ...] = ()
    allow_external_access: bool = False
    valid_output: OutputSpec | None = None
    invalid_output: OutputSpec | None = None
    annotate: str | None = None
    quarantine_key: tuple[str, ...] = ()
    annotate_valid: bool = False
    master: str | None = None
    remote: str | None = None
    conf: tuple[tuple[str, str], ...] = field(default=())
    verbose: bool = False
    history: OutputSpec | None = None
    dataset: str | None = None
    dag_id: str | None = None
    task_id: str | None = None
    airflow_run_id: str | None = None
    data_date: str | None = None
    data_interval_start: str | None = None
    data_interval_end: str | None = None
    logical_date: str | None = None
    map_index: int | None = None
    html: str | None = None

    def __post_init__(self) -> None:
        if self.command not in COMMANDS:
            raise ColaError(f"a job's command is 'check' or 'split', got {self.command!r}")
        if not isinstance(self.rules, str):
            object.__setattr__(self, "rules", tuple(self.rules))
        checked_samples(self.samples)
        if self.remote is not None:
            if not isinstance(self.remote, str) or not self.remote.startswith("sc://"):
                raise ColaError(f"remote must be a Spark Connect URL such as sc://host:15002, got {self.remote!r}")
            if self.master is not None:
                raise ColaError("give master or remote, not both: a Spark Connect client has no master of its own")
        if not isinstance(self.allow_external_access, bool):
            raise ColaError(f"allow_external_access must be true or false, got {self.allow_external_access!r}")
        splitting = self.command == "split"
        for name in ("valid_output", "invalid_output", "annotate"):
            if not splitting and getattr(self, name) is not None:
                raise ColaError(f"{name} only applies to a split job")
        if not splitting and self.quarantine_key:
            raise ColaError("quarantine_key only applies to a split job")
        if not isinstance(self.annotate_valid, bool):
            raise ColaError(f"annotate_valid must be true or false, got {self.annotate_valid!r}")
        if self.annotate_valid and not self.annotate:
            raise ColaError("annotate_valid only applies to a split job with annotate")
        if splitting and (self.valid_output is None or self.invalid_output is None):
            raise ColaError("a split job needs both valid_output and invalid_output")
        if self.history is None:
            if self.dataset is not None:
                raise ColaError("dataset is written beside the results in a history store; give history too")
        else:
            object.__setattr__(self, "history", history_spec(self.history))
        for name in ("data_date", "data_interval_start", "data_interval_end", "logical_date"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, checked_moment(value, name))
        if self.map_index is not None and (isinstance(self.map_index, bool) or not isinstance(self.map_index, int)):
            raise ColaError(f"map_index must be a whole number, got {self.map_index!r}")
        if self.dataset is not None and (not isinstance(self.dataset, str) or not self.dataset.strip()):
            raise ColaError(f"dataset must be a non-empty name, got {self.dataset!r}")
        if self.html is not None and (not isinstance(self.html, str) or not self.html.strip()):
            raise ColaError(f"html must be the path of a file, got {self.html!r}")
        object.__setattr__(self, "quarantine_key", tuple(self.quarantine_key))
        object.__setattr__(self, "check_packages", tuple(self.check_packages))
        object.__setattr__(self, "conf", tuple((str(key), str(value)) for key, value in self.conf))

    @property
    def outputs(self) -> list[OutputSpec]:
        """Every output the job writes besides the results file."""
        return [o for o in (self.report, self.valid_output, self.invalid_output) if o is not None]

    # -- the command line ---------------------------------------------------------------

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> JobSpec:
        """The job :func:`job_parser` read from a command line.

        Raises:
            ColaError: a source or output that is malformed (named by its flag).
        """
        splitting = args.command == "split"
        return cls(
            command=args.command,
            rules=args.rules,
            source=parse_source(_source_config(args)),
            results=args.results,
            report=_output_argument(args.report, "--report") if args.report else None,
            pipeline=args.pipeline,
            samples=args.samples,
            fail_exit_code=args.fail_exit_code,
            check_packages=tuple(args.checks),
            allow_external_access=args.allow_external_access,
            valid_output=_output_argument(args.valid_output, "--valid-output") if splitting else None,
            invalid_output=_output_argument(args.invalid_output, "--invalid-output") if splitting else None,
            annotate=args.annotate if splitting else None,
            quarantine_key=tuple(args.quarantine_key) if splitting else (),
            annotate_valid=bool(args.annotate_valid) if splitting else False,
            master=args.master,
            remote=args.remote,
            conf=tuple(args.conf),
            verbose=args.verbose,
            history=_output_argument(args.history, "--history", history_spec) if args.history else None,
            dataset=args.dataset,
            dag_id=args.dag_id,
            task_id=args.task_id,
            airflow_run_id=args.airflow_run_id,
            data_date=None if args.data_date is None else checked_moment(args.data_date, "--data-date"),
            data_interval_start=args.data_interval_start,
            data_interval_end=args.data_interval_end,
            logical_date=args.logical_date,
            map_index=args.map_index,
            html=args.html,
        )

    def to_argv(self) -> list[str]:
        """The command line that :meth:`from_args` reads back as this job.

        Raises:
            ColaError: the job has no source, or its rules are not a file.
        """
        if self.source is None:
            raise ColaError("a job run from the command line needs a source")
        if not isinstance(self.rules, str):
            raise ColaError("a job run from the command line reads its rules from a file")
        argv = [self.command, "--rules", self.rules, *_source_argv(self.source)]
        if self.results is not None:
            argv += ["--results", self.results]
        if self.html is not None:
            argv += ["--html", self.html]
        if self.pipeline is not None:
            argv += ["--pipeline", self.pipeline]
        argv += ["--samples", str(self.samples)]
        if self.report is not None:
            argv += ["--report", _output_text(self.report)]
        if self.valid_output is not None and self.invalid_output is not None:
            argv += ["--valid-output", _output_text(self.valid_output)]
            argv += ["--invalid-output", _output_text(self.invalid_output)]
        if self.annotate:
            argv += ["--annotate", self.annotate]
        for column in self.quarantine_key:
            argv += ["--quarantine-key", column]
        if self.annotate_valid:
            argv += ["--annotate-valid"]
        for package in self.check_packages:
            argv += ["--checks", package]
        if self.master is not None:
            argv += ["--master", self.master]
        if self.remote is not None:
            argv += ["--remote", self.remote]
        for key, value in self.conf:
            argv += ["--conf", f"{key}={value}"]
        if self.verbose:
            argv.append("--verbose")
        if self.allow_external_access:
            argv.append("--allow-external-access")
        if self.history is not None:
            argv += ["--history", _output_text(self.history)]
        labels: tuple[tuple[str, str | None], ...] = (
            ("--dataset", self.dataset), ("--dag-id", self.dag_id), ("--task-id", self.task_id),
            ("--airflow-run-id", self.airflow_run_id), ("--data-date", self.data_date),
            ("--data-interval-start", self.data_interval_start), ("--data-interval-end", self.data_interval_end),
            ("--logical-date", self.logical_date),
            ("--map-index", None if self.map_index is None else str(self.map_index)),
        )
        for flag, label in labels:
            if label is not None:
                argv += [flag, label]
        return [*argv, "--fail-exit-code", str(self.fail_exit_code)]

    # -- JSON ---------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The job as JSON-safe data; :meth:`from_dict` reads it back."""
        data: dict[str, Any] = {}
        for spec_field in dataclasses.fields(self):
            value = getattr(self, spec_field.name)
            if isinstance(value, (SourceSpec, OutputSpec)):
                value = value.to_config()
            elif isinstance(value, tuple):
                value = [list(item) if isinstance(item, tuple) else item for item in value]
            data[spec_field.name] = value
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JobSpec:
        """A job from :meth:`to_dict`'s form; unknown keys are an error."""
        known = [spec_field.name for spec_field in dataclasses.fields(cls)]
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ColaError(f"unknown job keys {unknown}; valid keys are {', '.join(known)}")
        values = dict(data)
        if values.get("source") is not None:
            values["source"] = parse_source(values["source"])
        for name in ("report", "valid_output", "invalid_output"):
            if values.get(name) is not None:
                values[name] = parse_output(values[name])
        if values.get("history") is not None:
            values["history"] = history_spec(values["history"])
        if isinstance(values.get("rules"), list):
            values["rules"] = tuple(values["rules"])
        values["conf"] = tuple(tuple(pair) for pair in values.get("conf", ()))
        return cls(**values)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> JobSpec:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ColaError(f"a job is a JSON object, got {type(data).__name__}")
        return cls.from_dict(data)


def remote_url(text: str) -> str:
    """Refuse (as a usage error) a ``--remote`` that is not a Spark Connect URL."""
    if not text.startswith("sc://"):
        raise argparse.ArgumentTypeError(f"a Spark Connect URL looks like sc://host:15002, got {text!r}")
    return text


def job_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``cola`` command: ``check`` and ``split``, whose flags are
    the fields of :class:`JobSpec`."""
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
        "--annotate-valid", action="store_true",
        help="write the --annotate column (NULL) to the valid rows too, which spares copying them",
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
    results.add_argument(
        "--html", metavar="FILE",
        help="write the run's report here as one HTML page (with --history, with each rule's trend)",
    )
    results.add_argument("--pipeline", metavar="NAME", help="the pipeline name written in the report")
    results.add_argument(
        "--samples", type=int, default=0, metavar="N",
        help="keep up to N offending rows of each failed row rule in the results (one extra job)",
    )
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


def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value


def _source_config(args: argparse.Namespace) -> dict[str, Any]:
    if args.input is not None:
        return {"path": args.input, "format": args.format or "parquet", "options": dict(args.option)}
    if args.table is not None:
        return {"table": args.table}
    return {"query": args.query}


def _source_argv(source: SourceSpec) -> list[str]:
    if source.path is not None:
        argv = ["--input", source.path, "--format", source.format]
        for key, value in source.options.items():
            argv += ["--option", f"{key}={value}"]
        return argv
    if source.table is not None:
        return ["--table", source.table]
    return ["--query", cast(str, source.query)]


def _output_argument(text: str, flag: str, parse: Callable[[Any], OutputSpec] = parse_output) -> OutputSpec:
    """An OUTPUT argument: inline JSON (``{"path": ..., "mode": ...}``) or a plain parquet path."""
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


def _output_text(output: OutputSpec) -> str:
    """An output as :func:`_output_argument` reads it: the plain path when that says it all."""
    config = output.to_config()
    plain = list(config) == ["path"] and not config["path"].lstrip().startswith("{")
    return config["path"] if plain else json.dumps(config)

