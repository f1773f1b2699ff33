"""What counts as text in a rule: one definition, for the parser and the rules JSON Schema alike.

A rule's free text is of two sorts:

- **text** (``TEXT_PATTERN``): holds at least one visible character, and may span lines: a
  ``description``, a ``where`` condition, a query, a column name.
- **a line** (``LINE_PATTERN``): text on one line, the sort that names a rule wherever its
  result goes (``id``, ``name``, ``code``, ``dimension``): an alert's headline, a log line, a
  page. A line break there would forge a result line of its own.

Blank, so not text on its own: Unicode's white space (Python's ``str.isspace`` and
ECMAScript's ``\\s`` disagree on U+001C-U+001F and U+FEFF; both are blank here), the control
characters, and the characters that Unicode says display as nothing (Default_Ignorable_Code_Point:
zero-width spaces and joiners, the byte order mark, soft hyphens, variation selectors, bidirectional
marks, Hangul fillers). Not on one line: the control characters (line feed, carriage return,
U+0085 and every other C0 and C1 control, tab included), the line and paragraph separators
U+2028 and U+2029, and the bidirectional embeddings, overrides and isolates, which reorder the
text that follows them to the end of its line.

The patterns are the definition: the parser searches with them (Python's ``re``) and the
schema carries them as they are (check-jsonschema's ECMAScript engine, with or without its
Unicode flag). So they are written with what every engine reads alike: ``\\uXXXX`` escapes of
the Basic Multilingual Plane only, no ``\\s`` and no ``$`` (Python's ``$`` also matches before
a final line feed). A character beyond U+FFFF always counts as visible: in an ECMAScript
pattern without the Unicode flag it is two code units, which a class of such escapes cannot
name.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["LINE_PATTERN", "TEXT_PATTERN", "is_line", "is_text", "line_break"]

# Blank characters (see the module docstring), as ranges of a class.
_BLANK = (
    r"\u0000-\u0020\u007F-\u00A0\u00AD\u034F\u061C\u115F\u1160\u1680\u17B4\u17B5\u180B-\u180F"
    r"\u2000-\u200F\u2028-\u202F\u205F-\u206F\u3000\u3164\uFE00-\uFE0F\uFEFF\uFFA0\uFFF0-\uFFF8"
)
# Characters that end a line or reorder the rest of it: never in a line.
_BREAKS = r"\u0000-\u001F\u007F-\u009F\u2028-\u202E\u2066-\u2069"

TEXT_PATTERN = f"[^{_BLANK}]"
# A visible character ahead (a lookahead over the line, so that no part is matched twice),
# then only characters of a line up to the end: ``(?![\s\S])`` is the end in every engine.
LINE_PATTERN = f"^(?=[^{_BREAKS}]*[^{_BLANK}])[^{_BREAKS}]*(?![\\s\\S])"

_TEXT = re.compile(TEXT_PATTERN)
_LINE = re.compile(LINE_PATTERN)
_BREAK = re.compile(f"[{_BREAKS}]")
# How a character that breaks a line is named in a message.
_LINE_ENDS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")


def is_text(value: Any) -> bool:
    """Whether ``value`` is text with a visible character (it may span lines)."""
    return isinstance(value, str) and _TEXT.search(value) is not None


def is_line(value: Any) -> bool:
    """Whether ``value`` is text with a visible character, all on one line."""
    return isinstance(value, str) and _LINE.search(value) is not None


def line_break(value: str) -> str | None:
    """What keeps text with a visible character off one line, in words: ``U+000A (a line
    break) at character 3``; None when nothing does."""
    found = _BREAK.search(value)
    if found is None:
        return None
    char = found.group()
    if char in _LINE_ENDS:
        kind = "a line break"
    elif char >= "\u2028":
        kind = "a bidirectional control, which reorders the rest of the line"
    else:
        kind = "a control character"
    return f"U+{ord(char):04X} ({kind}) at character {found.start() + 1}"
