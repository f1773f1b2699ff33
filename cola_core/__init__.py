"""cola_core: a data-quality engine for PySpark DataFrames.

It depends on pyspark and the standard library only, so it runs in any Spark job, notebook or
Airflow task, and ships to a cluster as a plain zip.

The names here are the public API. Custom checks also use :mod:`cola_core.language.params` to declare
their parameters.
"""

from __future__ import annotations

from cola_core._version import __version__ as __version__
from cola_core.checks.base import BaseCheck, Capability, RuleOptions
from cola_core.cola import Cola
from cola_core.errors import ColaError, ColaOutputError, ColaRuleError, ColaSourceError, ThresholdError
from cola_core.job.runner import JobOutcome, run_job
from cola_core.job.spec import JobSpec
from cola_core.language.result import CheckResult, RuleSeverity, Severity
from cola_core.language.thresholds import Threshold, parse_threshold
from cola_core.plan.split import ColaSplit
from cola_core.plan.staged_split import SplitOutcome
from cola_core.report.results import summarise
from cola_core.ruleset.registry import load_checks, register_check
from cola_core.storage.specs import OutputSpec, SourceSpec

__all__ = [
    "BaseCheck",
    "Capability",
    "CheckResult",
    "Cola",
    "ColaError",
    "ColaOutputError",
    "ColaRuleError",
    "ColaSourceError",
    "ColaSplit",
    "JobOutcome",
    "JobSpec",
    "OutputSpec",
    "RuleOptions",
    "RuleSeverity",
    "Severity",
    "SourceSpec",
    "SplitOutcome",
    "Threshold",
    "ThresholdError",
    "load_checks",
    "parse_threshold",
    "register_check",
    "run_job",
    "summarise",
]
