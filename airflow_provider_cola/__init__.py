"""The Apache Airflow provider for the cola_core data-quality engine.

The operators live in :mod:`airflow_provider_cola.operators` and the TaskFlow decorator in
:mod:`airflow_provider_cola.decorators`. This module imports nothing, so that Airflow's provider
discovery stays cheap.
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
