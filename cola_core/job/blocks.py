"""Running a parsed rule block on a DataFrame, and writing what the block asks for.

:func:`run_checks` measures, :func:`run_split` splits and publishes; both then write each
failing ``sql`` rule's failed rows and, with a history store, the run's results. The ``Cola``
facade, a job (:mod:`cola_core.job.runner`) and each micro-batch of a streaming split
(:mod:`cola_core.job.stream`) run their blocks through them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from cola_core.checks.base import BaseCheck
from cola_core.history.append import append_history
from cola_core.history.baselines import read_baselines
from cola_core.history.store import FAILED_RECORDS_SCHEMA, RunInfo, check_history_store, failed_records_spec
from cola_core.language.result import CheckResult
from cola_core.plan.pinned_split import pinned_split
from cola_core.plan.planner import run_block
from cola_core.plan.samples import attach_samples
from cola_core.plan.staged_split import SplitOutcome, staged_split
from cola_core.storage.readwrite import write_output
from cola_core.storage.specs import OutputSpec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["run_checks", "run_split", "with_history_baselines"]


def run_checks(
    df: DataFrame,
    checks: list[BaseCheck],
    *,
    samples: int = 0,
    distinct_strategy: str = "separate",
    history: OutputSpec | None = None,
    run_info: RunInfo | None = None,
    aggregates_per_job: int | None = None,
) -> list[CheckResult]:
    """Measure ``checks`` on ``df`` (one result per rule, in order), then write what the run
    asks for: each failing ``sql`` rule's failed rows to its output, and with ``history`` the
    results (and their samples) to the store, as a run of kind ``check``. The caller opens the
    rules' SQL scope (``sqlguard.allowing_outside_access``).

    Raises:
        ColaRuleError: a change or anomaly rule without a history store.
        ColaOutputError: the history store is not a Cola history or cannot be appended to,
            or a failed-rows output cannot be written.
    """
    checks = with_history_baselines(df, checks, history, run_info, samples)
    results = _finish(df, checks, run_block(df, checks, distinct_strategy, aggregates_per_job), samples)
    if history is not None and run_info is not None:
        append_history(df.sparkSession, history, results, dataclasses.replace(run_info, run_kind="check"))
    return results


def run_split(
    df: DataFrame,
    checks: list[BaseCheck],
    valid: Any,
    invalid: Any,
    *,
    annotate: str | None = None,
    quarantine_key: Sequence[str] | None = None,
    annotate_valid: bool = False,
    samples: int = 0,
    history: OutputSpec | None = None,
    run_info: RunInfo | None = None,
    pinned: bool = False,
) -> SplitOutcome:
    """Measure ``checks`` on ``df`` and write its valid and invalid rows
    (``split_write.staged_split``), then what :func:`run_checks` writes, the history as a
    run of kind ``split`` once both outputs are published.

    Args:
        pinned: write each side straight to ``valid`` and ``invalid`` from rows pinned in the
            executors (``plan.pinned_split``), for outputs the caller publishes itself.

    Raises:
        As ``split_write.staged_split`` (``plan.pinned_split``) and :func:`run_checks`.
    """
    checks = with_history_baselines(df, checks, history, run_info, samples)
    split = pinned_split if pinned else staged_split
    with split(
        df, checks, valid, invalid, annotate=annotate, quarantine_key=quarantine_key, annotate_valid=annotate_valid
    ) as staged:
        # Samples and a sql rule's failed rows are taken before publishing: an output may
        # overwrite the source.
        outcome = staged.publish(_finish(df, checks, staged.results, samples))
    if history is not None and run_info is not None:
        append_history(df.sparkSession, history, outcome.results, dataclasses.replace(run_info, run_kind="split"))
    return outcome


def _finish(df: DataFrame, checks: list[BaseCheck], results: list[CheckResult], samples: int) -> list[CheckResult]:
    """Write each failing rule's own output (a sql rule's failed rows), then take the samples."""
    # The block gives one result per check, in order: the lengths are equal.
    for check, result in zip(checks, results, strict=True):
        output = check.failed_rows_output
        if output is not None and result.failed_rows is not None and not result.passed:
            write_output(result.failed_rows, output)
    return attach_samples(df, checks, results, samples) if samples else results


def with_history_baselines(
    df: DataFrame, checks: list[BaseCheck], store: OutputSpec | None, info: RunInfo | None, samples: int = 0
) -> list[BaseCheck]:
    """The checks, each change or anomaly rule with its metric's earlier values from the
    store (one query for the block); the store checked before any rule runs. A rule bound
    to its earlier values already (a streaming batch binds them before it splits) keeps them:
    they are looked up once.

    Raises:
        ColaRuleError: a change or anomaly threshold with no history store to compare with.
        ColaOutputError: the store is not a Cola history.
    """
    needs = {check.rule_id: check.history_runs for check in checks if _unbound(check)}
    if store is None or info is None:
        for check in checks:
            if _unbound(check):
                raise check.rule_error(
                    "its thresholds compare with earlier runs, which a history store holds: give one "
                    "(history= and dataset=, or cola --history)"
                )
        return checks
    if samples:
        check_history_store(df.sparkSession, failed_records_spec(store), FAILED_RECORDS_SCHEMA)
    if not needs:
        check_history_store(df.sparkSession, store)
        return checks
    # Reading the baselines checks the store too: it is read once.
    earlier = read_baselines(df.sparkSession, store, info, needs)
    return [check.with_history(earlier.get(check.rule_id, [])) if _unbound(check) else check for check in checks]


def _unbound(check: BaseCheck) -> bool:
    """Whether the check's thresholds compare with earlier runs it has not been given."""
    return bool(check.history_runs) and check.history_values is None
