"""The session factory's pure parts (``session.py``): which masters run this machine's Python,
and whether a direct run already has a master configured somewhere."""

from __future__ import annotations

import pytest

from cola_core.session import connect_mode, master_configured, uses_local_python


@pytest.mark.parametrize(
    ("master", "local"),
    [
        ("local", True),
        ("local[2]", True),
        ("local[*]", True),
        ("local-cluster[2,1,1024]", True),
        ("spark://h:7077", True),
        ("yarn", False),
        ("k8s://https://kube:6443", False),
        ("sc://host:15002", False),
        ("mesos://h:5050", False),
    ],
)
def test_uses_local_python_for_local_mode_and_a_standalone_cluster_only(master, local):
    assert uses_local_python(master) is local


def test_connect_mode_follows_spark_remote(monkeypatch):
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    monkeypatch.delenv("SPARK_CONNECT_MODE_ENABLED", raising=False)
    assert connect_mode() is False
    monkeypatch.setenv("SPARK_REMOTE", "sc://host:15002")
    assert connect_mode() is True
    monkeypatch.delenv("SPARK_REMOTE")
    monkeypatch.setenv("SPARK_CONNECT_MODE_ENABLED", "1")
    assert connect_mode() is True


def test_a_direct_run_finds_a_master_configured_elsewhere(tmp_path, monkeypatch):
    for name in ("PYSPARK_SUBMIT_ARGS", "SPARK_CONF_DIR", "SPARK_HOME"):
        monkeypatch.delenv(name, raising=False)
    assert master_configured([]) is False
    assert master_configured([("spark.master", "local[2]")]) is True
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--master yarn pyspark-shell")
    assert master_configured([]) is True
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS")
    (tmp_path / "spark-defaults.conf").write_text("# defaults\nspark.executor.memory 2g\n")
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    assert master_configured([]) is False
    (tmp_path / "spark-defaults.conf").write_text("spark.executor.memory 2g\nspark.master   spark://h:7077\n")
    assert master_configured([]) is True


def test_spark_home_conf_is_read_when_spark_conf_dir_is_unset(tmp_path, monkeypatch):
    for name in ("PYSPARK_SUBMIT_ARGS", "SPARK_CONF_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SPARK_HOME", str(tmp_path))
    assert master_configured([]) is False  # no conf/spark-defaults.conf: nothing configured
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "spark-defaults.conf").write_text("\nspark.master yarn\n")
    assert master_configured([]) is True
