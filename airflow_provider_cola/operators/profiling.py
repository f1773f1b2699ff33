"""``ColaProfileOperator``: profile a source on Spark and write the rules suggested from it.

The task runs ``cola suggest`` (``operators/_profile_runs.py``: spark-submit, or the engine in
this worker with a ``spark_connect`` connection), writes the suggested rules to a file in the
worker for a person to review, and pushes the profile to XCom, bounded by
:data:`PROFILE_XCOM_BYTES`. The suggestions are never applied: nothing here reads or changes a
rules file that a check runs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from airflow.sdk import BaseOperator

from airflow_provider_cola._lifecycle import ColaTask, TaskLifecycle
from airflow_provider_cola._rules import checked_source, run_job_fields
from airflow_provider_cola.errors import ColaConfigError, ColaJobError
from airflow_provider_cola.operators._profile_runs import (
    ConnectProfileRun,
    ProfileOutcome,
    ProfileRequest,
    ProfileRun,
    SubmitProfileRun,
)
from airflow_provider_cola.operators._runs import connect_url
from airflow_provider_cola.operators._submit_args import SUBMIT_ARGUMENTS, SUBMIT_TEMPLATE_FIELDS
from cola_core.common.formatting import plural
from cola_core.errors import ColaError
from cola_core.history.store import default_dataset
from cola_core.plan.profiling import checked_sample
from cola_core.report.pages import replace_file
from cola_core.ruleset.suggestions import checked_strictness, suggestions_text
from cola_core.storage.specs import without_file_scheme

if TYPE_CHECKING:
    from airflow.sdk import Context

    from airflow_provider_cola.operators._spark_submit import ColaSubmitHook

__all__ = ["PROFILE_XCOM_BYTES", "SUGGESTIONS_XCOM_KEY", "ColaProfileOperator", "bounded_profile"]

# The pushed profile's JSON is at most this many bytes. A profile is mostly its top values (up
# to 20 per column, of up to 200 characters each): a table of 1,000 columns has megabytes of
# them, too much for a row of Airflow's metadata database. Without them, a column takes about
# 400 bytes: the statistics of some 1,300 columns fit.
PROFILE_XCOM_BYTES = 512 * 1024
# The XCom key of {"path": ..., "rules": n}, the suggestions file the task wrote.
SUGGESTIONS_XCOM_KEY = "cola_suggestions"


class ColaProfileOperator(ColaTask, BaseOperator):
    """Profile a source on Spark, write the rules suggested from it to a file, push the profile.

    Runs ``cola suggest`` (``Cola().profile`` then ``Cola().suggest``): every column's NULLs,
    distinct values, bounds, lengths, formats and top values, from one planned scan, and a
    rule block that passes on that data, each rule named for why it was suggested. The task
    writes the block to ``suggestions``, for a person to review, edit and commit: it is never
    applied. Everything that can be checked without Spark is checked in the worker first, and
    a mistake fails the task without a retry.

    XCom ``return_value`` is the profile (``Profile.to_dict()``). Its JSON is at most
    :data:`PROFILE_XCOM_BYTES` (512 KiB): above that, each column's ``top_values`` is
    ``null`` and ``"top_values_dropped": true`` is added; if that is still too much, only the
    leading columns that fit are kept and ``"columns_dropped"`` counts the others. The key
    ``cola_suggestions`` holds ``{"path": ..., "rules": n}``, the file written and its rules.

    Args:
        source: ``{"path": ..., "format": "parquet", "options": {...}}``, ``{"table": ...}``
            or ``{"query": "SELECT ..."}``, as for ``ColaCheckOperator``. (templated)
        suggestions: the file the suggested rules are written to, in this worker: an absolute
            path (or a ``file:`` URI) in an existing folder. JSON for a ``.json`` file, else
            YAML with a comment per rule, as ``cola suggest --out`` writes them. It is replaced
            whole (written under another name, then renamed), so a reader never sees half of
            it. A relative path is refused: the DAG folder is often read-only or synced from
            git, and the suggestions belong beside the rules only after a review. (templated)
        conn_id: the Spark connection, e.g. ``{"conn_type": "spark", "host": "local[2]"}``;
            with a ``spark_connect`` connection the engine runs in this worker as its client.
        columns: the columns to profile, in this order (all of them by default). A name
            holding a comma, or spaces at either end, cannot be passed to ``cola suggest``.
        sample: profile this fraction of the rows (above 0, at most 1), drawn with a fixed
            seed; a sample suggests no ``unique`` rule, and ``row_count`` only ``> 0``.
        strictness: ``exact`` (default): bounds at the values seen; ``margin``: widened by a
            tenth.
        history: a history store (an output config, or a parquet path) of earlier checks of
            this data: the ``row_count``, ``missing_percent`` and ``invalid_percent``
            suggestions measured on at least 3 earlier data intervals take their thresholds
            from those runs. Only intervals before the DAG run's logical date are read (the
            date ``ColaCheckOperator`` records its history rows by), so a rerun or a backfill
            learns what the first run learned. (templated)
        dataset: with ``history``, the dataset whose runs to learn from; by default the name
            ``ColaCheckOperator`` records for this source (its path, table or query hash).
            (templated)
        results_uri: a folder both this worker and the Spark driver can reach, for the
            profile and rules the job writes. Needed in cluster deploy mode; in client mode a
            temporary folder is used. (templated)
        conf: Spark configuration; over Spark Connect, applied to the session. (templated)
        files: as for ``ColaCheckOperator``. (templated)
        py_files: as for ``ColaCheckOperator``. (templated)
        archives: as for ``ColaCheckOperator``. (templated)
        jars: as for ``ColaCheckOperator``. (templated)
        packages: as for ``ColaCheckOperator``. (templated)
        exclude_packages: as for ``ColaCheckOperator``.
        repositories: as for ``ColaCheckOperator``.
        driver_class_path: as for ``ColaCheckOperator``. (templated)
        total_executor_cores: as for ``ColaCheckOperator``.
        executor_cores: as for ``ColaCheckOperator``.
        executor_memory: as for ``ColaCheckOperator``.
        driver_memory: as for ``ColaCheckOperator``.
        num_executors: as for ``ColaCheckOperator``.
        env_vars: as for ``ColaCheckOperator``. (templated)
        name: the Spark application's name; ``cola-<dag_id>-<task_id>`` by default. (templated)
        keytab: as for ``ColaCheckOperator``. (templated)
        principal: as for ``ColaCheckOperator``. (templated)
        proxy_user: as for ``ColaCheckOperator``. (templated)
        verbose: pass ``--verbose`` to spark-submit.
        spark_binary: as for ``ColaCheckOperator``.
        properties_file: as for ``ColaCheckOperator``. (templated)
        yarn_queue: as for ``ColaCheckOperator``.
        deploy_mode: ``client`` or ``cluster``, as for ``ColaCheckOperator``.
        status_poll_interval: as for ``ColaCheckOperator``.
    """

    template_fields: Sequence[str] = (
        "source", "suggestions", "history", "dataset", "results_uri", *SUBMIT_TEMPLATE_FIELDS,
    )
    template_fields_renderers: ClassVar[dict[str, str]] = {"source": "json", "conf": "json"}
    ui_color = "#c5e1a5"

    _secret_settings: ClassVar[Sequence[str]] = ("conf", "env_vars", "source.options")

    def __init__(
        self,
        *,
        source: dict[str, Any],
        suggestions: str,
        conn_id: str = "spark_default",
        columns: Sequence[str] | None = None,
        sample: float | None = None,
        strictness: Literal["exact", "margin"] = "exact",
        history: dict[str, Any] | str | None = None,
        dataset: str | None = None,
        results_uri: str | None = None,
        conf: dict[str, Any] | None = None,
        files: str | None = None,
        py_files: str | None = None,
        archives: str | None = None,
        jars: str | None = None,
        packages: str | None = None,
        exclude_packages: str | None = None,
        repositories: str | None = None,
        driver_class_path: str | None = None,
        total_executor_cores: int | None = None,
        executor_cores: int | None = None,
        executor_memory: str | None = None,
        driver_memory: str | None = None,
        num_executors: int | None = None,
        env_vars: dict[str, Any] | None = None,
        name: str | None = None,
        keytab: str | None = None,
        principal: str | None = None,
        proxy_user: str | None = None,
        verbose: bool = False,
        spark_binary: str | None = None,
        properties_file: str | None = None,
        yarn_queue: str | None = None,
        deploy_mode: str | None = None,
        status_poll_interval: int = 1,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        # Only stored: every check is made in the worker (execute), and DAG parsing stays fast.
        self.source = source
        self.suggestions = suggestions
        self.conn_id = conn_id
        self.columns = columns
        self.sample = sample
        self.strictness = strictness
        self.history = history
        self.dataset = dataset
        self.results_uri = results_uri
        arguments = locals()
        for argument in SUBMIT_ARGUMENTS:  # declared once, as for ColaCheckOperator
            setattr(self, argument.name, arguments[argument.name])
        self._cola_lifecycle = TaskLifecycle(self)
        self._run: ProfileRun | None = None

    @property
    def _hook(self) -> ColaSubmitHook | None:
        """The spark-submit hook of the running job, once built."""
        return None if self._run is None else self._run.hook

    def execute(self, context: Context) -> dict[str, Any]:
        """Check the arguments, profile and suggest on Spark, write the suggestions, push the profile."""
        request = self._request(context)
        path = checked_suggestions_path(self.suggestions)
        remote = connect_url(self)
        self._run = SubmitProfileRun(self) if remote is None else ConnectProfileRun(self, remote)
        outcome = self._run.run(request)
        self._lifecycle.stop_if_killed()  # a kill after the job ended: nothing written, nothing pushed
        return self._publish(context, outcome, path)

    def _request(self, context: Context) -> ProfileRequest:
        """What to ask of the engine, each argument checked as ``cola suggest`` would check it.

        Raises:
            ColaConfigError: an argument the job would refuse.
        """
        source = checked_source(self.source)
        if source.stream:
            # cola suggest reads a batch: it would refuse --stream as a usage error, in the job.
            raise ColaConfigError(
                "invalid Cola source: a streaming source is split, not profiled: profile the folder as a batch "
                "source (leave 'stream' out)"
            )
        columns = checked_columns(self.columns)
        try:  # the engine's own checks, as cola suggest makes them
            sample = checked_sample(self.sample)
            strictness = checked_strictness(self.strictness)
        except ColaError as error:
            raise ColaConfigError(str(error)) from error
        # With a history, the data date is the one the check operators' history rows are keyed by.
        fields = run_job_fields(self.history, self.dataset, context, default_dataset(source))
        return ProfileRequest(
            source, columns, sample, strictness, fields.get("history"), fields.get("dataset"),
            fields["data_date"] if "history" in fields else None,
            # Freshness is judged at the end of the run's data interval, not by the clock.
            now=fields["data_interval_end"] or fields["data_date"],
        )

    def _publish(self, context: Context, outcome: ProfileOutcome, path: Path) -> dict[str, Any]:
        """Write the suggestions file, push its record, and give the profile to push, bounded.

        Raises:
            ColaJobError: the file cannot be written (its folder was checked before the run).
        """
        try:
            text = suggestions_text(outcome.rules, as_json=path.suffix.lower() == ".json")
            replace_file(path, text, "the suggestions file")
        except ColaError as error:
            raise ColaJobError(str(error)) from error
        count = len(outcome.rules)
        self.log.info(
            "Cola wrote %s to %s: review them before you commit them (nothing applies them)",
            plural(count, "suggested rule"), path,
        )
        context["ti"].xcom_push(key=SUGGESTIONS_XCOM_KEY, value={"path": str(path), "rules": count})
        profile, warning = bounded_profile(outcome.profile)
        if warning is not None:
            self.log.warning("%s", warning)
        return profile


def checked_columns(columns: Any) -> tuple[str, ...] | None:
    """``columns`` as a tuple, when each is a name ``cola suggest --columns`` can carry.

    Raises:
        ColaConfigError: not a list of names, or a name with a comma or spaces at either end.
    """
    if columns is None:
        return None
    if isinstance(columns, str) or not isinstance(columns, Sequence) or not columns or not all(
        isinstance(name, str) and name for name in columns
    ):
        raise ColaConfigError(f"columns must be a list of column names (None for all of them), got {columns!r}")
    for name in columns:
        if "," in name or name != name.strip():
            raise ColaConfigError(
                f"columns: {name!r} cannot be profiled by name: cola suggest --columns separates names with "
                "commas and trims spaces; leave columns out to profile every column"
            )
    return tuple(columns)


def checked_suggestions_path(suggestions: Any) -> Path:
    """The suggestions file: an absolute path in this worker, in a folder that exists.

    Raises:
        ColaConfigError: anything else.
    """
    if not isinstance(suggestions, str) or not suggestions.strip():
        raise ColaConfigError(f"suggestions must be the path of a file in this worker, got {suggestions!r}")
    local = without_file_scheme(suggestions)
    if "://" in local:
        raise ColaConfigError(
            f"suggestions must be a file in this worker (an absolute path or a file: URI), got {suggestions!r}"
        )
    path = Path(local)
    if not path.is_absolute():
        raise ColaConfigError(
            f"suggestions must be an absolute path in this worker, got {suggestions!r}: the task does not "
            "write beside the DAG file"
        )
    if not path.parent.is_dir():
        raise ColaConfigError(f"suggestions: the folder {str(path.parent)!r} does not exist")
    if path.is_dir():
        raise ColaConfigError(f"suggestions: {str(path)!r} is a folder, not a file")
    if not os.access(path.parent, os.W_OK | os.X_OK):
        raise ColaConfigError(f"suggestions: this worker cannot write in the folder {str(path.parent)!r}")
    return path


def bounded_profile(
    profile: Mapping[str, Any], limit: int = PROFILE_XCOM_BYTES
) -> tuple[dict[str, Any], str | None]:
    """The profile to push, at most ``limit`` bytes of JSON, and a warning when it had to shrink.

    Above the limit, each column's ``top_values`` becomes ``None`` and ``top_values_dropped``
    is added; if it is still above, only the leading columns that fit are kept, and
    ``columns_dropped`` counts the others.
    """
    size = _json_bytes(profile)
    if size <= limit:
        return dict(profile), None
    columns = [{**column, "top_values": None} for column in profile["columns"]]
    slim = {**profile, "columns": columns, "top_values_dropped": True}
    over = f"The profile is {size:,} bytes of JSON, over the {limit:,} bytes of its XCom"
    if _json_bytes(slim) <= limit:
        return slim, f'{over}: it is pushed without the top values of its columns ("top_values_dropped": true)'
    # Counted with every column dropped: the final count has no more digits.
    room = limit - _json_bytes({**slim, "columns": [], "columns_dropped": len(columns)})
    kept: list[dict[str, Any]] = []
    for column in columns:
        room -= _json_bytes(column) + len(", ")
        if room < 0:
            break
        kept.append(column)
    dropped = len(columns) - len(kept)
    return {**slim, "columns": kept, "columns_dropped": dropped}, (
        f"{over}: it is pushed without the top values of its columns (\"top_values_dropped\": true) and "
        f"without its last {plural(dropped, 'column')} (\"columns_dropped\": {dropped})"
    )


def _json_bytes(value: Any) -> int:
    # As XCom stores it: json.dumps's separators, non-ASCII escaped.
    return len(json.dumps(value, allow_nan=False))
