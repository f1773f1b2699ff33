"""The error tree of ``cola_core``.

Every error the engine raises on purpose is a :class:`ColaError`. A malformed rule is a
:class:`ColaRuleError`, which is also a ``ValueError`` so that callers who only know the
standard library can still catch it.
"""

from __future__ import annotations


class ColaError(Exception):
    """Root of every error raised by ``cola_core``."""


class ColaRuleError(ColaError, ValueError):
    """A rule is malformed. Raised while parsing, before any Spark work starts.

    Attributes:
        position: index of the rule in the list the caller passed (``None`` when unknown).
        rule_type: the rule's ``type`` as written (``None`` when it has none).
        target: index inside the rule's ``targets`` list, when the problem is in a target.
        reason: what is wrong and how to fix it, without the location prefix.
    """

    def __init__(
        self,
        reason: str,
        *,
        position: int | None = None,
        rule_type: str | None = None,
        target: int | None = None,
    ) -> None:
        self.reason = reason
        self.position = position
        self.rule_type = rule_type
        self.target = target
        super().__init__(self._render())

    @property
    def location(self) -> str:
        """Where the problem is, e.g. ``rules[2].targets[0] (regex)``."""
        where = "rules" if self.position is None else f"rules[{self.position}]"
        if self.target is not None:
            where += f".targets[{self.target}]"
        if self.rule_type is not None:
            where += f" ({self.rule_type})"
        return where

    def _render(self) -> str:
        return f"{self.location}: {self.reason}"

    def located(
        self, *, position: int | None = None, rule_type: str | None = None, target: int | None = None
    ) -> ColaRuleError:
        """Return a copy that also says where the rule is (keeps what is already known)."""
        return ColaRuleError(
            self.reason,
            position=self.position if self.position is not None else position,
            rule_type=self.rule_type if self.rule_type is not None else rule_type,
            target=self.target if self.target is not None else target,
        )


class ThresholdError(ColaError, ValueError):
    """A threshold text such as ``'< 5%'`` could not be parsed.

    The message shows the text with a caret under the offending part. The rule parser turns
    it into a :class:`ColaRuleError` that also names the rule.
    """

    def __init__(self, text: str, offset: int, problem: str) -> None:
        self.text = text
        self.offset = offset
        self.problem = problem
        super().__init__(
            f"{problem}; a threshold looks like '< 5%', '>= 10', 'between 1 and 2' or '< 1d'\n"
            f"    {text}\n"
            f"    {' ' * offset}^"
        )


class ColaSourceError(ColaError):
    """A source (path, table or query) could not be read."""


class ColaOutputError(ColaError):
    """An output config is malformed or its target cannot be written."""
