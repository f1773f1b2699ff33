"""The provider's error tree: one root, and which errors Airflow must not retry."""

from __future__ import annotations

import pytest
from airflow.sdk.exceptions import AirflowException, AirflowFailException

from airflow_provider_cola.errors import (
    ColaChecksFailed,
    ColaConfigError,
    ColaJobError,
    ColaJobRefused,
    ColaProviderError,
)

pytestmark = pytest.mark.airflow


def test_every_error_derives_from_the_root():
    assert ColaProviderError.__bases__ == (AirflowException,)
    assert ColaConfigError.__bases__ == (ColaProviderError, AirflowFailException)
    assert ColaJobRefused.__bases__ == (ColaProviderError, AirflowFailException)
    assert ColaChecksFailed.__bases__ == (ColaProviderError, AirflowFailException)
    assert ColaJobError.__bases__ == (ColaProviderError,)


@pytest.mark.parametrize(
    ("error", "final"),
    [
        (ColaConfigError("bad rules"), True),
        (ColaJobRefused("refused"), True),
        (ColaChecksFailed("2 of 3 Cola checks failed", {"severity": "fail"}), True),
        (ColaJobError("the job crashed"), False),
        (ColaProviderError("something"), False),
    ],
)
def test_only_the_final_errors_are_airflow_fail_exceptions(error, final):
    # AirflowFailException fails the task without retrying; a plain AirflowException is retried.
    assert isinstance(error, ColaProviderError)
    assert isinstance(error, AirflowException)
    assert isinstance(error, AirflowFailException) is final
