"""The ``cola`` command line: ``check``, ``split`` and ``history`` (also what spark-submit runs)."""

from __future__ import annotations

from cola_core.cli.main import main

__all__ = ["main"]
