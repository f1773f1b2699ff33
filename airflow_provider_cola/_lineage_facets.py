"""The data-quality input facets of a checked dataset, built from a Cola task's results summary.

The task's results summary (``cola_summary``, kept by ``settle``) and the block's checks give
the checked dataset two input facets:

- ``dataQualityAssertions``: one assertion per result;
- ``dataQualityMetrics``: ``rowCount`` and the per-column counts and statistics the block
  measured over all the rows (never a number measured under a rule's ``where``).

``docs/openlineage.md`` says what each field holds. The builders are plain functions of the
summary and the checks, apart from the tasks' lineage methods (``_lineage``), so they can be
tested on a real summary without Airflow's listener. Nothing here imports ``openlineage``
until a builder is called.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openlineage.client.facet_v2 import (
        InputDatasetFacet,
        data_quality_assertions_dataset,
        data_quality_metrics_input_dataset,
    )

    from cola_core.checks import BaseCheck

__all__ = ["assertions_facet", "metrics_facet", "quality_facets"]


def paired_checks(summary: Mapping[str, Any], checks: Sequence[BaseCheck] | None) -> list[BaseCheck | None]:
    """The check behind each result of ``summary``, in order, or ``None`` for every result.

    A run gives one result per check of the block, in order; the pairing is only trusted
    when each result's type and code are its check's.
    """
    results = summary["results"]
    if checks is None or len(checks) != len(results):
        return [None] * len(results)
    if any(r["rule_type"] != c.rule_type or r.get("code") != c.code for r, c in zip(results, checks, strict=True)):
        return [None] * len(results)
    return list(checks)


def _column(check: BaseCheck | None) -> str | None:
    """The one column a rule is about, if it has exactly one."""
    return None if check is None else check.measured_column()


def _text(value: Any) -> str:
    """A measured number as the facets carry it, text: ``6``, ``-15``, ``16.666666666666668``."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _expected_and_actual(result: Mapping[str, Any], check: BaseCheck | None) -> tuple[str | None, str | None]:
    """What a rule demanded and what it found, as text, where the rule has a number to compare
    (``BaseCheck.expectation``: a metric's ``must_be`` and value, ``row_count``'s bounds and
    rows, a row rule's offending rows); other rules (``sql``, ``schema``, ``values_present``,
    ``reconcile``...) give neither."""
    if check is None:
        return None, None
    expected, found_in = check.expectation()
    found = None if found_in is None else result.get(found_in)
    return expected, None if found is None else _text(found)


def _content(check: BaseCheck | None) -> tuple[str | None, str | None]:
    """The SQL a rule runs (a ``sql`` or ``expression`` rule: ``BaseCheck.sql_text``), and its
    content type."""
    text = None if check is None else check.sql_text()
    return (text, "sql") if text is not None else (None, None)


def _params(result: Mapping[str, Any], check: BaseCheck | None) -> dict[str, Any]:
    """What identifies the rule and scopes it: type, id, and where set, dimension, where,
    tolerance, warn threshold and (for several) columns."""
    params: dict[str, Any] = {"rule_type": result["rule_type"]}
    if result.get("rule_id"):
        params["rule_id"] = result["rule_id"]
    if result.get("dimension"):
        params["dimension"] = result["dimension"]
    if check is not None:
        for key, value in (("where", check.where), ("tolerance", check.tolerance), ("warn", check.params.get("warn"))):
            if value is not None:
                params[key] = value
        columns = check.params.get("columns")
        if isinstance(columns, (list, tuple)) and len(columns) > 1:
            params["columns"] = list(columns)
    return params


def assertions_facet(
    summary: Mapping[str, Any], checks: Sequence[BaseCheck] | None = None
) -> data_quality_assertions_dataset.DataQualityAssertionsDatasetFacet:
    """``dataQualityAssertions``: one assertion per result of the summary, in rule order.

    ``assertion`` is the result's code; ``success`` is the result's ``passed``, as the issue
    asks and as Cola judges it: a warn passed, and its ``severity`` (``warn``) says that it
    found something; ``severity`` is ``warn`` for a warn (or a rule
    declared ``"severity": "warn"``) and ``error`` otherwise; ``name`` is the rule's ``name``,
    else its ``rule_id``. ``column``, ``expected``, ``actual``, ``content`` and ``params``
    come from the rule, so they need ``checks``.

    Args:
        summary: the task's results summary (its XCom ``return_value``).
        checks: the block's checks in rule order (``RuleBlock.checks``); without them, or when
            they do not match the results, only what the results say is given.
    """
    from openlineage.client.facet_v2 import data_quality_assertions_dataset as facet

    assertions = []
    for result, check in zip(summary["results"], paired_checks(summary, checks), strict=True):
        expected, actual = _expected_and_actual(result, check)
        content, content_type = _content(check)
        assertions.append(
            facet.Assertion(
                assertion=result.get("code") or result["rule_type"],
                success=bool(result["passed"]),
                column=_column(check),
                severity=_severity(result, check),
                name=result.get("check_name") or result.get("rule_id"),
                expected=expected,
                actual=actual,
                content=content,
                contentType=content_type,
                params=_params(result, check),
            )
        )
    return facet.DataQualityAssertionsDatasetFacet(assertions=assertions)


def _severity(result: Mapping[str, Any], check: BaseCheck | None) -> str | None:
    """The facet's severity: ``warn`` (a failure only warns) or ``error`` (a failure fails the
    task). A passing result of a rule that is not known has none."""
    if result["severity"] == "warn" or (check is not None and check.severity_level == "warn"):
        return "warn"
    if check is not None or result["severity"] == "fail":
        return "error"
    return None


# The facet's name of each measure a check gives (``BaseCheck.column_measures``); distinctRows
# is made the facet's distinctCount in metrics_facet.
_MEASURES = {"null_count": "nullCount", "distinct_rows": "distinctRows", "min": "min", "max": "max", "sum": "sum"}


def _column_measures(result: Mapping[str, Any], check: BaseCheck) -> dict[str, dict[str, Any]]:
    """What one result measured per column over all the rows, as the check says:
    ``{column: {measure: value}}``, in the facet's names.

    ``distinctRows`` is the number of distinct values counting NULL as one value, as Cola
    counts them; :func:`metrics_facet` turns it into the facet's ``distinctCount``.
    """
    return {
        column: {_MEASURES[name]: value for name, value in measured.items() if name in _MEASURES}
        for column, measured in check.column_measures(result).items()
    }


def metrics_facet(
    summary: Mapping[str, Any], checks: Sequence[BaseCheck] | None = None
) -> data_quality_metrics_input_dataset.DataQualityMetricsInputDatasetFacet | None:
    """``dataQualityMetrics``: the row count and the column measures the block made over all rows.

    - ``rowCount``: the rows a rule without ``where`` saw (every scanned rule records it),
      else the rows a split wrote (valid plus invalid).
    - ``nullCount``: from ``not_null`` and plain ``missing_count`` rules.
    - ``distinctCount``: from one-column ``unique``, ``distinct_count`` and
      ``duplicate_count`` rules. The facet counts distinct values; Cola counts NULL as one
      of them, so the count is given only when the block also counted the column's NULLs
      (one is taken off when there are any).
    - ``min``, ``max``, ``sum``: from the metric rules of those names.

    A rule with ``where`` measured a part of the rows, so it gives nothing here; neither
    does a rule that measured nothing (a ``min`` of an all-NULL column).

    Args:
        summary: the task's results summary.
        checks: the block's checks in rule order; without them only ``rowCount`` is known.

    Returns:
        The facet, or None when nothing was measured over all the rows.
    """
    from openlineage.client.facet_v2 import data_quality_metrics_input_dataset as facet

    row_count: int | None = None
    measures: dict[str, dict[str, Any]] = {}
    for result, check in zip(summary["results"], paired_checks(summary, checks), strict=True):
        if check is None or check.where is not None:
            continue
        if row_count is None and result.get("rows_checked") is not None:
            row_count = int(result["rows_checked"])
        for column, measured in _column_measures(result, check).items():
            for key, value in measured.items():
                # Two rules measuring the same thing agree; the first one is kept.
                measures.setdefault(column, {}).setdefault(key, value)
    if row_count is None and summary.get("valid_count") is not None and summary.get("invalid_count") is not None:
        row_count = int(summary["valid_count"]) + int(summary["invalid_count"])
    columns = {}
    for column, measured in measures.items():
        distinct = measured.pop("distinctRows", None)
        nulls = measured.get("nullCount")
        if distinct is not None and nulls is not None:
            measured["distinctCount"] = distinct - (1 if nulls else 0)
        if measured:
            # No quantiles: Cola does not measure them (the field would default to an empty object).
            columns[column] = facet.ColumnMetrics(**measured, quantiles=None)
    if row_count is None and not columns:
        return None
    return facet.DataQualityMetricsInputDatasetFacet(columnMetrics=columns, rowCount=row_count)


def quality_facets(
    summary: Mapping[str, Any], checks: Sequence[BaseCheck] | None = None
) -> dict[str, InputDatasetFacet]:
    """The input facets of the checked dataset: ``dataQualityAssertions`` and, when anything
    was measured over all the rows, ``dataQualityMetrics``."""
    facets: dict[str, InputDatasetFacet] = {"dataQualityAssertions": assertions_facet(summary, checks)}
    metrics = metrics_facet(summary, checks)
    if metrics is not None:
        facets["dataQualityMetrics"] = metrics
    return facets
