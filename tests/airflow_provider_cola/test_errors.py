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


def test_what_the_engine_refuses_in_the_worker_is_final_and_a_crash_is_not():
    import grpc
    from pyspark.errors import AnalysisException
    from pyspark.errors.exceptions.connect import AnalysisException as ConnectAnalysisException
    from pyspark.errors.exceptions.connect import SparkConnectGrpcException

    from airflow_provider_cola.errors import refusal_of
    from cola_core.errors import ColaOutputError, ColaRuleError, ColaSourceError

    # Built in Python as pyspark builds them from the JVM's or the server's answer (the DAG
    # runs of test_failures.py and test_connect.py meet the real ones).
    refused = {
        ColaRuleError("column 'order_ids' does not exist", position=1, rule_type="not_null"):
            "rules[1] (not_null): column 'order_ids' does not exist",
        ColaSourceError("input path '/data/gone' does not exist"): "input path '/data/gone' does not exist",
        ColaOutputError("cannot write /lake/valid: denied"): "cannot write /lake/valid: denied",
        AnalysisException(message="[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column `x` cannot be resolved.\n"
                                  "JVM stack trace"):
            "Spark refused a query: [UNRESOLVED_COLUMN.WITH_SUGGESTION] A column `x` cannot be resolved.",
        ConnectAnalysisException(message="[TABLE_OR_VIEW_NOT_FOUND] The table or view `t` cannot be found."):
            "Spark refused a query: [TABLE_OR_VIEW_NOT_FOUND] The table or view `t` cannot be found.",
    }
    for error, message in refused.items():
        refusal = refusal_of(error)
        assert isinstance(refusal, ColaJobRefused) and isinstance(refusal, AirflowFailException)
        assert str(refusal) == message
    unreachable = SparkConnectGrpcException(
        message="<_InactiveRpcError of RPC that terminated with:\n\tstatus = StatusCode.UNAVAILABLE\n>",
        grpc_status_code=grpc.StatusCode.UNAVAILABLE,
    )
    for crash in (unreachable, RuntimeError("the orders service did not answer"), OSError("disk full")):
        assert refusal_of(crash) is None
