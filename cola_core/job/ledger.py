"""The ledger of a streaming split: what each micro-batch published, in the query's checkpoint folder.

``cola_core.job.stream`` publishes each batch exactly once by keeping, under
``<checkpoint>/_cola``:

- ``done/<batch id>.json``: the batch published (its :class:`BatchRecord`: counts, results,
  the run that published it and the digest of the block that judged it:
  ``cola_core.job.stream_records``);
- ``pending/<batch id>.json``: the files an attempt at the batch is moving in, listed before
  the first move, so that a restart deletes them;
- ``staging/<batch id>/``: the batch's rows, split, before they move;
- ``runs/<hash of the run key>/<batch id>.json``: one file per batch a run (``split_stream``'s
  ``run_key``) published, so that a rerun reports them again.

Every record is written beside its place, then renamed in (``Files.write_text``), and a run's
list only ever gains a file: a record is never rewritten, so a kill at any point leaves each
one whole, as it was or as it was to be. (A run's list was once one file, rewritten for each
batch by deleting it before the new one was renamed in: a kill between the two lost the run's
earlier batches. Such a file is still read.)
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from cola_core.common.spark_errors import first_line
from cola_core.errors import ColaOutputError
from cola_core.job.stream_records import BatchRecord
from cola_core.storage.publish import Files

__all__ = ["Ledger"]

# A batch's file in a run's folder.
_RUN_RECORD = re.compile(r"[0-9]+\.json")
# What to do about a ledger file that cannot be read, by the kind of record it is.
_REPAIR = {
    "done": (
        "it records that batch {batch} was published, with its counts and results. Restore it from a copy of "
        "the checkpoint; deleting it makes the next run publish the batch's rows again (remove them from the "
        "outputs first)"
    ),
    "pending": (
        "it lists the files an interrupted attempt at batch {batch} moved into the outputs. Delete those files "
        "(the batch's rows) from the outputs, then delete this file, and run again"
    ),
    "runs": (
        "it lists the batches a run published. Delete it, and run again: the rerun then reports only the batches "
        "it splits itself"
    ),
}


@dataclass(frozen=True)
class Ledger:
    """The ledger folder ``root`` (``<checkpoint>/_cola``), read and written through ``fs``."""

    fs: Files
    root: str

    def record(self, kind: str, batch_id: int) -> str:
        return self.fs.child(self.fs.child(self.root, kind), f"{batch_id}.json")

    def staging(self, batch_id: int) -> str:
        return self.fs.child(self.fs.child(self.root, "staging"), str(batch_id))

    def done(self, batch_id: int) -> BatchRecord | None:
        """The batch's record, if it was published.

        Raises:
            ColaOutputError: the record cannot be read (a truncated file): it names the file,
                and what to do.
        """
        location = self.record("done", batch_id)
        if not self.fs.exists(location):
            return None
        data = self._read(location, "done", batch_id)
        try:
            return BatchRecord.from_dict(data)
        except Exception as error:
            raise self._unreadable(location, "done", batch_id, f"it is no batch record ({error})") from error

    def write(self, kind: str, batch_id: int, data: Any) -> None:
        self.fs.write_text(self.record(kind, batch_id), json.dumps(data))

    def _run_folder(self, run_key: str) -> str:
        return self.fs.child(self.fs.child(self.root, "runs"), hashlib.sha256(run_key.encode()).hexdigest()[:32])

    def batches_of(self, run_key: str) -> list[int]:
        """The ids of the batches the run with this key published, in order."""
        folder, ids = self._run_folder(run_key), set[int]()
        if self.fs.exists(folder):
            # Only whole records: a file being written (and left so by a kill) has another name.
            ids.update(int(name[:-5]) for name in self.fs.data_files(folder) if _RUN_RECORD.fullmatch(name))
        single = f"{folder}.json"  # the one file an earlier Cola kept per run
        if self.fs.exists(single):
            ids.update(int(i) for i in self._read(single, "runs", None))
        return sorted(ids)

    def add_to_run(self, run_key: str, batch_id: int) -> None:
        """List the batch as the run's: a file of its own, written once (never rewritten)."""
        location = self.fs.child(self._run_folder(run_key), f"{batch_id}.json")
        if not self.fs.exists(location):
            self.fs.write_text(location, json.dumps(batch_id))

    def undo_pending(self, batch_id: int) -> None:
        """Delete what an interrupted attempt at the batch may have moved in."""
        location = self.record("pending", batch_id)
        if not self.fs.exists(location):
            return
        for moved in self._read(location, "pending", batch_id):
            if self.fs.exists(moved):
                self.fs.delete(moved)
        self.fs.delete(location)

    def _read(self, location: str, kind: str, batch_id: int | None) -> Any:
        try:
            text = self.fs.read_text(location)
        except Exception as error:  # a file its checksum refuses (cut where it lay), a storage error
            raise self._unreadable(location, kind, batch_id, first_line(error)) from error
        try:
            return json.loads(text)
        except ValueError as error:  # a truncated or garbled file
            raise self._unreadable(location, kind, batch_id, f"it is not complete JSON ({error})") from error

    def _unreadable(self, location: str, kind: str, batch_id: int | None, why: str) -> ColaOutputError:
        return ColaOutputError(
            f"the streaming split's ledger file {location} cannot be read: {why}; "
            + _REPAIR[kind].format(batch=batch_id)
        )
