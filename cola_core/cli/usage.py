"""Usage errors of the ``cola`` command line, and where a refused command's record goes.

A command line argparse refuses still owes its caller a refusal record (the operators read
that record, never the log), so the usage error keeps argparse's message, and the files the
command was to write JSON to are read off the words without the full parser.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

from cola_core import exit_status

__all__ = ["UsageError", "UsageParser", "record_paths"]


class UsageError(SystemExit):
    """argparse's usage error (exit status 2), said on stderr as argparse says it, with its
    message kept: the job writes it down as its refusal record (``cli.main``).

    Attributes:
        message: argparse's words, such as ``argument --samples: invalid int value: 'x'``.
    """

    def __init__(self, message: str) -> None:
        super().__init__(exit_status.REFUSED)
        self.message = message


class UsageParser(argparse.ArgumentParser):
    """argparse's parser, whose usage errors are :class:`UsageError` (its subcommands' too)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        sys.stderr.flush()
        raise UsageError(message)


class _QuietParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)  # the full parser says it


def record_paths(argv: Sequence[str]) -> list[str]:
    """The files a command line asks the job to write JSON to, read without the full parser (for
    a command line it refuses): ``--results`` of ``check`` and ``split``, ``--out`` of
    ``profile``, ``--profile-out`` and a ``.json`` ``--out`` of ``suggest``. Where the job's
    refusal record goes; empty when none is named (or the words cannot be read)."""
    command = next((word for word in argv if not word.startswith("-")), None)
    flags = {"check": ("--results",), "split": ("--results",), "profile": ("--out",),
             "suggest": ("--profile-out", "--out")}.get(command or "", ())
    if not flags:
        return []
    scan = _QuietParser(add_help=False, allow_abbrev=False)
    for flag in flags:
        scan.add_argument(flag, dest=flag)
    words = list(argv)
    words.remove(command)  # type: ignore[arg-type]  # found in argv just above
    try:
        known, _ = scan.parse_known_args(words)
    except UsageError:  # `--results` with no value, say
        return []
    given = [(flag, vars(known)[flag]) for flag in flags if vars(known)[flag]]
    # suggest's --out is YAML unless it ends in .json: no JSON record goes there.
    return [path for flag, path in given if command != "suggest" or flag != "--out" or path.lower().endswith(".json")]
