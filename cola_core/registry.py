"""A kept import path: registering custom checks, defined in :mod:`cola_core.ruleset.registry`.

Every name of that module's ``__all__``, so that the two cannot drift apart.
"""

from __future__ import annotations

from cola_core.ruleset.registry import *  # noqa: F403
from cola_core.ruleset.registry import __all__ as __all__
