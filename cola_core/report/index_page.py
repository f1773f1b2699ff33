"""The index of a history store as a web page: one row per dataset and rule, worst first.

:func:`render_index` draws the rows ``cola_core.history.summaries.index_rows`` reads (each rule's
latest severity and its trend), as one self-contained page like a run's report
(:mod:`cola_core.report.pages`), with the same escaping, times and sparklines
(:mod:`cola_core.report.page_parts`). Kept apart from the run's page: the two share no
section, and the index is what ``cola history html`` and the Airflow plugin draw without a run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cola_core.language.result import SEVERITIES
from cola_core.report.page_parts import TEXT_BYTES, clip_html, page_head, severity_badge, shown_time, sparkline

__all__ = ["render_index"]

# Where each severity sorts in the index: the worst first.
_WORST_FIRST: dict[str, int] = {severity: rank for rank, severity in enumerate(reversed(SEVERITIES))}


def render_index(rows: Sequence[Mapping[str, Any]], *, title: str = "Cola quality") -> str:
    """The index of a history store, as one self-contained HTML page.

    Args:
        rows: one per dataset and rule (``cola_core.history.summaries.index_rows``), each with
            ``dataset``, ``rule_id``, ``severity`` (the latest), ``code``, ``check_name``,
            ``data_date`` (its newest data interval; ``validated_at`` for a row without one),
            ``trend`` (its last intervals, oldest first) and ``current`` (whether the
            dataset's newest interval had the rule; a row without it is).
        title: the page's title.

    Returns:
        The page (a dataset, code, name, rule id or time cut at :data:`TEXT_BYTES`; times in
        UTC): the current rules worst first (fail, then warn, then pass; then by dataset
        and rule), then, in a table of their own, the rules their dataset's newest data interval did
        not have (since removed), in the same order. Their latest severity is an old one,
        which must not pass for today's.
    """
    ordered = sorted(rows, key=lambda row: (_rank(row["severity"]), str(row["dataset"]), str(row["rule_id"])))
    current = [row for row in ordered if row.get("current", True)]
    former = [row for row in ordered if not row.get("current", True)]
    parts = [page_head(title), f"<h1>{clip_html(title, TEXT_BYTES)}</h1>"]
    if former:
        parts.append(
            f"<p>{_rules(len(ordered))}: {len(current)} in their dataset's newest data interval, worst first, "
            f"then {len(former)} not in it</p>"
        )
    else:
        parts.append(f"<p>{_rules(len(ordered))}, worst first</p>")
    parts.append(_index_table(current))
    if former:
        parts.append("<h2>Rules not in their dataset's newest data interval</h2>")
        parts.append(
            f"<p>{_rules(len(former))} that ran before but not in their dataset's newest data interval (removed "
            "since, most likely), worst first; the severity is that of their own newest interval</p>"
        )
        parts.append(_index_table(former))
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _rank(severity: Any) -> int:
    """Where a severity sorts, worst first; one that is none of ours (or not even hashable,
    from a hand-built row) after them."""
    return _WORST_FIRST.get(severity, len(SEVERITIES)) if isinstance(severity, str) else len(SEVERITIES)


def _rules(count: int) -> str:
    return f"{count} rule{'' if count == 1 else 's'}"


def _index_table(rows: Sequence[Mapping[str, Any]]) -> str:
    lines = [
        "<tr>" + "".join(f"<td>{cell}</td>" for cell in (
            severity_badge(row["severity"]), clip_html(row["dataset"], TEXT_BYTES),
            f"<code>{clip_html(row.get('code'), TEXT_BYTES)}</code>", clip_html(row.get("check_name"), TEXT_BYTES),
            f"<code>{clip_html(row['rule_id'], TEXT_BYTES)}</code>",
            clip_html(shown_time(row.get("data_date") or row.get("validated_at")), TEXT_BYTES),
            sparkline(row.get("trend") or ()),
        )) + "</tr>"
        for row in rows
    ]
    names = ("severity", "dataset", "code", "name", "rule id", "data date", "trend")
    header = "".join(f"<th>{name}</th>" for name in names)
    return "\n".join([f"<table><thead><tr>{header}</tr></thead><tbody>", *lines, "</tbody></table>"])
