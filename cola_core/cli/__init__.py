"""The ``cola`` command line: ``check``, ``split`` and ``history`` (also what spark-submit runs).

Re-exports the names the one ``cola_core.cli`` module had: ``main`` (the console script) and
the old ``EXIT_*`` names of the exit statuses.
"""

from __future__ import annotations

from cola_core.cli.main import EXIT_ERROR, EXIT_FAILED, EXIT_INTERNAL, EXIT_OK, build_parser, main

__all__ = ["EXIT_ERROR", "EXIT_FAILED", "EXIT_INTERNAL", "EXIT_OK", "build_parser", "main"]
