"""The ``@cola_check`` TaskFlow decorator (also registered as ``@task.cola_check``)."""

from __future__ import annotations

from airflow_provider_cola.decorators.cola import cola_check

__all__ = ["cola_check"]
