"""What a streaming split publishes and answers: each batch's record, and a finite run's summary.

A :class:`BatchRecord` is what the ledger (``cola_core.job.ledger``) keeps of each published
micro-batch, and what a run reports; a :class:`StreamSummary` sums up the batches of a finite
run (``availableNow``, ``once``), and combines their results into one per rule.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from cola_core.checks.base import BaseCheck
from cola_core.language.result import SEVERITIES, CheckResult, Severity, worst_severity

__all__ = ["BATCH_LINES", "NOTHING_NEW", "BatchRecord", "StreamSummary", "block_digest"]

# The batch lines a summary lists (the latest ones): an XCom stays small however many batches
# a run had; the history holds every batch's results.
BATCH_LINES = 100
# Each rule's message when a finite run found no new file, so ran no batch.
NOTHING_NEW = "no batch ran: no new rows since the last run, so nothing was judged"


@dataclass(frozen=True)
class BatchRecord:
    """One micro-batch as it was published.

    Attributes:
        batch_id: the streaming query's batch id.
        valid_count: rows published to the valid output.
        invalid_count: rows published to the invalid output.
        results: the block's results on the batch, one per rule.
        run_key: the run that published it (``split_stream``'s ``run_key``), if it had one.
        block: the digest of the block of rules that judged it (:func:`block_digest`); None
            in a record written before digests were kept.
    """

    batch_id: int
    valid_count: int
    invalid_count: int
    results: list[CheckResult]
    run_key: str | None = None
    block: str | None = None

    @property
    def severity(self) -> str:
        return worst_severity(self.results)

    def judged_by(self, checks: Sequence[BaseCheck]) -> bool:
        """Whether this block of rules judged the batch, so that its results are the block's,
        rule by rule (an older record, without a digest, by its results' types, codes and ids)."""
        if self.block is not None:
            return self.block == block_digest(checks)
        return [(r.rule_type, r.code, r.rule_id) for r in self.results] == [
            (c.rule_type, c.code, c.rule_id) for c in checks
        ]

    def to_dict(self) -> dict[str, Any]:
        data = {"batch_id": self.batch_id, "valid_count": self.valid_count, "invalid_count": self.invalid_count,
                "results": [result.to_dict() for result in self.results]}
        optional = {"run_key": self.run_key, "block": self.block}
        return {**data, **{key: value for key, value in optional.items() if value is not None}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BatchRecord:
        return cls(int(data["batch_id"]), int(data["valid_count"]), int(data["invalid_count"]),
                   [CheckResult.from_dict(item) for item in data["results"]], data.get("run_key"), data.get("block"))


def block_digest(checks: Sequence[BaseCheck]) -> str:
    """What identifies a block of rules as a judge: each rule, in order, by its type, id,
    code, name, severity, scope, tolerance and every parameter (thresholds included), hashed.
    A rules file changed in any of these judges batches differently."""
    rules = [
        {"type": check.rule_type, "id": check.rule_id, "code": check.code, "name": check.name,
         "severity": check.severity_level, "where": check.where, "tolerance": check.tolerance,
         "params": dict(check.params)}
        for check in checks
    ]
    text = json.dumps(rules, sort_keys=True, default=repr, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class StreamSummary:
    """What a finite streaming split (``availableNow`` or ``once``) published, batch by batch.

    Attributes:
        batches: the batches run, in order.
        run_id: the streaming query's run id, the job group of its batches' Spark jobs.
    """

    batches: list[BatchRecord] = field(default_factory=list)
    run_id: str | None = None

    @property
    def valid_count(self) -> int:
        return sum(batch.valid_count for batch in self.batches)

    @property
    def invalid_count(self) -> int:
        return sum(batch.invalid_count for batch in self.batches)

    @property
    def severity(self) -> str:
        return worst_severity([result for batch in self.batches for result in batch.results])

    def to_dict(self) -> dict[str, Any]:
        """Counts, the worst severity and the batches (:meth:`batch_lines`)."""
        return {
            "severity": self.severity,
            "passed": self.severity != "fail",
            "valid_count": self.valid_count,
            "invalid_count": self.invalid_count,
            **self.batch_lines(),
        }

    def batch_lines(self) -> dict[str, Any]:
        """``{"batch_count", "batches"}``: how many batches ran, and one line per batch (its id,
        worst severity and counts) for the last :data:`BATCH_LINES` of them."""
        return {
            "batch_count": len(self.batches),
            "batches": [
                {"batch_id": batch.batch_id, "severity": batch.severity, "valid_count": batch.valid_count,
                 "invalid_count": batch.invalid_count}
                for batch in self.batches[-BATCH_LINES:]
            ],
        }

    def combined_results(self, checks: Sequence[BaseCheck]) -> list[CheckResult]:
        """One result per rule for the whole run, so that a task branches, logs and alerts on
        a stream as on a batch split: each rule's worst result over the batches (the latest
        batch among equals), its message saying which batch it is. With no batch (no new
        file), each rule passes, saying that nothing was judged.
        """
        if not self.batches:
            return [check.finish(CheckResult(check.rule_type, True, NOTHING_NEW, rows_checked=0)) for check in checks]
        count = len(self.batches)
        combined = []
        for index in range(len(checks)):
            batch = max(self.batches, key=lambda batch: (_rank(batch.results[index]), batch.batch_id))
            result = batch.results[index]
            where = f"in batch {batch.batch_id}" + (f" (the worst of {count} batches)" if count > 1 else "")
            combined.append(dataclasses.replace(result, message=f"{where}: {result.message}"))
        return combined


def _rank(result: CheckResult) -> int:
    return SEVERITIES.index(cast(Severity, result.severity))  # set on every result (its __post_init__)
