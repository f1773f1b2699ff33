"""The error tree of ``cola_core``.

Every error the engine raises on purpose is a :class:`ColaError`. A malformed rule is a
:class:`ColaRuleError`, which is also a ``ValueError`` so that callers who only know the
standard library can still catch it.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "MAX_LISTED_RULE_ERRORS", "ColaError", "ColaOutputError", "ColaRuleError", "ColaSourceError", "ThresholdError",
]

# A block's malformed rules listed in one message; the rest are counted. Twenty fit a
# terminal and a task log, and a block with more is usually one mistake repeated.
MAX_LISTED_RULE_ERRORS = 20


class ColaError(Exception):
    """Root of every error raised by ``cola_core``."""


class ColaRuleError(ColaError, ValueError):
    """A rule is malformed. Raised while parsing, before any Spark work starts.

    When several rules of a block are malformed, one error reports them all
    (:meth:`collected`): its message lists the first :data:`MAX_LISTED_RULE_ERRORS` in rule
    order, each on a line of its own that names its rule, and counts the rest.

    Attributes:
        position: index of the rule in the list the caller passed (``None`` when unknown);
            for several errors, the first one's.
        rule_type: the rule's ``type`` as written (``None`` when it has none); the first one's.
        target: index inside the rule's ``targets`` list, when the problem is in a target;
            the first one's.
        origin: where the rule was written, when it came from another document: a contract's
            path such as ``schema[0].properties[3]`` (see ``cola_core.contracts``); the first one's.
        reason: what is wrong and how to fix it, without the location prefix; the first one's.
        errors: every malformed rule's own error, in rule order: ``(self,)`` for one rule.
    """

    def __init__(
        self,
        reason: str,
        *,
        position: int | None = None,
        rule_type: str | None = None,
        target: int | None = None,
        origin: str | None = None,
    ) -> None:
        self.reason = reason
        self.position = position
        self.rule_type = rule_type
        self.target = target
        self.origin = origin
        self.errors: tuple[ColaRuleError, ...] = (self,)
        super().__init__(self._render())

    @classmethod
    def collected(cls, errors: Sequence[ColaRuleError]) -> ColaRuleError:
        """One error for every malformed rule of a block, given in rule order.

        One error is returned as it is, so a block with one malformed rule says exactly what
        that rule's error says. Several are listed under a line that counts them::

            rules: 3 malformed rules:
            - rules[0] (regex): ...
            - rules[2].targets[1] (range): ...
            - rules[4] (not_null): ...

        A reason of several lines (a threshold's text and caret, indented already) keeps them
        as they are, so each reason is in the message as its own error words it.
        Past :data:`MAX_LISTED_RULE_ERRORS`, the first line says ``rules: 25 malformed rules,
        the first 20:`` and the message ends with ``and 5 more``; ``errors`` holds every one.

        Raises:
            ValueError: ``errors`` is empty.
        """
        if not errors:
            raise ValueError("collected() needs at least one error")
        if len(errors) == 1:
            return errors[0]
        first = errors[0]
        combined = cls(
            first.reason, position=first.position, rule_type=first.rule_type, target=first.target, origin=first.origin
        )
        combined.errors = tuple(errors)
        combined.args = (combined._render(),)
        return combined

    @property
    def location(self) -> str:
        """Where the problem is, e.g. ``rules[2].targets[0] (regex)``, and where a rule read from
        a contract was written: ``rules[4] (not_null) from schema[0].properties[3]``."""
        where = "rules" if self.position is None else f"rules[{self.position}]"
        if self.target is not None:
            where += f".targets[{self.target}]"
        if self.rule_type is not None:
            where += f" ({self.rule_type})"
        if self.origin is not None:
            where += f" from {self.origin}"
        return where

    def _render(self) -> str:
        if len(self.errors) == 1:
            return f"{self.location}: {self.reason}"
        listed = self.errors[:MAX_LISTED_RULE_ERRORS]
        shown = "" if len(self.errors) == len(listed) else f", the first {len(listed)}"
        # "rules: ...", as every error of the block as a whole opens.
        lines = [f"rules: {len(self.errors)} malformed rules{shown}:"]
        lines += [f"- {error}" for error in listed]
        if len(self.errors) > len(listed):
            lines.append(f"and {len(self.errors) - len(listed)} more")
        return "\n".join(lines)

    def located(
        self,
        *,
        position: int | None = None,
        rule_type: str | None = None,
        target: int | None = None,
        origin: str | None = None,
    ) -> ColaRuleError:
        """Return a copy that also says where the rule is (keeps what is already known).

        An error of several rules is returned as it is: each of them already says where it is.
        """
        if len(self.errors) > 1:
            return self
        return ColaRuleError(
            self.reason,
            position=self.position if self.position is not None else position,
            rule_type=self.rule_type if self.rule_type is not None else rule_type,
            target=self.target if self.target is not None else target,
            origin=self.origin if self.origin is not None else origin,
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
