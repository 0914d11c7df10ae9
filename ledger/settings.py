"""The service's settings, built once from the environment and passed down.

| Variable | Setting | Default |
|---|---|---|
| `REDDOG_STORE` | `store`: which event store (`ledger.store.locate`) | `sqlite:///var/ledger.sqlite3` |
| `REDDOG_CHAIN_KEY_FILE` | `chain_key_file`: where the store's chain key lives | beside a SQLite file |
| `REDDOG_CHAIN_KEY` | `chain_key`: the chain key itself, instead of a file | |
| `REDDOG_HEAD_FILE` | `head_file`: where the store's head is kept (`ledger.integrity.head`) | beside a SQLite file, else beside the chain key file |
| `REDDOG_PROJECTIONS` | `projections`: fold read models inside `serve` (`auto`, `on`, `off`) | `auto` |
| `REDDOG_RATE_LIMIT` | `rate_limit`: requests a second per API key (0: no limit) | 50 |
| `REDDOG_RATE_BURST` | `rate_burst`: requests a key may send at once | 100 |
| `REDDOG_AUDIT_SLOTS` | `audit_slots`: audit reads one process serves at once | 1 |
| `REDDOG_AUDIT_QUEUE` | `audit_queue`: audit reads that may wait for a slot | 8 |
| `REDDOG_AUDIT_SECONDS` | `audit_seconds`: time budget of one audit read | 2.0 |
| `REDDOG_AUDIT_SHARE` | `audit_share`: the most of a process's time audit reads take (0.05 to 1) | 0.25 |
| `REDDOG_AUDIT_PROCESS` | `audit_process`: under `serve --workers N`, serve audit reads in a process of their own at a lower CPU priority (`on`, `off`; `api.readers`) | `on` |
| `REDDOG_LOG_LEVEL` | `log_level`: `debug`, `info`, `warning` or `error` | `info` |
| `REDDOG_LOG_FORMAT` | `log_format`: `json` lines, `console`, or `auto` (console on a terminal) | `auto` |
| `REDDOG_METRICS` | `metrics`: serve Prometheus metrics at `/metrics` (`on`, `off`) | `on` |
| `REDDOG_HEAD_SECONDS` | `head_seconds`: a request's head must come within this of its first byte (`api.edge`) | 10 |
| `REDDOG_BODY_SECONDS` | `body_seconds`: a request's body must come within this of its head | 30 |
| `REDDOG_TRANSPARENCY` | `transparency`: keep the public tree of the log and sign its checkpoints (`on`, `off`; `ledger.transparency`) | `on` |
| `REDDOG_SIGNING_KEY_FILE` | `signing_key_file`: the log's Ed25519 signing key (a signed-note key) | beside a SQLite file, else beside the chain key file |
| `REDDOG_LOG_ORIGIN` | `log_origin`: the log's name in its checkpoints, for a new signing key | `reddog.invalid/ledger` |
| `REDDOG_WITNESSES` | `witnesses`: witnesses sent each new checkpoint, as `URL=VERIFIER-KEY`, space-separated | |
| `REDDOG_GROUP_COMMIT` | `group_commit`: write the saves of concurrent commands in one transaction on a SQLite file (`on`, `off`; `ledger.store.groupcommit`); no effect on memory or PostgreSQL | `on` |

`POSTGRES_*` and `SQLITE_*` variables (pool sizes, lock timeouts) are handed to the event store
library as they are.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ledger.core.errors import InvalidInput

STORE_ENV_VAR = "REDDOG_STORE"
DEFAULT_STORE = "sqlite:///var/ledger.sqlite3"
PROJECTION_MODES = ("auto", "on", "off")
LOG_LEVELS = ("debug", "info", "warning", "error")
LOG_FORMATS = ("auto", "json", "console")
SWITCH = ("on", "off")
_PASSED_THROUGH = ("POSTGRES_", "SQLITE_")


@dataclass(frozen=True)
class Settings:
    """Everything a process of the ledger is configured with."""

    store: str = DEFAULT_STORE
    chain_key_file: str | None = None
    chain_key: str | None = field(default=None, repr=False)
    head_file: str | None = None
    projections: str = "auto"
    rate_limit: float = 50.0
    rate_burst: int = 100
    audit_slots: int = 1
    audit_queue: int = 8
    audit_seconds: float = 2.0
    audit_share: float = 0.25
    audit_process: str = "on"
    log_level: str = "info"
    log_format: str = "auto"
    metrics: str = "on"
    group_commit: str = "on"
    head_seconds: float = 10.0
    body_seconds: float = 30.0
    transparency: str = "on"
    signing_key_file: str | None = None
    log_origin: str = "reddog.invalid/ledger"
    witnesses: str = ""
    store_env: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Read the settings from an environment (the process's own by default); keyword
        arguments that are not None win over it."""
        env = os.environ if environ is None else environ
        settings = cls(
            store=env.get(STORE_ENV_VAR) or DEFAULT_STORE,
            chain_key_file=env.get("REDDOG_CHAIN_KEY_FILE") or None,
            chain_key=env.get("REDDOG_CHAIN_KEY") or None,
            head_file=env.get("REDDOG_HEAD_FILE") or None,
            projections=_choice(env, "REDDOG_PROJECTIONS", "auto", PROJECTION_MODES),
            rate_limit=_number(env, "REDDOG_RATE_LIMIT", 50.0, float),
            rate_burst=int(_number(env, "REDDOG_RATE_BURST", 100, int)),
            audit_slots=int(_number(env, "REDDOG_AUDIT_SLOTS", 1, int, minimum=1)),
            audit_queue=int(_number(env, "REDDOG_AUDIT_QUEUE", 8, int)),
            audit_seconds=_number(env, "REDDOG_AUDIT_SECONDS", 2.0, float, minimum=0.05),
            audit_share=_number(env, "REDDOG_AUDIT_SHARE", 0.25, float, minimum=0.05,
                                maximum=1.0),
            audit_process=_choice(env, "REDDOG_AUDIT_PROCESS", "on", SWITCH),
            log_level=_choice(env, "REDDOG_LOG_LEVEL", "info", LOG_LEVELS),
            log_format=_choice(env, "REDDOG_LOG_FORMAT", "auto", LOG_FORMATS),
            metrics=_choice(env, "REDDOG_METRICS", "on", SWITCH),
            group_commit=_choice(env, "REDDOG_GROUP_COMMIT", "on", SWITCH),
            head_seconds=_number(env, "REDDOG_HEAD_SECONDS", 10.0, float, minimum=1),
            body_seconds=_number(env, "REDDOG_BODY_SECONDS", 30.0, float, minimum=1),
            transparency=_choice(env, "REDDOG_TRANSPARENCY", "on", SWITCH),
            signing_key_file=env.get("REDDOG_SIGNING_KEY_FILE") or None,
            log_origin=env.get("REDDOG_LOG_ORIGIN") or "reddog.invalid/ledger",
            witnesses=env.get("REDDOG_WITNESSES") or "",
            store_env={k: v for k, v in env.items() if k.startswith(_PASSED_THROUGH)},
        )
        return settings.but(**overrides)

    def but(self, **changes: Any) -> Settings:
        """These settings with some changed (None leaves a setting as it is)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def tables_made(self) -> Settings:
        """These settings for a process opening a store whose tables another process made
        already (a server's workers, `reddog verify --jobs 2`'s worker): the event store
        library's table setup, DDL on every start (on PostgreSQL `CREATE OR REPLACE FUNCTION`,
        under the setup lock of `ledger.store.postgres`), is not run again."""
        return self.but(store_env={**self.store_env, "CREATE_TABLE": "n"})

    @property
    def follows_in_serve(self) -> bool:
        """Whether `reddog serve` folds the read models itself: by default on an embedded store
        (SQLite, memory); on PostgreSQL `reddog project --follow` runs as its own process."""
        if self.projections == "auto":
            return not self.store.startswith(("postgresql:", "postgres:"))
        return self.projections == "on"


def _choice(env: Mapping[str, str], name: str, default: str, choices: tuple[str, ...]) -> str:
    value = env.get(name) or default
    if value not in choices:
        raise InvalidInput(f"{name} must be one of {', '.join(choices)}", field=name)
    return value


def _number(env: Mapping[str, str], name: str, default: float, kind: type,
            minimum: float = 0, maximum: float | None = None) -> Any:
    text = env.get(name)
    if not text:
        return default
    try:
        value = kind(text)
    except ValueError:
        raise InvalidInput(f"{name} must be a number", field=name) from None
    if value < minimum:
        raise InvalidInput(f"{name} must be at least {minimum}", field=name)
    if maximum is not None and value > maximum:
        raise InvalidInput(f"{name} must be at most {maximum}", field=name)
    return value
