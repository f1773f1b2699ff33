"""cola_core: a data-quality engine for PySpark DataFrames.

It depends on pyspark and the standard library only, so it runs in any Spark job, notebook or
Airflow task, and ships to a cluster as a plain zip.
"""

from __future__ import annotations

from cola_core.checks.base import BaseCheck
from cola_core.cola import Cola
from cola_core.errors import ColaError, ColaRuleError
from cola_core.result import CheckResult
from cola_core.split import ColaSplit

__all__ = ["BaseCheck", "CheckResult", "Cola", "ColaError", "ColaRuleError", "ColaSplit"]

__version__ = "0.1.0"
