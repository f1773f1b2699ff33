"""When two numbers agree within ``reference_match``'s ``absolute_difference`` or
``relative_difference``, as a Column: exact for decimal and integral values, with the rounding
slack of binary floating point for float and double values.
"""

from __future__ import annotations

from decimal import ROUND_FLOOR, Decimal, localcontext
from functools import reduce
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from pyspark.sql import Column
    from pyspark.sql.types import DataType

__all__ = ["within_difference"]

# Float and double values carry binary rounding (1.1 - 1.0 is 0.10000000000000009): a gap
# beyond a non-zero limit by no more than one unit in the last place of the larger value
# (machine epsilon times it, at most two) is within it, so that a boundary written in decimal
# stays inclusive. Decimal and integral columns compare exactly.
_EPSILON = {"float": 2.0**-23, "double": 2.0**-52}
# No gap between two decimal(38) values reaches this: a limit this large always holds.
_NO_DECIMAL_GAP = Decimal(10) ** 38


def _decimal_limit(limit: float) -> Column | None:
    """A rule's limit as an exact decimal literal; None when it is beyond any decimal gap.

    A limit is a JSON number: an int of at most 38 digits or a double of at most 17
    significant ones, so it fits decimal(38) once fractional digits beyond the 38th are
    dropped (a limit that small is 0 to any decimal column).
    """
    from pyspark.sql import functions as F

    value = Decimal(limit) if isinstance(limit, int) else Decimal(repr(limit))
    if value >= _NO_DECIMAL_GAP:
        return None
    whole = max(1, value.adjusted() + 1)
    exponent = value.as_tuple().exponent
    scale = min(max(0, -exponent if isinstance(exponent, int) else 0), 38 - whole)
    with localcontext() as context:
        context.prec = 80  # room for 38 digits either side of the point
        kept = value.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_FLOOR)
    return F.lit(format(kept, "f")).cast(f"decimal({whole + scale},{scale})")


def within_difference(
    data: Column, reference: Column, as_type: DataType, absolute: float | None, relative: float | None
) -> Column:
    """Whether two present numbers differ by no more than ``absolute``, or by no more than
    ``relative`` percent of ``reference`` (NULL when either value is NULL)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import DecimalType, FloatType, IntegralType

    if isinstance(as_type, (DecimalType, IntegralType)):
        if isinstance(as_type, IntegralType):
            # Integers subtract as decimals: a bigint difference can overflow, and fail the job.
            data, reference = data.cast("decimal(20,0)"), reference.cast("decimal(20,0)")
        # try_subtract and try_multiply are NULL where a decimal overflows; then the values
        # are compared as doubles, whose range has room for any such gap. Spark keeps 38
        # digits of a difference: between two decimal(38, s) values, it drops the last
        # fractional digit. A limit of 0 is therefore equality itself, never a gap.
        gap = F.abs(F.try_subtract(data, reference))
        exact = []
        if absolute is not None:
            exact.append(_exact_within(absolute, lambda limit: gap <= limit))
        if relative is not None:
            # gap * 100 <= relative * |reference|: no division, so nothing is rounded.
            exact.append(_exact_within(
                relative, lambda share: F.try_multiply(gap, F.lit(100)) <= F.try_multiply(share, F.abs(reference))
            ))
        approximate = _within_doubles(data.cast("double"), reference.cast("double"), "double", absolute, relative)
        return F.coalesce(reduce(lambda a, b: a | b, exact), approximate)
    return _within_doubles(data, reference, "float" if isinstance(as_type, FloatType) else "double", absolute, relative)


def _exact_within(allowed: float, holds: Callable[[Column], Column]) -> Column:
    """Whether a decimal gap is within ``allowed``: ``holds`` compares it with the limit as a
    decimal. A limit of 0 is equality, never a gap; one too large for a decimal always holds."""
    from pyspark.sql import functions as F

    limit = _decimal_limit(allowed)
    if not allowed:
        return F.lit(False)
    if limit is None:
        return F.lit(True)
    return holds(limit)


def _within_doubles(
    data: Column, reference: Column, precision: str, absolute: float | None, relative: float | None
) -> Column:
    """``within_difference`` for binary floating point, with the rounding slack of ``_EPSILON``."""
    from pyspark.sql import functions as F

    infinity = F.lit(float("inf"))
    # NaN and the infinities agree only with themselves: any gap they leave is NaN or
    # infinite, which a limit must never let pass.
    finite = (F.abs(data) < infinity) & (F.abs(reference) < infinity)
    gap = F.abs(data - reference)
    slack = F.lit(_EPSILON[precision]) * F.greatest(F.abs(data), F.abs(reference))
    held = []
    if absolute is not None:
        held.append(gap <= F.lit(float(absolute)) + slack if absolute else gap == F.lit(0.0))
    if relative is not None:
        share = F.abs(reference) * F.lit(relative / 100.0)
        held.append(gap <= share + slack if relative else gap == F.lit(0.0))
    return finite & reduce(lambda a, b: a | b, held)
