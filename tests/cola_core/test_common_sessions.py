"""is_classic: whether a session (or a DataFrame's) has a JVM in this process."""

from __future__ import annotations

import pytest

from cola_core.common.sessions import is_classic
from cola_helpers import CONNECT


@pytest.mark.spark
@pytest.mark.connect
def test_a_session_and_its_dataframes_say_which_kind_they_are(spark):
    df = spark.range(3)
    # The run says which kind the tests' session is; a Connect client has no JVM here.
    assert is_classic(spark) is (not CONNECT)
    assert is_classic(df) is (not CONNECT)
    assert is_classic(df.select("id")) is (not CONNECT)


def test_nothing_and_objects_without_a_session_are_not_classic():
    assert is_classic(None) is False
    assert is_classic(object()) is False
    assert is_classic("local[2]") is False
