"""Attack: every credential, through every typo form, never reaches any output.

Each ``-S`` form (``k=v``, ``k:v``, ``k v``, ``k: v``, upper/lower case keys,
URL user info, malformed URLs) is passed to the command line under text,
JSON and ``--verbose`` output; stdout, stderr and log records are searched
for the secret.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from indextables.admin.errors import UsageError
from indextables.admin.options import parse_storage_options

# Base64-like with padding: an ``=`` inside the secret makes ``k:v`` look like
# ``key=value`` to a naive parser.
SECRETS = ("AKIAVERYSECRETVALUE", "c2VjcmV0UFc9PQ==")
KEYS = (
    "secret_access_key",
    "access_key_id",
    "session_token",
    "account_key",
    "sas_token",
    "connection_string",
    "client_secret",
    "bearer_token",
    "SECRET_ACCESS_KEY",
    "Account_Key",
    "spark.indextables.aws.secretKey",
    "spark.indextables.aws.sessionToken",
    "spark.indextables.azure.accountKey",
    "storage.secret_access_key",
)
FORMS = ("{k}={v}", "{k}:{v}", "{k} {v}", "{k}: {v}", "{k} = {v}", "{k}:={v}")
URL_FORMS = (
    "endpoint_url=http://user:{v}@127.0.0.1:1",
    "endpoint_url=ht!tp://user:{v}@127.0.0.1:1",
    "endpoint_url=http//user:{v}@host",
    "spark.indextables.aws.endpoint=ht!tp://user:{v}@host",
    "spark.indextables.s3.endpoint=http://user:{v}@127.0.0.1:1",
    "endpoint_url:http://user:{v}@host",
)


def _pairs() -> list[str]:
    pairs = [form.format(k=k, v=v) for k in KEYS for form in FORMS for v in SECRETS]
    pairs += [form.format(v=v) for form in URL_FORMS for v in SECRETS]
    return pairs


def _leaks(text: str) -> list[str]:
    found = [s for s in SECRETS if s in text]
    # the secret without its padding, or URL-quoted, must not show either
    found += [s for s in ("c2VjcmV0UFc9", "c2VjcmV0UFc9PQ%3D%3D") if s in text]
    return found


@pytest.mark.parametrize("pair", _pairs())
@pytest.mark.parametrize("mode", [(), ("-o", "json"), ("--verbose",)])
def test_no_credential_reaches_any_output(
    pair: str, mode: tuple[str, ...], cli_run: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    run = cli_run(*mode, "describe", str(tmp_path / "t"), "-S", pair)
    assert run.exit_code != 0
    logged = "\n".join(record.getMessage() for record in caplog.records)
    for name, text in (("stdout", run.stdout), ("stderr", run.stderr), ("logs", logged)):
        assert not _leaks(text), f"{pair!r} leaked through {name}: {text!r}"


def _is_typo(pair: str) -> bool:
    key, sep, _ = pair.partition("=")
    return not sep or any(c in key.strip() for c in ": ")


@pytest.mark.parametrize("pair", [p for p in _pairs() if _is_typo(p)])
def test_parse_storage_options_refuses_typo_forms_without_echo(pair: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_storage_options([pair])
    assert not _leaks(str(caught.value)), str(caught.value)
