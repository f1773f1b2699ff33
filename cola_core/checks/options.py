"""What a rule states around its check: the check's capabilities, and the rule's common options."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from cola_core.language.result import RuleSeverity

__all__ = ["Capability", "RuleOptions"]


class Capability(str, enum.Enum):
    """What a check contributes to a block (see :mod:`cola_core.checks.base`)."""

    ROW = "row"
    AGGREGATE = "aggregate"
    SELF_RUNNING = "self_running"


@dataclass(frozen=True)
class RuleOptions:
    """What a rule says around its check, whatever its type.

    Attributes:
        severity: ``fail``, or ``warn`` (reported, but never fails the block nor
            quarantines a row).
        dimension: the quality dimension the rule reports under.
        where: a SQL condition; the rule sees only the rows meeting it.
        tolerance: the share of offending rows a row rule accepts (``"< 1%"``).
        position: the rule's index in the block, for error messages.
        target: the index in the rule's ``targets``, when it was expanded from one.
        description: what the rule is for, in words (a contract's quality ``description``).
        origin: where the rule was written when it came from a contract
            (``schema[0].properties[3]``), for error messages.
    """

    severity: RuleSeverity = "fail"
    dimension: str | None = None
    where: str | None = None
    tolerance: str | float | None = None
    position: int | None = None
    target: int | None = None
    description: str | None = None
    # Where a rule was written says nothing about what it checks: two rules equal but for it are equal.
    origin: str | None = field(default=None, compare=False)
