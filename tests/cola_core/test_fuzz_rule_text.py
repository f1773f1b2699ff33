"""The parser and the rules schema against each other on every string field of a rule.

Hypothesis writes text from the characters where engines disagree (Unicode's white space, the
byte order mark, zero-width and other invisible characters, every control character, line and
paragraph separators, bidirectional controls, characters beyond U+FFFF) mixed with visible
ones, and puts it in each string field: the options that name a rule (``id``, ``name``,
``code``, ``dimension``, in the rule, beside ``targets`` or in a target), the free text
(``description``), and the parameters of text kinds (a column, a list of columns, the keys of a
column map, values). Where nothing else is checked of the field, the parser accepts the block
if and only if the schema does, with each regex engine the documented CI check
(``check-jsonschema``) can use: ECMAScript with and without its Unicode flag, and Python's.
Where the parser checks more (a condition is SQL, a bound is a date), the schema accepts every
block the parser accepts.
"""

from __future__ import annotations

import unicodedata
from typing import Any

import jsonschema
import pytest
from check_jsonschema.regex_variants import RegexImplementation, RegexVariantName
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cola_core import Cola, ColaRuleError

COLA = Cola()
SCHEMA = COLA.rules_schema()


def _validator(variant: RegexVariantName | None) -> jsonschema.Draft202012Validator:
    if variant is None:  # the jsonschema library as it is: Python's re
        return jsonschema.Draft202012Validator(SCHEMA)
    engine = RegexImplementation(variant)  # as check-jsonschema extends it
    cls = jsonschema.validators.extend(
        jsonschema.Draft202012Validator,
        {"pattern": engine.pattern_keyword, "patternProperties": engine.patternProperties_keyword},
    )
    return cls(SCHEMA)  # type: ignore[no-any-return]


VALIDATORS = {
    "check-jsonschema (ECMAScript, Unicode)": _validator(RegexVariantName.default),
    "check-jsonschema (ECMAScript)": _validator(RegexVariantName.nonunicode),
    "check-jsonschema --regex-variant python": _validator(RegexVariantName.python),
    "jsonschema": _validator(None),
}

# Every character of the Basic Multilingual Plane that is white space to Python or to
# ECMAScript, a control or format character, or a separator, and a few beyond it.
_HARD = sorted(
    {chr(code) for code in range(0x10000)
     if not 0xD800 <= code <= 0xDFFF
     if chr(code).isspace() or unicodedata.category(chr(code)) in ("Cc", "Cf", "Zs", "Zl", "Zp")}
    | set("\ufeff\u180e\u2800\u3164\uffa0\u115f\u034f\ufe0f\u17b4")
    | {"\U000e0041", "\U000e0020", "\U0001d173", "\U0001f600", "\U00010000"}
)
_VISIBLE = "aZ9_-.#\u00e9\u5b57\u05e9\u0301`'\"\\/<>"
# No surrogates: no UTF-8 file holds one, and the structure pre-pass refuses them.
_CHARACTERS = st.one_of(
    st.sampled_from(_HARD), st.sampled_from(_VISIBLE), st.characters(exclude_categories=("Cs",)),
)
TEXTS = st.one_of(
    st.text(_CHARACTERS, max_size=6),
    st.builds(lambda before, visible, after: before + visible + after,
              st.text(_CHARACTERS, max_size=3), st.sampled_from(_VISIBLE), st.text(_CHARACTERS, max_size=3)),
)

NOT_NULL: dict[str, Any] = {"type": "not_null", "columns": ["id"]}
# Where a text goes: the parser checks nothing of these but what the definition of text says.
FREE: dict[str, Any] = {
    **{f"{key} of a rule": lambda text, key=key: {**NOT_NULL, key: text}
       for key in ("id", "name", "code", "dimension", "description")},
    **{f"{key} beside targets": lambda text, key=key: {"type": "not_null", key: text, "targets": [{"columns": ["a"]}]}
       for key in ("name", "dimension", "description")},
    **{f"{key} in a target": lambda text, key=key: {"type": "not_null", "targets": [{"columns": ["a"], key: text}]}
       for key in ("id", "code", "name")},
    "a column of a list": lambda text: {"type": "not_null", "columns": ["id", text]},
    "a column": lambda text: {"type": "values_present", "column": text, "values": ["x"]},
    "a value": lambda text: {"type": "values_present", "column": "id", "values": [text]},
    "a required column": lambda text: {"type": "schema", "required_columns": [text]},
    "a column map's key": lambda text: {"type": "schema", "column_types": {text: "int"}},
}
# The parser reads these further (SQL, a type name, a date, a threshold), so they give one way only.
CHECKED: dict[str, Any] = {
    "where": lambda text: {**NOT_NULL, "where": text},
    "a column map's type": lambda text: {"type": "schema", "column_types": {"id": text}},
    "a range bound": lambda text: {"type": "range", "column": "id", "min": text},
    "a pattern": lambda text: {"type": "regex", "column": "id", "pattern": text},
    "a threshold": lambda text: {"type": "row_count", "must_be": text},
}


def accepted(rules: list[dict[str, Any]]) -> bool:
    try:
        COLA.parse(rules)
    except ColaRuleError:
        return False
    return True


def verdicts(rules: list[dict[str, Any]]) -> dict[str, bool]:
    return {name: validator.is_valid(rules) for name, validator in VALIDATORS.items()}


def shown(text: str) -> str:
    return " ".join(f"U+{ord(char):04X}" for char in text) or "(empty)"


@pytest.mark.parametrize("field", sorted(FREE))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS)
def test_the_parser_accepts_a_text_iff_the_schema_does(field, text):
    rules = [FREE[field](text)]
    parsed = accepted(rules)
    assert verdicts(rules) == dict.fromkeys(VALIDATORS, parsed), f"{field} = {shown(text)}; the parser: {parsed}"


@pytest.mark.parametrize("field", sorted(CHECKED))
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS)
def test_the_schema_accepts_every_text_the_parser_accepts_where_it_checks_more(field, text):
    rules = [CHECKED[field](text)]
    if accepted(rules):
        assert verdicts(rules) == dict.fromkeys(VALIDATORS, True), f"{field} = {shown(text)}"


@pytest.mark.parametrize("field", sorted(FREE))
def test_each_hard_character_is_tried_in_each_field(field):
    # Not left to chance: each character alone, and between visible ones.
    for char in _HARD:
        for text in (char, f"a{char}b"):
            rules = [FREE[field](text)]
            assert verdicts(rules) == dict.fromkeys(VALIDATORS, accepted(rules)), f"{field} = {shown(text)}"
