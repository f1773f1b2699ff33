"""The public API (``cola_core/__init__.py``): exactly these names, sorted, each importable."""

from __future__ import annotations

import importlib
import subprocess
import sys

import cola_core

PUBLIC = [
    "BaseCheck", "Capability", "CheckResult", "Cola", "ColaError", "ColaOutputError", "ColaRuleError",
    "ColaSourceError", "ColaSplit", "JobOutcome", "JobSpec", "OutputSpec", "RuleOptions", "RuleSeverity",
    "Severity", "SourceSpec", "SplitOutcome", "Threshold", "ThresholdError", "load_checks", "parse_threshold",
    "register_check", "run_job", "summarise",
]


def test_all_is_exactly_the_public_names_sorted():
    assert cola_core.__all__ == PUBLIC
    assert cola_core.__all__ == sorted(cola_core.__all__)


def test_every_public_name_imports():
    namespace: dict = {}
    exec(f"from cola_core import {', '.join(PUBLIC)}", namespace)
    assert [name for name in PUBLIC if namespace.get(name) is not getattr(cola_core, name)] == []
    assert isinstance(cola_core.__version__, str) and cola_core.__version__


def test_params_is_public_for_custom_checks():
    params = importlib.import_module("cola_core.language.params")
    assert params.__all__ == [
        "BOOL", "LONG_RANGE", "MAPPING", "MAX_LIST_VALUES", "NUMBER", "ORDERED", "SCALAR_LIST", "STRING", "STRING_LIST",
        "STRING_MAP", "THRESHOLD", "WHOLE", "Kind", "Param",
    ]
    assert all(hasattr(params, name) for name in params.__all__)


def test_a_fresh_interpreter_imports_the_api_without_starting_spark():
    code = ("import sys, cola_core, cola_core.language.params; "
            "print(sorted(m for m in ('pyspark.sql', 'py4j') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "[]\n"
