"""What a task does with a results summary: push it, put it on the outlets' asset events,
log it, alert, then branch, fail or log.

Shared by the operators and the ``@cola_check`` decorator, so the three behave the same.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

from airflow_provider_cola.alerts import AlertSeverity, AlertTarget, code_of, headline, result_line, send_alerts
from airflow_provider_cola.errors import ColaChecksFailed
from cola_core.language.result import SEVERITIES, Severity

if TYPE_CHECKING:
    from airflow.sdk import BranchMixIn, Context

__all__ = [
    "ASSET_EXTRA_KEY",
    "ON_FAILURE",
    "SEVERITIES",
    "OnFailure",
    "asset_extra",
    "attach_to_outlets",
    "checked_branch",
    "checked_on_failure",
    "checked_samples",
    "checked_switch",
    "describe_results",
    "settle",
]

# What a failed check does to a task without ``branch``: fail it, or let it succeed and log
# the failures as a warning or as information.
OnFailure = Literal["fail", "warn", "skip"]
ON_FAILURE: tuple[OnFailure, ...] = ("fail", "warn", "skip")

# Where an asset event's extra holds the Cola summary: under one key of its own, so that the
# extras a task sets itself stay as they are, and a consumer can tell a checked event.
ASSET_EXTRA_KEY = "cola"


def checked_on_failure(on_failure: Any) -> OnFailure:
    """Refuse (at DAG parse time) an ``on_failure`` other than ``fail``, ``warn`` or ``skip``."""
    if on_failure not in ON_FAILURE:
        raise ValueError(f"on_failure must be one of {', '.join(ON_FAILURE)} (lower case), got {on_failure!r}")
    return cast(OnFailure, on_failure)  # one of ON_FAILURE


def checked_samples(samples: Any) -> int:
    """Refuse (at DAG parse time) a ``samples`` that is not a whole number >= 0."""
    from cola_core.errors import ColaError
    from cola_core.job.spec import checked_samples as cola_checked_samples

    try:
        return cola_checked_samples(samples)
    except ColaError as error:
        raise ValueError(str(error)) from error


def checked_switch(value: Any, name: str) -> bool:
    """Refuse (at DAG parse time) a switch that is not ``True`` or ``False``.

    A string such as ``"false"`` is truthy in Python: taken as given, it would switch on.
    """
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return value


def checked_branch(branch: Any) -> dict[Severity, list[str]] | None:
    """Normalise ``{"pass": ..., "warn": ..., "fail": ...}`` to lists of task ids.

    A severity may be left out: when the run ends with it, every downstream task is skipped.

    Raises:
        ValueError: an unknown severity, or a value that is not a task id or a list of them.
    """
    if branch is None:
        return None
    if not isinstance(branch, Mapping) or not branch:
        raise ValueError(
            'branch must map severities to task ids, e.g. {"pass": "load", "warn": "notify", '
            f'"fail": "quarantine"}}, got {branch!r}'
        )
    normalised: dict[Severity, list[str]] = {}
    for severity, targets in branch.items():
        if severity not in SEVERITIES:
            raise ValueError(f"branch keys are {', '.join(SEVERITIES)}, got {severity!r}")
        if isinstance(targets, str):
            targets = [targets]
        if not isinstance(targets, (list, tuple)) or not all(isinstance(t, str) and t for t in targets):
            raise ValueError(f"branch[{severity!r}] must be a task id or a list of task ids, got {targets!r}")
        normalised[severity] = list(targets)
    return normalised


def describe_results(results: Sequence[Mapping[str, Any]], severity: Severity) -> str:
    """One line per result of the given severity: ``[FAIL] <name>: <message>``.

    The engine's messages already start with the rule's code, so only a given ``name`` is
    added in front of them.
    """
    lines = []
    for result in results:
        if result["severity"] == severity:
            lines.append(result_line(result))
            # Offending rows, when the task asked for samples: what to look at first.
            lines.extend(f"      e.g. {json.dumps(row, default=str)}" for row in result.get("samples") or [])
    return "\n".join(lines)


def settle(
    task: BranchMixIn,
    context: Context,
    summary: Mapping[str, Any],
    *,
    on_failure: OnFailure,
    branch: Mapping[Severity, list[str]] | None,
    on_quality: Sequence[AlertTarget] = (),
    on_quality_severity: AlertSeverity = "fail",
    report_url: str | None = None,
) -> Mapping[str, Any]:
    """Push ``summary`` as the task's ``return_value``, log it, alert, then branch, fail or log.

    The push is explicit because branching skips tasks by raising, and so does failing: in
    both cases the task runner never pushes what ``execute`` would have returned. The
    ``on_quality`` alerts fire after the push and before the task branches or fails
    (``alerts.send_alerts``); one that fails is a warning.

    The first line logged says what the run found. A run that failed or warned says it at
    WARNING level, the codes that broke first, and where a branch goes: with ``branch``, a
    failing check task succeeds (it is green in the grid), and this line is what marks it.
    Airflow 3.3's Task SDK has no way for a running task to set its own task-instance note.

    Raises:
        ColaChecksFailed: a check failed, no ``branch`` is given and ``on_failure`` is ``fail``.
        DownstreamTasksSkipped: raised by Airflow's branching to skip the other tasks.
    """
    context["ti"].xcom_push(key="return_value", value=summary)
    # Kept on the task for what runs after execute() in the same process: the OpenLineage
    # facets (on completion and on failure) and the outlets' asset event extras.
    cast(Any, task).cola_summary = summary
    # Before branching: that raises too, and Airflow still emits the events then (a branch is
    # a success). When the task fails, Airflow emits no event, so these extras go with it.
    attach_to_outlets(task, context, summary)
    severity = summary["severity"]
    results = summary["results"]
    counts = summary["counts"]
    follow = None if branch is None else branch.get(severity)
    _log_outcome(task, summary, on_failure, branch, follow)
    if counts["warn"]:
        task.log.warning("Cola checks that warned:\n%s", describe_results(results, "warn"))
    failed = describe_results(results, "fail")
    if branch is not None and failed:
        task.log.warning("Cola checks that failed:\n%s", failed)
    send_alerts(
        task.log, context, summary, on_quality=on_quality, on_quality_severity=on_quality_severity,
        report_url=report_url,
    )
    if branch is not None:
        task.do_branch(context, follow)
        return summary
    if not failed:
        return summary
    if on_failure == "fail":
        raise ColaChecksFailed(f"{counts['fail']} of {len(results)} Cola checks failed:\n{failed}", summary)
    log = task.log.warning if on_failure == "warn" else task.log.info
    log("Cola checks that failed (on_failure=%r, so the task succeeds):\n%s", on_failure, failed)
    return summary


def _log_outcome(
    task: BranchMixIn,
    summary: Mapping[str, Any],
    on_failure: OnFailure,
    branch: Mapping[Severity, list[str]] | None,
    follow: list[str] | None,
) -> None:
    """The run's first line: ``Cola: pass (5 passed, 0 warned, 0 failed)`` for a pass, else
    ``Cola: FAIL: <headline>; following quarantine`` (:func:`alerts.headline`).

    At WARNING level unless the run passed, or failed under ``on_failure="skip"`` (informative
    rules, whose failures are logged as information).
    """
    severity = summary["severity"]
    counts = summary["counts"]
    if severity == "pass":
        task.log.info(
            "Cola: pass (%d passed, %d warned, %d failed)", counts["pass"], counts["warn"], counts["fail"]
        )
        if branch is not None and follow is None:
            task.log.info("branch has no entry for 'pass': skipping every downstream task")
        return
    line = f"Cola: {severity.upper()}: {headline(summary)}"
    if branch is not None:
        if follow is None:
            line += f"; branch has no entry for {severity!r}: skipping every downstream task"
        else:
            line += f"; following {', '.join(follow)}"
    quiet = branch is None and on_failure == "skip" and severity == "fail"
    (task.log.info if quiet else task.log.warning)("%s", line)


def asset_extra(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The quality summary an outlet's asset event carries, under ``extra["cola"]``.

    Kept small and JSON-safe, since the extra is stored with every event and handed to every
    consumer: codes and rule ids, never messages or samples.

    Args:
        summary: the task's results summary (its XCom ``return_value``).

    Returns:
        ``{"severity", "counts", "failed_codes", "warned_codes", "rule_ids",
        "failed_rule_ids"}``, plus ``valid_count`` and ``invalid_count`` for a split. The code
        lists and ``failed_rule_ids`` follow the rule order, one item per result; a result
        without a code is named by its rule type.
    """
    results = summary["results"]
    failed = [result for result in results if result["severity"] == "fail"]
    warned = [result for result in results if result["severity"] == "warn"]
    extra: dict[str, Any] = {
        "severity": summary["severity"],
        "counts": {severity: int(summary["counts"][severity]) for severity in SEVERITIES},
        "failed_codes": [code_of(result) for result in failed],
        "warned_codes": [code_of(result) for result in warned],
        "rule_ids": [result.get("rule_id") for result in results],
        "failed_rule_ids": [result.get("rule_id") for result in failed],
    }
    if "valid_count" in summary:
        extra["valid_count"] = int(summary["valid_count"])
        extra["invalid_count"] = int(summary["invalid_count"])
    return extra


def attach_to_outlets(task: BranchMixIn, context: Context, summary: Mapping[str, Any]) -> None:
    """Put :func:`asset_extra` on the asset event of each of the task's outlets.

    An ``Asset`` or ``Asset.ref(...)`` outlet gets it on its own event. An ``AssetAlias``
    names no asset by itself: the task adds the alias's assets while it runs
    (``outlet_events[alias].add(asset)``), and each event added so far gets the summary; an
    alias with none gets nothing, and the log says so. The extra's other keys are left as
    the task set them.
    """
    from airflow.sdk import Asset, AssetAlias
    from airflow.sdk.definitions.asset import AssetRef
    from airflow.sdk.exceptions import AirflowRuntimeError

    outlets = [o for o in getattr(task, "outlets", None) or () if isinstance(o, (Asset, AssetRef, AssetAlias))]
    # Absent only when execute() is called by hand, outside a task run: then no event is emitted.
    events = context.get("outlet_events")
    if not outlets or events is None:
        return
    for outlet in outlets:
        if isinstance(outlet, AssetAlias):
            added = events[outlet].asset_alias_events
            if not added:
                task.log.info(
                    "Cola: outlet AssetAlias(%r) has no asset event added by the task, so no summary is "
                    "attached (add its asset with outlet_events[alias].add(asset) in the task)", outlet.name,
                )
            for event in added:
                # A new dict: the one given to add() is the caller's.
                event.extra = {**event.extra, ASSET_EXTRA_KEY: asset_extra(summary)}
            continue
        try:
            events[outlet].extra[ASSET_EXTRA_KEY] = asset_extra(summary)
        except AirflowRuntimeError as error:
            # A ref to an asset Airflow does not know: Airflow emits no event for it either.
            task.log.warning("Cola: no summary attached to outlet %r: %s", outlet, error)
