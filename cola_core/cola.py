"""``Cola``: the registry of rule types and the entry point for ``run`` and ``split``.

``Cola`` parses rules with its registry and settings; what a run measures and writes (a sql
rule's failed rows, the history, a split's outputs) is done by ``cola_core.job.runner``, the one
layer that writes, as for a job.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from cola_core.checks import BaseCheck
from cola_core.errors import ColaError
from cola_core.guards.sqlguard import allowing_outside_access
from cola_core.history.baselines import read_baselines
from cola_core.history.store import RunInfo
from cola_core.job.blocks import run_checks, run_split
from cola_core.job.spec import checked_samples
from cola_core.job.stream import StreamSummary, split_stream
from cola_core.language.profiles import Profile
from cola_core.language.result import CheckResult
from cola_core.plan.planner import DISTINCT_STRATEGIES
from cola_core.plan.profiling import profile_table
from cola_core.plan.split import ColaSplit, split_block
from cola_core.plan.staged_split import SplitOutcome
from cola_core.ruleset.parsing import parse_rules
from cola_core.ruleset.registry import default_checks, validate_registration
from cola_core.ruleset.rules_schema import rules_schema
from cola_core.ruleset.suggestions import (
    LEARN_FROM_RUNS,
    LEARNED_TYPES,
    Suggestions,
    checked_strictness,
    learned_rules,
    measured_values,
    parsed,
    suggest_rules,
)
from cola_core.storage.specs import OutputSpec, history_spec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.query import StreamingQuery

__all__ = ["Cola"]


class Cola:
    """Measure DataFrames against rules, and split them into valid and invalid rows.

    Args:
        checks: the rule types to start with (name -> check class). By default: the built-ins,
            checks from the ``cola_core.checks`` entry-point group, and ``@register_check`` ones.
        distinct_strategy: ``"separate"`` (default) computes each distinct column set in its own
            aggregation; ``"inline"`` folds it into the block's single agg. See ``planner``.
        allow_external_access: let the rules' SQL text reach outside the data: call JVM
            functions (``reflect``, ``java_method``), read files through path relations
            (```json.`/path` ```), use ``${...}`` substitution and script transformation.
            Off by default; turn it on only for rules whose authors you trust with the
            cluster. See the documentation's "Security model" (``docs/security.md``) and ``cola_core.guards.sqlguard``.
        aggregates_per_job: the most aggregates one Spark job computes. By default a block of
            up to 200 aggregates is one job, and a wider one runs in jobs of about 50, each
            reading the rows: faster than one aggregation of a thousand expressions. Raise it
            when reading the source again costs more than that (see the documentation's
            "Performance", "Wide blocks").
    """

    def __init__(
        self,
        checks: Mapping[str, type[BaseCheck]] | None = None,
        *,
        distinct_strategy: str = "separate",
        allow_external_access: bool = False,
        aggregates_per_job: int | None = None,
    ) -> None:
        if distinct_strategy not in DISTINCT_STRATEGIES:
            raise ColaError(f"distinct_strategy must be 'separate' or 'inline', got {distinct_strategy!r}")
        self._registry: dict[str, type[BaseCheck]] = {}
        self.distinct_strategy = distinct_strategy
        if aggregates_per_job is not None and (
            isinstance(aggregates_per_job, bool) or not isinstance(aggregates_per_job, int) or aggregates_per_job < 1
        ):
            raise ColaError(f"aggregates_per_job must be a whole number of at least 1, got {aggregates_per_job!r}")
        self.aggregates_per_job = aggregates_per_job
        if not isinstance(allow_external_access, bool):
            raise ColaError(f"allow_external_access must be true or false, got {allow_external_access!r}")
        self.allow_external_access = allow_external_access
        for name, cls in (default_checks() if checks is None else checks).items():
            self.register(name, cls)

    def register(self, name: str, cls: type[BaseCheck], *, replace: bool = False) -> None:
        """Make ``cls`` available as ``{"type": name}``.

        Raises:
            ColaError: when ``name`` is taken (unless ``replace=True``) or ``cls`` is not a check.
        """
        validate_registration(self._registry, name, cls, replace=replace)
        self._registry[name] = cls

    @property
    def available(self) -> list[str]:
        """Sorted registered types, including ``check`` (the legacy metric wrapper)."""
        return sorted([*self._registry, "check"])

    def rules_schema(self) -> dict[str, Any]:
        """The JSON Schema (draft 2020-12) of a rules file for this engine's rule types,
        custom ones included: what ``cola schema`` prints (``ruleset.rules_schema``)."""
        return rules_schema(self._registry)

    def parse(self, rules: Any) -> list[BaseCheck]:
        """Validate a rule block without touching Spark; raises ``ColaRuleError``."""
        with self.sql_scope():
            return parse_rules(rules, self._registry)

    def sql_scope(self) -> AbstractContextManager[None]:
        """The context in which this engine's SQL checks run (see ``allow_external_access``);
        callers that read sources for it (the CLI, references) check their queries inside it."""
        return allowing_outside_access(self.allow_external_access)

    def run(
        self,
        df: DataFrame,
        rules: Any,
        samples: int = 0,
        *,
        history: Mapping[str, Any] | str | OutputSpec | None = None,
        dataset: str | None = None,
        data_date: dt.date | None = None,
        run_info: RunInfo | None = None,
    ) -> list[CheckResult]:
        """One result per rule (after ``targets`` expansion), in order. Never raises for a
        failed check; raises ``ColaRuleError`` for a malformed rule before any Spark work.

        Args:
            rules: a list of rule dicts, or checks this engine already parsed (:meth:`parse`).
            samples: when above 0, up to this many offending rows of each failed (or warned)
                row-level rule are put on ``result.samples``, collected in one extra job.
            history: a history store (an output config, or a plain path for a parquet
                folder): one row per result is appended to it, and the samples to its
                failed-records store beside it.
            dataset: with ``history``, the name of what was checked (a table, a path).
            data_date: with ``history``, the start of the data interval ``df`` holds (a date,
                or a datetime; one without a zone is taken as UTC). Baselines compare with
                the latest earlier data interval, never with another run of the same one, so
                a rerun or a backfill gives the answer the first run gave. Without it, the
                run's own time is its data date.
            run_info: with ``history``, the whole of what a run writes beside its results
                (:class:`cola_core.history.store.RunInfo`), instead of ``dataset`` and ``data_date``.

        Raises:
            ColaOutputError: the history store is malformed, is not a Cola history, or
                cannot be appended to.
        """
        checked_samples(samples)
        store, info = _history_of(history, dataset, data_date, run_info)
        with self.sql_scope():
            return run_checks(
                df, self._checks(rules), samples=samples, distinct_strategy=self.distinct_strategy,
                history=store, run_info=info, aggregates_per_job=self.aggregates_per_job,
            )

    def split_write(
        self,
        df: DataFrame,
        rules: Any,
        valid: Mapping[str, Any] | str | OutputSpec,
        invalid: Mapping[str, Any] | str | OutputSpec,
        *,
        annotate: str | None = None,
        quarantine_key: Sequence[str] | None = None,
        samples: int = 0,
        annotate_valid: bool = False,
        history: Mapping[str, Any] | str | OutputSpec | None = None,
        dataset: str | None = None,
        data_date: dt.date | None = None,
        run_info: RunInfo | None = None,
    ) -> SplitOutcome:
        """Measure ``df`` and write its valid and invalid rows: one evaluation, one commit.

        The input is evaluated once, so every row is in exactly one output even when the
        input is not deterministic, and the block's plain aggregates and both counts are
        measured on that same write. Both outputs are published together, or neither is.
        The outputs have the columns :meth:`split` gives. The documentation's "Writing a split"
        (``docs/quarantine.md``) says what is atomic on each kind of destination.

        Args:
            rules: a list of rule dicts, or checks this engine already parsed (:meth:`parse`).
            valid: where the rows that break no row-level rule go: an output config
                (``{"path" | "table", "format", "mode", "partition_by", "options"}``) or a
                parquet path.
            invalid: where the other rows go.
            annotate: the ``array<string>`` column of the codes of the rules each row broke.
            quarantine_key: columns naming an entity, as for :meth:`split`.
            samples: as for :meth:`run`.
            annotate_valid: with ``annotate``, the valid output gets its column too (NULL),
                which spares a copy of the valid rows: the fastest split.
            history: as for :meth:`run`; the rows are appended once both outputs are
                published, as a split's (its baselines are earlier splits', never a check's).
            dataset: as for :meth:`run`.
            data_date: as for :meth:`run`.
            run_info: as for :meth:`run`.

        Raises:
            ColaOutputError: an output is malformed, exists in ``errorifexists`` mode, or
                could not be written or published; nothing new is left at either.
            ColaRuleError: a malformed rule, before any Spark work.
        """
        checked_samples(samples)
        store, info = _history_of(history, dataset, data_date, run_info)
        with self.sql_scope():
            return run_split(
                df, self._checks(rules), valid, invalid, annotate=annotate, quarantine_key=quarantine_key,
                annotate_valid=annotate_valid, samples=samples, history=store, run_info=info,
            )

    def split_stream(
        self,
        stream_df: DataFrame,
        rules: Any,
        valid: Mapping[str, Any] | str | OutputSpec,
        invalid: Mapping[str, Any] | str | OutputSpec,
        *,
        checkpoint: str,
        trigger: str | Mapping[str, Any] | None = "availableNow",
        annotate: str | None = None,
        quarantine_key: Sequence[str] | None = None,
        history: Mapping[str, Any] | str | OutputSpec | None = None,
        dataset: str | None = None,
        data_date: dt.date | None = None,
        run_info: RunInfo | None = None,
        query_name: str | None = None,
        annotate_valid: bool = False,
        samples: int = 0,
    ) -> StreamingQuery | StreamSummary:
        """Split every micro-batch of a streaming DataFrame as :meth:`split_write` splits a
        DataFrame, publishing each batch's rows exactly once (``docs/streaming.md``).

        Args:
            stream_df: a streaming DataFrame (``spark.readStream...``).
            valid: the path output of the rows that break no row-level rule (appended to).
            invalid: the path output of the others.
            checkpoint: the query's checkpoint folder; Cola keeps its ledger of published
                batches in it (``_cola``). Restarting on it resumes where the query stopped.
            trigger: ``availableNow`` (the default) or ``once``, which process what is there,
                wait, and return a :class:`~cola_core.job.stream.StreamSummary`; or a processing
                interval such as ``"1 minute"`` (or ``trigger()``'s keywords as a dict), which
                returns the running ``StreamingQuery``.
            annotate: as for :meth:`split_write`.
            quarantine_key: as for :meth:`split_write`.
            history: a path history store: each batch is appended as one run of kind
                ``split``, exactly once with the batch.
            dataset: as for :meth:`run`.
            data_date: as for :meth:`run`; every batch of this call has it.
            run_info: as for :meth:`run`.
            query_name: the streaming query's name.
            annotate_valid: as for :meth:`split_write`.
            samples: as for :meth:`run`: each batch's results keep up to this many offending
                rows of a failed row rule.

        Raises:
            ColaRuleError: a malformed rule, before the query starts.
            ColaOutputError: a destination or the history store is not a path, or a batch
                could not be published (the query stops, with nothing of that batch
                published; restarting on the checkpoint runs it again).
        """
        store, info = _history_of(history, dataset, data_date, run_info)
        with self.sql_scope():
            return split_stream(
                stream_df, self._checks(rules), valid, invalid, checkpoint=checkpoint, trigger=trigger,
                annotate=annotate, quarantine_key=quarantine_key, history=store, run_info=info,
                query_name=query_name, annotate_valid=annotate_valid, samples=checked_samples(samples),
            )

    def profile(self, df: DataFrame, columns: Sequence[str] | None = None, sample: float | None = None) -> Profile:
        """Every column's statistics (``cola_core.language.profiles`` says which), in one
        planned scan, one job for the columns of few values, and one per possible key.

        Args:
            columns: the columns to profile, in that order; all of them by default.
            sample: a fraction of the rows (above 0, at most 1) to profile instead of all,
                drawn with a fixed seed, so that the same data gives the same profile.

        Raises:
            ColaError: for an unknown column or a sample that is no fraction, before any Spark work.
        """
        return profile_table(df, columns, sample, aggregates_per_job=self.aggregates_per_job)

    def suggest(
        self, data: DataFrame | Profile, columns: Sequence[str] | None = None, sample: float | None = None,
        strictness: str = "exact", now: dt.datetime | None = None, *,
        history: Mapping[str, Any] | str | OutputSpec | None = None, dataset: str | None = None,
        data_date: dt.date | None = None, spark: SparkSession | None = None,
    ) -> Suggestions:
        """A rule block that passes on ``data`` (a DataFrame, profiled first, or its
        :meth:`profile`), each rule named for why it was suggested; what is suggested is in
        ``cola_core.ruleset.suggestions``.

        Args:
            strictness: ``"exact"`` for bounds at the observed values, ``"margin"`` for bounds
                widened by a tenth.
            now: the instant the ``freshness`` suggestion's age is taken at; by default the end
                of ``data_date``'s day (UTC). With neither, no ``freshness`` is suggested (an age
                by the clock would break the next day and any backfill).
            history: a history store (as for :meth:`run`): the ``row_count``,
                ``missing_percent`` and ``invalid_percent`` suggestions that the store has
                measured for ``dataset`` on at least three earlier data intervals take their
                thresholds from those runs and this profile together (the latest 30 intervals,
                the latest attempt of each).
            dataset: with ``history``, the dataset whose runs to learn from.
            data_date: the date of the data being profiled: a ``freshness`` age is taken at
                its end, and with ``history``, only the intervals before it are read, as a run
                on that date would compare (by default, every interval up to now).
            spark: the session that reads ``history`` when ``data`` is a profile (by default
                the active one); a DataFrame's own session reads it otherwise.

        Raises:
            ColaError: for a strictness, history, dataset or data date it cannot use, before
                any Spark work.
            ColaOutputError: the history store cannot be read, or is not a Cola history.
        """
        checked_strictness(strictness)  # before any Spark work
        if history is None and dataset is not None:
            raise ColaError("'dataset' says which earlier runs to learn from; give 'history' too")
        store, info = _history_of(history, dataset, None if history is None else data_date, None)
        profile = data if isinstance(data, Profile) else self.profile(data, columns, sample)
        rules = parsed(suggest_rules(profile, strictness, now, data_date), self.parse)
        if store is not None and info is not None:
            checks = self.parse(rules)  # a suggestion is an ordinary rule block
            spark = spark or _session_of(data)
            needs = {check.rule_id: LEARN_FROM_RUNS for check in checks if check.rule_type in LEARNED_TYPES}
            earlier = read_baselines(spark, store, info, needs)
            known = [earlier.get(check.rule_id, []) for check in checks]
            learned = learned_rules(rules, measured_values(rules, profile), known, strictness, info.dataset)
            rules = parsed(Suggestions(learned, rules.skipped), self.parse)
        return rules

    def split(
        self, df: DataFrame, rules: Any, annotate: str | None = None, quarantine_key: Sequence[str] | None = None
    ) -> ColaSplit:
        """Partition ``df`` into ``ColaSplit(valid, invalid)`` by its row-level rules.

        Args:
            rules: a list of rule dicts, or checks this engine already parsed (:meth:`parse`).
            annotate: name of an ``array<string>`` column added to ``invalid`` with the codes of
                the rules each row broke, in rule order. Codes of ``"severity": "warn"`` rules go
                to ``<annotate>_warnings`` on both outputs.
            quarantine_key: columns naming an entity, e.g. ``["order_id"]``: every row sharing a
                key with a rejected row is rejected too (code ``quarantine_key(order_id)``).
        """
        with self.sql_scope():
            return split_block(df, self._checks(rules), annotate, quarantine_key)

    def _checks(self, rules: Any) -> list[BaseCheck]:
        """Parse ``rules``, unless they are checks already: a job parses its rules once."""
        if isinstance(rules, Sequence) and rules and all(isinstance(rule, BaseCheck) for rule in rules):
            return list(rules)
        return self.parse(rules)


def _session_of(data: DataFrame | Profile) -> SparkSession:
    """The Spark session that reads the history: the DataFrame's, or for a profile, the active one."""
    if not isinstance(data, Profile):
        return data.sparkSession
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is None:
        raise ColaError("reading a history needs a Spark session: pass the DataFrame, or start a session first")
    return active


def _history_of(
    history: Mapping[str, Any] | str | OutputSpec | None, dataset: str | None, data_date: dt.date | None,
    run_info: RunInfo | None,
) -> tuple[OutputSpec | None, RunInfo | None]:
    """The history store and what the run writes beside its results, checked in pure Python
    (the runner says whether it was a check or a split)."""
    if history is None:
        if dataset is not None or data_date is not None or run_info is not None:
            raise ColaError("'dataset', 'data_date' and 'run_info' say what a history row is about; give 'history' too")
        return None, None
    store = history_spec(history)
    if run_info is not None:
        if dataset is not None and dataset != run_info.dataset:
            raise ColaError(f"'dataset' ({dataset!r}) and run_info.dataset ({run_info.dataset!r}) disagree; give one")
        if data_date is not None:
            raise ColaError("give 'data_date' or run_info.data_date, not both")
        return store, run_info
    if not isinstance(dataset, str) or not dataset.strip():
        raise ColaError(
            "a history needs 'dataset', the name of what was checked (such as \"sales.orders\"), "
            f"got {dataset!r}"
        )
    return store, RunInfo(dataset=dataset, data_date=data_date)

