"""Count the Py4J round trips the Python driver makes while a piece of code runs.

Every call from Python into the JVM (``F.col``, ``Column.alias``, ``df.schema``, a JVM regex
compile, ``df.agg(...).first()``) is one or more Py4J commands, and each command is one
round trip over the gateway socket: the Python thread sends a line and blocks until the JVM
answers. PySpark 4 uses Py4J's pinned-thread ``ClientServer`` by default
(``PYSPARK_PIN_THREAD=true``), whose connections are ``py4j.clientserver.ClientServerConnection``;
with pinning off it is the classic ``py4j.java_gateway.GatewayConnection``. Both classes'
``send_command`` is patched, so either mode is counted, one count per command sent.

Commands sent from other threads are counted apart (``background``): with ``ClientServer``,
the "forget this JavaObject" messages (``m``emory commands) that Python's garbage collector
triggers are queued and sent by Py4J's finalizer thread, not by the thread that runs the
rules.

    from benchmarks.py4j_calls import count_py4j_calls

    with count_py4j_calls() as calls:
        cola.run(df, rules)
    print(calls.total, calls.by_kind)

    with count_py4j_calls(trace=True) as calls:      # also: where each command came from
        with calls.phase("parse"):
            checks = cola.parse(rules)
        with calls.phase("plan"):
            plan_block(df, checks)
    print(calls.phases, calls.sites.most_common(10))

Counters nest (an inner one sees only what runs inside it, the outer one sees everything),
and the patch is removed when the outermost counter exits. Importing this module does not
import py4j or pyspark.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["COMMAND_KINDS", "Py4JCalls", "count_py4j_calls"]

# The first line of a Py4J command says what it is (py4j.protocol *_COMMAND_NAME).
COMMAND_KINDS = {
    "c": "call",
    "f": "field",
    "i": "constructor",
    "l": "list",
    "r": "reflection",
    "m": "memory",
    "a": "array",
    "j": "jvmview",
    "p": "exception",
    "d": "dir",
    "h": "help",
    "s": "shutdown",
    "S": "stream",
}

_PROJECT_PACKAGES = ("cola_core", "airflow_provider_cola")


@dataclass
class Py4JCalls:
    """What one counter saw.

    Attributes:
        total: commands sent by the thread that opened the counter (the driver's round trips).
        background: commands sent by any other thread meanwhile (Py4J's finalizer thread).
        by_kind: ``total`` split by command kind (``call``, ``reflection``, ``memory``, ...).
        phases: commands per phase named with :meth:`phase` (outside any phase: ``None``).
        phase_seconds: wall seconds spent inside each phase.
        sites: with ``trace``: the innermost project frame (``module.function:line``) that
            led to each command; ``<outside>`` when no project code was on the stack.
        functions: with ``trace``: the same, by project function without the line.
        pyspark_calls: with ``trace``: the outermost pyspark function the project (or the
            caller) called on the way to each command (``functions.col``, ``Column.alias``,
            ``DataFrame.schema``...): what the command was for.
        chains: with ``trace``: the project frames from the outermost in, joined by `` > ``.
    """

    trace: bool = False
    total: int = 0
    background: int = 0
    by_kind: Counter = field(default_factory=Counter)
    phases: dict = field(default_factory=dict)
    phase_seconds: dict = field(default_factory=dict)
    sites: Counter = field(default_factory=Counter)
    functions: Counter = field(default_factory=Counter)
    pyspark_calls: Counter = field(default_factory=Counter)
    chains: Counter = field(default_factory=Counter)
    _thread: int = field(default_factory=threading.get_ident, repr=False)
    _phase: Any = field(default=None, repr=False)

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Attribute the commands sent inside the block to ``name`` (phases may repeat)."""
        outer, self._phase = self._phase, name
        started = time.perf_counter()
        try:
            yield
        finally:
            self.phase_seconds[name] = self.phase_seconds.get(name, 0.0) + time.perf_counter() - started
            self._phase = outer

    def _record(self, command: str) -> None:
        if threading.get_ident() != self._thread:
            self.background += 1
            return
        self.total += 1
        self.by_kind[COMMAND_KINDS.get(command[:1], command[:1])] += 1
        self.phases[self._phase] = self.phases.get(self._phase, 0) + 1
        if self.trace:
            self._attribute()

    def _attribute(self) -> None:
        frame = sys._getframe(3)  # _attribute < _record < counting send_command < py4j caller
        project: list[str] = []
        site = None
        pyspark_call = None
        while frame is not None:
            module = frame.f_globals.get("__name__", "")
            top = module.split(".", 1)[0]
            if top in _PROJECT_PACKAGES:
                name = f"{module}.{_qualname(frame)}"
                if site is None:
                    site = f"{name}:{frame.f_lineno}"
                project.append(name)
            elif top == "pyspark" and not project:
                # Keep overwriting: the last one seen, walking outwards, is the entry point.
                pyspark_call = f"{module.rsplit('.', 1)[-1]}.{_qualname(frame)}"
            frame = frame.f_back
        self.sites[site or "<outside>"] += 1
        self.functions[site.rsplit(":", 1)[0] if site else "<outside>"] += 1
        self.pyspark_calls[pyspark_call or "<py4j direct>"] += 1
        self.chains[" > ".join(reversed(project)) or "<outside>"] += 1

    def per(self, units: float) -> float:
        """``total`` divided by ``units`` (rules, say)."""
        return self.total / units


def _qualname(frame: Any) -> str:
    code = frame.f_code
    return getattr(code, "co_qualname", code.co_name)


_lock = threading.Lock()
_active: list[Py4JCalls] = []
_originals: dict[type, Callable[..., Any]] = {}


def _connection_classes() -> list[type]:
    classes = []
    from py4j.java_gateway import GatewayConnection

    classes.append(GatewayConnection)
    try:
        from py4j.clientserver import ClientServerConnection
    except ImportError:  # a py4j without the pinned-thread mode
        pass
    else:
        classes.append(ClientServerConnection)
    return classes


def _install() -> None:
    for cls in _connection_classes():
        original = cls.send_command
        _originals[cls] = original

        def send_command(self: Any, command: str, *args: Any, __original: Callable[..., Any] = original, **kwargs: Any):
            for counter in list(_active):
                counter._record(command)
            return __original(self, command, *args, **kwargs)

        cls.send_command = send_command


def _uninstall() -> None:
    for cls, original in _originals.items():
        cls.send_command = original
    _originals.clear()


@contextlib.contextmanager
def count_py4j_calls(*, trace: bool = False) -> Iterator[Py4JCalls]:
    """Count the Py4J commands sent while the block runs.

    Args:
        trace: also attribute every command to the project function and the pyspark call it
            came from (walks the stack per command: a few microseconds each, so leave it off
            when timing).
    """
    calls = Py4JCalls(trace=trace)
    with _lock:
        if not _active:
            _install()
        _active.append(calls)
    try:
        yield calls
    finally:
        with _lock:
            _active.remove(calls)
            if not _active:
                _uninstall()
