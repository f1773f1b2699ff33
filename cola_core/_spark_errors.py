"""Reading Spark's exceptions: their error condition, SQLSTATE and first meaningful line.

pyspark raises several unrelated classes (its own ``PySparkException`` family, and a bare
``Py4JJavaError`` for what it does not convert), so these read what every one carries: the
getters where they exist, the text otherwise.
"""

from __future__ import annotations

import re

__all__ = ["condition_of", "first_line", "is_data_error", "sql_state_of"]

_CONDITION = re.compile(r"\[([A-Z][A-Z0-9_]*)(?:\.[A-Z0-9_]+)?\]")
_SQL_STATE = re.compile(r"SQLSTATE: ([0-9A-Z]{5})")
# SQLSTATE class 22 is "data exception" (an invalid cast, a division by zero, an overflow, a
# malformed record); P0001 is a user-raised error (raise_error, assert_true).
_DATA_STATE_CLASS = "22"
_USER_RAISED = "P0001"


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
    return state is not None and (state.startswith(_DATA_STATE_CLASS) or state == _USER_RAISED)


def first_line(error: BaseException) -> str:
    """Spark's own message: the first meaningful line (a JVM stack trace may follow it)."""
    for line in str(error).splitlines():
        line = line.strip().removeprefix(": ")
        if line and not line.startswith("An error occurred while calling"):
            return line
    return type(error).__name__
