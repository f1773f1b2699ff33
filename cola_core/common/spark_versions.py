"""What the installed PySpark offers where 3.5 and 4.x differ.

Cola supports PySpark 3.5 and 4.x. Where a type or an API exists only from 4.0, the code asks
here rather than importing it, so that the 3.5 line imports and runs every module.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

__all__ = ["is_pyspark_4", "is_variant", "pyspark_version", "scalar_subquery"]


@lru_cache(maxsize=1)
def pyspark_version() -> tuple[int, int]:
    """The installed PySpark's (major, minor), such as (3, 5) or (4, 2)."""
    from pyspark.version import __version__

    major, minor = __version__.split(".")[:2]
    return int(major), int(minor)


def is_pyspark_4() -> bool:
    """Whether the installed PySpark is 4.0 or newer.

    Ask this, never ``hasattr``: on 3.5 ``hasattr(column, "try_cast")`` is True, because a
    Column's unknown attribute is a field of it (``column.try_cast`` is ``column["try_cast"]``),
    and a DataFrame's is a column of the same name.
    """
    return pyspark_version() >= (4, 0)


def is_variant(data_type: Any) -> bool:
    """Whether ``data_type`` is Spark's VARIANT, a type PySpark has only from 4.0 (so never on 3.5)."""
    from pyspark.sql import types

    variant = getattr(types, "VariantType", None)
    return variant is not None and isinstance(data_type, variant)


def scalar_subquery(one_value: Any) -> Any:
    """A Column holding the one value of ``one_value`` (a DataFrame of one row and one column),
    as a scalar subquery that joins the plan it is used in, so it costs no job of its own.

    ``DataFrame.scalar()`` exists from 4.0. On 3.5 the same subquery is written in SQL over a
    temporary view of the DataFrame: its name is unique (``_cola_scalar_<hex>``) and it stays
    for the session, because the Column is resolved only when a plan uses it.
    """
    if is_pyspark_4():
        return one_value.scalar()
    import uuid

    from pyspark.sql import functions as F

    view = f"_cola_scalar_{uuid.uuid4().hex}"
    one_value.createOrReplaceTempView(view)
    return F.expr(f"(SELECT * FROM {view})")
