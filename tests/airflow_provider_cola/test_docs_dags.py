"""The DAG examples of README.md and docs/**/*.md are real DAG files: each one loads into a DagBag.

The blocks are found by ``tests/test_docs_examples.py`` (the same reader and conventions):
a ``python`` block that imports Airflow or uses the provider's operators or ``@task`` is a
DAG example. Each is written to a dags folder of its own, next to a copy of
``dags_examples/rules`` (a DAG's relative rules path is read from its folder), and loaded
with ``DagBag``: it must import without error, and a block that builds a DAG (``DAG(`` or
``@dag``) must give one, whose tasks are the ones it wires. Running DAGs is
``test_example_dags.py``'s work. The DAG file is named after the block's page and line
(``docs/airflow/operators.md:12`` is ``docs_airflow_operators_12.py``), since pages in
different folders may share a name.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.airflow

REPO = Path(__file__).resolve().parents[2]


def _docs_examples():
    spec = importlib.util.spec_from_file_location("docs_examples", REPO / "tests" / "test_docs_examples.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("docs_examples", module)
    spec.loader.exec_module(module)
    return module


docs = _docs_examples()
DAG_BLOCKS = [b for b in docs.all_blocks() if b.is_airflow]


def test_the_docs_have_dag_examples():
    assert len(DAG_BLOCKS) >= 4, [b.id for b in DAG_BLOCKS]


def _module_name(block) -> str:
    """A module name for the block's DAG file, from its page's path and its line: unique per block."""
    page = block.doc.relative_to(REPO).with_suffix("").as_posix()
    return re.sub(r"\W", "_", f"{page}_{block.line}").lower()


@pytest.mark.parametrize("block", [pytest.param(b, id=b.id) for b in DAG_BLOCKS])
def test_dag_example_loads(block, tmp_path):
    from airflow.dag_processing.dagbag import DagBag

    if block.not_run:
        pytest.skip(f"not run: {block.not_run}")
    shutil.copytree(REPO / "dags_examples" / "rules", tmp_path / "rules")
    dag_file = tmp_path / f"{_module_name(block)}.py"
    dag_file.write_text(block.text, encoding="utf-8")
    bag = DagBag(dag_folder=str(dag_file))
    assert not bag.import_errors, f"{block.id}: {bag.import_errors}"
    if re.search(r"\bDAG\(|^@dag\b", block.text, re.M):
        assert len(bag.dags) == 1, f"{block.id} builds {len(bag.dags)} DAGs"
        (dag,) = bag.dags.values()
        assert dag.task_ids, f"{block.id}: the DAG has no tasks"


CONNECTION_BLOCKS = [b for b in docs.all_blocks() if b.kind == "bash" and "AIRFLOW_CONN_" in b.text]


@pytest.mark.parametrize("block", [pytest.param(b, id=b.id) for b in CONNECTION_BLOCKS])
def test_documented_connection_is_what_airflow_reads(block, tmp_path):
    """The documented connections, exported as shown, are what Airflow reads: a local-mode Spark
    connection, or a Spark Connect one whose URL the Spark provider's hook builds."""
    from airflow.models.connection import Connection
    from airflow.providers.apache.spark.hooks.spark_connect import SparkConnectHook

    script = block.text + '\nenv | grep "^AIRFLOW_CONN_" \n'
    done = subprocess.run(["bash", "-e", "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    for line in done.stdout.splitlines():
        name, value = line.split("=", 1)
        connection = Connection.from_json(value, conn_id=name.removeprefix("AIRFLOW_CONN_").lower())
        if connection.conn_type == "spark_connect":
            assert json.loads(value) == {"conn_type": "spark_connect", "host": "spark-connect.internal", "port": 15002}
            with pytest.MonkeyPatch.context() as patch:
                patch.setenv(name, value)
                assert SparkConnectHook(connection.conn_id).get_connection_url() == "sc://spark-connect.internal:15002/"
            continue
        assert connection.conn_type == "spark"
        assert connection.host == json.loads(value)["host"] == "local[2]"
