"""Which keys name a secret, and the values registered with the masker for them."""

from __future__ import annotations

import pytest

from airflow_provider_cola._secrets import names_a_secret, secrets_as_text, sensitive_settings

pytestmark = pytest.mark.airflow


# key -> whether it names a secret (its value masked).
SECRET_KEYS = {
    # Segments containing a long word.
    "spark.myapp.credential": True,
    "spark.hadoop.fs.s3a.secret.key": True,
    "spark.hadoop.fs.s3a.access.key": True,
    "spark.hadoop.fs.s3a.accesskey": True,
    "password": True,
    "PASSWORD": True,
    "db_passwd": True,
    "apiKey": True,
    "api_key": True,
    "X-API-KEY": True,
    "spark.authenticate.secret": True,
    "privateKey": True,
    "oauth.token": True,
    "spark.ssl.keyStorePassword": True,
    "spark.kubernetes.driver.secretKeyRef.TOKEN": True,
    "sasToken": True,
    "bearer": True,
    "spark.myapp.bearerToken": True,
    "cookie": True,
    "spark.myapp.sessionCookie": True,
    "hmac": True,
    "HMACKEY": True,
    "signature": True,
    "spark.myapp.requestSignature": True,
    "es.net.http.header.Authorization": True,
    "spark.myapp.proxyAuthorization": True,
    "spark.myapp.keyfile": True,
    "spark.hadoop.fs.gs.sslKeyfile": True,
    # Whole segments.
    "pwd": True,
    "pw": True,
    "DB_PW": True,
    "auth": True,
    "spark.myapp.auth.header": True,
    "sas": True,
    "jwt": True,
    "spark.myapp.keytab": True,
    "spark.myapp.creds": True,
    "spark.myapp.awsCreds": True,
    "GOOGLE_CREDS": True,
    # Case does not matter, even inside a segment.
    "spark.myapp.kEy": True,
    "spark.myapp.KEY": True,
    "spark.myapp.PassWord": True,
    "spark.myapp.SiGnAtUrE": True,
    # "connection" followed by "string", whatever separates them.
    "connectionString": True,
    "ConnectionString": True,
    "AZURE_STORAGE_CONNECTION_STRING": True,
    "spark.myapp.connection.string": True,
    "spark.myapp.connection-string": True,
    "spark.myapp.connectionstring": True,
    "spark.myapp.connectionStringFormat": True,
    # Not secrets.
    "spark.ui.enabled": False,
    "spark.sql.shuffle.partitions": False,
    "header": False,
    "spark.author": False,
    "monkey": False,
    "keyspace": False,
    "keyspace.name": False,
    "spark.cassandra.keyspace": False,
    "spark.authenticate": False,
    "inferSchema": False,
    "spark.executor.memory": False,
    "spark.myapp.connection.timeout": False,
    "spark.myapp.string": False,
    "spark.myapp.string.connection": False,
    "spark.myapp.connection.pool.string": False,
    "spark.myapp.power": False,
    "spark.myapp.passes": False,
    "spark.myapp.credscore": False,
    "spark.myapp.file": False,
    "": False,
}


@pytest.mark.parametrize(("key", "masked"), list(SECRET_KEYS.items()))
def test_which_keys_name_a_secret(key, masked):
    assert names_a_secret(key) is masked


def test_keys_that_are_not_strings_are_read_as_text():
    assert names_a_secret(None) is False
    assert names_a_secret(42) is False


def test_sensitive_settings_keep_the_new_secret_keys():
    conf = {
        "spark.myapp.connection.string": "Server=db;Password=x1",
        "spark.executor.memory": "2g",
        "spark.myapp.kEy": "k-123",
    }
    env = {"AZURE_STORAGE_CONNECTION_STRING": "DefaultEndpointsProtocol=https", "HOME": "/home/u"}
    options = {"sasToken": "sv=2024", "keyspace": "ks", "bearer": "b-1"}
    assert sensitive_settings(conf, env, options) == {
        "spark.myapp.connection.string": "Server=db;Password=x1",
        "spark.myapp.kEy": "k-123",
        "AZURE_STORAGE_CONNECTION_STRING": "DefaultEndpointsProtocol=https",
        "sasToken": "sv=2024",
        "bearer": "b-1",
    }


def test_sensitive_settings_skip_empty_values():
    assert sensitive_settings({"password": "", "token": None, "spark.x.credential": 42}, None, {"header": "true"}) == {
        "spark.x.credential": "42"
    }


def test_sensitive_settings_skip_switches():
    # Masking "false" would hide that word in every log line; a switch is no secret.
    settings = {"spark.acls.authorization.enabled": "false", "spark.x.auth": True, "spark.x.token": "TRUE"}
    assert sensitive_settings(settings, {"es.net.http.header.Authorization": "Basic dXNlcjpw"}) == {
        "es.net.http.header.Authorization": "Basic dXNlcjpw"
    }


def test_secret_named_numbers_become_text():
    conf = {"spark.myapp.kEy": 987654321, "spark.x.token": 1.5, "spark.sql.shuffle.partitions": 2, "spark.x.auth": True}
    assert secrets_as_text(conf) == {
        "spark.myapp.kEy": "987654321", "spark.x.token": "1.5", "spark.sql.shuffle.partitions": 2, "spark.x.auth": True,
    }
    # Nothing to change: the same object, as given.
    plain = {"spark.sql.shuffle.partitions": 2, "password": "p"}
    assert secrets_as_text(plain) is plain
    assert secrets_as_text(None) is None
    assert secrets_as_text("{{ var.json.conf }}") == "{{ var.json.conf }}"
