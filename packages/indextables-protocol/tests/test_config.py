"""Engine settings, retry backoff, discovery errors and metrics hooks."""

from __future__ import annotations

import random
from typing import Any

import pytest

from indextables.protocol import PluginNotFoundError, RetryPolicy, TableConfig
from indextables.protocol.discovery import load_state_format, open_store, uri_scheme
from indextables.protocol.metrics import add_metrics_hook, emit, remove_metrics_hook


def test_defaults_are_the_reference_defaults() -> None:
    config = TableConfig()
    assert config.checkpoint_interval == 10
    assert (config.retry.max_attempts, config.retry.base_delay_ms, config.retry.max_delay_ms) == (
        10,
        100.0,
        5000.0,
    )


def test_reference_keys_are_read() -> None:
    config = TableConfig.from_options(
        {
            "spark.indextables.checkpoint.interval": "5",
            "spark.indextables.transaction.retry.maxAttempts": "3",
            "spark.indextables.transaction.retry.baseDelayMs": "7",
            "spark.indextables.transaction.compression.enabled": "false",
            "spark.indextables.state.gc.minManifestAgeHours": "2",
            "unrelated": "x",
        }
    )
    assert config.checkpoint_interval == 5
    assert (config.retry.max_attempts, config.retry.base_delay_ms) == (3, 7.0)
    assert config.compress is False
    assert config.manifest_min_age_hours == 2.0


@pytest.mark.parametrize("attempt", range(8))
def test_backoff_is_jittered_exponential_and_capped(attempt: int) -> None:
    policy = RetryPolicy()
    rng = random.Random(attempt)
    delays = [policy.delay_seconds(attempt, rng) for _ in range(50)]
    base = min(0.1 * 2**attempt, 5.0)
    assert all(0.75 * base <= d <= 1.25 * base for d in delays)
    assert len(set(delays)) > 1


@pytest.mark.parametrize(
    ("uri", "scheme"), [("/tmp/t", "file"), ("s3://b/t", "s3"), ("ABFSS://c@a/t", "abfss")]
)
def test_uri_scheme(uri: str, scheme: str) -> None:
    assert uri_scheme(uri) == scheme


def test_missing_plugins_name_the_package() -> None:
    with pytest.raises(PluginNotFoundError, match="indextables-avrostate"):
        load_state_format("no-such-format")
    with pytest.raises(PluginNotFoundError, match="indextables-storage"):
        open_store("gopher://x/y")


def test_installed_plugins_are_found(tmp_path: object) -> None:
    assert load_state_format().name == "avro-state"
    assert open_store(str(tmp_path)).uri


def test_a_failing_hook_never_breaks_the_caller() -> None:
    seen: list[tuple[str, float, dict[str, str]]] = []

    def broken(name: str, value: float, tags: object) -> None:
        raise RuntimeError("observer bug")

    hooks = [
        add_metrics_hook(broken),
        add_metrics_hook(lambda n, v, t: seen.append((n, v, dict(t)))),
    ]
    try:
        emit("indextables.test", 2, table="t")
    finally:
        for hook in hooks:
            remove_metrics_hook(hook)
    assert seen == [("indextables.test", 2.0, {"table": "t"})]


def test_found_plugins_are_looked_up_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from indextables.protocol import discovery

    scans: list[str] = []
    real = discovery.entry_points

    def counting(*, group: str) -> Any:
        scans.append(group)
        return real(group=group)

    monkeypatch.setattr(discovery, "entry_points", counting)
    monkeypatch.setattr(discovery, "_FOUND", {})
    first = load_state_format()
    second = load_state_format()
    assert type(first) is type(second)
    assert scans == [discovery.STATE_FORMATS_GROUP]
    with pytest.raises(PluginNotFoundError):
        load_state_format("no-such-format")
    with pytest.raises(PluginNotFoundError):
        load_state_format("no-such-format")
    # A miss is looked up again every time (a package installed later is found).
    assert scans.count(discovery.STATE_FORMATS_GROUP) == 3
