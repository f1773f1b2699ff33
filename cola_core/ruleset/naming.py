"""A block's codes and rule ids: each rule's own, apart from the others' with ``#2``, ``#3``...

Both are chosen in one pass over the parsed checks, with a cost linear in the block: a block
of 10,000 aliases of one rule is as quick to name as 10,000 different rules. The suffixes are
the first free ones counting up from ``#2`` (so the ids a history store keys its metrics by
never move), and :class:`Taken` remembers, for each base, how far the count has already gone.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from cola_core.checks import BaseCheck

__all__ = ["Taken", "coded", "identified"]


class Taken:
    """The names a block has given (codes, or rule ids), and for each base the count below
    which every ``base#count`` is taken already: names are only ever added, so a later search
    for a free suffix after that base starts there instead of at 2.

    Attributes:
        lookups: how many names were looked up, the measure of the work (linear in the names
            added, however many rules share a base).
    """

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._names = set(names)
        self._next: dict[str, int] = {}
        self.lookups = 0

    def __contains__(self, name: str) -> bool:
        self.lookups += 1
        return name in self._names

    def add(self, name: str) -> None:
        self._names.add(name)

    def first_free(self, bases: Sequence[str]) -> int:
        """The first count from 2 up at which no ``base#count`` is taken, for each of ``bases``."""
        for base in bases:
            count = self._next.get(base, 2)
            while f"{base}#{count}" in self:
                count += 1
            self._next[base] = count
        # Below the highest of those starts, some base's suffix is taken; above it, a count is
        # taken only where another rule's code left a gap in this base's counts.
        count = max((self._next[base] for base in bases), default=2)
        while any(f"{base}#{count}" in self for base in bases):
            count += 1
        return count


def coded(checks: list[BaseCheck], declared: list[str | None], identities: list[str]) -> list[BaseCheck]:
    """Each check with its block-wide code: apart from the others when it measures the same.

    A declared code is kept as declared, even when other rules declare it too: that groups
    their rows under one code. A rule without one that measures what an earlier rule of the
    block with a rendered code measures (the same ``identity()``, as two ``row_count`` rules
    with different thresholds or severities do) gets the suffix ``#2``, ``#3``... on its
    code and on each of its row codes, the first that frees all of them from every code the
    block already has or declares: ``row_count`` and ``row_count#2``. Rules that measure
    different things keep their rendered codes, even when those are the same text (a
    ``not_null(email)`` scoped by two ``where`` conditions): a code names the defect, and the
    ``rule_id`` names the rule.
    """
    taken = Taken(code for code in declared if code is not None)
    measured: set[str] = set()  # identities of the earlier rules with a rendered code
    result = []
    for check, code, identity in zip(checks, declared, identities, strict=True):
        if code is None:
            rendered = (check.code, *check.row_codes())
            suffix = ""
            if identity in measured:
                suffix = f"#{taken.first_free(rendered)}"
                check = check.with_code_suffix(suffix)
            measured.add(identity)
            for each in rendered:
                taken.add(f"{each}{suffix}")
        result.append(check)
    return result


def identified(checks: list[BaseCheck], declared: list[str | None], identities: list[str]) -> list[BaseCheck]:
    """Each check with its block-wide ``rule_id``: the declared one, which must be unique in
    the block, or the derived one, suffixed ``#2``, ``#3``... for later rules deriving it too
    (or deriving an id another rule declared). No two rules of a block share an id.

    Raises:
        ColaRuleError: two rules declare one id, naming the later and the first.
    """
    owners: dict[str, BaseCheck] = {}
    for check, rule_id in zip(checks, declared, strict=True):
        if rule_id is None:
            continue
        first = owners.get(rule_id)
        if first is not None:
            where = f"rules[{first.position}]" + ("" if first.target is None else f".targets[{first.target}]")
            raise check.rule_error(f"'id' {rule_id!r} is already the id of {where}; give each rule its own id")
        owners[rule_id] = check
    taken = Taken(owners)
    named = []
    for check, rule_id, identity in zip(checks, declared, identities, strict=True):
        if rule_id is None:
            rule_id = identity if identity not in taken else f"{identity}#{taken.first_free((identity,))}"
            taken.add(rule_id)
        named.append(check.with_rule_id(rule_id))
    return named
