"""A block's codes and rule ids (``ruleset.naming``): the ``#2``, ``#3``... suffixes of rules that
measure the same are the ones counting up from ``#2`` gives, and finding them is linear in the
block, however many rules share one (10,000 aliases of one rule took about 100 s to parse).

The cost is counted, not timed: the lines of ``cola_core/ruleset`` a parse executes
(``benchmarks/identical_rules.py`` has the times).
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import FrameType
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from cola_core import Cola, ColaRuleError
from cola_core.ruleset import naming
from cola_core.ruleset.naming import Taken

RULESET = str(Path(naming.__file__).parent)
COLA = Cola()


def identical(count: int) -> list[dict[str, Any]]:
    rule = {"type": "not_null", "columns": ["id"]}
    return [rule] * count  # aliases of one rule, as a YAML anchor repeats it


def different(count: int) -> list[dict[str, Any]]:
    return [{"type": "not_null", "columns": [f"c{index}"]} for index in range(count)]


def lines_run(rules: list[dict[str, Any]]) -> int:
    """How many lines of ``cola_core/ruleset`` parsing ``rules`` executes."""
    count = 0

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def calls(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename.startswith(RULESET) else None

    previous = sys.gettrace()
    sys.settrace(calls)
    try:
        COLA.parse(rules)
    finally:
        sys.settrace(previous)
    return count


def test_identical_rules_cost_what_different_rules_cost_and_twice_as_many_cost_twice_as_much():
    aliases, twice, apart = lines_run(identical(1_000)), lines_run(identical(2_000)), lines_run(different(1_000))
    # Counting up from #2 for every rule ran 1,000 aliases in 3.1 million lines, 28 times the
    # 111,000 of 1,000 different rules, and twice the aliases in 3.9 times the lines. Now an
    # alias runs about 50 lines more than a different rule: the search for its suffixes.
    assert aliases <= 1.5 * apart, (aliases, apart)
    assert twice <= 2.05 * aliases, (twice, aliases)


def test_five_thousand_aliases_of_one_rule_get_every_suffix_in_turn():
    checks = COLA.parse(identical(5_000))
    identity = checks[0].identity()
    assert [check.code for check in checks] == ["not_null(id)", *(f"not_null(id)#{n}" for n in range(2, 5_001))]
    assert [check.rule_id for check in checks] == [identity, *(f"{identity}#{n}" for n in range(2, 5_001))]


def test_declared_codes_and_ids_leave_gaps_that_later_rules_fill_in_order():
    rule = {"type": "not_null", "columns": ["id"]}
    identity = COLA.parse([rule])[0].identity()
    checks = COLA.parse([rule, {**rule, "code": "not_null(id)#3"}, rule, rule, {**rule, "id": f"{identity}#2"}, rule])
    assert [check.code for check in checks] == [
        "not_null(id)", "not_null(id)#3", "not_null(id)#2", "not_null(id)#4", "not_null(id)#5", "not_null(id)#6",
    ]
    assert [check.rule_id for check in checks] == [
        identity, f"{identity}#3", f"{identity}#4", f"{identity}#5", f"{identity}#2", f"{identity}#6",
    ]


def test_taken_looks_up_each_name_about_once():
    taken = Taken(["a#3"])
    found = []
    for _ in range(10_000):
        count = taken.first_free(("a",))
        taken.add(f"a#{count}")
        found.append(count)
    assert found == [2, *range(4, 10_003)]
    # Per search: the count the last one took, the free one after it, and that one again (two and four at first).
    assert taken.lookups == 30_000


def test_a_base_shared_by_many_codes_is_searched_from_where_it_stopped():
    # not_null over (shared, own_i), twice each: every second rule's codes include
    # not_null(shared), whose suffixes the earlier rules took in turn.
    taken = Taken()
    for index in range(2_000):
        count = taken.first_free(("not_null(shared,own)", "not_null(shared)", f"not_null(own{index})"))
        assert count == index + 2
        for base in ("not_null(shared,own)", "not_null(shared)", f"not_null(own{index})"):
            taken.add(f"{base}#{count}")
    assert taken.lookups <= 10 * 2_000


# -- the same names as counting up from #2 gives, for any block -------------------------------


def counted_up(checks: list[Any], codes: list[str | None], ids: list[str | None]) -> list[tuple[str, str]]:
    """The codes and ids of the parser before ``naming``: each suffix found by counting up from 2."""
    identities = [check.identity() for check in checks]
    taken = {code for code in codes if code is not None}
    measured: set[str] = set()
    coded = []
    for check, code, identity in zip(checks, codes, identities, strict=True):
        if code is None:
            rendered = (check.code, *check.row_codes())
            suffix = ""
            if identity in measured:
                count = 2
                while any(f"{each}#{count}" in taken for each in rendered):
                    count += 1
                suffix = f"#{count}"
                check = check.with_code_suffix(suffix)
            measured.add(identity)
            taken.update(f"{each}{suffix}" for each in rendered)
        coded.append(check.code if code is None else code)
    used = {rule_id for rule_id in ids if rule_id is not None}
    named = []
    for rule_id, identity in zip(ids, identities, strict=True):
        if rule_id is None:
            rule_id, count = identity, 1
            while rule_id in used:
                count += 1
                rule_id = f"{identity}#{count}"
            used.add(rule_id)
        named.append(rule_id)
    return list(zip(coded, named, strict=True))


_RULES = [{"type": "not_null", "columns": ["a"]}, {"type": "not_null", "columns": ["a", "b"]},
          {"type": "not_null", "columns": ["b"]}, {"type": "row_count", "min": 1}, {"type": "unique", "columns": ["a"]}]
_IDENTITIES = [COLA.parse([rule])[0].identity() for rule in _RULES]
_CODES = ["not_null(a)", "not_null(a)#2", "not_null(a)#3", "not_null(b)#2", "not_null(a,b)#2", "row_count#2",
          "unique(a)#3", "x"]


@st.composite
def blocks(draw: st.DrawFn) -> list[dict[str, Any]]:
    block = []
    for _ in range(draw(st.integers(1, 12))):
        index = draw(st.integers(0, len(_RULES) - 1))
        rule = dict(_RULES[index])
        if draw(st.integers(0, 4)) == 0:
            rule["code"] = draw(st.sampled_from(_CODES))
        if draw(st.integers(0, 4)) == 0:
            rule["id"] = f"{draw(st.sampled_from(_IDENTITIES))}#{draw(st.integers(2, 5))}"
        block.append(rule)
    return block


@settings(max_examples=300, deadline=None)
@given(blocks())
def test_the_names_are_those_counting_up_gives(block):
    try:
        checks = COLA.parse(block)
    except ColaRuleError as error:
        assert "is already the id of" in str(error)  # an id declared twice, the only refusal
        return
    # Each rule parsed alone: its rendered code, before any suffix.
    bare = [COLA.parse([{key: value for key, value in rule.items() if key not in ("code", "id")}])[0] for rule in block]
    expected = counted_up(bare, [rule.get("code") for rule in block], [rule.get("id") for rule in block])
    assert [(check.code, check.rule_id) for check in checks] == expected
