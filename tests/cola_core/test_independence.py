"""cola_core depends on pyspark and the standard library alone, and works without Airflow."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "cola_core"
# Imported only inside the function that needs them, and only when it runs: PyYAML when a YAML
# file is read, the contracts extra (open-data-contract-standard, on pydantic) when a contract is.
LAZY_OPTIONAL = {"yaml", "open_data_contract_standard", "pydantic"}


def _imports(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node, alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node, node.module.split(".")[0]


def test_every_import_is_stdlib_pyspark_or_cola_core():
    allowed = set(sys.stdlib_module_names) | {"pyspark", "cola_core", "__future__"}
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        module_level = {id(node) for node in tree.body}
        for node, top in _imports(tree):
            if top in allowed:
                continue
            if top in LAZY_OPTIONAL and id(node) not in module_level:
                continue
            offenders.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} imports {top}")
    assert offenders == []


BLOCK_AIRFLOW = """
import importlib.abc, sys

class BlockAirflow(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "airflow" or name.startswith("airflow."):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)")
        return None

sys.meta_path.insert(0, BlockAirflow())
import pkgutil, importlib, cola_core
for module in pkgutil.walk_packages(cola_core.__path__, "cola_core."):
    if module.name.endswith("__main__"):
        continue
    importlib.import_module(module.name)
assert not any(name == "airflow" or name.startswith("airflow.") for name in sys.modules)

from pyspark.sql import SparkSession
from cola_core import Cola
spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1").getOrCreate())
df = spark.createDataFrame([(1,), (None,)], "id int")
print([str(r) for r in Cola().run(df, [{"type": "not_null", "columns": ["id"]}])])
spark.stop()
"""


@pytest.mark.spark
def test_cola_core_imports_and_runs_with_airflow_blocked():
    completed = subprocess.run(
        [sys.executable, "-c", BLOCK_AIRFLOW], capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout.strip().splitlines()[-1] == "['[FAIL] check: not_null(id): 1 NULL value (id: 1)']"
