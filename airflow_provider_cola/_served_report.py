"""Reading a recorded HTML report for the plugin's ``/cola/report``: only the file that was
checked, and only while its bytes are the ones the task recorded.

A report is a file a task wrote below ``[cola] reports_folder``; between the check and the
read, whoever can write there could put a symlink or another file in its place, so the file
opened is compared with the one checked (its real path where the system tells it, its device
and inode) and its bytes with the recorded SHA-256. Every refusal is a 404 that says why.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
from pathlib import Path

from fastapi import HTTPException

__all__ = ["MAX_REPORT_BYTES", "opened_path", "read_page", "servable"]

# The largest report served: a page is read whole into memory to be hashed, and Cola's own pages
# stay near cola_core.report.pages.PAGE_BYTES (300 kB), so a bigger file is not one of them.
MAX_REPORT_BYTES = 10_000_000


def servable(recorded: str, folder: Path) -> tuple[Path, os.stat_result]:
    """The recorded page and its ``lstat``, when it is a regular ``.html`` file below ``folder``
    whose path goes through no symlink: a symlink a task left there could name any file the
    API server reads.

    Raises:
        HTTPException: 404, saying which of those it is not.
    """
    written = Path(os.path.abspath(recorded))
    if not written.is_relative_to(folder):
        raise HTTPException(status_code=404, detail="the recorded Cola report is not below [cola] reports_folder")
    try:
        resolved = written.resolve(strict=True)
    except (OSError, RuntimeError, ValueError) as error:
        raise HTTPException(status_code=404, detail="the recorded Cola report does not exist") from error
    if resolved != written:
        raise HTTPException(status_code=404, detail="the recorded Cola report's path goes through a symlink")
    checked = resolved.lstat()
    if not stat.S_ISREG(checked.st_mode):
        raise HTTPException(status_code=404, detail="the recorded Cola report is not a regular file")
    return resolved, checked


def opened_path(descriptor: int) -> str | None:
    """The real path of the file ``descriptor`` is open on, where the system tells it (Linux's
    ``/proc/self/fd``); None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    link = f"/proc/self/fd/{descriptor}"
    return os.path.realpath(link) if os.path.islink(link) else None


def read_page(path: Path, checked: os.stat_result, sha256: str) -> bytes:
    """The page's bytes, when the file opened is the one checked and they hash to ``sha256``.

    ``O_NOFOLLOW`` refuses a symlink put in the page's place since it was checked, but not one
    put in place of a folder above it: the open file is then compared with the checked path
    (on Linux, its real path) and with the checked file (device and inode).

    Raises:
        HTTPException: 404, it is no longer that regular file, it has another hard link (it can
            then be a file from anywhere on the file system), it is larger than
            :data:`MAX_REPORT_BYTES`, or its bytes are not the ones the task recorded.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as error:
        raise HTTPException(status_code=404, detail="the recorded Cola report cannot be read") from error
    with os.fdopen(descriptor, "rb") as page:
        opened = os.fstat(page.fileno())
        if not stat.S_ISREG(opened.st_mode):
            raise HTTPException(status_code=404, detail="the recorded Cola report is not a regular file")
        real = opened_path(page.fileno())
        if (opened.st_dev, opened.st_ino) != (checked.st_dev, checked.st_ino) or real not in (None, str(path)):
            raise HTTPException(status_code=404, detail="the recorded Cola report was replaced while it was read")
        if opened.st_nlink > 1:
            raise HTTPException(
                status_code=404, detail="the recorded Cola report has more than one hard link, so it is not served"
            )
        if opened.st_size > MAX_REPORT_BYTES:
            raise HTTPException(
                status_code=404,
                detail=f"the recorded Cola report is larger than {MAX_REPORT_BYTES:,} bytes, the most served",
            )
        # One byte more than the cap: a file grown since fstat is refused, not read on.
        content = page.read(MAX_REPORT_BYTES + 1)
    if len(content) > MAX_REPORT_BYTES or hashlib.sha256(content).hexdigest() != sha256:
        raise HTTPException(
            status_code=404, detail="the report at that path has changed since this task instance wrote it"
        )
    return content
