"""The errors the provider raises, one tree under :class:`ColaProviderError`, sorted by what
Airflow should do next.

- :class:`ColaConfigError`: the task is set up wrong (malformed rules, source or output, a
  local source path that does not exist). Retrying cannot help, so it is an
  ``AirflowFailException`` and fails the task at once.
- :class:`ColaJobRefused`: the job itself refused its rules, source or arguments (the refusal
  record it writes in its results file, its command line's included; in the worker, a
  ``cola_core`` error or a query Spark refused: :func:`refusal_of`). Final too: a
  retry would submit the same inputs and start another JVM for the same refusal.
- :class:`ColaChecksFailed`: the data broke a rule under ``on_failure="fail"``. Also final:
  a retry would read the same data.
- :class:`ColaJobError`: the Spark job crashed, or left no results (or unreadable ones).
  This may be transient (a lost executor, a busy cluster), so it is a plain
  ``AirflowException`` and the task's ``retries`` apply.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow.sdk.exceptions import AirflowException, AirflowFailException

__all__ = [
    "ColaChecksFailed", "ColaConfigError", "ColaJobError", "ColaJobRefused", "ColaProviderError", "refusal_of",
]


class ColaProviderError(AirflowException):
    """The root of the provider's errors: ``except ColaProviderError`` catches each of them.

    Retryable on its own; a subclass that must not be retried also derives from
    ``AirflowFailException``.
    """


class ColaConfigError(ColaProviderError, AirflowFailException):
    """Rules, source or outputs are malformed; raised before anything is submitted."""


class ColaJobRefused(ColaProviderError, AirflowFailException):
    """The Cola job refused its inputs (a usage, source or rule error); the message is the job's.

    Attributes:
        kind: what it refused, as its record says (``cola_core.report.results.REFUSAL_KINDS``:
            ``usage``, ``rules``, ``source``, ``output``, ``query``, ``error``); None when the
            engine refused in this worker.
    """

    def __init__(self, message: str, kind: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind


class ColaJobError(ColaProviderError):
    """The Spark job did not produce a usable results file. The message ends with the Spark log."""


class ColaChecksFailed(ColaProviderError, AirflowFailException):
    """At least one check failed and ``on_failure`` is ``"fail"``.

    Attributes:
        summary: the results summary that was pushed to XCom.
    """

    def __init__(self, message: str, summary: Mapping[str, Any]) -> None:
        super().__init__(message)
        self.summary = summary


def refusal_of(error: BaseException) -> ColaJobRefused | None:
    """The final error for what the engine, run in this worker, refused; None for a crash.

    What ``cola`` refuses with exit status ``REFUSED``, the tasks that run the engine in the worker
    (``@cola_check``, the operators over Spark Connect) refuse without a retry, with the same
    message: a ``cola_core.ColaError`` (a rule naming a column the data does not have, a
    source that cannot be read, an output that cannot be written), and a query Spark refused
    to analyse (``AnalysisException``: "Spark refused a query: ..."). Anything else (a lost
    executor, a Spark Connect server that cannot be reached) may be transient, and keeps
    raising as it is, so that the task's ``retries`` apply.

    Args:
        error: what the engine's run raised.

    Returns:
        The ``ColaJobRefused`` to raise ``from error``, or None to let ``error`` through.
    """
    from cola_core.common.spark_errors import first_line, is_unreachable
    from cola_core.errors import ColaError

    if isinstance(error, ColaError):
        return ColaJobRefused(str(error))
    if is_unreachable(error):  # said first: over Spark Connect, every error is a gRPC one
        return None
    try:
        from pyspark.errors import AnalysisException
    except ImportError:  # without pyspark, nothing here raised one
        return None
    if isinstance(error, AnalysisException):
        return ColaJobRefused(f"Spark refused a query: {first_line(error)}")
    return None
