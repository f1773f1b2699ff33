"""Parsing a rule block: legacy forms, ``targets`` expansion, parameter validation, codes.

Everything here is pure Python and runs before any Spark work, so a malformed block fails
fast and every error names the rule by position and type.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from cola_core.checks import METRIC_TYPES, BaseCheck, RuleOptions
from cola_core.common.formatting import cut_text
from cola_core.errors import ColaRuleError, ThresholdError
from cola_core.guards.sqlguard import check_condition
from cola_core.language.judging import check_baseline
from cola_core.language.params import MAX_LIST_VALUES, THRESHOLD
from cola_core.language.result import RULE_SEVERITIES
from cola_core.language.structure import check_structure
from cola_core.language.text import is_line, is_text, line_break
from cola_core.language.thresholds import threshold_of
from cola_core.ruleset.naming import coded, identified

__all__ = ["COMMON_KEYS", "MAX_RESULTS", "expand_rule", "parse_rules"]

# The results a block may give, targets expanded: each result fits in about 1.5 KB once the
# results are cut to their budget (report.RESULTS_BYTES), so ten thousand fit in it.
MAX_RESULTS = 10_000
# Keys every rule may carry, whatever its type (where and tolerance only where they apply).
COMMON_KEYS = ("type", "id", "name", "description", "code", "severity", "dimension", "where", "tolerance")
# Keys that would make every expanded target share one identity or one destination.
_PER_TARGET_ONLY = ("id", "code", "output")
# Options that name the rule wherever its result goes (an alert's headline, a log line, a page):
# a line break in one would forge a line of its own there.
_ONE_LINE = ("id", "name", "code", "dimension")


def parse_rules(rules: Any, registry: Mapping[str, type[BaseCheck]]) -> list[BaseCheck]:
    """Turn a list of rule dicts into check instances, one per rule after ``targets`` expansion.

    Every rule is parsed, and every malformed one is reported in one ``ColaRuleError``, in
    rule order (see ``ColaRuleError.collected``), so a file is fixed in one round. Errors of
    the block as a whole stop at the first: a block that is not a list, one that breaks the
    structure limits (``_structure.check_structure``), and an ``id`` two rules declare
    (checked once every rule has parsed).

    Raises:
        ColaRuleError: naming each malformed rule by position and type.
    """
    if isinstance(rules, Mapping) or not isinstance(rules, Sequence) or isinstance(rules, (str, bytes)):
        raise ColaRuleError(
            f"must be a list of rule objects such as [{{\"type\": \"not_null\", \"columns\": [\"id\"]}}], "
            f"got {type(rules).__name__}"
        )
    check_structure(rules, registry)  # plain, bounded, finite data before anything else reads it
    checks: list[BaseCheck] = []
    declared: list[str | None] = []
    codes: list[str | None] = []
    errors: list[ColaRuleError] = []
    # A block read from a contract says where each rule was written (cola_core.contracts).
    origins = getattr(rules, "origins", None) or ()
    for position, raw in enumerate(rules):
        origin = origins[position] if position < len(origins) else None
        try:
            _check_shared_params(raw, registry, position)
            for target, rule in expand_rule(raw, position):
                try:
                    checks.append(_build(rule, registry, position, target, origin))
                    declared.append(rule.get("id"))
                    codes.append(rule.get("code"))
                except ColaRuleError as error:
                    errors.append(error)  # the other targets are rules of their own
        except ColaRuleError as error:
            errors.append(error.located(origin=origin))  # cannot be expanded: its later targets are unknown
    if errors:
        raise ColaRuleError.collected(errors)
    if len(checks) > MAX_RESULTS:
        raise ColaRuleError(
            f"the block gives {len(checks):,} results once each rule's targets are expanded; a block may give at "
            f"most {MAX_RESULTS:,} (so that its results and their XCom stay within report.RESULTS_BYTES): "
            "split it into several blocks"
        )
    identities = [check.identity() for check in checks]  # hashed once: blocks hold thousands of rules
    return identified(coded(checks, codes, identities), declared, identities)


def expand_rule(raw: Any, position: int) -> Iterator[tuple[int | None, dict[str, Any]]]:
    """Yield ``(target_index, rule)`` pairs: the rule itself, or one per entry in ``targets``."""
    if not isinstance(raw, Mapping):
        raise ColaRuleError(
            f"each rule is an object with a 'type', e.g. {{\"type\": \"not_null\", \"columns\": [\"id\"]}}, "
            f"got {type(raw).__name__}",
            position=position,
        )
    rule = _normalise_legacy(dict(raw), position)
    rule_type = rule["type"]
    if "targets" not in rule:
        yield None, rule
        return
    targets = rule.pop("targets")
    where = {"position": position, "rule_type": rule_type}
    if not isinstance(targets, list) or not targets:
        raise ColaRuleError(
            "'targets' must be a non-empty list of objects, e.g. [{\"column\": \"cpf\"}, {\"column\": \"cnpj\"}]",
            **where,
        )
    for key in _PER_TARGET_ONLY:
        if key in rule:
            raise ColaRuleError(
                f"'{key}' sits next to 'targets', so every expanded rule would share it; move it inside each target",
                **where,
            )
    # A shared option is checked as written, even where every target gives its own.
    severity = rule.get("severity")
    if severity is not None and severity not in RULE_SEVERITIES:
        raise ColaRuleError(f"'severity' must be 'fail' or 'warn', got {severity!r}", **where)
    for key in ("name", "description", "dimension", "where"):
        problem = _text_problem(key, rule.get(key))
        if problem is not None:
            raise ColaRuleError(problem, **where)
    for index, target in enumerate(targets):
        if not isinstance(target, Mapping):
            raise ColaRuleError(f"a target must be an object, got {type(target).__name__}", target=index, **where)
        for key, why in (("type", "one entry is one rule type"), ("targets", "targets cannot nest"),
                         ("metric", "one entry is one metric")):
            if key in target:
                raise ColaRuleError(f"a target cannot carry '{key}' ({why})", target=index, **where)
        yield index, {**rule, **target}


def _normalise_legacy(rule: dict[str, Any], position: int) -> dict[str, Any]:
    """Check the ``type`` and rewrite ``{"type": "check", "metric": m}`` as ``{"type": m}``."""
    rule_type = rule.get("type")
    if not isinstance(rule_type, str) or not rule_type:
        shown = json.dumps(rule, default=str)[:80]
        raise ColaRuleError(f"has no 'type' (a non-empty string); got {shown}", position=position)
    if rule_type != "check":
        return rule
    metric = rule.pop("metric", None)
    if not isinstance(metric, str) or metric not in METRIC_TYPES:
        raise ColaRuleError(
            f"unknown metric {metric!r}; a 'check' rule needs 'metric' set to one of "
            f"{', '.join(sorted(METRIC_TYPES))} (or write the metric as the type)",
            position=position,
            rule_type="check",
        )
    rule["type"] = metric
    return rule


def _build(
    rule: dict[str, Any],
    registry: Mapping[str, type[BaseCheck]],
    position: int,
    target: int | None,
    origin: str | None = None,
) -> BaseCheck:
    rule_type = rule["type"]
    try:
        cls = registry.get(rule_type)
        if cls is None:
            raise ColaRuleError(f"unknown rule type {rule_type!r}{_suggest(rule_type, registry)}; "
                                f"known types are {', '.join(sorted([*registry, 'check']))}")
        params = {k: v for k, v in rule.items() if k not in COMMON_KEYS}
        name, code = rule.get("name"), rule.get("code")
        for key in ("id", "name", "description", "code", "dimension", "where"):
            problem = _text_problem(key, rule.get(key))
            if problem is not None:
                raise ColaRuleError(problem)
        _check_params(cls, params)
        _check_options(cls, rule)
        cls.validate(params, rule_type)
        options = RuleOptions(
            # Left empty (YAML's "severity:" alone), it is not given: the default.
            severity=rule.get("severity") or "fail",
            dimension=rule.get("dimension"),
            where=rule.get("where"),
            tolerance=rule.get("tolerance"),
            position=position,
            target=target,
            description=rule.get("description"),
            origin=origin,
        )
        return cls(params, rule_type=rule_type, name=name, code=code, options=options)
    except ColaRuleError as error:
        raise error.located(position=position, rule_type=rule_type, target=target, origin=origin) from None


def _text_problem(key: str, value: Any) -> str | None:
    """What is wrong with the text option ``key`` (None when it is fine or not given): text
    with a visible character, and for the options that name a rule, all on one line
    (``language.text``, the definition the rules schema carries too)."""
    if value is None:
        return None  # YAML's "name:" alone: not given ('where' is refused for it later)
    if not is_text(value):
        # strip() keeps what it does not call space (U+FEFF, U+200B); such text is blank all the same.
        hint = " (only spaces and invisible characters)" if isinstance(value, str) and value.strip() else ""
        return f"'{key}' must be a non-empty string, got {cut_text(repr(value), 80)}{hint}"
    if key in _ONE_LINE and not is_line(value):
        return (
            f"'{key}' must be one line of text, and {cut_text(repr(value), 80)} holds {line_break(value)}; "
            f"write the {key} on one line without control characters (a longer text belongs in 'description')"
        )
    return None


def _check_shared_params(raw: Any, registry: Mapping[str, type[BaseCheck]], position: int) -> None:
    """A parameter written beside ``targets`` has the kind it declares, even where every
    target gives its own value (each target's rule is checked whole when it is built)."""
    rule_type = raw.get("type") if isinstance(raw, Mapping) else None
    if not isinstance(rule_type, str) or "targets" not in raw:
        return  # expand_rule says what is wrong with it
    cls = registry.get(rule_type)
    spec = None if cls is None else cls.params_spec
    for key, value in raw.items():
        param = None if spec is None else spec.get(key)
        if param is not None and not param.kind.accepts(value):
            raise ColaRuleError(f"{key!r} must be {param.kind.describe}, got {value!r}", position=position,
                                rule_type=rule_type)


def _check_params(cls: type[BaseCheck], params: dict[str, Any]) -> None:
    spec = cls.params_spec
    if spec is None:
        return  # a custom check without a declaration accepts whatever its rules carry
    valid = sorted([*spec, *_options_for(cls)])
    for key in params:
        if key in ("must_be", "warn", "baseline") and key not in spec:
            raise ColaRuleError(
                f"'{key}' judges a metric, and this rule type measures none (it counts offending rows); "
                "a change or bound over time needs a metric rule, such as missing_count or row_count"
            )
        if key not in spec:
            raise ColaRuleError(
                f"unknown parameter {key!r}{_suggest(key, valid)}; valid parameters are {', '.join(valid)}"
            )
    for key, param in spec.items():
        if key not in params:
            if param.required:
                raise ColaRuleError(f"missing required parameter {key!r}")
            continue
        value = params[key]
        if isinstance(value, (list, tuple)) and len(value) > MAX_LIST_VALUES:
            raise ColaRuleError(
                f"{key!r} holds {len(value):,} values; a rule may list at most {MAX_LIST_VALUES:,}, so that the "
                "driver can plan it: check a larger set against a table of the values with a foreign_key rule"
            )
        if not param.kind.accepts(value):
            hint = " (it is always a list, even for one column)" if key == "columns" and isinstance(value, str) else ""
            raise ColaRuleError(f"{key!r} must be {param.kind.describe}{hint}, got {value!r}")
        if param.kind is THRESHOLD:
            try:
                threshold = threshold_of(value)
            except ThresholdError as error:
                raise ColaRuleError(f"{key!r} is not a valid threshold: {error}") from error
            if threshold.compares_with_history and key not in ("must_be", "warn"):
                raise ColaRuleError(
                    f"{key!r} ({value}) compares with earlier runs; only 'must_be' and 'warn' of a metric rule can"
                )
    if "must_be" in spec:
        check_baseline(params)


def _options_for(cls: type[BaseCheck]) -> list[str]:
    """The common keys this kind of rule accepts."""
    options = ["id", "name", "description", "code", "severity", "dimension"]
    if cls.supports_where:
        options.append("where")
    if cls.takes_tolerance():
        options.append("tolerance")
    return options


def _check_options(cls: type[BaseCheck], rule: Mapping[str, Any]) -> None:
    severity = rule.get("severity")
    if severity is not None and severity not in RULE_SEVERITIES:
        raise ColaRuleError(
            f"'severity' must be 'fail' or 'warn', got {severity!r} "
            "(a 'warn' rule is reported but never fails the block nor quarantines a row)"
        )
    if "where" in rule:
        if not cls.supports_where:
            raise ColaRuleError(
                f"'where' does not apply to a {rule['type']} rule; "
                + ("put the condition in the query's own WHERE" if rule["type"] == "sql" else "it reads no rows")
            )
        check_condition(rule["where"], "where")
    if "tolerance" in rule:
        if not cls.takes_tolerance():
            raise ColaRuleError(
                "'tolerance' applies to row rules that count offending rows (not_null, unique, range, regex, "
                "expression, castable, foreign_key, reference_match); a metric rule sets its limit with 'must_be'"
            )
        value = rule["tolerance"]
        if not THRESHOLD.accepts(value):
            raise ColaRuleError(f"'tolerance' must be {THRESHOLD.describe}, got {value!r}")
        try:
            threshold = threshold_of(value)
        except ThresholdError as error:
            raise ColaRuleError(f"'tolerance' is not a valid threshold: {error}") from error
        if threshold.compares_with_history:
            raise ColaRuleError(
                f"'tolerance' ({value}) compares with earlier runs, but a tolerance is a share of this run's rows; "
                "a change threshold belongs in 'must_be' or 'warn' of a metric rule"
            )
        if threshold.is_duration:
            raise ColaRuleError(f"'tolerance' ({value}) is a share of rows, such as '< 1%', not a duration")


def _suggest(word: str, choices: Any) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
