"""The errors the provider raises, one tree under :class:`ColaProviderError`, sorted by what
Airflow should do next.

- :class:`ColaConfigError`: the task is set up wrong (malformed rules, source or output, a
  local source path that does not exist). Retrying cannot help, so it is an
  ``AirflowFailException`` and fails the task at once.
- :class:`ColaJobRefused`: the job itself refused its rules, source or arguments (``cola``'s
  exit status 2, or the error its results file records). Final too: a retry would submit the
  same inputs and start another JVM for the same refusal.
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

__all__ = ["ColaChecksFailed", "ColaConfigError", "ColaJobError", "ColaJobRefused", "ColaProviderError"]


class ColaProviderError(AirflowException):
    """The root of the provider's errors: ``except ColaProviderError`` catches each of them.

    Retryable on its own; a subclass that must not be retried also derives from
    ``AirflowFailException``.
    """


class ColaConfigError(ColaProviderError, AirflowFailException):
    """Rules, source or outputs are malformed; raised before anything is submitted."""


class ColaJobRefused(ColaProviderError, AirflowFailException):
    """The Cola job refused its inputs (a usage, source or rule error); the message is the job's."""


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
