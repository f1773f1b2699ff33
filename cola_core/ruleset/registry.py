"""The default registry of rule types, and the ways checks get into it.

``Cola()`` starts from the default registry: the built-in checks, the classes registered with
``@register_check``, and those that installed packages contribute through the entry-point
group ``cola_core.checks`` (``name = "package.module:CheckClass"``). ``load_checks(package)``
imports a package of checks so that its ``@register_check`` decorators run.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from importlib import metadata
from typing import TypeVar

from cola_core.checks import BUILTIN_CHECKS, BaseCheck
from cola_core.errors import ColaError

__all__ = ["ENTRY_POINT_GROUP", "default_checks", "load_checks", "register_check", "validate_registration"]

ENTRY_POINT_GROUP = "cola_core.checks"

_registered: dict[str, type[BaseCheck]] = {}
CheckClass = TypeVar("CheckClass", bound=type[BaseCheck])


def validate_registration(
    registry: Mapping[str, type[BaseCheck]], name: str, cls: object, *, replace: bool
) -> None:
    """Refuse a bad name, a class that is not a check, or a second registration of a name."""
    if not isinstance(name, str) or not name.strip() or name == "check":
        raise ColaError(f"a check type must be a non-empty string other than 'check', got {name!r}")
    if not (isinstance(cls, type) and issubclass(cls, BaseCheck)):
        raise ColaError(f"{cls!r} is not a subclass of cola_core.checks.BaseCheck")
    if name in registry and registry[name] is not cls and not replace:
        raise ColaError(
            f"check type {name!r} is already registered (to {registry[name].__qualname__}); "
            "pass replace=True to override it"
        )


def register_check(name: str, *, replace: bool = False) -> Callable[[CheckClass], CheckClass]:
    """Class decorator: make the check available as ``{"type": name}`` in every new ``Cola()``."""

    def decorate(cls: CheckClass) -> CheckClass:
        validate_registration({**BUILTIN_CHECKS, **_registered}, name, cls, replace=replace)
        _registered[name] = cls
        return cls

    return decorate


def load_checks(package: str) -> list[str]:
    """Import ``package`` and its submodules so that their registrations run.

    Returns:
        The check types registered by the import, sorted.

    Raises:
        ColaError: when the package cannot be imported.
    """
    before = set(_registered)
    try:
        module = importlib.import_module(package)
        for info in pkgutil.walk_packages(getattr(module, "__path__", []), f"{module.__name__}."):
            importlib.import_module(info.name)
    except ImportError as error:
        raise ColaError(f"cannot load checks from {package!r}: {error}") from error
    return sorted(set(_registered) - before)


def _entry_point_checks() -> dict[str, type[BaseCheck]]:
    found: dict[str, type[BaseCheck]] = {}
    for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            cls = entry_point.load()
        except Exception as error:  # a broken plugin must say which one it is
            raise ColaError(
                f"entry point {entry_point.name!r} ({entry_point.value}) in group {ENTRY_POINT_GROUP!r} "
                f"failed to load: {error}"
            ) from error
        validate_registration({**BUILTIN_CHECKS, **found}, entry_point.name, cls, replace=False)
        found[entry_point.name] = cls
    return found


def default_checks() -> dict[str, type[BaseCheck]]:
    """Built-ins, then entry-point checks, then ``@register_check`` ones (which may replace)."""
    return {**BUILTIN_CHECKS, **_entry_point_checks(), **_registered}
