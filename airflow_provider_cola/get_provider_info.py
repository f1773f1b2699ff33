"""The registration dict Airflow reads through the ``apache_airflow_provider`` entry point."""

from __future__ import annotations

from typing import Any

__all__ = ["get_provider_info"]


def get_provider_info() -> dict[str, Any]:
    """Describe this provider to Airflow's ProvidersManager.

    ``package-name`` must equal the distribution name, or Airflow refuses the provider.
    ``task-decorators`` makes ``@task.cola_check`` resolve; ``extra-links`` names the
    "Cola report" link of both operators and the decorator.
    """
    from airflow_provider_cola import __version__

    return {
        "package-name": "airflow-provider-cola",
        "name": "Cola data quality",
        "description": "Data-quality gates for Airflow DAGs, run on Spark by the Cola engine.",
        "versions": [__version__],
        "integrations": [
            {
                "integration-name": "Cola",
                "external-doc-url": "https://github.com/airflow-provider-cola/airflow-provider-cola",
                "tags": ["software"],
            }
        ],
        "operators": [
            {
                "integration-name": "Cola",
                "python-modules": ["airflow_provider_cola.operators.cola", "airflow_provider_cola.operators.profiling"],
            }
        ],
        "task-decorators": [
            {
                "name": "cola_check",
                "class-name": "airflow_provider_cola.decorators.cola.cola_check",
            }
        ],
        "extra-links": ["airflow_provider_cola.links.ColaReportLink"],
    }
