"""The Cola operators: ``ColaCheckOperator`` and ``ColaSplitOperator``."""

from __future__ import annotations

from airflow_provider_cola.operators.cola import ColaCheckOperator, ColaSplitOperator

__all__ = ["ColaCheckOperator", "ColaSplitOperator"]
