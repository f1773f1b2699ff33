"""What the two HTML pages share: escaped and cut text, times in UTC, the page's head and style,
the severity badge, and the trend sparkline.

Standard library only, like the pages (:mod:`cola_core.report.pages`, one run's report, and
:mod:`cola_core.report.index_page`, a history's index): no template engine, no script, no
external resource. Every value that comes from the data or the rules goes through
:func:`escape_html` or :func:`clip_html`, so that both pages escape and cut it alike; kept
apart so that neither page imports the other.
"""

from __future__ import annotations

import datetime as dt
import html
import math
import re
import time
from collections.abc import Sequence
from typing import Any

from cola_core.common.formatting import format_number

__all__ = [
    "SEVERITY_COLOURS",
    "TEXT_BYTES",
    "TIP_BYTES",
    "TrendPoint",
    "clip_html",
    "escape_html",
    "page_head",
    "severity_badge",
    "shown_time",
    "sparkline",
]

# One data interval of a rule (its latest attempt): the interval's data date, what it measured
# (None for a rule that measures no number), and what it concluded.
TrendPoint = tuple[Any, float | None, str]

SEVERITY_COLOURS = {"pass": "#1a7f37", "warn": "#b35900", "fail": "#cf222e"}
# A page's size is counted as it is served, in UTF-8 bytes of the escaped text: a "€" is three
# bytes and a '"' six (&quot;). The bytes of one name, code, dimension or threshold, and of the
# dataset, the pipeline, an Airflow id or the title: a longer one is cut (the results file keeps
# it whole). A message has its own, larger cut (cola_core.report.pages.MESSAGE_BYTES).
TEXT_BYTES = 160
# The bytes of each part of a sparkline point's tooltip (its time, value and severity): any
# double's digits fit (24 characters at most), a hand-built 10**400 is cut. A page has a
# thousand of them (50 rules, 20 runs), so they are kept well below TEXT_BYTES.
TIP_BYTES = 32
# Lone surrogates (from a JSON "\ud800" escape, say) have no UTF-8 form; the page shows U+FFFD.
_SURROGATE = re.compile(r"[\ud800-\udfff]")

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1f2328}
h1{font-size:1.4em;margin:0 0 .3em}h2{font-size:1.1em;margin:1.2em 0 .4em}
table{border-collapse:collapse;margin:.3em 0}th,td{border:1px solid #d0d7de;padding:.25em .5em;
text-align:left;vertical-align:top}th{background:#f6f8fa}td.num{text-align:right}
.sev{color:#fff;font-weight:600;border-radius:3px;padding:0 .4em;white-space:nowrap}
.pass{background:#1a7f37}.warn{background:#b35900}.fail{background:#cf222e}
dl{display:grid;grid-template-columns:max-content auto;gap:.1em 1em;margin:0}dt{color:#59636e}dd{margin:0}
code{font-family:ui-monospace,monospace;word-break:break-all}details{margin:.2em 0}
table.samples{font-size:.9em}td.limits{white-space:nowrap}
"""


def escape_html(value: Any) -> str:
    """``value`` as escaped text; nothing for None."""
    return "" if value is None else html.escape(_encodable(str(value)), quote=True)


def clip_html(value: Any, limit: int, *, mark: bool = False) -> str:
    """``value`` as escaped text of at most ``limit`` UTF-8 bytes (nothing for None): a longer
    one is cut at a character and ends with an ellipsis, and with ``mark`` also with how long
    it was."""
    if value is None:
        return ""
    text = _encodable(str(value))
    escaped = html.escape(text, quote=True)
    if len(escaped) <= limit // 4 or len(escaped.encode()) <= limit:  # 4 bytes a character at most
        return escaped
    ending = "…" + (f" [cut: {len(text):,} characters]" if mark else "")
    room = limit - len(ending.encode())
    kept = []
    for character in text[:room]:  # a character takes a byte at least
        cost = len(html.escape(character, quote=True).encode())
        if cost > room:
            break
        room -= cost
        kept.append(character)
    return html.escape("".join(kept), quote=True) + ending


def _encodable(text: str) -> str:
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def shown_time(value: Any) -> str | None:
    """A time as the pages show it: in UTC, with its zone, so that a run's report, its trend's
    tooltips and the index agree on any host. A naive datetime is local time, as Python (and
    Spark's ``collect()``) have it. At the calendar's edges, where UTC has no such time or
    Python cannot convert it (a naive ``datetime.min``, even on a UTC host), it is shown as
    given, with its zone: a naive one with the local zone's standard offset (``+00:00`` on a
    UTC host)."""
    if isinstance(value, dt.datetime):
        shown: dt.datetime = value
        try:
            shown = value.astimezone(dt.timezone.utc)
        except (OverflowError, ValueError, OSError):
            if value.utcoffset() is None:
                shown = value.replace(tzinfo=dt.timezone(dt.timedelta(seconds=-time.timezone)))
        return shown.isoformat(sep=" ", timespec="seconds")
    return None if value is None else str(value)


def severity_badge(severity: Any) -> str:
    name = str(severity)
    css = name if name in SEVERITY_COLOURS else ""
    return f'<span class="sev {css}">{escape_html(name.upper())}</span>'


def page_head(title: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{clip_html(title, TEXT_BYTES)}</title><style>{_CSS}</style></head><body>"
    )


def sparkline(points: Sequence[TrendPoint], *, width: int = 120, height: int = 24) -> str:
    """Runs oldest first as an inline SVG: one circle per run, coloured by its severity, at
    the height of its metric, joined by a line through the measured ones. A run that measured
    no number, or one that is not finite (``inf``, ``nan``: it has no place on a scale), sits on
    the mid line outside the line; its tooltip says ``-``, ``inf`` or ``nan`` (an int beyond a
    float's range is drawn as ``inf`` and its tooltip gives its first digits; a value that is no number
    sits on the mid line, its text in the tooltip). Times are shown in UTC. Each part of a
    tooltip (time, value, severity) is cut at :data:`TIP_BYTES`. Empty when there are no runs."""
    if not points:
        return ""
    measured = [_scaled(value) for _, value, _ in points]
    finite = [value for value in measured if value is not None and math.isfinite(value)]
    low, high = (min(finite), max(finite)) if finite else (0.0, 0.0)
    pad = 4.0
    step = (width - 2 * pad) / max(len(points) - 1, 1)

    def y(value: float | None) -> float:
        if value is None or not math.isfinite(value) or high == low:
            return height / 2
        # Halved first: the span of two floats near their range's ends (-1e308 and 1e308) is
        # past it; halving is exact, so the places are the same.
        return pad + (high / 2 - value / 2) / (high / 2 - low / 2) * (height - 2 * pad)

    circles = []
    line = []
    for index, ((when, metric, severity), value) in enumerate(zip(points, measured, strict=True)):
        cx, cy = pad + index * step, y(value)
        if value is not None and math.isfinite(value):
            line.append(f"{cx:.1f},{cy:.1f}")
        shown = "-" if metric is None else format_number(metric)
        colour = SEVERITY_COLOURS.get(severity, "#59636e") if isinstance(severity, str) else "#59636e"
        circles.append(
            f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="2.5" fill="{colour}">'
            f"<title>{clip_html(shown_time(when), TIP_BYTES)}: {clip_html(shown, TIP_BYTES)} "
            f"({clip_html(severity, TIP_BYTES)})</title>"
            "</circle>"
        )
    polyline = (
        f'<polyline points="{" ".join(line)}" fill="none" stroke="#8c959f" stroke-width="1"/>' if len(line) > 1 else ""
    )
    return (
        f'<svg width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img">{polyline}{"".join(circles)}</svg>'
    )


def _scaled(value: Any) -> float | None:
    """A metric's place on a sparkline's scale: None for no metric, NaN (off the scale) for a
    value that is no number, and an infinity for an int beyond a float's range (10**400)."""
    if value is None:
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf
    except (TypeError, ValueError):
        return math.nan
