"""Quality alerts: ``on_quality`` notifiers and callables, fired when a run's worst severity
reaches ``on_quality_severity``.

``on_quality`` takes Airflow notifiers (``airflow.sdk.BaseNotifier`` instances, such as
``SmtpNotifier`` or ``SlackNotifier`` from their own providers), plain callables, or a list of
them. Each one is given the task context plus :data:`CONTEXT_KEY` (``"cola"``): the summary of
the run as :func:`alert_summary` builds it. So a notifier's templated fields can say
``{{ cola.severity }}`` or ``{{ cola.failed_codes | join(", ") }}``, and a callable reads
``context["cola"]["message"]``, a plain-text message that is the same for the same run.

What the rules' author wrote (a rule's name, code, message) is data here. Every text of the
summary is one line (``cola_core.common.formatting.one_line``: a line break in a name is shown
as ``\n``), so that no name forges a result line, a ``Report:`` link or a mail header. The
summary is plain text, never HTML: an HTML template escapes it (``{{ cola.message | e }}``),
since Airflow renders a notifier's templates without autoescaping.

The alerts fire after the results are pushed to XCom and before the task branches or fails
(``_outcome.settle``). The run is finished by then: an alert that fails (an SMTP server that
is down, a webhook that answers 500) is logged as a warning and changes nothing else, so
that the task neither fails nor retries a run whose outputs and history are written.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

from cola_core.common.formatting import one_line

if TYPE_CHECKING:
    from airflow.sdk import Context
    from airflow.sdk.types import Logger

__all__ = [
    "ALERT_SEVERITIES",
    "CONTEXT_KEY",
    "AlertSeverity",
    "AlertTarget",
    "alert_summary",
    "checked_on_quality",
    "checked_on_quality_severity",
    "code_of",
    "headline",
    "result_line",
    "send_alerts",
]

# The key of the task context under which a notifier's templates find the run's summary.
CONTEXT_KEY = "cola"

# "warn" fires on a warning or a failure, "fail" on a failure only.
AlertSeverity = Literal["warn", "fail"]
ALERT_SEVERITIES: tuple[AlertSeverity, ...] = ("warn", "fail")
_RANK = {"pass": 0, "warn": 1, "fail": 2}

# A notifier instance, or any callable taking the task context.
AlertTarget = Callable[..., Any]


def checked_on_quality(on_quality: Any) -> tuple[AlertTarget, ...]:
    """Refuse (at DAG parse time) an ``on_quality`` that is not a notifier, a callable, or a
    list of them; return them as a tuple (empty for None).

    A notifier class given instead of an instance is refused too: it is callable, but calling
    it with the context would build a notifier, not send anything.

    Raises:
        ValueError: what is wrong, and which item of a list it is.
    """
    if on_quality is None:
        return ()
    many = isinstance(on_quality, (list, tuple))
    targets = list(on_quality) if many else [on_quality]
    for position, target in enumerate(targets):
        name = f"on_quality[{position}]" if many else "on_quality"
        if isinstance(target, type):
            raise ValueError(
                f"{name} must be a notifier instance, not the class {target.__name__}: "
                f"write {target.__name__}(...) with its arguments"
            )
        if not callable(target):
            raise ValueError(
                f"{name} must be an Airflow notifier (a BaseNotifier such as SmtpNotifier(...)) or a callable "
                f"taking the task context, or a list of them; got {target!r}"
            )
    return tuple(targets)


def checked_on_quality_severity(severity: Any) -> AlertSeverity:
    """Refuse (at DAG parse time) an ``on_quality_severity`` other than ``warn`` or ``fail``."""
    if severity not in ALERT_SEVERITIES:
        raise ValueError(
            f"on_quality_severity must be 'warn' (alert on a warning or a failure) or 'fail' (on a failure only), "
            f"got {severity!r}"
        )
    return cast(AlertSeverity, severity)  # one of ALERT_SEVERITIES


def code_of(result: Mapping[str, Any]) -> str:
    """What names a result in lists of codes: its code, or its rule type when it has none.

    As the data has it (the asset events carry it so): :func:`one_line` it to show it.
    """
    return str(result.get("code") or result["rule_type"])


def result_line(result: Mapping[str, Any]) -> str:
    """``  [FAIL] <name>: <message>``: a result as the failure message and the alerts list it,
    on one line whatever its name and message hold (:func:`one_line`).

    The engine's messages already start with the rule's code, so only a given ``name`` is
    added in front of them.
    """
    name = f"{one_line(result['check_name'])}: " if result.get("check_name") else ""
    return f"  [{one_line(str(result['severity']).upper())}] {name}{one_line(result['message'])}"


def headline(summary: Mapping[str, Any]) -> str:
    """The run in one line, the codes of what broke first.

    ``3 of 5 checks failed (not_null(order_id), unique(order_id), NEGATIVE_AMOUNT), 1 warned
    (missing_percent(email))``, ``1 of 5 checks warned (missing_percent(email))`` or ``5 of 5
    checks passed``.
    """
    results = summary["results"]
    total = f"{len(results)} check{'' if len(results) == 1 else 's'}"
    failed = [one_line(code_of(result)) for result in results if result["severity"] == "fail"]
    warned = [one_line(code_of(result)) for result in results if result["severity"] == "warn"]
    if failed:
        line = f"{len(failed)} of {total} failed ({', '.join(failed)})"
        return line + (f", {len(warned)} warned ({', '.join(warned)})" if warned else "")
    if warned:
        return f"{len(warned)} of {total} warned ({', '.join(warned)})"
    return f"{len(results)} of {total} passed"


def alert_summary(
    summary: Mapping[str, Any],
    *,
    dag_id: str,
    task_id: str,
    run_id: str,
    map_index: int = -1,
    report_url: str | None = None,
) -> dict[str, Any]:
    """What an alert's templates find under ``cola``: the run's summary, with its message.

    Args:
        summary: the task's results summary (its XCom ``return_value``).
        dag_id, task_id, run_id, map_index: the task instance (``map_index`` -1: not mapped).
        report_url: the "Cola report" link of the run's HTML report, None without one.

    Returns:
        ``severity``; ``headline`` (:func:`headline`); ``counts`` (``pass``, ``warn``,
        ``fail``) and ``total``; ``failed_codes`` and ``warned_codes`` (:func:`code_of`, in
        rule order); ``failed_names`` and ``warned_names`` (each rule's ``name``, or its code
        when it has none); ``failed`` and ``warned`` (those results, as in XCom, each text
        field on one line); ``valid_count`` and ``invalid_count`` (a split's rows, None for a
        check); ``report_url``; ``dag_id``, ``task_id``, ``run_id``, ``map_index``; and
        ``message``. All of it is plain text, each text on one line (:func:`one_line`), so
        the message has one line per result it lists.
    """
    results = list(summary["results"])
    failed = [_shown(result) for result in results if result["severity"] == "fail"]
    warned = [_shown(result) for result in results if result["severity"] == "warn"]
    split = "valid_count" in summary
    cola: dict[str, Any] = {
        "severity": summary["severity"],
        "headline": headline(summary),
        "counts": {severity: int(summary["counts"][severity]) for severity in ("pass", "warn", "fail")},
        "total": len(results),
        "failed_codes": [code_of(result) for result in failed],
        "warned_codes": [code_of(result) for result in warned],
        "failed_names": [str(result.get("check_name") or code_of(result)) for result in failed],
        "warned_names": [str(result.get("check_name") or code_of(result)) for result in warned],
        "failed": failed,
        "warned": warned,
        "valid_count": int(summary["valid_count"]) if split else None,
        "invalid_count": int(summary["invalid_count"]) if split else None,
        "report_url": None if report_url is None else one_line(report_url),
        "dag_id": one_line(dag_id),
        "task_id": one_line(task_id),
        "run_id": one_line(run_id),
        "map_index": map_index,
    }
    cola["message"] = _message(cola)
    return cola


def _shown(result: Mapping[str, Any]) -> dict[str, Any]:
    """A result as an alert sees it: as in XCom, each text field (name, code, message, rule
    id, dimension...) on one line, so that a template may put any of them in a subject; its
    samples, thresholds and details stay the data they are."""
    return {key: one_line(value) if isinstance(value, str) else value for key, value in result.items()}


def _message(cola: Mapping[str, Any]) -> str:
    """The default text: who, what broke (failures, then warnings), the split's rows, the link."""
    task = f"{cola['dag_id']}.{cola['task_id']}" + (f"[{cola['map_index']}]" if cola["map_index"] >= 0 else "")
    lines = [
        f"Cola {str(cola['severity']).upper()}: {task} (run {cola['run_id']})",
        cola["headline"],
        *(result_line(result) for result in [*cola["failed"], *cola["warned"]]),
    ]
    if cola["valid_count"] is not None:
        lines.append(f"Rows: {cola['valid_count']} valid, {cola['invalid_count']} invalid")
    if cola["report_url"]:
        lines.append(f"Report: {cola['report_url']}")
    return "\n".join(lines)


def send_alerts(
    log: Logger,
    context: Context,
    summary: Mapping[str, Any],
    *,
    on_quality: Sequence[AlertTarget],
    on_quality_severity: AlertSeverity,
    report_url: str | None = None,
) -> None:
    """Fire each of ``on_quality`` when the run's worst severity reaches ``on_quality_severity``.

    A notifier is called as Airflow calls a callback (``notifier(context)``: its templated
    fields are rendered against the context, then it sends), on a copy of itself, since
    rendering replaces its templates with their text; a callable is called with the context.
    Both get ``context["cola"]`` (:func:`alert_summary`). One that raises is logged as a
    warning, with its reason, and the next one still fires.
    """
    if not on_quality or _RANK[summary["severity"]] < _RANK[on_quality_severity]:
        return
    ti = context["ti"]
    cola = alert_summary(
        summary, dag_id=ti.dag_id, task_id=ti.task_id, run_id=ti.run_id,
        map_index=-1 if ti.map_index is None else ti.map_index, report_url=report_url,
    )
    for target in on_quality:
        name = _name(target)
        # A context of its own for each: a notifier adds its fields to it, a callable may change it.
        alert_context = cast("Context", {**context, CONTEXT_KEY: copy.deepcopy(cola)})
        try:
            _prepared(target)(alert_context)
        except Exception as error:
            log.warning(
                "Cola: the on_quality alert %s failed, so it was not sent (the run's outcome stands): %s: %s",
                name, type(error).__name__, error, exc_info=True,
            )
        else:
            log.info("Cola: on_quality alert %s sent (severity %s)", name, summary["severity"])


def _prepared(target: AlertTarget) -> AlertTarget:
    """A notifier's copy, rendered and sent in its place; a callable as it is.

    Rendering a notifier's templated fields replaces them with their text, for good: without
    a copy, the next run in the same process (a retry, another task sharing the notifier)
    would send this run's text.
    """
    from airflow.sdk import BaseNotifier

    if not isinstance(target, BaseNotifier):
        return target
    try:
        return copy.deepcopy(target)
    except Exception:  # a notifier holding something that cannot be copied (a lock, a client)
        return target


def _name(target: AlertTarget) -> str:
    """How the log names an alert: the notifier's class, or the callable's name."""
    from airflow.sdk import BaseNotifier

    if isinstance(target, BaseNotifier):
        return type(target).__name__
    return str(getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or repr(target))
