"""JSON and YAML documents read within bounds, with the line and column of any syntax error.

Rules files and contracts are edited by people with no shell on the cluster, so every way a
file can be wrong is a :class:`ColaError` that names the file, never a raw Python error: bytes
that are not UTF-8, more than :data:`MAX_RULES_FILE_BYTES`, numbers no Spark type holds
(JSON's ``NaN``/``Infinity``, 5,000-digit integers, which Python itself refuses to convert),
nesting too deep to parse, YAML aliases that loop or multiply ("billion laughs"), impossible
YAML dates, and a key written twice in one object (JSON and YAML both keep only the last
value, so a reviewer would read a rule that is not the one run). What a document must hold is
the reader's to say (:mod:`cola_core.language.files` for rules, ``contracts`` for contracts).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

from cola_core.errors import ColaError
from cola_core.language.structure import MAX_DEPTH, MAX_NUMBER_DIGITS

if TYPE_CHECKING:
    import yaml

__all__ = ["MAX_RULES_FILE_BYTES", "read_document"]

MAX_RULES_FILE_BYTES = 8 * 1024 * 1024

# Characters shown either side of the caret when the line at fault is long.
_CARET_WINDOW = 40


class _DuplicateKeyError(Exception):
    """A key written twice in one JSON object; the hook gets no position, it is found afterwards."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class _FileNumberError(ValueError):
    """A number the JSON hooks refuse; carries the text as written, to point at it."""

    def __init__(self, written: str, problem: str) -> None:
        super().__init__(problem)
        self.written = written
        self.problem = problem


def read_document(name: str) -> Any:
    """The JSON or YAML document of a file (YAML by its ``.yaml``/``.yml`` name), read within the
    same bounds as a rules file, whatever it holds."""
    text = _read_text(name)
    return _load_yaml(text, name) if name.lower().endswith((".yaml", ".yml")) else _load_json(text, name)


def _read_text(name: str) -> str:
    try:
        with open(name, "rb") as handle:
            raw = handle.read(MAX_RULES_FILE_BYTES + 1)
    except OSError as error:
        raise ColaError(f"cannot read rules file {name!r}: {error}") from error
    if len(raw) > MAX_RULES_FILE_BYTES:
        raise ColaError(
            f"rules file {name!r} is larger than {MAX_RULES_FILE_BYTES // (1024 * 1024)} MiB; "
            "a rules file holds rules, not data (split a very large block into several files)"
        )
    try:
        # utf-8-sig: editors on Windows often start a UTF-8 file with a byte order mark.
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise ColaError(
            f"rules file {name!r} is not UTF-8 text: byte 0x{raw[error.start]:02x} at offset {error.start} "
            f"(line {line}) cannot be decoded; save the file as UTF-8"
        ) from error


def _load_json(text: str, name: str) -> Any:
    try:
        return json.loads(
            text,
            object_pairs_hook=_json_object,
            parse_int=_json_int,
            parse_float=_json_float,
            parse_constant=_json_constant,
        )
    except _DuplicateKeyError as error:
        _refuse_duplicate_key(text, name, error)
    except json.JSONDecodeError as error:
        raise ColaError(
            f"rules file {name!r} is not valid JSON: {error.msg} "
            f"(line {error.lineno}, column {error.colno})\n{_caret(text, error.lineno, error.colno)}"
        ) from error
    except _FileNumberError as error:
        _refuse_number(text, name, error)
    except RecursionError as error:
        raise ColaError(_too_deep(name)) from error


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKeyError(key)
        result[key] = value
    return result


def _duplicate_key_message(key: Any) -> str:
    shown = repr(key) if not isinstance(key, str) or len(key) <= 40 else repr(key[:40]) + "..."
    return (f"the key {shown} twice in one object; only the last value would count, so a reader "
            "would see a rule that is not the one run: write each key once")


def _refuse_duplicate_key(text: str, name: str, error: _DuplicateKeyError) -> NoReturn:
    key, where = error.key, ""
    found = _find_duplicate_key(text)
    if found is not None:
        # The C scanner reports the repeat in the object that closes first; name the one found.
        key, offset = found
        line = text.count("\n", 0, offset) + 1
        column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        where = f" (line {line}, column {column})\n{_caret(text, line, column)}"
    raise ColaError(f"rules file {name!r} repeats {_duplicate_key_message(key)}{where}") from error


# json.scanner's scan_once(text, index): the value that starts at index, and where it ends.
_ScanOnce = Callable[[str, int], tuple[Any, int]]


class _KeyFound(Exception):
    def __init__(self, key: str, offset: int) -> None:
        super().__init__(key, offset)
        self.key = key
        self.offset = offset


def _find_duplicate_key(text: str) -> tuple[str, int] | None:
    """The first repeated key and where it starts, by a second, pure-Python scan (only on this error).

    The C scanner that parsed the file calls the pairs hook without a position. This scan sees
    each key as it is read, so it finds the repeat that comes first in the file; the text up to
    there already parsed, and numbers are skipped, not converted.
    """
    import json.decoder
    import json.scanner

    # typeshed leaves out json's undocumented internals, which this scan is built from
    # (stable in CPython for many releases); each is given its real type once, here.
    whitespace: re.Pattern[str] = json.decoder.WHITESPACE  # type: ignore[attr-defined]
    scanstring: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
    make_scanner: Callable[[json.JSONDecoder], _ScanOnce] = json.scanner.py_make_scanner  # type: ignore[attr-defined]

    def skip(end: int) -> int:
        matched = whitespace.match(text, end)
        assert matched is not None  # the pattern is [ \t\n\r]*, which matches everywhere
        return matched.end()

    def locating_object(
        s_and_end: tuple[str, int], strict: bool, scan_once: _ScanOnce, *hooks: Any
    ) -> tuple[dict[str, Any], int]:
        end = s_and_end[1]
        seen: set[str] = set()
        end = skip(end)
        while text[end] != "}":
            key, after = scanstring(text, end + 1, strict)
            if key in seen:
                raise _KeyFound(key, end)
            seen.add(key)
            _, end = scan_once(text, skip(skip(after) + 1))  # past the ':'
            end = skip(end)
            if text[end] == ",":
                end = skip(end + 1)
        return {}, end + 1

    context = json.JSONDecoder(parse_int=lambda _: 0, parse_float=lambda _: 0, parse_constant=lambda _: 0)
    # Not in typeshed either: the attribute JSONDecoder.__init__ sets and the scanner calls.
    context.parse_object = locating_object  # type: ignore[attr-defined]
    scan_once = make_scanner(context)
    try:
        scan_once(text, skip(0))
    except _KeyFound as found:
        return found.key, found.offset
    except (ValueError, IndexError, RecursionError):  # cannot happen on text that parsed; no position then
        return None
    return None


def _json_int(written: str) -> int:
    digits = len(written.lstrip("-"))
    if digits > MAX_NUMBER_DIGITS:
        # int() itself refuses beyond 4,300 digits; no Spark type holds more than 38 anyway.
        raise _FileNumberError(
            written, f"a whole number of {digits} digits; a number in a rule has at most {MAX_NUMBER_DIGITS}"
        )
    return int(written)


def _json_float(written: str) -> float:
    number = float(written)
    if number in (float("inf"), float("-inf")):
        raise _FileNumberError(
            written, f"{_cut(written)}, which is beyond the largest double; a number in a rule must be finite"
        )
    return number


def _json_constant(written: str) -> NoReturn:
    raise _FileNumberError(written, f"{written}, which is not a JSON number; a number in a rule must be finite")


def _refuse_number(text: str, name: str, error: _FileNumberError) -> NoReturn:
    where = ""
    offset = text.find(error.written)  # the hooks get no position; the first occurrence is a fair pointer
    if offset >= 0:
        line = text.count("\n", 0, offset) + 1
        column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        where = f" (line {line}, column {column})\n{_caret(text, line, column)}"
    raise ColaError(f"rules file {name!r} holds {error.problem}{where}") from error


def _load_yaml(text: str, name: str) -> Any:
    try:
        import yaml  # only needed when a YAML file is actually read
    except ImportError as error:
        raise ColaError(
            f"rules file {name!r} is YAML, which needs PyYAML: pip install PyYAML "
            "(or airflow-provider-cola[yaml]), or write the rules as JSON"
        ) from error
    try:
        return yaml.load(text, Loader=_rules_loader())  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or str(error)
        if mark is None:
            raise ColaError(f"rules file {name!r} is not valid YAML: {problem}") from error
        line, column = mark.line + 1, mark.column + 1
        raise ColaError(
            f"rules file {name!r} is not valid YAML: {problem} (line {line}, column {column})\n"
            f"{_caret(text, line, column)}"
        ) from error
    except RecursionError as error:
        raise ColaError(_too_deep(name)) from error


_YAML12_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_YAML12_INT = re.compile(r"^[-+]?[0-9]+$")
_YAML12_HEX = re.compile(r"^0x[0-9a-fA-F]+$")


def _rules_loader() -> type[yaml.SafeLoader]:
    """PyYAML's SafeLoader, whose number and date constructors fail as YAML errors with a mark.

    The stock ones raise a bare ValueError for an int of more than 4,300 digits or for an
    impossible date such as 2022-02-30, with no line to point at. Only called once
    :func:`_load_yaml` has imported PyYAML.
    """
    import yaml

    class RulesLoader(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            """Refuse a key written twice in one mapping, before merge keys are applied.

            Only the keys written in the mapping itself are compared, so a key that overrides
            one brought in by a merge key (``<<: *defaults``) stays allowed, as YAML says. A
            second ``<<`` in one mapping is a repeat like any other; ``<<: [*a, *b]`` merges two.
            """
            if isinstance(node, yaml.MappingNode):
                seen: set[Any] = set()
                for key_node, _ in node.value:
                    if key_node.tag == "tag:yaml.org,2002:merge":
                        key = "<<"
                    else:
                        key = self.construct_object(key_node, deep=deep)
                    try:
                        repeated = key in seen  # 1, 1.0 and true are one key to Python, and so in the dict
                    except TypeError:
                        continue  # an unhashable key: SafeLoader refuses it with its own mark
                    if repeated:
                        raise yaml.constructor.ConstructorError(
                            None, None, f"found {_duplicate_key_message(key)}", key_node.start_mark
                        )
                    seen.add(key)
            return yaml.SafeLoader.construct_mapping(self, node, deep=deep)

    def bounded_int(loader: Any, node: Any) -> int:
        digits = sum(character.isdigit() for character in node.value)
        if digits > MAX_NUMBER_DIGITS:
            raise yaml.constructor.ConstructorError(
                None, None,
                f"found a whole number of {digits} digits; a number in a rule has at most {MAX_NUMBER_DIGITS}",
                node.start_mark,
            )
        value = loader.construct_scalar(node)
        if _YAML12_HEX.match(value):
            return int(value, 16)
        if _YAML12_INT.match(value):
            return int(value, 10)  # 010 is ten, as in YAML 1.2, not YAML 1.1's octal eight
        return yaml.SafeLoader.construct_yaml_int(loader, node)

    def checked_timestamp(loader: Any, node: Any) -> Any:
        try:
            return yaml.SafeLoader.construct_yaml_timestamp(loader, node)
        except ValueError as error:
            raise yaml.constructor.ConstructorError(
                None, None, f"found an impossible date or time {node.value!r} ({error})", node.start_mark
            ) from error

    # YAML 1.2's core schema for booleans and whole numbers, instead of PyYAML's YAML 1.1: a
    # country code NO, a yes/no/on/off answer or a time 1:30 in a value list stays text,
    # never false, true or 90, which a reviewer of the file would not expect.
    replaced = ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:int")
    RulesLoader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag not in replaced]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    RulesLoader.add_implicit_resolver("tag:yaml.org,2002:bool", _YAML12_BOOL, list("tTfF"))
    RulesLoader.add_implicit_resolver("tag:yaml.org,2002:int", _YAML12_INT, list("-+0123456789"))
    RulesLoader.add_implicit_resolver("tag:yaml.org,2002:int", _YAML12_HEX, ["0"])
    RulesLoader.add_constructor("tag:yaml.org,2002:int", bounded_int)
    RulesLoader.add_constructor("tag:yaml.org,2002:timestamp", checked_timestamp)
    return RulesLoader


def _too_deep(name: str) -> str:
    return (f"rules file {name!r} nests too deep to read (a rule is an object of parameters, "
            f"at most {MAX_DEPTH} levels deep)")


def _cut(written: str) -> str:
    return written if len(written) <= 40 else f"{written[:40]}..."


def _caret(text: str, line: int, column: int) -> str:
    lines = text.splitlines() or [""]
    shown = lines[min(line, len(lines)) - 1]
    if len(shown) > 2 * _CARET_WINDOW:
        # A minified file, or a 5,000-digit number, is one huge line: show the part around the caret.
        start = max(column - 1 - _CARET_WINDOW, 0)
        cut = shown[start : column - 1 + _CARET_WINDOW]
        shown = ("..." if start else "") + cut + ("..." if start + len(cut) < len(shown) else "")
        column = column - start + (3 if start else 0)
    return f"    {shown}\n    {' ' * (column - 1)}^"
