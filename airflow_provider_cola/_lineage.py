"""OpenLineage lineage of the Cola tasks: the checked dataset and a split's outputs.

Both operators and the ``@cola_check`` decorator take :class:`ColaLineageMixin`, whose
``get_openlineage_facets_on_complete`` and ``get_openlineage_facets_on_failure`` the
OpenLineage provider's listener calls after ``execute()``. They return the checked dataset as
an input carrying the data-quality facets built from the task's results summary
(``dataQualityAssertions`` and ``dataQualityMetrics``: ``_lineage_facets`` builds them).

A split also returns its valid and invalid outputs, each with an ``outputStatistics`` facet
holding the rows written to it. Datasets are named by ``_lineage_naming``;
``docs/openlineage.md`` says what each field holds and how datasets are named.

The OpenLineage provider is optional: nothing here imports it (or ``openlineage``) until the
listener calls a method, and without the provider no listener calls one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from airflow_provider_cola._lineage_facets import quality_facets
from airflow_provider_cola._lineage_naming import config_naming
from airflow_provider_cola._rules import dag_folder, load_rules
from airflow_provider_cola.errors import ColaConfigError

if TYPE_CHECKING:
    from airflow.providers.openlineage.extractors import OperatorLineage
    from openlineage.client.event_v2 import Dataset, InputDataset, OutputDataset
    from openlineage.client.facet_v2 import OutputDatasetFacet

    from cola_core.checks import BaseCheck

__all__ = ["ColaLineageMixin", "input_dataset", "output_datasets"]


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
        conf: the task's Spark conf, for naming (see ``_lineage_naming.path_naming`` and ``table_naming``).
    """
    from openlineage.client.event_v2 import OutputDataset
    from openlineage.client.facet_v2 import output_statistics_output_dataset

    if summary is None or summary.get("valid_count") is None:
        return []
    outputs = []
    for config, count in ((valid_output, summary["valid_count"]), (invalid_output, summary["invalid_count"])):
        naming = config_naming(config, conf)
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
        naming = config_naming(getattr(self, "source", None), conf)
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
