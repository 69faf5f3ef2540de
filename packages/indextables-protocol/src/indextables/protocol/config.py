"""Engine settings, with the reference implementation's defaults and keys.

Settings come from ``TableConfig`` arguments or from a mapping of the
reference's ``spark.indextables.*`` keys (table configuration or options).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from indextables.protocol.errors import ProtocolError
from indextables.protocol.retry import RetryPolicy

__all__ = ["ConfigError", "TableConfig"]

_HOUR_MS: Final = 3_600_000
_PREFIX: Final = "spark.indextables."
# About a century: longer windows are typos, and overflow time arithmetic.
_MAX_HOURS: Final = 876_600.0
_MAX_DELAY_MS: Final = 3_600_000.0


class ConfigError(ProtocolError, ValueError):
    """An engine setting has a value no table can work with."""


def _name(key: str) -> str:
    return _PREFIX + key


def _parse_number(key: str, text: str) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise ConfigError(f"{_name(key)}: {text!r} is not a number") from None
    return value


def _parse_int(key: str, text: str) -> int:
    stripped = text.strip()
    try:
        return int(stripped)
    except ValueError:
        raise ConfigError(f"{_name(key)}: {text!r} is not a whole number") from None


def _parse_flag(key: str, text: str) -> bool:
    lowered = text.strip().lower()
    if lowered not in ("true", "false"):
        raise ConfigError(f"{_name(key)}: {text!r} is not true or false")
    return lowered == "true"


def _check_int(key: str, value: int, *, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ConfigError(f"{_name(key)}: {value!r} must be a whole number >= {low}")


def _check_number(key: str, value: float, *, high: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{_name(key)}: {value!r} is not a number")
    if not 0 <= value <= high:  # also refuses NaN and infinities
        raise ConfigError(f"{_name(key)}: {value!r} must be between 0 and {high:g}")


@dataclass(frozen=True, slots=True, kw_only=True)
class TableConfig:
    """Commit, checkpoint, cache and retention settings of one table handle.

    Attributes:
        checkpoint_interval: write a state every this many versions.
        checkpoint_enabled: write states automatically at all.
        compaction_after_merge: compact the state after a merge commit.
        compress: gzip new version files.
        retry: commit retry policy.
        cache_ttl_seconds: how long a read snapshot stays cached.
        log_retention_hours: purge keeps version files younger than this.
        split_retention_hours: purge keeps orphaned splits younger than this.
        state_retention_versions: old states purge always keeps.
        state_retention_hours: old states younger than this are kept.
        manifest_min_age_hours: unreferenced manifests younger than this are kept.
        skip_cooldown_hours: default cooldown of a skipped file.
        retention_check_enabled: purge refuses a split retention below 24 h.
    """

    checkpoint_interval: int = 10
    checkpoint_enabled: bool = True
    compaction_after_merge: bool = True
    compress: bool = True
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    cache_ttl_seconds: float = 300.0
    log_retention_hours: float = 30 * 24.0
    split_retention_hours: float = 7 * 24.0
    state_retention_versions: int = 2
    state_retention_hours: float = 7 * 24.0
    manifest_min_age_hours: float = 1.0
    skip_cooldown_hours: float = 24.0
    retention_check_enabled: bool = True

    def __post_init__(self) -> None:
        """Refuse settings no table can work with, naming the setting."""
        _check_int("checkpoint.interval", self.checkpoint_interval, low=1)
        _check_int("transaction.retry.maxAttempts", self.retry.max_attempts, low=1)
        _check_int("state.retention.versions", self.state_retention_versions, low=0)
        for key, value, high in (
            ("transaction.retry.baseDelayMs", self.retry.base_delay_ms, _MAX_DELAY_MS),
            ("transaction.retry.maxDelayMs", self.retry.max_delay_ms, _MAX_DELAY_MS),
            ("transaction.cache.expirationSeconds", self.cache_ttl_seconds, _MAX_HOURS * 3600),
            ("purge.txLogRetentionHours", self.log_retention_hours, _MAX_HOURS),
            ("purge.defaultRetentionHours", self.split_retention_hours, _MAX_HOURS),
            ("state.retention.hours", self.state_retention_hours, _MAX_HOURS),
            ("state.gc.minManifestAgeHours", self.manifest_min_age_hours, _MAX_HOURS),
            ("skippedFiles.cooldownDuration", self.skip_cooldown_hours, _MAX_HOURS),
        ):
            _check_number(key, value, high=high)

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> TableConfig:
        """Build from ``spark.indextables.*`` keys (keys of other settings are ignored).

        Keys are matched case-insensitively, as Spark matches option names.

        Raises:
            ConfigError: a value is not a number or a boolean where one is
                needed, or is out of range (the message names the key).
        """
        get = {k.lower(): v for k, v in options.items() if k.lower().startswith(_PREFIX)}.get
        base = cls()

        def num(key: str, default: float) -> float:
            value = get(_PREFIX + key.lower())
            return default if value is None else _parse_number(key, value)

        def whole(key: str, default: int) -> int:
            value = get(_PREFIX + key.lower())
            return default if value is None else _parse_int(key, value)

        def flag(key: str, default: bool) -> bool:
            value = get(_PREFIX + key.lower())
            return default if value is None else _parse_flag(key, value)

        retry = RetryPolicy(
            max_attempts=whole("transaction.retry.maxAttempts", base.retry.max_attempts),
            base_delay_ms=num("transaction.retry.baseDelayMs", base.retry.base_delay_ms),
            max_delay_ms=num("transaction.retry.maxDelayMs", base.retry.max_delay_ms),
        )
        return cls(
            checkpoint_interval=whole("checkpoint.interval", base.checkpoint_interval),
            checkpoint_enabled=flag("checkpoint.enabled", base.checkpoint_enabled),
            compaction_after_merge=flag("state.compaction.afterMerge", True),
            compress=flag("transaction.compression.enabled", True),
            retry=retry,
            cache_ttl_seconds=num("transaction.cache.expirationSeconds", base.cache_ttl_seconds),
            log_retention_hours=num("purge.txLogRetentionHours", base.log_retention_hours),
            split_retention_hours=num("purge.defaultRetentionHours", base.split_retention_hours),
            state_retention_versions=whole(
                "state.retention.versions", base.state_retention_versions
            ),
            state_retention_hours=num("state.retention.hours", base.state_retention_hours),
            manifest_min_age_hours=num("state.gc.minManifestAgeHours", base.manifest_min_age_hours),
            retention_check_enabled=flag("purge.retentionCheckEnabled", True),
        )

    @property
    def log_retention_ms(self) -> int:
        """``log_retention_hours`` in milliseconds."""
        return int(self.log_retention_hours * _HOUR_MS)
