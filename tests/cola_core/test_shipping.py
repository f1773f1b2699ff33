"""Shipping cola_core to Spark: the ``--py-files`` zip, the entry script, and real spark-submit runs.

The spark-submit runs prove that the job works from the zip alone: the command prints (with
``--verbose``) where ``cola_core`` was imported from, and that must be inside the zip; and that
a package of the job named like a module of cola_core (a user's ``checks``) is the one imported.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import cola_core
from cola_core.plan.cost import SparkCost
from cola_core.shipping import ENTRY_SCRIPT, job_entry_path, package_files, py_files_zip
from cola_core.storage.session import log4j_config_path, quiet_spark_conf
from cola_helpers import DATA, ORDERS_ARGV, ORDERS_FAIL_COST, cost_taken, summary_outline

PACKAGE_DIR = Path(cola_core.__file__).resolve().parent


# -- the zip and the entry script ---------------------------------------------------------------


def test_the_zip_holds_every_source_file_of_the_package_and_no_bytecode(tmp_path):
    path = py_files_zip(tmp_path)
    assert re.fullmatch(rf"cola_core-{re.escape(cola_core.__version__)}-[0-9a-f]{{16}}\.zip", path.name)
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        on_disk = sorted(
            f"cola_core/{file.relative_to(PACKAGE_DIR).as_posix()}"
            for file in PACKAGE_DIR.rglob("*")
            if file.is_file() and "__pycache__" not in file.parts and file.suffix not in (".pyc", ".pyo")
        )
        assert names == on_disk == list(package_files())
        assert {"cola_core/__init__.py", "cola_core/__main__.py", "cola_core/checks/base.py", "cola_core/py.typed"} <= set(names)
        assert archive.read("cola_core/cli/main.py") == (PACKAGE_DIR / "cli" / "main.py").read_bytes()
        # The log4j configuration the operators point the driver at goes with the job.
        assert archive.read("cola_core/log4j2.properties") == log4j_config_path().read_bytes()


def test_the_zip_is_cached_by_content_and_built_the_same_everywhere(tmp_path):
    first = py_files_zip(tmp_path / "a")
    built_at = first.stat().st_mtime_ns
    assert py_files_zip(tmp_path / "a") == first
    assert first.stat().st_mtime_ns == built_at  # served from the cache, not rebuilt
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == [first.name]  # no partial file left
    other = py_files_zip(tmp_path / "b")
    assert other.name == first.name and other.read_bytes() == first.read_bytes()


def test_the_default_cache_folder_can_be_set(tmp_path, monkeypatch):
    monkeypatch.setenv("COLA_CACHE_DIR", str(tmp_path / "cache"))
    assert py_files_zip().parent == tmp_path / "cache"


def test_the_entry_script_is_written_alone_outside_the_package_once_per_content(tmp_path):
    path = job_entry_path(tmp_path)
    # Alone in a folder of its own (Python puts it first on sys.path), under a name that is no module.
    assert re.fullmatch(r"entry-[0-9a-f]{16}", path.parent.name) and path.parent.parent == tmp_path
    assert path.name == "cola-job.py" and PACKAGE_DIR not in path.parents
    assert sorted(p.name for p in path.parent.iterdir()) == ["cola-job.py"]
    assert path.read_text(encoding="utf-8") == ENTRY_SCRIPT
    written_at = path.stat().st_mtime_ns
    assert job_entry_path(tmp_path) == path and path.stat().st_mtime_ns == written_at  # kept, not rewritten
    path.write_text("print('not the job')\n")
    assert job_entry_path(tmp_path) == path and path.read_text(encoding="utf-8") == ENTRY_SCRIPT  # put right


def test_the_entry_script_is_written_to_the_cache_folder_by_default(tmp_path, monkeypatch):
    monkeypatch.setenv("COLA_CACHE_DIR", str(tmp_path / "cache"))
    assert job_entry_path().parent.parent == tmp_path / "cache"


def test_the_entry_script_runs_from_the_zip_without_site_packages(tmp_path):
    zip_path = py_files_zip(tmp_path / "cache")
    probe = "import cola_core, cola_core.cli.main; print(cola_core.__file__)"
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(zip_path)}
    # -S: no site-packages, so no installed (editable) cola_core and no pyspark either.
    imported = subprocess.run([sys.executable, "-S", "-c", probe], env=env, cwd=tmp_path,
                              capture_output=True, text=True, check=True)
    assert imported.stdout == f"{zip_path}/cola_core/__init__.py\n"
    version = subprocess.run([sys.executable, "-S", str(job_entry_path(tmp_path)), "--version"], env=env, cwd=tmp_path,
                             capture_output=True, text=True, check=False)
    assert (version.returncode, version.stdout, version.stderr) == (0, f"cola {cola_core.__version__}\n", "")


# -- real spark-submit ----------------------------------------------------------------------------


def spark_submit(
    zip_path: Path, *arguments: str, cwd: Path, conf: dict[str, str] | None = None, py_files: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``spark-submit [--conf k=v ...] --py-files <zip> <entry script> ...`` from the test's virtualenv
    (``py_files``: instead of the zip alone)."""
    bin_dir = Path(sys.executable).parent
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "SPARK_HOME")}
    # The venv's spark-submit finds Spark with whatever python3 is on PATH: put the venv first.
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    command = [
        str(bin_dir / "spark-submit"), "--master", "local[1]",
        "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=1",
        *(word for key, value in (conf or {}).items() for word in ("--conf", f"{key}={value}")),
        "--py-files", py_files or str(zip_path), str(job_entry_path(zip_path.parent)), *arguments, "--verbose",
    ]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)


def provenance(done: subprocess.CompletedProcess[str]) -> str:
    # spark-submit merges the Python driver's stderr into its own stdout (PythonRunner).
    found = re.search(r"cola: cola_core .*?, master \S+", done.stdout)
    assert found, done.stdout[-3000:]
    return found.group(0)


@pytest.mark.spark
def test_spark_submit_check_from_the_zip_exits_1_on_a_failed_check(tmp_path):
    zip_path = py_files_zip(tmp_path / "cache")
    results = tmp_path / "results.json"
    done = spark_submit(zip_path, "check", "--rules", str(DATA / "rules_fail.yaml"), *ORDERS_ARGV,
                        "--results", str(results), cwd=tmp_path)
    assert done.returncode == 1, done.stderr[-3000:]  # spark-submit passes the job's exit status on
    assert provenance(done) == (
        f"cola: cola_core {cola_core.__version__} from {zip_path}/cola_core; Spark {_spark_version()}, master local[1]"
    )
    summary = json.loads(results.read_text())
    assert (summary["severity"], summary["passed"], summary["counts"]) == ("fail", False, {"pass": 1, "warn": 0, "fail": 2})
    assert summary_outline(summary) == [
        ("unique", "fail", 1, None, "unique(order_id)"),
        ("range", "fail", 1, None, "AMOUNT_NEGATIVE"),
        ("avg", "pass", 0, 16.75, "avg(amount)"),
    ]
    assert done.stdout.splitlines()[-2:] == [
        "3 results: 1 pass, 0 warn, 2 fail", f"Spark cost: {SparkCost.from_dict(summary['cost']).describe()}"
    ]
    assert cost_taken(summary)[1] == ORDERS_FAIL_COST  # as the same job run by cola directly


@pytest.mark.spark
def test_spark_submit_split_from_the_zip_writes_outputs_report_and_counts(tmp_path):
    zip_path = py_files_zip(tmp_path / "cache")
    results, valid, invalid, report = (tmp_path / name for name in ("results.json", "valid", "invalid", "report"))
    done = spark_submit(
        zip_path, "split", "--rules", str(DATA / "rules_split.json"), *ORDERS_ARGV, "--results", str(results),
        "--valid-output", str(valid), "--invalid-output", json.dumps({"path": str(invalid), "format": "json"}),
        "--annotate", "codes", "--report", json.dumps({"path": str(report), "format": "json"}),
        "--pipeline", "orders", "--fail-exit-code", "0", cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert provenance(done).startswith(f"cola: cola_core {cola_core.__version__} from {zip_path}/cola_core;")
    summary = json.loads(results.read_text())
    assert (summary["passed"], summary["valid_count"], summary["invalid_count"]) == (False, 2, 4)
    assert summary_outline(summary) == [
        ("not_null", "fail", 1, None, "not_null(email)"),
        ("range", "fail", 1, None, "AMOUNT_NEGATIVE"),
        ("unique", "fail", 1, None, "unique(order_id)"),
        ("row_count", "pass", 0, None, "row_count"),
    ]
    assert (valid / "_SUCCESS").exists() and len(list(valid.glob("part-*.parquet"))) >= 1
    invalid_rows = sorted(
        (row["order_id"], row["codes"]) for row in _json_lines(invalid)
    )
    assert invalid_rows == [(3, ["not_null(email)"]), (4, ["AMOUNT_NEGATIVE"]),
                            (5, ["unique(order_id)"]), (5, ["unique(order_id)"])]
    report_rows = _json_lines(report)
    assert [(r["pipeline"], r["rule_type"], r["severity"], r["passed"], r["failed_count"], r["code"])
            for r in report_rows] == [
        ("orders", "not_null", "fail", False, 1, "not_null(email)"),
        ("orders", "range", "fail", False, 1, "AMOUNT_NEGATIVE"),
        ("orders", "unique", "fail", False, 1, "unique(order_id)"),
        ("orders", "row_count", "pass", True, 0, "row_count"),
    ]
    assert [r["message"] for r in report_rows] == [r["message"] for r in summary["results"]]


# A user's package of custom checks named like a package of cola_core: shipped with --py-files
# beside cola_core's zip, it is the one `--checks checks` imports on the driver.
USER_CHECKS = """\
from pyspark.sql import functions as F

from cola_core import BaseCheck, CheckResult, register_check


@register_check("amount_at_most")
class AmountAtMost(BaseCheck):
    def run(self, df):
        over = df.filter(F.col("amount") > self.params["limit"]).count()
        return CheckResult("amount_at_most", over == 0, f"{over} amounts over {self.params['limit']}", over)
"""


@pytest.mark.spark
def test_spark_submit_imports_a_users_package_named_like_a_cola_core_package(tmp_path):
    zip_path = py_files_zip(tmp_path / "cache")
    users = tmp_path / "users.zip"
    with zipfile.ZipFile(users, "w") as archive:
        archive.writestr("checks/__init__.py", USER_CHECKS)
    rules, results = tmp_path / "rules.json", tmp_path / "results.json"
    rules.write_text(json.dumps([{"type": "amount_at_most", "limit": 100}]))
    done = spark_submit(zip_path, "check", "--checks", "checks", "--rules", str(rules), *ORDERS_ARGV,
                        "--results", str(results), cwd=tmp_path, py_files=f"{zip_path},{users}")
    # With the entry script inside cola_core/, `checks` was cola_core's own: the rule type was unknown.
    assert done.returncode == 0, done.stdout[-3000:]
    assert provenance(done).startswith(f"cola: cola_core {cola_core.__version__} from {zip_path}/cola_core;")
    summary = json.loads(results.read_text())
    assert summary_outline(summary) == [("amount_at_most", "pass", 0, None, "amount_at_most")]
    assert summary["results"][0]["message"] == "0 amounts over 100"


def _json_lines(folder: Path) -> list[dict]:
    return [json.loads(line) for part in sorted(folder.glob("part-*.json")) for line in part.read_text().splitlines()]


def _spark_version() -> str:
    import pyspark

    return pyspark.__version__


@pytest.mark.spark
def test_spark_submit_with_the_quiet_settings_logs_no_info_line_in_client_mode(tmp_path):
    zip_path = py_files_zip(tmp_path / "cache")
    arguments = ("check", "--rules", str(DATA / "rules_warn.json"), *ORDERS_ARGV)
    environ = {key: value for key, value in os.environ.items() if key not in ("SPARK_HOME", "SPARK_CONF_DIR")}
    quiet = spark_submit(zip_path, *arguments, cwd=tmp_path, conf=quiet_spark_conf({}, environ=environ))
    assert quiet.returncode == 0, quiet.stderr[-3000:]
    # The driver (this machine's JVM, in client mode) logged nothing but the JVM's own notice.
    assert quiet.stderr == "WARNING: Using incubator modules: jdk.incubator.vector\n"
    # Its output: the job's --verbose line (the Python driver's stderr), then the results table.
    assert provenance(quiet) == quiet.stdout.splitlines()[0]
    assert quiet.stdout.splitlines()[1] == "SEVERITY  RULE           CODE                  VALUE  FAILED  MESSAGE"
    # Without them: Spark's default profile, at INFO.
    noisy = spark_submit(zip_path, *arguments, cwd=tmp_path)
    assert noisy.returncode == 0, noisy.stderr[-3000:]
    assert "Using Spark's default log4j profile: org/apache/spark/log4j2-defaults.properties" in noisy.stderr
    assert len(re.findall(r"^\d{2}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} INFO ", noisy.stderr, flags=re.M)) > 50
