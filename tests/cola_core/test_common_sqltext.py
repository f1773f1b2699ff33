"""SQL text that reads back exactly what the Column path would build (common/sqltext.py)."""

from __future__ import annotations

import pytest

from cola_core.common.sqltext import identifier, number_text, string_text

TRICKY = ["plain", "it's", "back\\slash \\d+\\z", "${spark.app.name} $x", "ünï\u2028cødé ✓", "", "`tick`"]


def test_a_string_reads_back_exactly_whatever_the_parser_settings(spark):
    from pyspark.sql import functions as F

    exprs = [F.expr(string_text(text)) for text in TRICKY]
    assert list(spark.range(1).select(*exprs).first()) == TRICKY
    # Backslashes in ordinary SQL literals change meaning under this setting; hex bytes do not.
    if not hasattr(spark, "_jvm"):
        return
    spark.conf.set("spark.sql.parser.escapedStringLiterals", "true")
    try:
        assert list(spark.range(1).select(*[F.expr(string_text(text)) for text in TRICKY]).first()) == TRICKY
    finally:
        spark.conf.unset("spark.sql.parser.escapedStringLiterals")


def test_a_number_is_the_literal_f_lit_would_make(spark):
    from pyspark.sql import functions as F

    values = [5, -5, 2**40, -(2**63), 2**63, 10**37, 1.5, -0.1, 1e300]
    texts = [number_text(value) for value in values]
    df = spark.range(1).select(*[F.expr(text).alias(f"v{i}") for i, text in enumerate(texts)])
    assert [field.dataType.simpleString() for field in df.schema.fields] == [
        "int", "int", "bigint", "bigint", "decimal(38,0)", "decimal(38,0)", "double", "double", "double",
    ]
    row = df.first()
    assert [int(v) if i in (4, 5) else v for i, v in enumerate(row)] == values
    assert [number_text(value) for value in (float("nan"), float("inf"), True, "5", None)] == [None] * 5


@pytest.mark.parametrize(
    ("name", "expected"),
    [("a", "`a`"), ("A", "`a`"), ("with space", "`with space`"), ("b`q", "`b``q`"), ("dollar$", None), ("s.f", None)],
)
def test_an_identifier_is_a_quoted_top_level_name_or_none(spark, name, expected):
    df = spark.createDataFrame([(1, 2, 3, 4, (5,))], "a int, `with space` int, `b``q` int, `dollar$` int, s struct<f:int>")
    assert identifier(df, name) == expected
