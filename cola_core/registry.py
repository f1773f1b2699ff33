"""A kept import path: registering custom checks, defined in :mod:`cola_core.ruleset.registry`."""

from __future__ import annotations

from cola_core.ruleset.registry import (
    ENTRY_POINT_GROUP,
    default_checks,
    load_checks,
    register_check,
    validate_registration,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "default_checks",
    "load_checks",
    "register_check",
    "validate_registration",
]
