"""What a run tells the outside world: the results summary, the report table and the HTML pages.

The page functions are re-exported here (``from cola_core.report import render_html``).
"""

from __future__ import annotations

from cola_core.report.index_page import render_index
from cola_core.report.pages import render_html, write_page

__all__ = [
    "render_html",
    "render_index",
    "write_page",
]
