"""The test environment of the Airflow tests: paths, secrets, and a fake spark-submit.

Importing this module sets the environment Airflow reads when it is first imported (a
temporary AIRFLOW_HOME with sqlite, the Spark connections), so ``conftest.py`` imports it
before anything imports ``airflow``.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

# Short jobs start faster with the JVM's quick compiler only (about 3 s per spark-submit here);
# one definition for both suites.
from connect_server import FAST_JVM as FAST_JVM

if "airflow" in sys.modules:  # the settings below would be ignored
    raise RuntimeError("airflow was imported before the Airflow tests could configure it")

REPO = Path(__file__).resolve().parents[2]
ORDERS = REPO / "dags_examples" / "data" / "orders"
EXAMPLES = REPO / "dags_examples"
TEST_DAGS = Path(__file__).resolve().parent / "dags"
HOME = Path(tempfile.mkdtemp(prefix="cola-airflow-"))
atexit.register(shutil.rmtree, HOME, ignore_errors=True)
DAGS_FOLDER = HOME / "dags"
FAKE_BIN = HOME / "fake-bin"
FAKE_SUBMIT_LOG = HOME / "fake-submit.log"
# A connection secret and a Spark conf secret: neither may appear in a log, a message or XCom.
CONNECTION_PASSWORD = "conn-pw-7f3a91c2"
CONF_SECRET = "s3-secret-b55e0d14"
# Secrets under keys that SparkSubmitHook's own masking (secret|password) does not know.
CONF_CREDENTIAL = "cred-91d2c4e7"
CONF_ACCESS_KEY = "AKIA7QX2MZ4B"
OPTION_PASSWORD = "opt-pw-3e8c51aa"

os.environ.update(
    {
        "AIRFLOW_HOME": str(HOME),
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS_FOLDER),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{HOME / 'airflow.db'}",
        "AIRFLOW_CONN_SPARK_LOCAL": json.dumps({"conn_type": "spark", "host": "local[2]"}),
        "AIRFLOW_CONN_SPARK_WITH_SECRET": json.dumps(
            {"conn_type": "spark", "host": "local[2]", "password": CONNECTION_PASSWORD}
        ),
        "FAKE_SUBMIT_LOG": str(FAKE_SUBMIT_LOG),
        "COLA_TEST_SECRET": CONF_SECRET,
        "COLA_TEST_CREDENTIAL": CONF_CREDENTIAL,
        "COLA_TEST_ACCESS_KEY": CONF_ACCESS_KEY,
        "COLA_TEST_OPTION_PASSWORD": OPTION_PASSWORD,
    }
)

# Stands in for spark-submit where a real one cannot produce the failure under test: a job
# that exits 0 without a results file, or with a corrupt one. It records every call, which
# also proves when nothing was submitted. Selected with spark_binary="spark3-submit".
FAKE_SPARK_SUBMIT = f"""\
#!{sys.executable}
import os, sys
arguments = sys.argv[1:]
with open(os.environ["FAKE_SUBMIT_LOG"], "a") as log:
    log.write(" ".join(arguments) + "\\n")
results = arguments[arguments.index("--results") + 1]
mode = os.environ.get("FAKE_SUBMIT_MODE", "crash")
print("26/01/01 00:00:00 INFO SparkContext: Running Spark version 4 (fake)")
print("26/01/01 00:00:00 WARN FakeSubmit: mode " + mode)
if mode == "crash":
    print("Traceback (most recent call last):")
    print("RuntimeError: the fake job crashed on purpose")
    print("26/01/01 00:00:01 INFO ShutdownHookManager: Shutdown hook called")
    sys.exit(3)
if mode == "corrupt":
    with open(results, "w") as handle:
        handle.write('{{"severity": "pass", "passed": true, "counts": ')
if mode == "no_results":
    # Nothing measured: a summary that passes on its own, for a block of several rules.
    with open(results, "w") as handle:
        handle.write('{{"severity": "pass", "passed": true, "counts": {{"pass": 0, "warn": 0, "fail": 0}}, "results": []}}')
if mode == "refused":
    # As in cluster deploy mode: spark-submit's exit status is not the job's, the file says why.
    with open(results, "w") as handle:
        handle.write('{{"error": {{"exit_code": 2, "kind": "source", "message": "cannot read the json at /data/gone: no such path"}}}}')
    print("cola: error: cannot read the json at /data/gone: no such path")
    sys.exit(1)
if mode == "refused_here":
    # Client deploy mode: the job exits 2 and its results file says why (its log says it too;
    # these words differ, to tell which one the task read).
    with open(results, "w") as handle:
        handle.write('{{"error": {{"exit_code": 2, "kind": "source", "message": "the results file says: no such table db.orders"}}}}')
    print("cola: error: the log says: no such table db.orders")
    sys.exit(2)
if mode == "refused_unwritten":
    # The job could write no record: it says why in its log only.
    print("cola: error: cannot write the results file: the disk is full")
    sys.exit(2)
if mode == "refused_early":
    # The real job entry, refusing its command line (as an engine of another version would the
    # operator's): run as spark-submit's PythonRunner runs it, with no JVM, which a usage error
    # never starts. Its log says why, as ever; its record is what the task reads.
    import subprocess
    entry = next(index for index, word in enumerate(arguments) if word.endswith(".py"))
    job = arguments[entry + 1:]
    job[job.index("--samples") + 1] = "x"
    py_files = arguments[arguments.index("--py-files") + 1].split(",")
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(py_files))
    sys.exit(subprocess.run([sys.executable, arguments[entry], *job], env=environment).returncode)
if mode == "environment":
    print("PATH=" + os.environ["PATH"])
    print("PYSPARK_PYTHON=" + os.environ.get("PYSPARK_PYTHON", "(unset)"))
if mode == "inconsistent":
    result = {{"rule_type": "row_count", "passed": False, "message": "row_count = 0 is below min 1",
              "failed_count": 1, "metric_value": None, "severity": "fail", "check_name": None,
              "code": "row_count", "rule_id": "row_count:51432f82cae8", "rows_checked": 0}}
    with open(results, "w") as handle:
        handle.write(
            '{{"severity": "pass", "passed": true, "counts": {{"pass": 1, "warn": 0, "fail": 0}}, "results": ['
            + __import__("json").dumps(result) + "]}}"
        )
sys.exit(0)
"""


def unactivated_path() -> str:
    """PATH as an unactivated virtualenv sees it: the fake binaries, and not the venv's bin/."""
    venv_bin = str(Path(sys.executable).parent)
    kept = [entry for entry in os.environ.get("PATH", "").split(os.pathsep) if entry and entry != venv_bin]
    return os.pathsep.join([str(FAKE_BIN), *kept])
