"""A kept import path: Open Data Contract Standard (ODCS v3) contracts read as rule blocks,
defined in :mod:`cola_core.language.contracts`.

Every name of that module's ``__all__``, so that the two cannot drift apart.
"""

from __future__ import annotations

from cola_core.language.contracts import *  # noqa: F403
from cola_core.language.contracts import __all__ as __all__
