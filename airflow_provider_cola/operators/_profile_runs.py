"""How ``ColaProfileOperator`` runs ``cola suggest``: with spark-submit, or as a Spark Connect client.

Either way the run gives back the same two things, checked: the profile (``Profile.to_dict()``)
and the suggested rules (a rule block the engine parses). The operator writes and pushes them.

Through spark-submit the job entry point runs ``cola suggest`` with the profile and the rules
written as JSON files for this worker (``--profile-out``, ``--out``), in the task's temporary
folder, or under ``results_uri`` in cluster deploy mode; they are read back as the check's results
file is (``_results.ResultsFile``). Over Spark Connect the engine runs here, on the same
arguments (:class:`ProfileRequest`).
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from airflow_provider_cola._rules import checked_local_path
from airflow_provider_cola._spark_target import requested_deploy_mode
from airflow_provider_cola.operators._results import ResultsFile
from airflow_provider_cola.operators._runs import ConnectClientRun, check_deploy_mode, submit_hook, submit_job
from cola_core import Cola
from cola_core.common.values import utc_datetime
from cola_core.job.spec import source_argv
from cola_core.language.profiles import ColumnProfile, Profile

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from airflow_provider_cola.operators._spark_submit import ColaSubmitHook
    from cola_core.storage.specs import OutputSpec, SourceSpec

__all__ = ["ConnectProfileRun", "ProfileOutcome", "ProfileRequest", "ProfileRun", "SubmitProfileRun"]

# The operator (a ColaProfileOperator, which imports this module): its arguments, log and _lifecycle.
Operator = Any


@dataclass(frozen=True)
class ProfileRequest:
    """What a profile task asks of the engine, every value checked: ``cola suggest``'s arguments.

    Attributes:
        source: what to profile.
        columns: the columns to profile, in this order; None for all of them.
        sample: the fraction of the rows to profile; None for all of them.
        strictness: ``exact`` or ``margin``.
        history: the store whose earlier runs teach the thresholds; None to learn nothing.
        dataset: with ``history``, whose runs to learn from.
        data_date: with ``history``, the date of the data profiled (ISO text): only the data
            intervals before it are read. None: every interval up to now.
        now: the instant a ``freshness`` suggestion's age is taken at (ISO text): the DAG
            run's data interval end, so that a rerun suggests what the first run did. None:
            the clock's.
    """

    source: SourceSpec
    columns: tuple[str, ...] | None = None
    sample: float | None = None
    strictness: str = "exact"
    history: OutputSpec | None = None
    dataset: str | None = None
    data_date: str | None = None
    now: str | None = None

    def argv(self, profile_out: str, out: str) -> list[str]:
        """The job's command line: ``cola suggest`` writing the profile to ``profile_out`` and
        the rules to ``out``, both as JSON."""
        argv = ["suggest", *source_argv(self.source)]
        if self.columns is not None:
            argv += ["--columns", ",".join(self.columns)]
        if self.sample is not None:
            argv += ["--sample", repr(self.sample)]
        argv += ["--strictness", self.strictness, "--profile-out", profile_out, "--out", out]
        argv += [] if self.now is None else ["--now", self.now]
        if self.history is not None:
            # The store as an OUTPUT argument: its config as JSON, which `cola` reads back as it is.
            argv += ["--history", json.dumps(self.history.to_config()), "--dataset", str(self.dataset)]
            argv += [] if self.data_date is None else ["--data-date", self.data_date]
        return argv

    def learning(self) -> dict[str, Any]:
        """``Cola.suggest``'s ``now`` and history arguments, as ``cola suggest`` gives them from its flags."""
        moment = {} if self.now is None else {"now": utc_datetime(self.now)}
        if self.history is None:
            return moment
        data_date = None if self.data_date is None else utc_datetime(self.data_date)
        return {**moment, "history": self.history, "dataset": self.dataset, "data_date": data_date}


@dataclass(frozen=True)
class ProfileOutcome:
    """What a profile run gave back.

    Attributes:
        profile: the profile, as ``Profile.to_dict()`` gives it (strict JSON).
        rules: the suggested rules, a block the engine parses.
    """

    profile: dict[str, Any]
    rules: list[dict[str, Any]]


class ProfileRun(Protocol):
    """How a profile task runs ``cola suggest``."""

    hook: ColaSubmitHook | None

    def run(self, request: ProfileRequest) -> ProfileOutcome:
        """The profile and the suggested rules."""
        ...


class SubmitProfileRun:
    """Submit ``cola suggest`` with spark-submit, then read back the profile and the rules.

    The driver prints the profile table, which is the task's log in client deploy mode.

    Attributes:
        hook: the hook, once built.
    """

    def __init__(self, task: Operator) -> None:
        self._task = task
        self.hook: ColaSubmitHook | None = None

    def run(self, request: ProfileRequest) -> ProfileOutcome:
        task = self._task
        check_deploy_mode(requested_deploy_mode(task.conn_id, task.deploy_mode), None, task.results_uri)
        secrets = task._mask_secrets()  # again: execute() may be called without rendering
        with tempfile.TemporaryDirectory(prefix="cola-") as workdir:
            written = (
                ResultsFile(workdir, task.results_uri, "profile.json", "profile file"),
                ResultsFile(workdir, task.results_uri, "suggestions.json", "suggestions file"),
            )
            self.hook = hook = submit_hook(task, request.argv(written[0].target, written[1].target), [], secrets)
            # The local master reads this machine's files: a missing one fails before any JVM.
            checked_local_path(request.source, hook.master)
            submit_job(task, hook, written)
            try:
                profile = written[0].load(hook.log_tail, checked_profile)
                rules = written[1].load(hook.log_tail, checked_rules)
            finally:
                for file in written:  # under results_uri, nothing stays behind
                    file.discard()
        return ProfileOutcome(profile, rules)


class ConnectProfileRun(ConnectClientRun):
    """Run the engine in this process, as a client of a Spark Connect server."""

    def run(self, request: ProfileRequest) -> ProfileOutcome:
        from cola_core.storage.readwrite import read_source

        task = self._task
        task.log.info("Cola profiles in this worker as a Spark Connect client of %s", self.server)

        def profile_and_suggest(spark: SparkSession) -> ProfileOutcome:
            cola = Cola()
            with cola.sql_scope():
                df = read_source(spark, request.source)
            profile = cola.profile(df, request.columns, request.sample)
            # First in the task's log, as the driver prints it under spark-submit.
            task.log.info("Cola profile:\n%s", profile)
            rules = cola.suggest(profile, strictness=request.strictness, spark=spark, **request.learning())
            return ProfileOutcome(profile.to_dict(), rules)

        return task._lifecycle.in_session(  # type: ignore[no-any-return]
            self.session, profile_and_suggest, crash="the Cola profile over Spark Connect failed",
        )


# The keys Profile.to_dict() and ColumnProfile.to_dict() write: a file with others is not one.
_PROFILE_KEYS = frozenset(Profile(0, ()).to_dict())
_COLUMN_KEYS = frozenset(ColumnProfile("c", "string", "text", 0).to_dict())


def checked_profile(data: Any) -> dict[str, Any]:
    """``data`` when it is a profile as ``Profile.to_dict()`` writes it; raises ``ValueError`` otherwise."""
    if not isinstance(data, dict) or set(data) != _PROFILE_KEYS:
        raise ValueError(f"expected an object of {', '.join(sorted(_PROFILE_KEYS))}")
    rows = data["rows"]
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 0:
        raise ValueError(f"rows must be a whole number >= 0, got {rows!r}")
    columns = data["columns"]
    if not isinstance(columns, list) or not all(
        isinstance(column, dict) and set(column) == _COLUMN_KEYS and isinstance(column["name"], str)
        for column in columns
    ):
        raise ValueError(f"columns must be a list of objects of {', '.join(sorted(_COLUMN_KEYS))}")
    return data


def checked_rules(data: Any) -> list[dict[str, Any]]:
    """The rules of ``{"rules": [...]}`` when they are a block the engine parses; raises
    ``ValueError`` (or ``ColaRuleError``) otherwise."""
    if not isinstance(data, dict) or set(data) != {"rules"} or not isinstance(data["rules"], list):
        raise ValueError('expected {"rules": [...]}')
    rules = data["rules"]
    if not all(isinstance(rule, dict) for rule in rules):
        raise ValueError("each rule must be an object")
    Cola().parse(rules)  # pure Python: an ordinary rule block, or a ColaRuleError
    return rules
