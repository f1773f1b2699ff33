"""``JobSpec``: everything one Cola job is asked to do, as one frozen, typed value.

The command line, the Airflow operators and the decorator all describe a job with it, and
:func:`cola_core.job.runner.run_job` is its one consumer. Its one serialised form is the command
line of the ``cola`` program (:meth:`JobSpec.to_argv`): the operators hand it to
``spark-submit``, and the driver reads it back with ``cola_core.cli.args.job_spec``.

Everything here is pure Python, and every value is checked here, when the spec is made: a
malformed spec fails before any Spark work. An engine option is added here (a field, and its
flag in :meth:`JobSpec.to_argv`), in the parser (``cola_core.cli.args``), and read in ``run_job``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from cola_core import exit_status
from cola_core.common.values import utc_datetime
from cola_core.errors import ColaError
from cola_core.storage.specs import OutputSpec, SourceSpec, history_spec

__all__ = ["COMMANDS", "Command", "JobSpec", "checked_moment", "checked_samples", "source_argv"]

Command = Literal["check", "split"]
COMMANDS: tuple[Command, ...] = ("check", "split")
# The fields that hold a moment, kept as the ISO text of its UTC instant.
_MOMENTS = ("data_date", "data_interval_start", "data_interval_end", "logical_date")
# The options only a split has: they name its outputs or shape them.
_SPLIT_ONLY = ("valid_output", "invalid_output", "annotate", "checkpoint")


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
        checkpoint: for ``split`` of a streaming source (``SourceSpec.stream``, or a streaming
            DataFrame handed to ``run_job``), the folder where the query remembers which files
            it has split: each run splits only the files that arrived since (``split_stream``
            with ``availableNow``).
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
            it (see ``cola_core.history.store``), and the report shows it. From Airflow, the DAG
            run's logical date; without it, the run's own time.
        data_interval_start: from Airflow, the DAG run's data interval start (ISO text).
        data_interval_end: from Airflow, its end (ISO text).
        logical_date: from Airflow, the DAG run's logical date (ISO text).
        map_index: from Airflow, the mapped task instance's index.
        html: the local file the run's HTML report is written to, by the command line that
            runs the job (``cola check|split --html``; see ``cola_core.report.pages``); with
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
    checkpoint: str | None = None
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
            _store(self, "rules", tuple(self.rules))
        checked_samples(self.samples)
        _check_engine(self)
        _check_split(self)
        if self.history is None:
            if self.dataset is not None:
                raise ColaError("dataset is written beside the results in a history store; give history too")
        else:
            _store(self, "history", history_spec(self.history))
        _check_labels(self)
        _store(self, "quarantine_key", tuple(self.quarantine_key))
        _store(self, "check_packages", tuple(self.check_packages))
        _store(self, "conf", tuple((str(key), str(value)) for key, value in self.conf))

    @property
    def outputs(self) -> list[OutputSpec]:
        """Every output the job writes besides the results file."""
        return [o for o in (self.report, self.valid_output, self.invalid_output) if o is not None]

    def to_argv(self) -> list[str]:
        """The job as the command line of ``cola check|split``: its one serialised form, which
        ``cola_core.cli.args.job_spec`` reads back as this job.

        Raises:
            ColaError: the job has no source, or its rules are not a file.
        """
        if self.source is None:
            raise ColaError("a job run from the command line needs a source")
        if not isinstance(self.rules, str):
            raise ColaError("a job run from the command line reads its rules from a file")
        argv = [self.command, "--rules", self.rules, *source_argv(self.source)]
        argv += _flag("--results", self.results) + _flag("--html", self.html) + _flag("--pipeline", self.pipeline)
        argv += ["--samples", str(self.samples)]
        argv += _flag("--report", None if self.report is None else _output_text(self.report))
        if self.valid_output is not None and self.invalid_output is not None:
            argv += ["--valid-output", _output_text(self.valid_output)]
            argv += ["--invalid-output", _output_text(self.invalid_output)]
        argv += _flag("--annotate", self.annotate or None)
        for column in self.quarantine_key:
            argv += ["--quarantine-key", column]
        argv += ["--annotate-valid"] if self.annotate_valid else []
        argv += _flag("--checkpoint", self.checkpoint)
        for package in self.check_packages:
            argv += ["--checks", package]
        argv += _flag("--master", self.master) + _flag("--remote", self.remote)
        for key, value in self.conf:
            argv += ["--conf", f"{key}={value}"]
        argv += ["--verbose"] if self.verbose else []
        argv += ["--allow-external-access"] if self.allow_external_access else []
        argv += _flag("--history", None if self.history is None else _output_text(self.history))
        labels: tuple[tuple[str, str | None], ...] = (
            ("--dataset", self.dataset), ("--dag-id", self.dag_id), ("--task-id", self.task_id),
            ("--airflow-run-id", self.airflow_run_id), ("--data-date", self.data_date),
            ("--data-interval-start", self.data_interval_start), ("--data-interval-end", self.data_interval_end),
            ("--logical-date", self.logical_date),
            ("--map-index", None if self.map_index is None else str(self.map_index)),
        )
        for flag, label in labels:
            argv += _flag(flag, label)
        return [*argv, "--fail-exit-code", str(self.fail_exit_code)]


def _store(spec: JobSpec, name: str, value: Any) -> None:
    """Set a field of the frozen spec to its normalised value, while it is being made."""
    object.__setattr__(spec, name, value)


def _check_engine(spec: JobSpec) -> None:
    """Where the job runs, and what its rules may reach."""
    if spec.remote is not None:
        if not isinstance(spec.remote, str) or not spec.remote.startswith("sc://"):
            raise ColaError(f"remote must be a Spark Connect URL such as sc://host:15002, got {spec.remote!r}")
        if spec.master is not None:
            raise ColaError("give master or remote, not both: a Spark Connect client has no master of its own")
    if not isinstance(spec.allow_external_access, bool):
        raise ColaError(f"allow_external_access must be true or false, got {spec.allow_external_access!r}")


def _check_split(spec: JobSpec) -> None:
    """The options of a split: only on a split, and both its outputs on one."""
    splitting = spec.command == "split"
    for name in _SPLIT_ONLY:
        if not splitting and getattr(spec, name) is not None:
            raise ColaError(f"{name} only applies to a split job")
    if not splitting and spec.quarantine_key:
        raise ColaError("quarantine_key only applies to a split job")
    if not isinstance(spec.annotate_valid, bool):
        raise ColaError(f"annotate_valid must be true or false, got {spec.annotate_valid!r}")
    if spec.annotate_valid and not spec.annotate:
        raise ColaError("annotate_valid only applies to a split job with annotate")
    if splitting and (spec.valid_output is None or spec.invalid_output is None):
        raise ColaError("a split job needs both valid_output and invalid_output")
    if spec.checkpoint is not None and (not isinstance(spec.checkpoint, str) or not spec.checkpoint.strip()):
        raise ColaError(f"checkpoint must be the path of a folder, got {spec.checkpoint!r}")
    streaming = spec.source is not None and spec.source.stream
    if streaming and not splitting:
        raise ColaError("a streaming source is split, not checked: run a split job with a checkpoint")
    if streaming and spec.checkpoint is None:
        raise ColaError("a streaming source needs a checkpoint: the folder where the stream remembers "
                        "which files it has split")
    if spec.source is not None and not streaming and spec.checkpoint is not None:
        raise ColaError("checkpoint only applies to a streaming source (stream: true)")


def _check_labels(spec: JobSpec) -> None:
    """What the report and the history say about the run: its times as UTC ISO text."""
    for name in _MOMENTS:
        value = getattr(spec, name)
        if value is not None:
            _store(spec, name, checked_moment(value, name))
    if spec.map_index is not None and (isinstance(spec.map_index, bool) or not isinstance(spec.map_index, int)):
        raise ColaError(f"map_index must be a whole number, got {spec.map_index!r}")
    if spec.dataset is not None and (not isinstance(spec.dataset, str) or not spec.dataset.strip()):
        raise ColaError(f"dataset must be a non-empty name, got {spec.dataset!r}")
    if spec.html is not None and (not isinstance(spec.html, str) or not spec.html.strip()):
        raise ColaError(f"html must be the path of a file, got {spec.html!r}")


def _flag(flag: str, value: str | None) -> list[str]:
    return [] if value is None else [flag, value]


def source_argv(source: SourceSpec) -> list[str]:
    """The source's flags on the ``cola`` command line: ``--input`` (with ``--format`` and
    ``--option``), ``--table`` or ``--query``, as every command that reads a source takes them."""
    if source.path is not None:
        argv = ["--input", source.path, "--format", source.format]
        for key, value in source.options.items():
            argv += ["--option", f"{key}={value}"]
        argv += _flag("--schema", source.schema)
        return [*argv, "--stream"] if source.stream else argv
    if source.table is not None:
        return ["--table", source.table]
    return ["--query", cast(str, source.query)]


def _output_text(output: OutputSpec) -> str:
    """An output as an ``OUTPUT`` argument of the command line: the plain path when that says
    it all (a parquet folder, written as the mode's default), its config as JSON otherwise."""
    config = output.to_config()
    plain = list(config) == ["path"] and not config["path"].lstrip().startswith("{")
    return config["path"] if plain else json.dumps(config)
