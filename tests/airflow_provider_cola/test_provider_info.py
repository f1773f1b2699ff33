"""Provider registration: the entry point, get_provider_info, and Airflow's own view of it."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points

import pytest

pytestmark = pytest.mark.airflow


def test_get_provider_info():
    from airflow_provider_cola.get_provider_info import get_provider_info

    assert get_provider_info() == {
        "package-name": "airflow-provider-cola",
        "name": "Cola data quality",
        "description": "Data-quality gates for Airflow DAGs, run on Spark by the Cola engine.",
        "versions": ["0.1.0"],
        "integrations": [
            {
                "integration-name": "Cola",
                "external-doc-url": "https://github.com/airflow-provider-cola/airflow-provider-cola",
                "tags": ["software"],
            }
        ],
        "operators": [{
            "integration-name": "Cola",
            "python-modules": ["airflow_provider_cola.operators.cola", "airflow_provider_cola.operators.profiling"],
        }],
        "task-decorators": [{"name": "cola_check", "class-name": "airflow_provider_cola.decorators.cola.cola_check"}],
        "extra-links": ["airflow_provider_cola.links.ColaReportLink"],
    }


def test_provider_info_is_valid_for_airflow():
    import jsonschema
    from airflow.providers_manager import _create_provider_info_schema_validator

    from airflow_provider_cola.get_provider_info import get_provider_info

    _create_provider_info_schema_validator().validate(get_provider_info())
    with pytest.raises(jsonschema.ValidationError):  # the validator is not a no-op
        _create_provider_info_schema_validator().validate({"package-name": "x"})


def test_entry_point_is_registered():
    (entry,) = [e for e in entry_points(group="apache_airflow_provider") if e.dist.name == "airflow-provider-cola"]
    assert entry.value == "airflow_provider_cola.get_provider_info:get_provider_info"


def test_airflow_providers_list_shows_it(airflow_home):
    listed = subprocess.run(
        [sys.executable, "-m", "airflow", "providers", "list", "--output", "json"],
        capture_output=True, text=True, timeout=120,
    )
    assert listed.returncode == 0, listed.stderr[-3000:]
    providers = {row["package_name"]: row for row in json.loads(listed.stdout)}
    assert providers["airflow-provider-cola"]["version"] == "0.1.0"


def test_task_decorator_is_registered_with_airflow(airflow_home):
    from airflow.sdk.providers_manager_runtime import ProvidersManagerTaskRuntime

    from airflow_provider_cola.decorators import cola_check

    assert ProvidersManagerTaskRuntime().taskflow_decorators["cola_check"] is cola_check
