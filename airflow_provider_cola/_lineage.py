"""OpenLineage facets of the Cola tasks: what was checked, what was measured, what was written.

Both operators and the ``@cola_check`` decorator take :class:`ColaLineageMixin`, whose
``get_openlineage_facets_on_complete`` and ``get_openlineage_facets_on_failure`` the
OpenLineage provider's listener calls after ``execute()``. They return the checked dataset as
an input carrying two input facets built from the task's results summary
(``cola_summary``, kept by ``settle``):

- ``dataQualityAssertions``: one assertion per result;
- ``dataQualityMetrics``: ``rowCount`` and the per-column counts and statistics the block
  measured over all the rows (never a number measured under a rule's ``where``).

A split also returns its valid and invalid outputs, each with an ``outputStatistics`` facet
holding the rows written to it. ``docs/openlineage.md`` says what each field holds and how
datasets are named.

The OpenLineage provider is optional: nothing here imports it (or ``openlineage``) until the
listener calls a method, and without the provider no listener calls one. The facet builders
are plain functions of the summary, so they can be tested without Airflow's listener.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from airflow_provider_cola._rules import dag_folder, load_rules
from airflow_provider_cola.errors import ColaConfigError
from cola_core.checks import (
    ColumnStatCheck,
    DistinctMetricCheck,
    MissingMetricCheck,
    NotNullCheck,
    RowCountCheck,
    UniqueCheck,
)

if TYPE_CHECKING:
    from airflow.providers.openlineage.extractors import OperatorLineage
    from openlineage.client.event_v2 import Dataset, InputDataset, OutputDataset
    from openlineage.client.facet_v2 import (
        InputDatasetFacet,
        OutputDatasetFacet,
        data_quality_assertions_dataset,
        data_quality_metrics_input_dataset,
    )

    from cola_core.checks import BaseCheck

__all__ = [
    "SPARK_CATALOG_NAMESPACE",
    "ColaLineageMixin",
    "assertions_facet",
    "input_dataset",
    "metrics_facet",
    "output_datasets",
    "path_naming",
    "quality_facets",
    "table_naming",
]

# The namespace of a catalog table when the task's Spark conf names no Hive metastore: the
# naming spec has no entry for Spark's own session catalog, and the worker cannot see where
# the table's files are.
SPARK_CATALOG_NAMESPACE = "spark_catalog"
# Object stores: the bucket (or container) is the namespace and the object key, without its
# leading slash, the name. s3a:// and s3n:// are S3, as the spec and OpenLineage's Spark
# integration name them.
_OBJECT_STORES = {"s3": "s3", "s3a": "s3", "s3n": "s3", "gs": "gs", "gcs": "gs", "wasb": "wasbs", "wasbs": "wasbs"}


def path_naming(location: str, conf: Mapping[str, Any] | None = None) -> tuple[str, str]:
    """The OpenLineage ``(namespace, name)`` of a path, as the naming spec gives it.

    ``/data/orders`` and ``file:///data/orders`` are ``("file", "/data/orders")`` (a relative
    path is made absolute against the working directory, as a local driver reads it);
    ``file://host/p`` is ``("file://host", "/p")``; ``s3a://bucket/key`` is ``("s3://bucket",
    "key")``; ``gs://`` and ``wasbs://`` likewise; ``hdfs://nn:8020/p`` is ``("hdfs://nn:8020",
    "/p")`` and any other scheme ``("<scheme>://<authority>", "<path>")``. A trailing slash is
    dropped. A path without a scheme is on the default file system: the local one, unless
    ``conf`` sets ``spark.hadoop.fs.defaultFS``.

    Args:
        location: the source's or output's ``path``.
        conf: the task's Spark conf, if any.
    """
    parts = urlsplit(location)
    # One letter before the colon is a Windows drive, not a scheme.
    if len(parts.scheme) <= 1:
        default_fs = str((conf or {}).get("spark.hadoop.fs.defaultFS") or "")
        if default_fs and not default_fs.startswith("file:") and location.startswith("/"):
            return path_naming(default_fs.rstrip("/") + location)
        return "file", _without_trailing_slash(os.path.abspath(location))
    scheme = parts.scheme.lower()
    if scheme == "file":
        namespace = f"file://{parts.netloc}" if parts.netloc else "file"
        return namespace, _without_trailing_slash(parts.path) or "/"
    if scheme in _OBJECT_STORES:
        return f"{_OBJECT_STORES[scheme]}://{parts.netloc}", parts.path.strip("/") or "/"
    return f"{scheme}://{parts.netloc}", _without_trailing_slash(parts.path) or "/"


def table_naming(table: str, conf: Mapping[str, Any] | None = None) -> tuple[str, str]:
    """The OpenLineage ``(namespace, name)`` of a catalog table.

    With a Hive metastore in the task's Spark conf (``spark.sql.catalogImplementation`` set to
    ``hive`` and ``spark.sql.hive.metastore.uris`` or ``spark.hadoop.hive.metastore.uris``),
    the spec's Hive naming: ``("hive://<host>:<port>", "<database>.<table>")``, the database
    being ``default`` when the name has none. Otherwise ``(SPARK_CATALOG_NAMESPACE, table)``.

    Args:
        table: the table as the source or output names it (``db.orders``).
        conf: the task's Spark conf, if any.
    """
    settings = conf or {}
    uris = settings.get("spark.sql.hive.metastore.uris") or settings.get("spark.hadoop.hive.metastore.uris")
    if settings.get("spark.sql.catalogImplementation") != "hive" or not uris:
        return SPARK_CATALOG_NAMESPACE, table
    metastore = urlsplit(str(uris).split(",")[0].strip())
    parts = table.split(".")
    if len(parts) == 3 and parts[0] == "spark_catalog":
        parts = parts[1:]
    if len(parts) == 1:
        parts = ["default", *parts]
    return f"hive://{metastore.netloc}", ".".join(parts)


def _without_trailing_slash(path: str) -> str:
    return path.rstrip("/") if path != "/" else path


def _config_naming(config: Any, conf: Mapping[str, Any] | None) -> tuple[str, str] | None:
    """The naming of a source or output config: a plain path, or a dict with a ``path`` or ``table``."""
    if isinstance(config, str) and config:
        return path_naming(config, conf)
    if not isinstance(config, Mapping):
        return None
    if isinstance(config.get("path"), str) and config["path"]:
        return path_naming(config["path"], conf)
    if isinstance(config.get("table"), str) and config["table"]:
        return table_naming(config["table"], conf)
    return None


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
    if check is None:
        return None
    if isinstance(check.params.get("column"), str):
        return str(check.params["column"])
    columns = check.params.get("columns")
    if isinstance(columns, (list, tuple)) and len(columns) == 1 and isinstance(columns[0], str):
        return columns[0]
    return None


def _text(value: Any) -> str:
    """A measured number as the facets carry it, text: ``6``, ``-15``, ``16.666666666666668``."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _expected_and_actual(result: Mapping[str, Any], check: BaseCheck | None) -> tuple[str | None, str | None]:
    """What a rule demanded and what it found, as text, where the rule has a number to compare.

    A metric rule: its ``must_be`` and the measured value. ``row_count`` in the bounds form: its
    bounds and the rows it counted. A row rule: ``0`` offending rows (without a ``tolerance``,
    which is a share, not a count) and the offending rows it counted. Other rules (``sql``,
    ``schema``, ``values_present``, ``reconcile``...) give neither.
    """
    if check is None:
        return None, None
    metric = result.get("metric_value")
    if "must_be" in check.params:
        return str(check.params["must_be"]), None if metric is None else _text(metric)
    if isinstance(check, RowCountCheck):
        low, high = check.params.get("min", 0), check.params.get("max")
        expected = f">= {low}" if high is None else f"between {low} and {high}"
        rows = result.get("rows_checked")
        return expected, None if rows is None else _text(rows)
    if check.is_row_level:
        return (None if check.tolerance is not None else "0"), _text(result["failed_count"])
    return None, None


def _content(check: BaseCheck | None) -> tuple[str | None, str | None]:
    """The SQL a ``sql`` or ``expression`` rule runs, and its content type."""
    if check is None:
        return None, None
    for key in ("query", "failed_rows", "expression"):
        if check.rule_type in ("sql", "expression") and isinstance(check.params.get(key), str):
            return check.params[key], "sql"
    return None, None


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


def _null_counts(result: Mapping[str, Any], check: NotNullCheck) -> dict[str, int] | None:
    """The NULLs per column a ``not_null`` rule counted, or None when they cannot be told apart.

    ``failed_count`` is their total. With one column, or none found, that says it all; with
    several, the result's ``details["columns"]`` holds them (left out only when over their
    bound), kept only when they name the rule's columns and add up.
    """
    columns = list(dict.fromkeys(str(column) for column in check.params["columns"]))
    failed = int(result["failed_count"])
    if failed == 0:
        return dict.fromkeys(columns, 0)
    if len(columns) == 1:
        return {columns[0]: failed}
    details = result.get("details")
    counted = details.get("columns") if isinstance(details, Mapping) else None
    if not isinstance(counted, Mapping) or sorted(counted) != sorted(columns):
        return None
    counts = {column: counted[column] for column in columns}
    if not all(isinstance(count, int) and not isinstance(count, bool) for count in counts.values()):
        return None
    return counts if sum(counts.values()) == failed else None


def _column_measures(result: Mapping[str, Any], check: BaseCheck) -> dict[str, dict[str, Any]]:
    """What one result measured per column over all the rows: ``{column: {measure: value}}``.

    ``distinctRows`` is the number of distinct values counting NULL as one value, as Cola
    counts them; :func:`metrics_facet` turns it into the facet's ``distinctCount``.
    """
    column = _column(check)
    metric = result.get("metric_value")
    rows = result.get("rows_checked")
    if isinstance(check, NotNullCheck):
        counts = _null_counts(result, check)
        return {name: {"nullCount": count} for name, count in (counts or {}).items()}
    if column is None:
        return {}
    if isinstance(check, MissingMetricCheck):
        # Only a plain missing_count counts NULLs alone; missing_values counts more.
        if check.rule_type == "missing_count" and "missing_values" not in check.params and metric is not None:
            return {column: {"nullCount": int(metric)}}
    elif isinstance(check, UniqueCheck):
        if rows is not None:
            return {column: {"distinctRows": int(rows) - int(result["failed_count"])}}
    elif isinstance(check, DistinctMetricCheck):
        if metric is not None and check.rule_type == "distinct_count":
            return {column: {"distinctRows": int(metric)}}
        if metric is not None and rows is not None and check.rule_type == "duplicate_count":
            return {column: {"distinctRows": int(rows) - int(metric)}}
    elif isinstance(check, ColumnStatCheck) and check.rule_type in ("min", "max", "sum") and metric is not None:
        return {column: {check.rule_type: float(metric)}}
    return {}


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


def input_dataset(
    naming: tuple[str, str], summary: Mapping[str, Any] | None, checks: Sequence[BaseCheck] | None = None
) -> InputDataset:
    """The checked dataset, with the quality facets when there is a summary.

    Args:
        naming: its ``(namespace, name)``.
        summary: the results summary, or None when the task failed before it had one.
        checks: the block's checks in rule order.
    """
    from openlineage.client.event_v2 import InputDataset

    facets = quality_facets(summary, checks) if summary is not None else {}
    return InputDataset(namespace=naming[0], name=naming[1], inputFacets=facets)


def output_datasets(
    valid_output: Any, invalid_output: Any, summary: Mapping[str, Any] | None, conf: Mapping[str, Any] | None = None
) -> list[OutputDataset]:
    """A split's valid and invalid outputs, each with the rows written to it (``outputStatistics``).

    Args:
        valid_output: the ``valid_output`` argument (a path, or a dict with a path or table).
        invalid_output: the ``invalid_output`` argument.
        summary: the results summary, whose ``valid_count`` and ``invalid_count`` were
            counted during the writes; without it (a task that failed before writing) there
            are no outputs.
        conf: the task's Spark conf, for naming (see :func:`path_naming`, :func:`table_naming`).
    """
    from openlineage.client.event_v2 import OutputDataset
    from openlineage.client.facet_v2 import output_statistics_output_dataset

    if summary is None or summary.get("valid_count") is None:
        return []
    outputs = []
    for config, count in ((valid_output, summary["valid_count"]), (invalid_output, summary["invalid_count"])):
        naming = _config_naming(config, conf)
        if naming is not None:
            statistics = output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet(rowCount=int(count))
            facets: dict[str, OutputDatasetFacet] = {"outputStatistics": statistics}
            outputs.append(OutputDataset(namespace=naming[0], name=naming[1], outputFacets=facets))
    return outputs


class ColaLineageMixin:
    """OpenLineage facets for a Cola task, read from what ``execute()`` left on it.

    Mixed into ``ColaCheckOperator`` (and so ``ColaSplitOperator``) and the ``@cola_check``
    operator. It reads ``cola_summary`` (kept by ``settle``), ``source`` (the operators),
    ``rules``, ``conf``, ``dataset``, ``valid_output``/``invalid_output`` and the task's
    ``inlets``/``outlets``.

    The checked dataset is named from ``source`` (a path or a table). A task without one (the
    decorator, or a ``query`` source) names it by its one inlet, when it has exactly one
    (``inlets=[Asset("file:///data/orders")]``), else by ``dataset`` or
    ``<dag_id>.<task_id>`` in the deployment's OpenLineage namespace. The other inlets and
    the outlets are returned as inputs and outputs, as the listener would have returned them.
    """

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> OperatorLineage[Dataset, Any]:
        """The lineage of a task that succeeded (the listener passes its task instance)."""
        return self._cola_lineage()

    def get_openlineage_facets_on_failure(self, task_instance: Any) -> OperatorLineage[Dataset, Any]:
        """The lineage of a task that failed: with the quality facets when checks failed (the
        summary was written first); only the dataset's name when the task failed before it
        had a summary (a crash, a refused job, a malformed rule)."""
        return self._cola_lineage()

    def _cola_lineage(self) -> OperatorLineage[Dataset, Any]:
        from airflow.providers.openlineage.extractors import OperatorLineage
        from airflow.providers.openlineage.extractors.manager import ExtractorManager

        summary: Mapping[str, Any] | None = getattr(self, "cola_summary", None)
        conf = getattr(self, "conf", None)
        conf = conf if isinstance(conf, Mapping) else None
        inlets = [d for d in map(ExtractorManager.convert_to_ol_dataset, getattr(self, "inlets", None) or []) if d]
        outlets = [d for d in map(ExtractorManager.convert_to_ol_dataset, getattr(self, "outlets", None) or []) if d]
        naming = _config_naming(getattr(self, "source", None), conf)
        if naming is None and len(inlets) == 1:
            naming = (inlets[0].namespace, inlets[0].name)
        if naming is None:
            task = f"{getattr(self, 'dag_id', None)}.{getattr(self, 'task_id', None)}"
            naming = (_job_namespace(), getattr(self, "dataset", None) or task)
        checked = input_dataset(naming, summary, self._cola_checks() if summary is not None else None)
        outputs: list[Dataset] = [
            *output_datasets(getattr(self, "valid_output", None), getattr(self, "invalid_output", None), summary, conf)
        ]
        return OperatorLineage(
            inputs=[checked, *_others(inlets, [checked])],
            outputs=[*outputs, *_others(outlets, outputs)],
        )

    def _cola_checks(self) -> Sequence[BaseCheck] | None:
        """The block's checks: the decorator keeps them from ``execute()``; the operators'
        are parsed again from ``rules`` (no Spark), as ``execute()`` parsed them."""
        block = getattr(self, "_block", None)
        if block is not None:
            return tuple(block.checks)
        get_dag = getattr(self, "get_dag", None)
        try:
            block = load_rules(
                getattr(self, "rules", None),
                base_dir=dag_folder(get_dag() if callable(get_dag) else None),
                allow_external_access=bool(getattr(self, "allow_external_access", False)),
            )
        except ColaConfigError:
            return None
        return tuple(block.checks)


def _job_namespace() -> str:
    from airflow.providers.openlineage.conf import namespace

    return str(namespace())


def _others(datasets: Sequence[Dataset], taken: Sequence[Dataset]) -> list[Dataset]:
    """``datasets`` without those already in ``taken`` (by namespace and name), once each."""
    seen = {(d.namespace, d.name) for d in taken}
    kept = []
    for dataset in datasets:
        if (dataset.namespace, dataset.name) not in seen:
            seen.add((dataset.namespace, dataset.name))
            kept.append(dataset)
    return kept
