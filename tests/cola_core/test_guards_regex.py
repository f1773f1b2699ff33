"""Patterns that Java cannot compile, or cannot finish, are ColaRuleErrors before any job
(issue 10).

Three cases: Java-incompatible shapes that Python's ``re`` accepts, found in pure Python;
the rest, found by the JVM's own ``Pattern.compile`` when a classic session is active (not
a Spark job); and shapes that backtrack catastrophically, refused from Python's parse tree.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from cola_core import Cola
from cola_core.guards.backtracking import ADJACENT, ALTERNATION, NESTED
from cola_helpers import refused, run_one

pytestmark = [pytest.mark.spark, pytest.mark.connect]


def regex(pattern: str) -> dict:
    return {"type": "regex", "column": "v", "pattern": pattern}


def caret(pattern: str, position: int, reason: str) -> str:
    return (
        f"rules[0] (regex): 'pattern' is not a valid regex ({reason} at position {position})\n"
        f"    {pattern}\n    {' ' * position}^"
    )


BRACE = "Java reads '{' as a repetition {n}, {n,} or {n,m}; write a literal brace as \\{"
GROUP = "Java group names are a letter followed by letters or digits, such as (?<city2>...)"


@pytest.mark.parametrize(
    ("pattern", "position", "reason"),
    [
        ("^a{,5}$", 2, BRACE),
        ("a{x}", 1, BRACE),
        ("^{", 1, BRACE),
        ("x{", 1, BRACE),
        ("(?<my_name>x)", 0, GROUP),
        ("a(?<1st>x)", 1, GROUP),
        (
            "\\p{NotAProperty}",
            0,
            "Java knows no character property {NotAProperty}; use a category (\\p{Lu}), a POSIX class "
            "(\\p{Alpha}), a script (\\p{IsLatin}) or a block (\\p{InGreek})",
        ),
        (
            "[\\p{Latin}]",
            1,
            "Java knows no character property {Latin}; use a category (\\p{Lu}), a POSIX class "
            "(\\p{Alpha}), a script (\\p{IsLatin}) or a block (\\p{InGreek})",
        ),
        ("\\pX", 0, "Java has no one-letter property \\pX; use \\p{L}-style names"),
        ("\\p{foo=bar}", 0, "Java knows no property key 'foo' in \\p{foo=bar}"),
        ("x\\U0001F600", 1, "Java has no \\U escape; write a code point as \\x{1F600}"),
        ("\\0", 0, "Java's octal escape is \\0 followed by 1 to 3 octal digits, such as \\011"),
        ("(?a)x", 0, "Java's inline flags are i, d, m, s, u, x and U"),
        ("(?L:x)", 0, "Java's inline flags are i, d, m, s, u, x and U"),
    ],
)
def test_shapes_python_accepts_and_java_refuses_are_refused_in_python(pattern, position, reason):
    assert refused(regex(pattern)) == caret(pattern, position, reason)


def test_the_same_checks_guard_valid_regex():
    rule = {"type": "invalid_count", "column": "v", "valid_regex": "^a{,5}$", "must_be": "= 0"}
    assert refused(rule) == (
        f"rules[0] (invalid_count): 'valid_regex' is not a valid regex ({BRACE} at position 2)\n"
        "    ^a{,5}$\n      ^"
    )


@pytest.mark.parametrize(
    "pattern",
    [
        "[{]", "\\{x\\}", "a{2}", "a{2,}", "a{2,5}+", "(?<city2>x)\\k<city2>", "(?<=a)b", "(?<!a)b",
        "\\p{L}", "\\pL", "\\p{Lu}", "\\p{IsLatin}", "\\p{InGreek}", "\\p{Alpha}", "\\p{javaLowerCase}",
        "\\p{sc=Latin}", "\\p{IsAlphabetic}", "\\N{LATIN SMALL LETTER A}", "\\x{263A}", "\\011", "(?i)a(?-i)b",
        "[a-z&&[^aeiou]]", "\\Qa{\\E", "\\b{g}", "[]a]", "^\\++$",
    ],
)
def test_java_syntax_is_still_accepted(spark, pattern):
    # With the session active, the JVM has compiled each of these too.
    Cola().parse([regex(pattern)])


@pytest.mark.parametrize(
    ("pattern", "position", "description"),
    [
        ("\\p{IsNotAScript}", 15, "Unknown character property name {IsNotAScript}"),
        ("\\p{InNotABlock}", 14, "Unknown character property name {InNotABlock}"),
        ("\\p{sc=Nope}", 10, "Unknown Unicode property {name=<sc>, value=<Nope>}"),
    ],
)
def test_the_jvm_refuses_what_python_cannot_tell(spark, job_counter, pattern, position, description):
    with job_counter.count() as jobs:
        message = refused(regex(pattern))
    assert message == caret(pattern, position, f"Java: {description}")
    assert jobs.jobs == 0  # Pattern.compile is a call into the JVM, not a Spark job


def test_without_a_session_the_parser_needs_no_jvm_and_skips_the_java_step():
    code = (
        "import sys\n"
        "from cola_core import Cola\n"
        "Cola().parse([{'type': 'regex', 'column': 'v', 'pattern': r'\\p{IsNotAScript}'}])\n"
        "print('pyspark.sql.session' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "False\n"


# -- catastrophic backtracking -----------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        ("(a+)+", NESTED),
        ("^(a+)+$", NESTED),
        ("(a*)*", NESTED),
        ("(\\w+\\s?)*$", NESTED),
        ("(.*)*x", NESTED),
        ("(a+|b)+c", NESTED),
        ("((a+)b?)+", NESTED),
        ("(x+x+)+y", NESTED),
        ("^(\\d{1,3})+$", NESTED),
        ("(a+){3,}", NESTED),
        ("(a|aa)+", ALTERNATION),
        ("(\\w|\\d)+$", ALTERNATION),
        ("(?:ab|a)*c", ALTERNATION),
        ("^(?<word>cat|cattle)+$", ALTERNATION),
        (".*.*.*x", ADJACENT),
        ("a*a*b", ADJACENT),  # rlike's scan for a start adds a degree: measured minutes on 5,000 chars
        (".*\\d+\\d+", ADJACENT),
        ("\\d+\\d+\\d+", ADJACENT),
        ("^\\w+\\s?\\w+\\s?\\w+$", ADJACENT),
        ("(?i)x(.*)(.+)(.*)y", ADJACENT),
        # A fixed part that the repeats around it can also match keeps them adjacent.
        (".*a.*a.*b", ADJACENT),
        ("^.*a.*a.*b", ADJACENT),
        (".*,.*,.*;", ADJACENT),
        (".*a.*a.*a.*a.*a.*b", ADJACENT),
        (".*foo.*x", ADJACENT),
        ("^\\d+1\\d+1\\d+x", ADJACENT),
        ("^(.*,)(.*,)(.*;)\\z", ADJACENT),
    ],
)
def test_catastrophic_shapes_are_refused(pattern, problem):
    assert refused(regex(pattern)) == f"rules[0] (regex): 'pattern' may backtrack catastrophically: {problem}\n    {pattern}"


def test_the_refusal_says_how_to_rewrite():
    assert NESTED.endswith("or make the inner repeat possessive (a++) or atomic ((?>a+))")
    assert ALTERNATION.endswith("make the branches start differently, or make the group atomic ((?>a|aa)+)")
    assert ADJACENT.endswith("merge them into one repeat, or make them possessive (.*+)")


ACCEPTED = [
    "^[a-z]+@[a-z]+\\.[a-z]+$",
    "^[a-z]+@[a-z]+\\.[a-z]+\\z",
    "^.*foo.*$",
    "^.*foo.*\\z",
    "^.*,.*;",
    "^[0-9]{11}$",
    "^\\d{3}-\\d{2}$",
    "^(\\d+-)+\\d+$",
    "^(\\d+-)+\\d+\\z",
    "^([a-z0-9]+[-.])*[a-z0-9]+$",
    "^(\\w+\\.)*\\w+@example\\.com$",
    "^([a-z]+ )+$",
    "^[a-z]+ [a-z]+ [a-z]+\\z",
    "^(cat|dog)+$",
    "^(\\d{1,3}\\.){3}\\d{1,3}$",
    "^.*.*b",
    "^a*a*b",
    "xa*a*b",
    "x.*a.*b",
    ".*foo",
    ".*foo.*",
    ".*,;",
    # Possessive quantifiers and atomic groups keep a refused shape safe.
    "(a++)+b",
    "(a+)++b",
    "(?>a+)+b",
    "(?>a|aa)+b",
    ".*+.*+.*+b",
    ".*+a.*+a.*+b",
    "^.*+,.*+,.*+;",
    "(?>.*)a(?>.*)a(?>.*)b",
]


@pytest.mark.parametrize("pattern", ACCEPTED)
def test_accepted_patterns_are_accepted(pattern):
    Cola().parse([regex(pattern)])


def test_accepted_patterns_finish_on_long_values(spark):
    # One scan for all of them: each value almost matches the shapes above.
    df = spark.createDataFrame([("a" * 5000 + "!",), ("," * 5000 + "!",), ("a," * 2500 + "!",)], "v string")
    # A pattern that backtracks catastrophically would never finish this run.
    results = Cola().run(df, [regex(pattern) for pattern in ACCEPTED])
    assert [result.failed_count for result in results] == [3] * len(ACCEPTED)


def test_repeats_that_end_the_pattern_and_may_match_nothing_are_free(spark):
    # rlike finds a match at the first position, whatever the value: nothing can fail.
    df = spark.createDataFrame([("a" * 5000 + "!",)], "v string")
    assert [r.failed_count for r in Cola().run(df, [regex(".*.*.*"), regex("a.*.*")])] == [0, 0]


def test_a_dollar_ends_the_value_and_not_a_final_line(spark):
    """Java's $ also matches before a final line terminator: ^[0-9]{11}$ accepted
    "12345678909\\n" (dqx's users met the same, their issue 1440)."""
    df = spark.createDataFrame([("12345678909",), ("12345678909\n",), ("1234\n5678909",), ("$12",), ("$12\r\n",)],
                               "v string")

    def failed(**rule) -> int:
        return run_one(df, rule).failed_count

    assert failed(type="regex", column="v", pattern="^[0-9]{11}$") == 4
    assert failed(type="regex", column="v", pattern=r"^\$[0-9]+$") == 4  # an escaped $ is a dollar sign
    assert failed(type="regex", column="v", pattern="^[$][0-9]+$") == 4  # so is one in a class
    # Multi-line mode asks for the end of each line: kept as written.
    assert failed(type="regex", column="v", pattern="(?m)^[0-9]{11}$") == 3
    assert failed(type="invalid_count", column="v", valid_regex="^[0-9]{11}$", must_be="= 0") == 4
