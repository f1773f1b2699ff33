"""``cola profile`` and ``cola suggest``: a source's profile, and the rules suggested from it.

Both print the profile table. ``profile --out FILE`` (and ``suggest --profile-out FILE``) also
writes the profile as JSON; ``suggest`` prints the suggested rules as a YAML rules file, or
writes them to ``--out`` (JSON for a ``.json`` file, YAML with a comment per rule otherwise).
With ``--history`` and ``--dataset``, ``suggest`` learns thresholds from earlier runs
(``Cola.suggest``'s ``history``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from cola_core.cli.args import output_argument, source_config
from cola_core.cola import Cola
from cola_core.common.values import utc_datetime
from cola_core.errors import ColaError, ColaOutputError
from cola_core.job.spec import checked_moment
from cola_core.ruleset.suggestions import STRICTNESS, suggestions_text
from cola_core.storage.readwrite import read_source
from cola_core.storage.session import spark_session, stop_session
from cola_core.storage.specs import history_spec, parse_source, without_file_scheme

__all__ = ["run_profile_command"]


def run_profile_command(args: argparse.Namespace) -> None:
    """Carry out ``cola profile`` or ``cola suggest``; raises ``ColaError`` for what it refuses,
    every argument checked before a JVM starts."""
    source = parse_source(source_config(args))
    if args.command == "suggest" and args.strictness not in STRICTNESS:
        raise ColaError(f"--strictness must be exact or margin, got {args.strictness!r}")
    out = _out_path(args.out, "--out") if args.out else None
    profile_out = out if args.command == "profile" else _profile_out(args)
    learn = _learning(args) if args.command == "suggest" else {}
    if args.command == "suggest" and args.now is not None:
        learn["now"] = utc_datetime(checked_moment(args.now, "--now"))
    cola = Cola()
    spark, started_here = spark_session(args.remote or args.master, tuple(args.conf))
    try:
        with cola.sql_scope():
            df = read_source(spark, source)
        profile = cola.profile(df, args.columns, args.sample)
        print(profile, flush=True)
        if profile_out is not None:
            _write(profile_out, json.dumps(profile.to_dict(), indent=2, allow_nan=False) + "\n")
        if args.command == "profile":
            return
        rules = cola.suggest(profile, strictness=args.strictness, spark=spark, **learn)
        text = suggestions_text(rules, as_json=out is not None and out.suffix.lower() == ".json")
        if out is None:
            print(f"\n{text}", end="", flush=True)
        else:
            _write(out, text)
            print(f"cola: wrote {len(rules)} suggested rules to {out}", file=sys.stderr, flush=True)
        for why in rules.skipped:  # the YAML has them as comments too
            print(f"cola: not suggested: {' '.join(why.split())}", file=sys.stderr, flush=True)
    finally:
        if started_here:
            stop_session(spark)


def _profile_out(args: argparse.Namespace) -> Path | None:
    return _out_path(args.profile_out, "--profile-out") if args.profile_out else None


def _learning(args: argparse.Namespace) -> dict[str, Any]:
    """``Cola.suggest``'s history arguments, from ``--history``, ``--dataset`` and ``--data-date``,
    checked before a JVM starts."""
    data_date = None if args.data_date is None else utc_datetime(checked_moment(args.data_date, "--data-date"))
    dated = {} if data_date is None else {"data_date": data_date}  # a freshness age is taken at its end
    if args.history is None:
        if args.dataset:
            raise ColaError("--dataset says which earlier runs to learn from; give --history too")
        return dated
    if not args.dataset:
        raise ColaError("--history needs --dataset, the dataset whose earlier runs to learn from")
    return {"history": output_argument(args.history, "--history", history_spec), "dataset": args.dataset, **dated}


def _out_path(text: str, flag: str) -> Path:
    local = without_file_scheme(text)
    if "://" in local:
        raise ColaOutputError(f"{flag} must be a local file (a path or a file: URI), got {text!r}")
    path = Path(local)
    if not path.parent.is_dir():
        raise ColaOutputError(f"{flag}: the folder {str(path.parent)!r} does not exist")
    if path.is_dir():
        raise ColaOutputError(f"{flag}: {str(path)!r} is a folder, not a file")
    return path


def _write(path: Path, text: str) -> None:
    # Written whole under another name, then renamed: a reader never sees half a file.
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)
