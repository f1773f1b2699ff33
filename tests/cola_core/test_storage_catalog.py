"""``cola_core.storage.catalog``: the names a table publication makes in the catalog.

Its renames, swaps and appends run through ``split_write`` and the history store, on real
tables: ``test_plan_staged_split.py`` and ``test_history_store.py``.
"""

from __future__ import annotations

import pytest

from cola_core.storage.catalog import sibling_table


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("orders", "`_cola_x_{hex}`"),
        ("db.orders", "`db`.`_cola_x_{hex}`"),
        ("`odd db`.`we``ird`", "`odd db`.`_cola_x_{hex}`"),
    ],
)
def test_a_sibling_table_is_a_fresh_quoted_name_in_the_same_database(name, expected):
    # The table's own name is left out: a backtick in it could not be part of a new name.
    fresh = sibling_table(name, "_cola_x")
    hex_part = fresh.split("_cola_x_", 1)[1][:32]
    assert len(hex_part) == 32 and fresh == expected.format(hex=hex_part)
