"""Quality gates for asset-triggered DAGs: read the Cola summary on the triggering asset events.

A Cola task (``ColaCheckOperator``, ``ColaSplitOperator`` or ``@cola_check``) with ``outlets``
puts its results summary on each outlet's asset event, under ``extra["cola"]``
(:func:`asset_extra` says what it holds). A DAG scheduled on those assets receives the events
in ``context["triggering_asset_events"]``, and the functions here judge them:

- :func:`cola_quality_extras`: the summary of the latest event of each asset;
- :func:`cola_quality_gate`: ``True`` when every latest summary has an accepted severity, for
  ``@task.short_circuit``;
- :func:`cola_quality_branch`: the task ids mapped to the worst latest severity, for
  ``@task.branch``.

Each one takes the events as its ``triggering_asset_events`` parameter, so Airflow passes
them in when the function is a task's callable (``task.short_circuit(cola_quality_gate)``),
and reads them from the running task's context when they are not given. When an asset has
several events in the run, its latest one decides.

An event without a Cola summary (one created by hand or by the REST API, or by a task that
checks nothing) says nothing about quality. By default that is an error
(:class:`ColaAssetError`): a gate cannot vouch for data nobody checked, and a failed task is
seen where a skipped one is not. ``unchecked="refuse"`` refuses such data quietly instead,
and ``unchecked="accept"`` lets it through.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Mapping
from typing import Any, Literal, cast

from airflow.sdk.exceptions import AirflowFailException

from airflow_provider_cola._outcome import ASSET_EXTRA_KEY, SEVERITIES, asset_extra, checked_branch
from airflow_provider_cola.errors import ColaProviderError
from cola_core.common.formatting import one_line
from cola_core.language.result import Severity

__all__ = [
    "ASSET_EXTRA_KEY",
    "ColaAssetError",
    "Unchecked",
    "asset_extra",
    "cola_quality_branch",
    "cola_quality_extras",
    "cola_quality_gate",
]

log = logging.getLogger(__name__)

# What a gate does with an asset whose latest event carries no Cola summary (or, when the
# gate names its assets, one that sent no event): fail the task, refuse the data, or let it by.
Unchecked = Literal["raise", "refuse", "accept"]
UNCHECKED: tuple[Unchecked, ...] = ("raise", "refuse", "accept")


class ColaAssetError(ColaProviderError, AirflowFailException):
    """The triggering asset events cannot be judged: one carries no Cola summary, or an asset
    the gate names sent none. Final: a retry would read the same events."""


def cola_quality_extras(triggering_asset_events: Any = None) -> dict[str, dict[str, Any] | None]:
    """The Cola summary of the latest triggering event of each asset.

    Args:
        triggering_asset_events: ``context["triggering_asset_events"]`` (a mapping of assets
            and aliases to their events), or a list of asset events; read from the running
            task's context when not given.

    Returns:
        Asset name -> the ``extra["cola"]`` of its latest event (see :func:`asset_extra`), or
        ``None`` when that event has none. JSON-safe, so a task may return it as its XCom.
    """
    return {name: _summary_of(event) for name, event in _latest_events(triggering_asset_events).items()}


def cola_quality_gate(
    triggering_asset_events: Any = None,
    *,
    accept: str | Collection[str] = ("pass", "warn"),
    assets: Iterable[Any] | None = None,
    unchecked: Unchecked = "raise",
) -> bool:
    """Whether the data that triggered the run may go on: usable as ``@task.short_circuit``.

    Example::

        task.short_circuit(cola_quality_gate)(accept=["pass"]) >> load()

    Args:
        triggering_asset_events: as for :func:`cola_quality_extras`; Airflow passes it in
            when this function is a task's callable.
        accept: the severities that let the data through (``pass`` and ``warn`` by default).
        assets: the assets to judge (``Asset`` objects, or asset names or URIs); every
            triggering asset when not given.
        unchecked: for an asset whose latest event has no Cola summary, or a named asset
            that sent no event: ``raise`` (default), ``refuse`` or ``accept``.

    Returns:
        True when the latest summary of every judged asset has an accepted severity. Each
        asset's verdict is logged, with the codes of the failed checks.

    Raises:
        ColaAssetError: with ``unchecked="raise"``, an asset that cannot be judged (the
            message names it and the event's source).
        ValueError: ``accept``, ``assets`` or ``unchecked`` is malformed.
    """
    accepted = _checked_accept(accept)
    verdicts = _verdicts(triggering_asset_events, assets, _checked_unchecked(unchecked))
    ok = all(severity in accepted for severity in verdicts.values())
    log.info("Cola quality gate: %s (accepting %s)", "open" if ok else "closed", ", ".join(accepted))
    return ok


def cola_quality_branch(
    triggering_asset_events: Any = None,
    *,
    branch: Mapping[str, str | list[str]],
    assets: Iterable[Any] | None = None,
    unchecked: Unchecked = "raise",
) -> list[str]:
    """The tasks to follow for the worst latest severity: usable as ``@task.branch``.

    Example::

        task.branch(cola_quality_branch)(branch={"pass": "load", "warn": "load", "fail": "quarantine"})

    Args:
        triggering_asset_events: as for :func:`cola_quality_extras`.
        branch: ``{"pass": ..., "warn": ..., "fail": ...}``, each a task id or a list of them,
            as the operators' ``branch``; a severity left out follows no task (every
            downstream task is skipped).
        assets: the assets to judge, as for :func:`cola_quality_gate`.
        unchecked: as for :func:`cola_quality_gate`; ``refuse`` counts as ``fail``.

    Returns:
        The task ids mapped to the worst severity among the judged assets' latest summaries.

    Raises:
        ColaAssetError: with ``unchecked="raise"``, an asset that cannot be judged.
        ValueError: ``branch``, ``assets`` or ``unchecked`` is malformed.
    """
    targets = checked_branch(branch)
    assert targets is not None  # checked_branch returns None only for a None branch
    verdicts = _verdicts(triggering_asset_events, assets, _checked_unchecked(unchecked))
    worst: Severity = max(verdicts.values(), key=SEVERITIES.index, default="pass")
    follow = targets.get(worst, [])
    log.info("Cola quality branch: %s, following %s", worst, follow or "no task")
    return follow


def _verdicts(events: Any, assets: Iterable[Any] | None, unchecked: Unchecked) -> dict[str, Severity]:
    """Asset name -> the severity that judges it (``fail`` for a refused unchecked asset).

    An accepted unchecked asset is left out: it neither opens nor closes the gate.

    Raises:
        ColaAssetError: an asset cannot be judged and ``unchecked`` is ``raise``.
    """
    latest = _latest_events(events)
    refused: Severity = "fail"
    verdicts: dict[str, Severity] = {}
    if assets is None:
        judged: dict[str, Any] = dict(latest)
        if not judged:
            _unjudged("this run has no triggering asset events (it was not triggered by an asset)", unchecked)
            if unchecked == "refuse":
                verdicts["(no triggering asset)"] = refused
    else:
        judged = {}
        for wanted in _checked_assets(assets):
            name = _matching(wanted, latest)
            if name is None:
                label = _label(wanted)
                sent = ", ".join(repr(n) for n in sorted(latest)) or "none"
                _unjudged(f"asset {label!r} sent no triggering event to this run (assets that did: {sent})",
                          unchecked)
                if unchecked == "refuse":
                    verdicts[label] = refused
            else:
                judged[name] = latest[name]
    for name, event in judged.items():
        summary = _summary_of(event)
        if summary is None:
            _unjudged(f"the latest event of asset {name!r} ({_source(event)}) carries no Cola summary "
                      f"(extra[{ASSET_EXTRA_KEY!r}])", unchecked)
            if unchecked == "refuse":
                verdicts[name] = refused
            continue
        severity = cast(Severity, summary["severity"])
        verdicts[name] = severity
        # The codes as the producer's rules wrote them, shown on one line (an event may come from anywhere).
        failed = ", ".join(one_line(code) for code in summary.get("failed_codes") or []) or "none"
        log.info("Cola: asset %r is %s (%s; failed: %s)", name, severity, _source(event), failed)
    return verdicts


def _unjudged(reason: str, unchecked: Unchecked) -> None:
    if unchecked == "raise":
        raise ColaAssetError(
            f"Cola cannot judge the data: {reason}. Pass unchecked='refuse' to refuse such data, "
            "or unchecked='accept' to let it through"
        )
    log.warning("Cola: %s; %s", reason, "refused" if unchecked == "refuse" else "accepted as unchecked")


def _latest_events(events: Any) -> dict[str, Any]:
    """Asset name -> its latest event (by timestamp; of equal ones, the last given).

    A mapping's alias keys list again events that its asset keys list, which is harmless here.
    """
    if events is None:
        from airflow.sdk import get_current_context

        events = get_current_context()["triggering_asset_events"]
    flat = [event for group in events.values() for event in group] if isinstance(events, Mapping) else events
    latest: dict[str, Any] = {}
    for event in flat:
        name = event.asset.name
        if name not in latest or event.timestamp >= latest[name].timestamp:
            latest[name] = event
    return latest


def _summary_of(event: Any) -> dict[str, Any] | None:
    summary = (event.extra or {}).get(ASSET_EXTRA_KEY)
    if isinstance(summary, Mapping) and summary.get("severity") in SEVERITIES:
        return dict(summary)
    return None


def _source(event: Any) -> str:
    if event.source_dag_id:
        return f"from {event.source_dag_id}.{event.source_task_id}, run {event.source_run_id}"
    return "not from a task: created through the API or the UI"


def _matching(wanted: Any, latest: Mapping[str, Any]) -> str | None:
    """The name of the triggering asset that ``wanted`` (an Asset, a name or a URI) is."""
    from airflow.sdk import Asset

    for name, event in latest.items():
        if isinstance(wanted, Asset):
            if (wanted.name, wanted.uri) == (name, event.asset.uri):
                return name
        elif wanted in (name, event.asset.uri):
            return name
    return None


def _label(wanted: Any) -> str:
    from airflow.sdk import Asset

    return str(wanted.name) if isinstance(wanted, Asset) else str(wanted)


def _checked_assets(assets: Iterable[Any]) -> list[Any]:
    from airflow.sdk import Asset

    if isinstance(assets, (str, Asset)):
        assets = [assets]
    listed = list(assets)
    wrong = [item for item in listed if not isinstance(item, (str, Asset))]
    if not listed or wrong:
        raise ValueError(f"assets must be Asset objects, or asset names or URIs, got {assets!r}")
    return listed


def _checked_accept(accept: str | Collection[str]) -> tuple[Severity, ...]:
    listed = [accept] if isinstance(accept, str) else list(accept)
    if not listed or any(severity not in SEVERITIES for severity in listed):
        raise ValueError(f"accept must name severities among {', '.join(SEVERITIES)}, got {accept!r}")
    return tuple(severity for severity in SEVERITIES if severity in listed)


def _checked_unchecked(unchecked: Any) -> Unchecked:
    if unchecked not in UNCHECKED:
        raise ValueError(f"unchecked must be one of {', '.join(UNCHECKED)}, got {unchecked!r}")
    return cast(Unchecked, unchecked)
