"""A kept import path: the HTML pages, defined in :mod:`cola_core.report.pages`."""

from __future__ import annotations

from cola_core.report.pages import (
    MESSAGE_BYTES,
    PAGE_BYTES,
    SAMPLE_BUDGET,
    SAMPLE_CELL_CHARS,
    SAMPLE_ROWS,
    SEVERITY_COLOURS,
    TEXT_BYTES,
    THRESHOLDS_SHOWN,
    TIP_BYTES,
    TrendPoint,
    checked_page_path,
    render_html,
    render_index,
    replace_file,
    sparkline,
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
