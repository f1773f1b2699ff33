"""Reading Spark's exceptions: their error condition, SQLSTATE and first meaningful line.

pyspark raises several unrelated classes (its own ``PySparkException`` family, and a bare
``Py4JJavaError`` for what it does not convert), so these read what every one carries: the
getters where they exist, the text otherwise. :func:`analyse_now` makes Spark Connect raise
what a classic session raises at once.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = [
    "analyse_now", "condition_of", "first_line", "is_data_error", "is_evaluation_failure", "is_lasting_storage_error",
    "is_out_of_resources", "is_unreachable", "sql_state_of",
]

_CONDITION = re.compile(r"\[([A-Z][A-Z0-9_]*)(?:\.[A-Z0-9_]+)?\]")
_SQL_STATE = re.compile(r"SQLSTATE: ([0-9A-Z]{5})")
_CAUSE = re.compile(r"Caused by: ([^\n]+)")
# SQLSTATE class 22 is "data exception" (an invalid cast, a division by zero, an overflow, a
# malformed record); class 42 met while a job runs is a format or pattern built from the
# values (to_number, ilike) that Spark only checks then; P0001 is a user-raised error
# (raise_error, assert_true).
_DATA_STATES = ("22", "42", "P0001")
# Failures Spark does not classify, raised by an expression on the values it met: a regex or
# an XML document built from the data, a format string, a number or date that will not parse.
# Cluster failures (lost executors, out of memory, I/O) are none of these (the planner reads
# those apart, with is_out_of_resources).
_DATA_CAUSES = re.compile(
    r"Caused by: (?:java\.util\.regex\.PatternSyntaxException|org\.xml\.sax\.SAXParseException"
    r"|javax\.xml\.xpath\.\w*Exception|java\.util\.\w*Format\w*Exception"
    r"|java\.lang\.(?:NumberFormatException|ArithmeticException|IllegalArgumentException)"
    r"|java\.time\.\w*Exception)"
)

# A JVM that ran out of memory (an array or string too large to allocate, a heap exhausted,
# Spark's own accounting) or of stack (a regex such as (a|b)* recurses once per character it
# matches, so a long value overflows it), or an executor that was killed or lost while it ran a
# task (YARN and Kubernetes kill a container over its memory limit).
_OUT_OF_RESOURCES = re.compile(
    r"java\.lang\.OutOfMemoryError|SparkOutOfMemoryError|Requested array size exceeds VM limit"
    r"|java\.lang\.StackOverflowError|ExecutorLostFailure|exceeding memory limits|OOMKilled"
)
# SQLSTATE class 54 is "program limit exceeded": a value over Spark's own limits, such as an
# array of more than 2^31 elements (COLLECTION_SIZE_LIMIT_EXCEEDED) that a sequence() over
# timestamps asks for on some row.
_LIMIT_STATES = ("54",)
_STACK_OVERFLOW = "java.lang.StackOverflowError"
# File system refusals that a retry cannot fix: the target is in the way, not writable, or
# not there. Timeouts, lost executors and other I/O errors are not among them.
_LASTING_STORAGE = re.compile(
    r"org\.apache\.hadoop\.(?:fs\.(?:ParentNotDirectoryException|FileAlreadyExistsException"
    r"|PathIsNotDirectoryException|PathIsDirectoryException|PathExistsException|PathAccessDeniedException"
    r"|PathPermissionException)|security\.AccessControlException)"
    r"|java\.nio\.file\.(?:AccessDeniedException|NotDirectoryException|FileAlreadyExistsException)"
)
# A Spark Connect call that never reached the server, or lost it: the client raises a bare
# SparkConnectGrpcException with the gRPC status in its text (after its own retries), never
# an error condition. A failure the server reports instead has a condition.
_UNREACHABLE = re.compile(r"StatusCode\.(?:UNAVAILABLE|DEADLINE_EXCEEDED|CANCELLED)\b")


def condition_of(error: BaseException) -> str | None:
    """The Spark error condition (``PATH_NOT_FOUND``) of an exception, if it has one."""
    getter = getattr(error, "getCondition", None) or getattr(error, "getErrorClass", None)  # 4.x, 3.5
    condition = getter() if callable(getter) else None
    if condition:
        return str(condition)
    # A Py4JJavaError (DATA_SOURCE_NOT_FOUND, say) carries the condition only in its text.
    found = _CONDITION.search(str(error))
    return found.group(1) if found else None


def sql_state_of(error: BaseException) -> str | None:
    """The SQLSTATE (``22018``) of an exception, if it has one."""
    getter = getattr(error, "getSqlState", None)
    state = getter() if callable(getter) else None
    if state:
        return str(state)
    found = _SQL_STATE.search(str(error))
    return found.group(1) if found else None


def is_data_error(error: BaseException) -> bool:
    """Whether Spark failed on the values it met (bad data), not on the plan or the cluster."""
    state = sql_state_of(error)
    if state is not None:
        return state.startswith(_DATA_STATES)
    return _DATA_CAUSES.search(str(error)) is not None


def is_out_of_resources(error: BaseException) -> bool:
    """Whether Spark ran out of memory or stack, went over one of its own limits (an array of
    more than 2^31 elements), or lost the executor that ran a task, while evaluating (a rule
    that builds huge values on some rows, say, or a regex that recurses on a long value). Such
    a failure is measured as the failure of the rule whose evaluation meets it again alone (see
    ``planner._measure_each``), never a crash of the run: a lost executor that a retry cures
    measures fine the next time.
    """
    if (sql_state_of(error) or "").startswith(_LIMIT_STATES):
        return True
    return _OUT_OF_RESOURCES.search(str(error)) is not None


def is_evaluation_failure(error: BaseException) -> bool:
    """Whether a job failed on what a rule evaluates (:func:`is_data_error`), or ran out of
    memory doing it (:func:`is_out_of_resources`), rather than on the plan or the cluster."""
    return is_data_error(error) or is_out_of_resources(error)


def is_unreachable(error: BaseException) -> bool:
    """Whether a Spark Connect call failed because the server could not be reached (down, a
    lost connection, a timeout), which says nothing about the rule or the source being
    analysed: such an error must keep raising, as a crash a retry may cure, never become a
    rule or source error."""
    if type(error).__name__ != "SparkConnectGrpcException" or condition_of(error) is not None:
        return False
    return _UNREACHABLE.search(str(error)) is not None


def is_lasting_storage_error(error: BaseException) -> bool:
    """Whether a write failed because of the target itself (a file where a folder must go, no
    permission), which the same write would meet again, rather than a passing failure."""
    return _LASTING_STORAGE.search(str(error)) is not None


def first_line(error: BaseException) -> str:
    """Spark's own message: the first meaningful line (a JVM stack trace may follow it)."""
    text = str(error)
    for line in text.splitlines():
        line = line.strip().removeprefix(": ")
        if line and not line.startswith("An error occurred while calling"):
            if "Job aborted due to stage failure" in line:
                # The stage and task numbers say nothing to a rules author; the cause does.
                cause = _CAUSE.search(text)
                line = cause.group(1).strip() if cause else line
            if line.startswith(_STACK_OVERFLOW):
                return (f"{_STACK_OVERFLOW} (the JVM's stack ran out: a regex that repeats a group, such as "
                        "(a|b)*, recurses once per character of a long value; [ab]* matches the same without "
                        "recursing)")
            return line
    return type(error).__name__


def analyse_now(df: DataFrame) -> None:
    """Have Spark analyse ``df`` now, so that a missing table or column raises here.

    A classic session analyses every DataFrame as it is built; Spark Connect only when it has
    to, and its client answers ``schema`` from a cache after a filter. A semantic hash needs
    the analysed plan on both, and runs no job.
    """
    df.semanticHash()
