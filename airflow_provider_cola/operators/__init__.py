"""The Cola operators: ``ColaCheckOperator``, ``ColaSplitOperator`` and ``ColaProfileOperator``."""

from __future__ import annotations

from airflow_provider_cola.operators.cola import ColaCheckOperator, ColaSplitOperator
from airflow_provider_cola.operators.profiling import ColaProfileOperator

__all__ = ["ColaCheckOperator", "ColaProfileOperator", "ColaSplitOperator"]
