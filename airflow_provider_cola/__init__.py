"""The Apache Airflow provider for the cola_core data-quality engine."""

from __future__ import annotations

__all__: list[str] = []
