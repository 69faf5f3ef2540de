"""Engine settings, with the reference implementation's defaults and keys.

Settings come from ``TableConfig`` arguments or from a mapping of the
reference's ``spark.indextables.*`` keys (table configuration or options).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from indextables.protocol.retry import RetryPolicy

__all__ = ["TableConfig"]

_HOUR_MS: Final = 3_600_000
_PREFIX: Final = "spark.indextables."


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

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> TableConfig:
        """Build from ``spark.indextables.*`` keys (unknown keys are ignored)."""
        get = {k.lower(): v for k, v in options.items() if k.lower().startswith(_PREFIX)}.get

        def num(key: str, default: float) -> float:
            value = get(_PREFIX + key.lower())
            return default if value is None else float(value)

        def flag(key: str, default: bool) -> bool:
            value = get(_PREFIX + key.lower())
            return default if value is None else value.strip().lower() == "true"

        base = cls()
        retry = RetryPolicy(
            max_attempts=int(num("transaction.retry.maxAttempts", base.retry.max_attempts)),
            base_delay_ms=num("transaction.retry.baseDelayMs", base.retry.base_delay_ms),
            max_delay_ms=num("transaction.retry.maxDelayMs", base.retry.max_delay_ms),
        )
        return cls(
            checkpoint_interval=int(num("checkpoint.interval", base.checkpoint_interval)),
            checkpoint_enabled=flag("checkpoint.enabled", base.checkpoint_enabled),
            compaction_after_merge=flag("state.compaction.afterMerge", True),
            compress=flag("transaction.compression.enabled", True),
            retry=retry,
            cache_ttl_seconds=num("transaction.cache.expirationSeconds", base.cache_ttl_seconds),
            log_retention_hours=num("purge.txLogRetentionHours", base.log_retention_hours),
            state_retention_versions=int(
                num("state.retention.versions", base.state_retention_versions)
            ),
            state_retention_hours=num("state.retention.hours", base.state_retention_hours),
            manifest_min_age_hours=num("state.gc.minManifestAgeHours", base.manifest_min_age_hours),
        )

    @property
    def log_retention_ms(self) -> int:
        """``log_retention_hours`` in milliseconds."""
        return int(self.log_retention_hours * _HOUR_MS)
