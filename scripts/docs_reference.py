"""The documentation site's generated references, and the MkDocs hook that puts them in the pages.

Pages hold a marker where a reference goes (``<!-- cola:rule-reference -->``); when MkDocs
renders a page, :func:`on_page_markdown` replaces each marker with markdown generated from the
code, so the references cannot drift from it:

- ``cola:rule-summary``: one table row per registered rule type: what it checks, whether it
  points at rows (and so feeds the split) or measures the table, and its code form;
- ``cola:rule-reference``: per type, its summary, docstring, capabilities, code form and the
  declared parameters (name, kind, required, default, description);
- ``cola:cli-reference``: the ``cola`` command line, as its argument parser prints it.

The operators' and the decorator's arguments are rendered by mkdocstrings from their
docstrings (``docs/reference/operators.md``). ``tests/test_docs_site.py`` checks that every
type, parameter and operator argument has a description, and builds the site.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import io
import os
import re
from collections.abc import Callable
from typing import Any

from cola_core.checks.base import BaseCheck, Capability
from cola_core.cli.args import build_parser
from cola_core.ruleset.registry import default_checks

__all__ = ["cli_reference", "code_form", "on_page_markdown", "rule_kind", "rule_reference", "rule_summary"]

_ROLE = re.compile(r":(?:class|meth|func|mod|attr|data|exc):`~?([^`]+)`")


def markdown_of(docstring_text: str) -> str:
    """reStructuredText inline markup, as the docstrings write it, in markdown."""
    return _ROLE.sub(r"`\1`", docstring_text).replace("``", "`")


def _docstring(cls: type) -> str:
    """A class's own docstring, dedented (empty when it has none)."""
    return inspect.cleandoc(cls.__doc__ or "")


def rule_kind(cls: type[BaseCheck]) -> str:
    """How a rule of this check is measured, in the words of the rules pages."""
    if Capability.ROW in cls.capabilities:
        return "row-level"
    if Capability.SELF_RUNNING in cls.capabilities:
        return "table (own query)"
    return "aggregate"


# A placeholder per parameter kind that render_code can print; a parameter whose values are
# checked when the check is made (castable's `to`) gets a real value, shown as its name.
_VALID_EXAMPLES = {"to": "int"}


def code_form(rule_type: str, cls: type[BaseCheck]) -> str:
    """The code a rule of this type gets when it declares none, with its parameters as ``<name>``."""
    params: dict[str, Any] = {}
    for name, param in (cls.params_spec or {}).items():
        value = _VALID_EXAMPLES.get(name, f"<{name}>")
        params[name] = [value] if "list" in param.kind.describe else value
    code = cls(params, rule_type=rule_type).code
    for name, value in _VALID_EXAMPLES.items():
        if name in params:
            code = code.replace(value, f"<{name}>")
    return code


def _checks() -> list[tuple[str, type[BaseCheck]]]:
    return sorted(default_checks().items())


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def rule_summary(page_prefix: str = "../reference/rules.md") -> str:
    """The summary table of every registered rule type, each linked to its reference entry."""
    rows = ["| type | what it checks | kind | code |", "| --- | --- | --- | --- |"]
    for rule_type, cls in _checks():
        rows.append(
            f"| [`{rule_type}`]({page_prefix}#{rule_type}) | {_cell(markdown_of(cls.summary(rule_type)))} "
            f"| {rule_kind(cls)} | `{_cell(code_form(rule_type, cls))}` |"
        )
    return "\n".join(rows)


def _default(value: Any) -> str:
    return "" if value is None else f"`{value!r}`"


def rule_reference() -> str:
    """Every registered rule type: what it checks, how it runs, its code and its parameters."""
    parts = []
    for rule_type, cls in _checks():
        parts.append(f"## `{rule_type}` {{#{rule_type}}}\n")
        parts.append(markdown_of(cls.summary(rule_type)) + "\n")
        capabilities = ", ".join(sorted(capability.value for capability in cls.capabilities))
        parts.append(
            f"**Kind:** {rule_kind(cls)} · **Capabilities:** {capabilities} · "
            f"**Code:** `{code_form(rule_type, cls)}` · **Check class:** `{cls.__module__}.{cls.__qualname__}`\n"
        )
        spec = cls.params_spec or {}
        if spec:
            parts.append("| parameter | kind | required | default | description |")
            parts.append("| --- | --- | --- | --- | --- |")
            for name, param in spec.items():
                parts.append(
                    f"| `{name}` | {_cell(param.kind.describe)} | {'yes' if param.required else 'no'} "
                    f"| {_cell(_default(param.default))} | {_cell(param.description)} |"
                )
            parts.append("")
        docstring = markdown_of(_docstring(cls))
        if docstring and " ".join(docstring.split()) != markdown_of(cls.summary(rule_type)):
            parts.append('??? note "From the check\'s docstring"\n')
            parts.extend(f"    {line}" if line else "" for line in docstring.splitlines())
            parts.append("")
    return "\n".join(parts)


_SUBCOMMANDS = re.compile(r"\{([a-z,]+)\}")


def _help(parser: argparse.ArgumentParser, path: list[str]) -> str:
    """What ``cola <path> --help`` prints, 100 columns wide."""
    out = io.StringIO()
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            parser.parse_args([*path, "--help"])
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous
    return out.getvalue().rstrip()


def _commands(parser: argparse.ArgumentParser, path: list[str]) -> list[list[str]]:
    """``path`` and every command below it, found in the ``{a,b}`` list of its usage line."""
    usage = _help(parser, path).split("\n\n")[0]
    found = _SUBCOMMANDS.findall(usage)
    below = found[-1].split(",") if found and (not path or found[-1] != path[-1]) else []
    commands = [path]
    for name in below:
        commands.extend(_commands(parser, [*path, name]))
    return commands


def cli_reference() -> str:
    """The ``cola`` command line: each command's help, as its argument parser prints it."""
    parser = build_parser()
    parts = []
    for path in _commands(parser, []):
        command = " ".join(["cola", *path])
        parts.append(f"## `{command}` {{#{'-'.join(['cola', *path])}}}\n")
        parts.append("```text")
        parts.append(_help(parser, path))
        parts.append("```\n")
    return "\n".join(parts)


_GENERATORS: dict[str, Callable[[], str]] = {
    "rule-summary": rule_summary,
    "rule-reference": rule_reference,
    "cli-reference": cli_reference,
}
_MARKER = re.compile(r"^<!-- cola:([a-z-]+) -->$", re.MULTILINE)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """MkDocs hook: each ``<!-- cola:NAME -->`` line becomes the generated reference NAME."""

    def generated(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in _GENERATORS:
            raise ValueError(f"unknown generated reference {name!r}; known: {', '.join(sorted(_GENERATORS))}")
        return _GENERATORS[name]()

    return _MARKER.sub(generated, markdown)
