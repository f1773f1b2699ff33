"""The pinned environment is coherent: pyspark's Python files and jars are the same release."""

from __future__ import annotations

import pytest


@pytest.mark.spark
def test_pyspark_python_files_match_the_jars(spark):
    import pyspark

    # pyspark-client installs into the same folder as pyspark; a version skew between the two
    # shows up as Python files of one release talking to jars of another.
    assert pyspark.__version__ == spark.version


def test_pandas_is_below_3():
    import pandas

    assert int(pandas.__version__.split(".")[0]) < 3
