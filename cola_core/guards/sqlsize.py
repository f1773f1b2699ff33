"""Values a piece of SQL builds from constants, bounded before Spark runs them.

``repeat('a', 2000000000)`` asks Spark for a string of two billion characters, and
``array_repeat(id, 2000000000)`` for an array of two billion elements: one such value
exhausts the JVM's memory, and a constant one is built on the driver while Spark folds the
plan. A rules author must not be able to do that, so the SQL guard (``cola_core.guards.sqlguard``)
reads, in pure Python, the size of every value the text builds, through whole expressions
(:mod:`cola_core.guards.sqltree`):

- a size-building call (:data:`SIZE_BUILDERS`) builds as much as its constants say, nested
  calls multiplied (``repeat(repeat('a', 100000), 100000)`` builds ten billion characters);
- a call adds its arguments up (``concat`` of 3,000 ``repeat('a', 1000000)``, ``array(...)``,
  ``||``), and a higher-order function builds its lambda's value once per element
  (``transform(sequence(1, 1e6), x -> repeat('a', 1e6))`` builds 10^12 characters);
- a size is read from constant arithmetic (``1e6 * 1e6``), casts (``CAST('2e9' AS INT)``),
  numeric functions of constants (``power(10, 12)``), and constant dates, timestamps and
  intervals (``sequence(TIMESTAMP '0001-01-01', TIMESTAMP '9999-12-31', INTERVAL 1 SECOND)``,
  :mod:`cola_core.guards.sqltime`).

One value may hold at most :data:`MAX_BUILT_SIZE` characters or elements, and one evaluation
(of a row, or of the whole text) build at most :data:`MAX_BUILT_WORK` in all, a lambda's values
once per element. A size that depends on the data (``repeat(name, id)``) cannot be known here;
the engine survives it when it runs (see the documentation's "Security model": running out of
memory, or over Spark's array limit, while measuring a rule is that rule's failure).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from cola_core.guards import sqltime
from cola_core.guards.sqllex import Token
from cola_core.guards.sqltree import Call, Group, Item, Lambda, tree
from cola_core.guards.sqlvalues import SIZE_BUILDERS, Size, arithmetic, built, content, interval, number, time_of

__all__ = ["MAX_BUILT_SIZE", "MAX_BUILT_WORK", "SIZE_BUILDERS", "built_size_problem"]

# The largest value a rule may build with a constant size: characters of a string, elements
# of an array. A million characters is a megabyte or a few per value, far above what a check
# needs (a padded code, a repeated separator) and far below what costs a JVM its memory.
MAX_BUILT_SIZE = 1_000_000
# What one evaluation may build in all (every value counted, a lambda's once per element): a
# hundred values at the bound, a few hundred megabytes written, seconds of work.
MAX_BUILT_WORK = 100_000_000
# Higher-order functions whose value holds their lambda's value once per element; and those
# that only run their lambda once per element.
_MAPPING = frozenset("transform transform_values transform_keys zip_with map_zip_with".split())
_RUNNING = frozenset("filter map_filter array_sort exists forall aggregate reduce".split())
_HOW_MAPPED = "the size of its lambda's value times the elements of its array"
_HOW_ADDED = "the sizes of its arguments added"
# Words that open parentheses without calling anything: IN (...), VALUES (...), FROM (...).
_KEYWORDS = frozenset("in values from as on using over where and or not join select when then else is like rlike "
                      "ilike regexp by having".split())
_ARITHMETIC = frozenset("+-*/%")


class _TooLarge(Exception):
    pass


def built_size_problem(tokens: Sequence[Token], key: str) -> str | None:
    """Why ``tokens`` (the code of one piece of SQL) build a value over the bound, or None."""
    try:
        whole = _Reader(key).expression(tree(tokens), {})
    except _TooLarge as refused:
        return str(refused)
    if whole.work > MAX_BUILT_WORK:
        return (f"'{key}' builds {_shown(whole.work)} in all from constants (every value its calls build, "
                f"added up); {_in_all()}")
    return None


def _shown(size: float) -> str:
    return f"{int(size):,} characters or elements" if size < 1e30 else "more than 10^30 characters or elements"


def _in_all() -> str:
    return f"a rule may build at most {MAX_BUILT_WORK:,} in all, so that it cannot take Spark unbounded work"


class _Reader:
    def __init__(self, key: str) -> None:
        self.key = key

    def expression(self, items: Sequence[Item], names: Mapping[str, Size]) -> Size:
        """An expression: its operands' sizes (added by ``||``), and its value when it is
        constant arithmetic."""
        operands: list[Size] = []
        terms: list[str] = []
        constant, joined, position = True, False, 0
        while position < len(items):
            item = items[position]
            position += 1
            if isinstance(item, Token) and item.kind == "symbol":
                if item.text == "|" and position < len(items) and _symbol(items[position], "|"):
                    joined, constant, position = True, False, position + 1
                elif item.text in _ARITHMETIC:
                    terms.append(item.text)
                else:
                    constant = False
                continue
            if isinstance(item, Token) and item.is_word("DIV"):
                terms.append("//")
                continue
            if isinstance(item, Token) and item.kind == "word" and item.text.upper() == "INTERVAL":
                operand, position = interval(items, position)
            elif isinstance(item, Token) and item.name in sqltime.TIME_WORDS and position < len(items) \
                    and _is_string(items[position]):
                operand = time_of(content(items[position]))  # TIMESTAMP '2000-01-01'
                position += 1
            else:
                operand = self.item(item, names)
            operands.append(operand)
            if operand.value is None:
                constant = False
            else:
                terms.append(repr(operand.value))
        if not operands:
            return Size()
        if len(operands) == 1 and not terms[1:]:
            return operands[0] if not joined else replace(operands[0], value=None, text=None)
        value = arithmetic(terms) if constant else None
        chars = sum(o.chars for o in operands) if joined else max(o.chars for o in operands)
        if joined and chars > MAX_BUILT_SIZE:
            raise _TooLarge(self.too_large("||", chars, "the sizes of its operands added"))
        return Size(
            chars=chars,
            count=max(o.count for o in operands), work=sum(o.work for o in operands), value=value,
            time=value is not None and any(o.time for o in operands),
        )

    def item(self, item: Item, names: Mapping[str, Size]) -> Size:
        if isinstance(item, Call):
            if item.name in _KEYWORDS:
                # A list of values or a subquery: each is a value of its own, their work adds up.
                parts = [self.expression(part, names) for part in item.arguments]
                return Size(chars=max((p.chars for p in parts), default=1.0), work=sum(p.work for p in parts))
            return self.call(item, names)
        if isinstance(item, Group):
            parts = [self.expression(part, names) for part in item.parts]
            return parts[0] if len(parts) == 1 else self.added(parts)
        if isinstance(item, Lambda):
            return self.expression(item.body, {**names, **dict.fromkeys(item.parameters, Size())})
        if item.kind == "number":
            return Size(value=number(item.text))
        if item.kind == "string":
            text = content(item)
            # A text is a number only where it looks like one (Spark casts it where a number goes).
            looks = (text[:1].isdigit() or text[:1] in ("+", "-", ".", " ")) and len(text) < 64
            return Size(chars=float(len(text)), text=text, value=number(text) if looks else None)
        return names.get(item.name or "", Size())

    @staticmethod
    def added(parts: Sequence[Size]) -> Size:
        return Size(chars=sum(p.chars for p in parts), count=float(max(len(parts), 1)),
                     work=sum(p.work for p in parts))

    def call(self, call: Call, names: Mapping[str, Size]) -> Size:
        name = call.name
        lambdas = [part[0] for part in call.arguments if len(part) == 1 and isinstance(part[0], Lambda)]
        parts = [self.expression(part, names) for part in call.arguments
                 if not (len(part) == 1 and isinstance(part[0], Lambda))]
        if name in ("cast", "try_cast") and call.arguments:
            return self.cast(call.arguments[0], names)
        work = sum(p.work for p in parts)
        if lambdas and parts:
            size, work = self.higher_order(name, parts, lambdas, names, work)
            how = _HOW_MAPPED if name in _MAPPING or name in ("aggregate", "reduce") else _HOW_ADDED
        else:
            size = built(name, parts)
            how = SIZE_BUILDERS.get(name, _HOW_ADDED)
        work += size.chars
        if size.chars > MAX_BUILT_SIZE:
            raise _TooLarge(self.too_large(f"{name}()", size.chars, how))
        if work > MAX_BUILT_WORK:
            raise _TooLarge(
                f"'{self.key}' calls {name}() to build {_shown(work)} in all (every value built inside it, a "
                f"lambda's once per element of its array); {_in_all()}"
            )
        return replace(size, work=work)

    def too_large(self, what: str, chars: float, how: str) -> str:
        verb = "joins with ||" if what == "||" else f"calls {what}"
        return (f"'{self.key}' {verb} to build a value of {_shown(chars)} (for {what}, {how}); a rule may build "
                f"at most {MAX_BUILT_SIZE:,} characters or elements, so that it cannot exhaust Spark's memory")

    def cast(self, argument: Sequence[Item], names: Mapping[str, Size]) -> Size:
        """``CAST(x AS type)``: x, as a number or a time when it is a constant text."""
        cut = next((at for at, item in enumerate(argument) if isinstance(item, Token) and item.is_word("AS")),
                   len(argument))
        inner = self.expression(argument[:cut], names)
        target = argument[cut + 1] if cut + 1 < len(argument) else None
        if isinstance(target, Token) and target.name in sqltime.TIME_WORDS and inner.text is not None:
            return replace(time_of(inner.text), work=inner.work)
        return inner

    def higher_order(self, name: str, parts: list[Size], lambdas: list[Lambda],
                     names: Mapping[str, Size], work: float) -> tuple[Size, float]:
        """A higher-order call's value, and its work: each lambda runs once per element of
        the array, its parameters each an element (an aggregate's first one its start value)."""
        array = parts[0]
        elements = max(array.count, 1.0)
        element = Size(chars=max(array.chars / elements, 1.0))
        bodies = []
        for function in lambdas:
            bound = dict.fromkeys(function.parameters, element)
            if name in ("aggregate", "reduce") and len(parts) > 1:
                bound[function.parameters[0]] = parts[1]
            bodies.append(self.expression(function.body, {**names, **bound}))
        work += elements * sum(body.work for body in bodies)
        if name in _MAPPING:
            return Size(chars=elements * bodies[0].chars, count=elements), work
        if name in ("aggregate", "reduce"):
            return Size(chars=max(parts[-1].chars, elements * bodies[0].chars)), work
        if name in ("exists", "forall"):
            return Size(), work
        if name in _RUNNING:
            return replace(array, work=0.0), work
        return Size(chars=sum(p.chars for p in parts) + sum(b.chars for b in bodies), count=elements), work


def _is_string(item: Item) -> bool:
    return isinstance(item, Token) and item.kind == "string"


def _symbol(item: Item, text: str) -> bool:
    return isinstance(item, Token) and item.kind == "symbol" and item.text == text


