"""Checks made in the worker before any Spark work: rules, source and outputs.

Every problem found here is a :class:`~airflow_provider_cola.errors.ColaConfigError`, so the
task fails at once with the engine's own message and nothing is submitted.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airflow_provider_cola.errors import ColaConfigError
from cola_core import Cola, ColaError
from cola_core.contracts import ContractRules, ContractWarning
from cola_core.language.files import read_rules_file
from cola_core.storage.readwrite import missing_local_path
from cola_core.storage.specs import OutputSpec, SourceSpec, history_spec, parse_output, parse_source

if TYPE_CHECKING:
    from cola_core.checks.base import BaseCheck


__all__ = [
    "RuleBlock", "checked_local_path", "checked_output", "checked_source", "dag_folder", "engine", "load_rules",
    "run_job_fields", "split_job_fields",
]


def dag_folder(dag: Any) -> Path | None:
    """The folder of the DAG's file (symlinks followed), where relative rule files live."""
    fileloc = getattr(dag, "fileloc", None)
    return Path(fileloc).resolve().parent if fileloc else None


class RuleBlock:
    """A validated rule block, and the file it came from (``None`` for inline rules).

    Attributes:
        rules: the rule dicts, as the engine reads them.
        path: the JSON/YAML file the rules were read from, when they came from one.
        checks: the parsed checks, in rule order after ``targets`` expansion: a run of the
            block gives one result per check, with its ``rule_type``, ``code`` and (when the
            rule has one) ``name`` as ``check_name``.
        contract_gaps: for a data contract, the parts of it no rule checks
            (``ContractRules.gaps``): the run's results carry them; empty otherwise.
    """

    def __init__(
        self, rules: list[Any], path: Path | None, checks: Sequence[BaseCheck], contract_gaps: Sequence[str] = ()
    ) -> None:
        self.rules = rules
        self.path = path
        self.checks = tuple(checks)
        self.contract_gaps = tuple(contract_gaps)

    @property
    def size(self) -> int:
        """How many results a run of the block gives (its rules after ``targets`` expansion)."""
        return len(self.checks)


def engine(allow_external_access: bool = False) -> Cola:
    """The engine the provider validates and runs rules with.

    Args:
        allow_external_access: let SQL text in rules call JVM functions and read storage
            (``Cola(allow_external_access=True)``); only for trusted rules.
    """
    return Cola(allow_external_access=allow_external_access)


def load_rules(
    rules: Any,
    *,
    base_dir: str | Path | None = None,
    cola: Cola | None = None,
    allow_external_access: bool = False,
) -> RuleBlock:
    """Read (when ``rules`` is a path) and validate a rule block without touching Spark.

    Args:
        rules: a list of rule dicts, or the path of a JSON or YAML file holding them. A
            relative path is taken from ``base_dir`` (the DAG file's folder).
        base_dir: where relative rule files live.
        cola: the engine whose rule types apply (built-ins by default).
        allow_external_access: validate as the job will run them, with SQL text in rules
            allowed to reach outside the data (ignored when ``cola`` is given).

    Raises:
        ColaConfigError: the file cannot be read or parsed, or a rule is malformed (the
            message is the ``ColaRuleError`` text, which names the rule).
    """
    path = None
    if isinstance(rules, (str, Path)):
        path = Path(rules)
        if not path.is_absolute() and base_dir is not None:
            path = Path(base_dir) / path
        try:
            # A contract's gaps are data (its ContractRules.gaps), said with the run's results.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ContractWarning)
                rules = read_rules_file(path)
        except ColaError as error:
            raise ColaConfigError(str(error)) from error
    gaps = rules.gaps if isinstance(rules, ContractRules) else ()
    try:
        checks = (cola or engine(allow_external_access)).parse(rules)
    except ColaError as error:
        raise ColaConfigError(f"invalid Cola rules: {error}") from error
    return RuleBlock(rules, path, checks, gaps)


def checked_source(source: Any, *, allow_external_access: bool = False) -> SourceSpec:
    """Validate a source dict (``path``/``format``/``options``, ``table`` or ``query``).

    Args:
        allow_external_access: a source ``query`` may reach outside the data, as the rules
            may (the job checks it under the same switch).

    Raises:
        ColaConfigError: the source is not one of the three forms, or its query is refused.
    """
    try:
        with engine(allow_external_access).sql_scope():
            return parse_source(source)
    except ColaError as error:
        raise ColaConfigError(f"invalid Cola source: {error}") from error


def checked_output(config: Mapping[str, Any] | str, what: str) -> OutputSpec:
    """Validate an output config (a dict, or a plain parquet path).

    Args:
        what: the argument's name, for the message (``report``, ``valid_output``...).

    Raises:
        ColaConfigError: the config is malformed.
    """
    try:
        return parse_output(config)
    except ColaError as error:
        raise ColaConfigError(f"invalid {what}: {error}") from error


def run_job_fields(
    history: Mapping[str, Any] | str | None,
    dataset: str | None,
    context: Mapping[str, Any],
    dataset_default: str | None,
) -> dict[str, Any]:
    """The ``JobSpec`` fields that say which task run this is and which data it checked, and
    the history's, from the ``history`` and ``dataset`` arguments both operators and the
    decorator take.

    Always: the task's DAG, task and run ids (shown in the HTML report), its map index, the
    DAG run's data interval and logical date, and ``data_date``, which the history goes by:
    the logical date (the date ``{{ ds }}`` renders, which a DAG reading ``{{ ds }}``'s data
    checks, and the DAG run's own key in Airflow), else the data interval's start, else the
    partition date, else the run's ``run_after`` (a run triggered by an asset or by hand with
    no logical date). Not the interval's start first: a run triggered by hand (``airflow dags
    test``, the UI) on a data-interval timetable has the interval that *ends* at its logical
    date, so its ``{{ ds }}`` and its interval start name different days. Each is the same on
    every try of the task, so a retry, a clear or a backfill keys its rows by the data, not by
    the clock.

    Args:
        dataset_default: the dataset when ``dataset`` is not given (None: the job's source names it).

    Raises:
        ColaConfigError: the store is malformed, or a dataset is given without a history.
    """
    task = context.get("ti") or context.get("task_instance")
    dag_run = context.get("dag_run")
    map_index = getattr(task, "map_index", None)
    start = context.get("data_interval_start")
    logical_date = context.get("logical_date")
    data_date = logical_date or start or context.get("partition_date") or getattr(dag_run, "run_after", None)
    fields: dict[str, Any] = {
        "dag_id": getattr(task, "dag_id", None),
        "task_id": getattr(task, "task_id", None),
        "airflow_run_id": context.get("run_id"),
        "data_date": _iso(data_date),
        "data_interval_start": _iso(start),
        "data_interval_end": _iso(context.get("data_interval_end") if start else None),
        "logical_date": _iso(logical_date),
        # -1: not a mapped task.
        "map_index": map_index if isinstance(map_index, int) and map_index >= 0 else None,
    }
    if history is None:
        if dataset is not None:
            raise ColaConfigError("dataset names what a history row is about; give history too")
        return fields
    try:
        store = history_spec(history)
    except ColaError as error:
        raise ColaConfigError(f"invalid history: {error}") from error
    return {**fields, "history": store, "dataset": dataset or dataset_default}


def _iso(moment: Any) -> str | None:
    """A context datetime (Airflow's are tz-aware) as ISO text, for ``JobSpec``."""
    return None if moment is None else moment.isoformat()


def split_job_fields(
    valid_output: Mapping[str, Any] | str,
    invalid_output: Mapping[str, Any] | str,
    annotate: str | None,
    quarantine_key: Sequence[str] | None,
    annotate_valid: bool,
    checkpoint: str | None = None,
) -> dict[str, Any]:
    """The ``JobSpec`` fields of a split, from the arguments ``ColaSplitOperator`` and the
    decorator share, each output checked (``checkpoint``: for a streaming source).

    Raises:
        ColaConfigError: an output config is malformed.
    """
    return {
        "valid_output": checked_output(valid_output, "valid_output"),
        "invalid_output": checked_output(invalid_output, "invalid_output"),
        "annotate": annotate or None,
        "quarantine_key": tuple(quarantine_key or ()),
        "annotate_valid": annotate_valid,
        "checkpoint": checkpoint or None,
    }


def checked_local_path(source: SourceSpec, master: str) -> None:
    """Refuse a ``path`` source on this machine's storage that does not exist.

    Only for a local master (``local``, ``local[n]``...), where the driver reads this
    machine's files: a missing folder fails here, in a second, instead of in a JVM. A path
    with a scheme other than ``file:`` belongs to other storage, and a glob is Spark's to
    expand, so both are left to the job.

    Raises:
        ColaConfigError: the path names a local file or folder that does not exist.
    """
    if source.path is None or not master.startswith("local"):
        return
    # The engine's own test, the one `cola` makes before it starts a local JVM.
    if missing_local_path(source.path):
        raise ColaConfigError(f"invalid Cola source: the path {source.path!r} does not exist on this machine")
