"""The suggested rules as a rules file (``cola suggest --out``): JSON, or YAML with a comment
per rule saying why it was suggested and one per suggestion not offered. Either reads back
through ``language.files.read_rules_file`` as exactly the rules written."""

from __future__ import annotations

import json
import math
import re
from typing import Any

__all__ = ["suggestions_text", "suggestions_yaml"]


def suggestions_text(rules: list[dict[str, Any]], as_json: bool) -> str:
    """``rules`` as a rules file: ``{"rules": [...]}`` in JSON, or :func:`suggestions_yaml`."""
    return json.dumps({"rules": rules}, indent=2, allow_nan=False) + "\n" if as_json else suggestions_yaml(rules)


# What YAML does not read back as written inside a double-quoted scalar or a comment: the
# characters outside its printable set (C0 and C1 controls, DEL, surrogates, U+FFFE/F), the
# line breaks YAML 1.1 adds (NEL U+0085, U+2028, U+2029), and the byte order mark.
_UNREADABLE = re.compile("[^\t\n\r\x20-\x7e\xa0-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]|[\u2028\u2029]")


def _escaped(text: str) -> str:
    """``text`` with every character YAML would not read back as itself as a ``\\uXXXX``
    escape (a surrogate pair above U+FFFF), which a double-quoted YAML scalar reads as that
    character: ``json.dumps`` escapes only the C0 controls when it keeps Unicode as it is."""
    def escape(found: re.Match[str]) -> str:
        return json.dumps(found[0])[1:-1]  # JSON's own escape, ASCII only

    return _UNREADABLE.sub(escape, text)


def suggestions_yaml(rules: list[dict[str, Any]]) -> str:
    """``rules`` as a YAML rules file with a comment per rule saying why it was suggested, and
    a comment at the end for each suggestion not offered (:attr:`Suggestions.skipped`).

    Every value is written in JSON's notation, which YAML reads as the same value (a quoted
    string stays a string, ``"2024-01-01"`` never becomes a date), so no YAML library is needed;
    a character YAML would not read back as itself is escaped (:func:`_escaped`).
    """
    lines = [
        "# Rules suggested by `cola suggest` from a profile of the data. Each passes on the data",
        "# it was profiled from; review the bounds before you commit the file.",
        "rules:",
    ]
    for rule in rules:
        lines.append(_comment(str(rule.get("name", rule["type"]))))
        for number, (key, value) in enumerate(rule.items()):
            lines.append(f"  {'- ' if number == 0 else '  '}{key}: {_escaped(_json(value))}")
    skipped = getattr(rules, "skipped", ())
    if skipped:
        lines.append("# Not suggested, although the profile pointed at them:")
        lines.extend(_comment(why) for why in skipped)
    return "\n".join(lines) + "\n"


def _json(value: Any) -> str:
    """``value`` in JSON's notation, a float always with a point: YAML 1.1 (PyYAML) reads
    ``1e+19`` as text, ``1.0e+19`` as the number."""
    if isinstance(value, float) and math.isfinite(value):
        text = repr(value)
        return text if "." in text or "e" not in text else text.replace("e", ".0e", 1)
    if isinstance(value, list):
        return "[" + ", ".join(_json(item) for item in value) + "]"
    if isinstance(value, dict):
        pairs = (f"{json.dumps(str(key), ensure_ascii=False)}: {_json(item)}" for key, item in value.items())
        return "{" + ", ".join(pairs) + "}"
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _comment(text: str) -> str:
    """``text`` as one comment line: its whitespace as single spaces, what YAML cannot read escaped."""
    return "  # " + _escaped(" ".join(text.split()))
