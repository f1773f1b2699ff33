"""How checks get into a registry: register, @register_check, entry points, load_checks."""

from __future__ import annotations

import sys
import textwrap

import pytest

from cola_core import BaseCheck, CheckResult, Cola, ColaError
from cola_core.checks import BUILTIN_CHECKS
from cola_core.ruleset import registry as registry_module
from cola_core.ruleset.registry import load_checks, register_check


@pytest.fixture(autouse=True)
def _isolated_registrations(monkeypatch):
    # Each test starts with no decorator registrations and leaves none behind.
    monkeypatch.setattr(registry_module, "_registered", {})


class AlwaysPasses(BaseCheck):
    def run(self, df):
        return CheckResult(self.rule_type, True, "fine")


def test_register_twice_is_an_error_unless_replace():
    cola = Cola()
    cola.register("always", AlwaysPasses)
    other = type("Other", (AlwaysPasses,), {})
    with pytest.raises(ColaError) as raised:
        cola.register("always", other)
    assert str(raised.value) == (
        "check type 'always' is already registered (to AlwaysPasses); pass replace=True to override it"
    )
    cola.register("always", other, replace=True)
    assert cola.parse([{"type": "always"}])[0].__class__ is other


def test_registering_the_same_class_twice_under_one_name_is_idempotent():
    # A notebook cell or a module imported twice registers its check again: that is no error.
    cola = Cola()
    cola.register("always", AlwaysPasses)
    cola.register("always", AlwaysPasses)
    assert cola.available == sorted([*BUILTIN_CHECKS, "always", "check"])
    assert cola.parse([{"type": "always"}])[0].__class__ is AlwaysPasses
    # A built-in under its own name likewise.
    cola.register("unique", BUILTIN_CHECKS["unique"])
    assert cola.parse([{"type": "unique", "columns": ["id"]}])[0].__class__ is BUILTIN_CHECKS["unique"]
    register_check("always_passes")(AlwaysPasses)
    register_check("always_passes")(AlwaysPasses)
    assert Cola().parse([{"type": "always_passes"}])[0].__class__ is AlwaysPasses


def test_another_class_under_a_taken_name_stays_an_error_with_its_message():
    register_check("always_passes")(AlwaysPasses)
    # The same name (the class's), another class: still refused, decorator and Cola alike.
    impostor = type("AlwaysPasses", (BaseCheck,), {"run": AlwaysPasses.run})
    message = "check type 'always_passes' is already registered (to AlwaysPasses); pass replace=True to override it"
    with pytest.raises(ColaError) as raised:
        register_check("always_passes")(impostor)
    assert str(raised.value) == message
    with pytest.raises(ColaError) as raised:
        Cola().register("always_passes", impostor)
    assert str(raised.value) == message
    assert Cola().parse([{"type": "always_passes"}])[0].__class__ is AlwaysPasses


def test_builtins_cannot_be_shadowed_by_accident():
    with pytest.raises(ColaError, match=r"check type 'unique' is already registered \(to UniqueCheck\)"):
        Cola().register("unique", AlwaysPasses)


@pytest.mark.parametrize(
    ("name", "cls", "message"),
    [
        ("", AlwaysPasses, "a check type must be a non-empty string other than 'check', got ''"),
        ("check", AlwaysPasses, "a check type must be a non-empty string other than 'check', got 'check'"),
        ("x", object, "<class 'object'> is not a subclass of cola_core.checks.BaseCheck"),
    ],
)
def test_bad_registrations_are_refused(name, cls, message):
    with pytest.raises(ColaError) as raised:
        Cola().register(name, cls)
    assert str(raised.value) == message


def test_register_check_decorator_reaches_every_new_cola():
    @register_check("always_passes")
    class Decorated(AlwaysPasses):
        pass

    assert "always_passes" in Cola().available
    assert "always_passes" not in Cola(checks=BUILTIN_CHECKS).available
    with pytest.raises(ColaError, match="already registered"):
        register_check("always_passes")(type("Again", (AlwaysPasses,), {}))
    register_check("always_passes", replace=True)(AlwaysPasses)
    assert Cola().parse([{"type": "always_passes"}])[0].__class__ is AlwaysPasses


def test_cola_with_an_explicit_set_has_only_those_checks():
    assert Cola(checks={"always": AlwaysPasses}).available == ["always", "check"]


def test_load_checks_imports_a_package_so_its_registrations_run(tmp_path, monkeypatch):
    for module in [m for m in sys.modules if m == "myproject" or m.startswith("myproject.")]:
        monkeypatch.delitem(sys.modules, module)  # imported by another test from another folder
    package = tmp_path / "myproject" / "custom_checks"
    package.mkdir(parents=True)
    (tmp_path / "myproject" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "row_checks.py").write_text(textwrap.dedent("""
        from pyspark.sql import functions as F
        from cola_core import BaseCheck
        from cola_core.ruleset.registry import register_check

        @register_check("positive_value")
        class PositiveValueCheck(BaseCheck):
            def violation(self, df):
                return F.col(self.params["column"]) <= 0
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    assert load_checks("myproject.custom_checks") == ["positive_value"]
    # Forgotten for good (not through monkeypatch, whose undo would put this folder's package
    # back): a later import of another myproject, the docs' one, must not find it.
    for module in [m for m in sys.modules if m == "myproject" or m.startswith("myproject.")]:
        del sys.modules[module]
    (check,) = Cola().parse([{"type": "positive_value", "column": "salary"}])
    assert (check.code, check.is_row_level) == ("positive_value(salary)", True)


def test_load_checks_names_a_missing_package():
    with pytest.raises(ColaError, match=r"cannot load checks from 'no_such_package_xyz': No module named"):
        load_checks("no_such_package_xyz")


def _install_plugin(tmp_path, monkeypatch, target: str) -> None:
    """A real installed distribution (a dist-info folder on sys.path) with an entry point."""
    (tmp_path / "cola_plugin_demo.py").write_text(textwrap.dedent("""
        from cola_core import BaseCheck, CheckResult

        class TableIsHappy(BaseCheck):
            def run(self, df):
                return CheckResult(self.rule_type, True, "happy")
    """))
    dist = tmp_path / "cola_plugin_demo-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: cola-plugin-demo\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[cola_core.checks]\ntable_is_happy = {target}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("cola_plugin_demo", None)


def test_installed_packages_contribute_checks_through_entry_points(tmp_path, monkeypatch):
    _install_plugin(tmp_path, monkeypatch, "cola_plugin_demo:TableIsHappy")
    assert "table_is_happy" in Cola().available
    assert Cola().parse([{"type": "table_is_happy"}])[0].__class__.__name__ == "TableIsHappy"


def test_a_broken_entry_point_says_which_one(tmp_path, monkeypatch):
    _install_plugin(tmp_path, monkeypatch, "cola_plugin_demo:Missing")
    with pytest.raises(ColaError) as raised:
        Cola()
    assert str(raised.value).startswith(
        "entry point 'table_is_happy' (cola_plugin_demo:Missing) in group 'cola_core.checks' failed to load:"
    )
