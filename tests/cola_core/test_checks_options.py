"""``checks/options.py``: the capabilities a check states, and the options a rule gives its check."""

from __future__ import annotations

import dataclasses

import pytest

from cola_core import Capability, RuleOptions


def test_the_capabilities_are_named_by_their_values():
    assert [(capability.name, capability.value) for capability in Capability] == [
        ("ROW", "row"), ("AGGREGATE", "aggregate"), ("SELF_RUNNING", "self_running"),
    ]
    assert Capability("row") is Capability.ROW


def test_rule_options_default_to_a_failing_rule_over_every_row_and_are_frozen():
    options = RuleOptions()
    assert dataclasses.asdict(options) == {
        "severity": "fail", "dimension": None, "where": None, "tolerance": None, "position": None, "target": None,
        "description": None, "origin": None,
    }
    # Where a rule was written is not what it checks: options equal but for it are equal.
    assert RuleOptions(origin="schema[0]") == RuleOptions()
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.where = "id > 0"  # type: ignore[misc]


def test_both_are_importable_from_where_custom_checks_import_them():
    from cola_core.checks import Capability as from_checks
    from cola_core.checks import RuleOptions as options_from_checks
    from cola_core.checks.base import Capability as from_base
    from cola_core.checks.base import RuleOptions as options_from_base

    assert from_checks is from_base is Capability
    assert options_from_checks is options_from_base is RuleOptions
