"""A kept import path: a custom check's parameter specs, defined in :mod:`cola_core.language.params`."""

from __future__ import annotations

from cola_core.language.params import (
    BOOL,
    LONG_RANGE,
    MAPPING,
    NUMBER,
    ORDERED,
    SCALAR_LIST,
    STRING,
    STRING_LIST,
    STRING_MAP,
    THRESHOLD,
    WHOLE,
    Kind,
    Param,
)

__all__ = [
    "BOOL",
    "LONG_RANGE",
    "MAPPING",
    "NUMBER",
    "ORDERED",
    "SCALAR_LIST",
    "STRING",
    "STRING_LIST",
    "STRING_MAP",
    "THRESHOLD",
    "WHOLE",
    "Kind",
    "Param",
]
