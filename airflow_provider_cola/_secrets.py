"""Which settings name a secret, and registering their values with Airflow's secrets masker.

Shared by the operators (Spark conf, environment variables, reader options) and the
``@cola_check`` decorator (Spark conf), so both mask the same keys.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from itertools import pairwise
from typing import Any

from airflow.sdk.log import mask_secret

__all__ = ["mask_sensitive_settings", "names_a_secret", "secrets_as_text", "sensitive_settings"]

# A key names a secret when, read case-insensitively, one of its segments contains one of
# _SECRET_WORDS, or is one of _SECRET_SEGMENTS, or two segments in a row read "connection
# string". The segments are the parts between punctuation, each also split at camelCase
# (so "sasToken" gives "sastoken", "sas" and "token", and "kEy" gives "key"). Examples:
# spark.myapp.credential, spark.hadoop.fs.s3a.secret.key, fs.s3a.access.key, apiKey,
# es.net.http.header.Authorization, AZURE_STORAGE_CONNECTION_STRING, connectionString. Short
# words count only as whole segments, so "monkey", "keyspace" or "author" do not.
_SECRET_WORDS = (
    "accesskey", "apikey", "authorization", "bearer", "connectionstring", "cookie", "credential", "hmac", "keyfile",
    "passphrase", "passwd", "password", "private", "secret", "signature", "token",
)
_SECRET_SEGMENTS = frozenset({"key", "pwd", "pw", "pass", "auth", "keytab", "sas", "jwt", "oauth", "creds"})
_SECRET_PAIRS = frozenset({("connection", "string")})
_PART = re.compile(r"[A-Za-z0-9]+")
_CAMEL_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def _segments(key: Any) -> tuple[list[str], list[str]]:
    """The lower-cased parts of ``key`` between punctuation, and its words (parts split at camelCase)."""
    parts = _PART.findall(str(key))
    words = [word.lower() for part in parts for word in _CAMEL_WORD.findall(part)]
    return [part.lower() for part in parts], words


def names_a_secret(key: Any) -> bool:
    """Whether a conf, environment or option key names a secret (the rules are above ``_SECRET_WORDS``)."""
    parts, words = _segments(key)
    if any(segment in _SECRET_SEGMENTS or any(word in segment for word in _SECRET_WORDS) for segment in parts + words):
        return True
    return any(pair in _SECRET_PAIRS for pair in pairwise(words))


def _is_secret_value(value: Any) -> bool:
    # A switch (spark.acls.authorization.enabled: false) is no secret, and masking "false"
    # would hide that word in every log line.
    if value is None or isinstance(value, bool):
        return False
    return str(value).strip().lower() not in ("", "true", "false")


def sensitive_settings(*settings: Mapping[str, Any] | None) -> dict[str, str]:
    """The ``key: value`` pairs of ``settings`` whose key names a secret (empty and boolean values left out)."""
    return {
        str(key): str(value)
        for mapping in settings
        for key, value in (mapping or {}).items()
        if names_a_secret(key) and _is_secret_value(value)
    }


def secrets_as_text(settings: Mapping[str, Any] | None) -> Any:
    """``settings`` with every secret-named number turned into its text (a new dict; else as given).

    The masker redacts text only: ``{"spark.myapp.key": 987654321}`` is registered as
    ``"987654321"`` but an int in the Rendered Template view would show in clear. Spark reads
    every conf and option value as text, so ``str(value)`` is what it gets either way.
    """
    if not isinstance(settings, Mapping) or not any(
        names_a_secret(key) and _is_number(value) for key, value in settings.items()
    ):
        return settings
    return {key: str(value) if names_a_secret(key) and _is_number(value) else value for key, value in settings.items()}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def mask_sensitive_settings(*settings: Mapping[str, Any] | None) -> dict[str, str]:
    """Register with Airflow's secrets masker every value whose key names a secret.

    Spark conf such as ``spark.hadoop.fs.s3a.secret.key`` and reader options such as
    ``password`` may be echoed by Spark in its log, and are shown in the Rendered Template
    view; masked, they show as ``***`` in both.

    Returns:
        the pairs that were registered, for the operators' ``ColaSubmitHook`` ``secrets``.
    """
    found = sensitive_settings(*settings)
    for value in found.values():
        mask_secret(value)
    return found
