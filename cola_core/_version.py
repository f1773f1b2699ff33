"""The version of cola_core, in a module of its own so that any module can read it."""

from __future__ import annotations

__version__ = "0.1.0"
