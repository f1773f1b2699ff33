"""A kept import path: the HTML pages, defined in :mod:`cola_core.report.pages` (a run's report
and how pages are written), :mod:`cola_core.report.index_page` (a history's index) and
:mod:`cola_core.report.page_parts` (the sparkline and the limits both pages share)."""

from __future__ import annotations

from cola_core.report.index_page import render_index
from cola_core.report.page_parts import SEVERITY_COLOURS, TEXT_BYTES, TIP_BYTES, TrendPoint, sparkline
from cola_core.report.pages import (
    MESSAGE_BYTES,
    PAGE_BYTES,
    SAMPLE_BUDGET,
    SAMPLE_CELL_CHARS,
    SAMPLE_ROWS,
    THRESHOLDS_SHOWN,
    checked_page_path,
    render_html,
    replace_file,
    write_page,
)

__all__ = [
    "MESSAGE_BYTES",
    "PAGE_BYTES",
    "SAMPLE_BUDGET",
    "SAMPLE_CELL_CHARS",
    "SAMPLE_ROWS",
    "SEVERITY_COLOURS",
    "TEXT_BYTES",
    "THRESHOLDS_SHOWN",
    "TIP_BYTES",
    "TrendPoint",
    "checked_page_path",
    "render_html",
    "render_index",
    "replace_file",
    "sparkline",
    "write_page",
]
