"""The error tree (``errors.py``): one root, and a rule error that says where the rule is."""

from __future__ import annotations

import pytest

from cola_core import ColaError, ColaOutputError, ColaRuleError, ColaSourceError, ThresholdError


@pytest.mark.parametrize(
    ("cls", "bases"),
    [
        (ColaRuleError, (ColaError, ValueError)),
        (ThresholdError, (ColaError, ValueError)),
        (ColaSourceError, (ColaError,)),
        (ColaOutputError, (ColaError,)),
        (ColaError, (Exception,)),
    ],
)
def test_one_tree_under_cola_error(cls, bases):
    assert cls.__bases__ == bases


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ({}, "rules: 'x' is wrong"),
        ({"position": 2}, "rules[2]: 'x' is wrong"),
        ({"position": 2, "rule_type": "regex"}, "rules[2] (regex): 'x' is wrong"),
        ({"position": 2, "rule_type": "regex", "target": 0}, "rules[2].targets[0] (regex): 'x' is wrong"),
    ],
)
def test_a_rule_error_names_the_rule(where, message):
    error = ColaRuleError("'x' is wrong", **where)
    assert (str(error), error.reason) == (message, "'x' is wrong")


def test_located_fills_in_only_what_is_unknown():
    error = ColaRuleError("bad", rule_type="unique").located(position=4, rule_type="ignored", target=1)
    assert (str(error), error.position, error.rule_type, error.target) == ("rules[4].targets[1] (unique): bad", 4, "unique", 1)


def test_a_threshold_error_shows_a_caret_under_the_problem():
    error = ThresholdError("< 5%%", 3, "unexpected '%'")
    assert str(error) == (
        "unexpected '%'; a threshold looks like '< 5%', '>= 10', 'between 1 and 2' or '< 1d'\n    < 5%%\n       ^"
    )
    assert (error.text, error.offset, error.problem) == ("< 5%%", 3, "unexpected '%'")


def test_collected_errors_list_every_rule_and_keep_the_first_ones_fields():
    errors = [
        ColaRuleError("'x' is wrong", position=0, rule_type="regex"),
        ColaRuleError("not a threshold\n    < abc\n      ^", position=3, rule_type="range", target=1),
    ]
    combined = ColaRuleError.collected(errors)
    assert str(combined) == (
        "rules: 2 malformed rules:\n- rules[0] (regex): 'x' is wrong\n"
        "- rules[3].targets[1] (range): not a threshold\n    < abc\n      ^"
    )
    assert (combined.position, combined.rule_type, combined.target, combined.reason, combined.errors) == (
        0, "regex", None, "'x' is wrong", tuple(errors)
    )
    assert isinstance(combined, ValueError)
    assert combined.located(position=9) is combined  # each listed error already says where it is
    assert ColaRuleError.collected(errors[:1]) is errors[0]
    with pytest.raises(ValueError, match=r"^collected\(\) needs at least one error$"):
        ColaRuleError.collected([])
