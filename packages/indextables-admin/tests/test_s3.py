"""The command line against tables on a real moto S3 server; credentials never echoed."""

import json
from typing import Any

import pytest

pytestmark = [pytest.mark.s3, pytest.mark.integration]

SECRET = "Sup3rS3cretValue-42"


def with_secret(args: list[str]) -> list[str]:
    """The server's ``-S`` options, with a distinctive secret (moto accepts any)."""
    out: list[str] = []
    for flag, pair in zip(args[::2], args[1::2], strict=True):
        key = pair.partition("=")[0]
        out += [flag, f"secret_access_key={SECRET}" if key == "secret_access_key" else pair]
    return out


def test_describe_on_s3_agrees_with_expected(
    s3_table: tuple[str, list[str]], partitioned_expected: dict[str, Any], cli_run: Any
) -> None:
    uri, options = s3_table
    run = cli_run("describe", uri, *with_secret(options), "-o", "json")
    assert run.exit_code == 0, run.stderr
    described = run.json()
    assert described["num_files"] == partitioned_expected["numFiles"]
    assert described["version"] == partitioned_expected["version"]
    assert described["protocol"] == partitioned_expected["protocol"]
    assert described["partition_columns"] == ["date"]
    assert SECRET not in run.stdout + run.stderr


def test_files_on_s3_agree_with_expected(
    s3_table: tuple[str, list[str]], partitioned_expected: dict[str, Any], cli_run: Any
) -> None:
    uri, options = s3_table
    run = cli_run("files", uri, *options, "--where", "date = '2024-01-03'", "-o", "json")
    assert run.exit_code == 0, run.stderr
    (only,) = run.json()["files"]
    (wanted,) = [
        f for f in partitioned_expected["liveFiles"] if f["partitionValues"]["date"] == "2024-01-03"
    ]
    assert {k: only[k] for k in wanted} == wanted


def test_storage_options_from_the_environment(
    s3_table: tuple[str, list[str]], cli_run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    uri, options = s3_table
    for pair in options[1::2]:
        key, _, value = pair.partition("=")
        monkeypatch.setenv(f"INDEXTABLES_STORAGE_OPTION_{key.upper()}", value)
    run = cli_run("describe", uri, "-o", "json")
    assert run.exit_code == 0, run.stderr
    assert run.json()["num_files"] == 3


@pytest.mark.parametrize("dry_run", [True, False])
def test_drop_partitions_on_s3(
    s3_table: tuple[str, list[str]], cli_run: Any, dry_run: bool
) -> None:
    uri, options = s3_table
    extra = ["--dry-run"] if dry_run else []
    run = cli_run(
        "drop-partitions", uri, *options, "--where", "date = '2024-01-02'", "-o", "json", *extra
    )
    assert run.exit_code == 0, run.stderr
    assert run.json()["splits_removed"] == 1
    after = cli_run("describe", uri, *options, "-o", "json").json()
    assert after["table_num_files"] == (3 if dry_run else 2)


def keys_under(server: Any, uri: str) -> set[str]:
    bucket, _, prefix = uri.removeprefix("s3://").partition("/")
    pages = (
        server.client()
        .get_paginator("list_objects_v2")
        .paginate(Bucket=bucket, Prefix=prefix + "/")
    )
    return {o["Key"][len(prefix) + 1 :] for page in pages for o in page.get("Contents", [])}


def test_compact_truncate_and_gc_on_s3(
    s3_table: tuple[str, list[str]], cli_run: Any, moto_server: Any
) -> None:
    uri, options = s3_table
    assert cli_run("compact", uri, *options).exit_code == 0
    before = keys_under(moto_server, uri)
    dry = cli_run("truncate-time-travel", uri, *options, "--dry-run", "-o", "json")
    assert dry.exit_code == 0, dry.stderr
    assert dry.json()["checkpoints_deleted"] == 1
    assert keys_under(moto_server, uri) == before
    assert len(cli_run("history", uri, *options, "-o", "json").json()["versions"]) == 3
    real = cli_run("truncate-time-travel", uri, *options, "-o", "json")
    assert real.exit_code == 0, real.stderr
    assert sorted(before - keys_under(moto_server, uri)) == dry.json()["would_delete"]
    newest = cli_run("history", uri, *options, "-o", "json").json()["versions"][0]
    assert newest["version"] == 2
    gc_args = ["--retention", "0d", "--keep-versions", "0", "--min-manifest-age", "0s"]
    gc_dry = cli_run("gc", uri, *options, *gc_args, "--dry-run", "-o", "json")
    assert gc_dry.exit_code == 0, gc_dry.stderr
    orphans = [m["path"] for m in gc_dry.json()["deleted_manifests"]]
    assert "_transaction_log/manifests/manifest-3673dda9.avro" in orphans
    gc_real = cli_run("gc", uri, *options, *gc_args, "-o", "json")
    assert gc_real.exit_code == 0, gc_real.stderr
    again = cli_run("gc", uri, *options, *gc_args, "--dry-run", "-o", "json").json()
    assert again["deleted_manifests"] == []
    assert cli_run("validate", uri, *options).exit_code == 0


def test_purge_dry_run_and_real_on_s3(s3_table: tuple[str, list[str]], cli_run: Any) -> None:
    uri, options = s3_table
    dry = cli_run("purge", uri, *options, "--dry-run", "-o", "json")
    assert dry.exit_code == 0, dry.stderr
    assert dry.json()["status"] == "DRY_RUN"
    # just-uploaded objects are younger than any allowed split retention: nothing goes
    real = cli_run("purge", uri, *options, "--older-than", "1d", "-o", "json")
    assert real.exit_code == 0, real.stderr
    assert real.json()["orphaned_files_deleted"] == 0
    assert cli_run("validate", uri, *options).exit_code == 0


def test_missing_table_on_s3_exits_2(s3_table: tuple[str, list[str]], cli_run: Any) -> None:
    uri, options = s3_table
    run = cli_run("describe", uri + "-nothing-here", *with_secret(options), "-v")
    assert run.exit_code == 2
    assert SECRET not in run.stdout + run.stderr


def test_secret_never_echoed_even_in_a_verbose_store_failure(
    s3_table: tuple[str, list[str]], cli_run: Any
) -> None:
    uri, options = s3_table
    broken = [
        *with_secret(options),
        "-S",
        "endpoint_url=http://127.0.0.1:9",
        "-S",
        "max_attempts=1",
    ]
    for output in ("text", "json"):
        run = cli_run("describe", uri, *broken, "--verbose", "-o", output)
        assert run.exit_code != 0
        assert SECRET not in run.stdout + run.stderr
        if output == "json":
            assert json.loads(run.stderr.splitlines()[-1])["error"]["exit_code"] == run.exit_code
