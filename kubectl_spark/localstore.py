"""The local store: SQLite under the user's state directory, pods' last states and the Events about them.

Why a store at all: Spark deletes failed executor pods within seconds, Events expire after an
hour and finished drivers get garbage-collected; ``kubectl spark record`` keeps what it watched
so that ``ls``, ``describe``, ``history`` and the TUI can still explain a loss the next morning.

Every row is keyed by cluster (the API server's URL), context, namespace, kind and uid, so two
clusters never mix; a row is replaced only by a newer resourceVersion of the same object. Several
processes may write at once: WAL mode, a busy timeout and one short transaction per batch.
Retention: rows not seen for ``RETENTION_DAYS`` are dropped, and at most ``MAX_ROWS`` are kept
(oldest first) — both applied by writers, a few times an hour.

A file that is not our database, or that a newer kubectl spark wrote, is never touched: opening
it raises :class:`LocalStoreError` with what to do.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from kubectl_spark.errors import LocalStoreError

SCHEMA_VERSION = 1
APPLICATION = "kubectl-spark history"
RETENTION_DAYS = 14
MAX_ROWS = 500_000
_PRUNE_EVERY = 600.0  # seconds between retention passes in one writer

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE objects (
    cluster TEXT NOT NULL,
    context TEXT NOT NULL,
    namespace TEXT NOT NULL,
    kind TEXT NOT NULL,
    uid TEXT NOT NULL,
    resource_version INTEGER NOT NULL,
    seen_at TEXT NOT NULL,
    deleted_at TEXT,
    body BLOB NOT NULL,
    PRIMARY KEY (cluster, context, namespace, kind, uid)
);
CREATE INDEX objects_by_scope ON objects (cluster, context, namespace, kind);
CREATE INDEX objects_by_age ON objects (seen_at);
"""


def default_path() -> Path:
    """$XDG_STATE_HOME/kubectl-spark/history.sqlite (~/.local/state when unset)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "kubectl-spark" / "history.sqlite"


@dataclass(frozen=True)
class Scope:
    """Whose objects: one cluster seen through one context (namespace "" = all namespaces)."""

    cluster: str
    context: str


def _rv(value: Any) -> int:
    text = str(value or "")
    return int(text) if text.isdecimal() else 0


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class LocalStore:
    def __init__(self, path: Path, *, create: bool = True) -> None:
        self.path = path
        self._pruned_at = 0.0
        # One connection, used from more than one thread (the TUI's workers) and closed from
        # another: every use holds this lock, or SQLite may crash the process.
        self._lock = threading.RLock()
        if not path.exists() and not create:
            self.db: sqlite3.Connection | None = None
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            # One user at a time, but not always the same thread (the TUI's analysis workers).
            self.db = sqlite3.connect(
                path, timeout=30.0, isolation_level=None, check_same_thread=False
            )
            self.db.execute("PRAGMA busy_timeout = 30000")
            self._check_or_create()
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.DatabaseError as exc:
            raise LocalStoreError(
                f"the history database {path} cannot be used ({exc}); it was left as it is: move "
                "it away, or use --history-db PATH or --no-history"
            ) from exc

    def close(self) -> None:
        with self._lock:
            if self.db is not None:
                self.db.close()
                self.db = None

    def __enter__(self) -> LocalStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_or_create(self) -> None:
        assert self.db is not None
        tables = {
            r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        if not tables:
            with self._transaction() as db:
                if not {
                    r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")
                }:
                    for statement in _SCHEMA.split(";"):
                        if statement.strip():
                            db.execute(statement)
                    db.executemany(
                        "INSERT INTO meta VALUES (?, ?)",
                        [("application", APPLICATION), ("schema_version", str(SCHEMA_VERSION))],
                    )
            return
        meta = dict(self.db.execute("SELECT key, value FROM meta")) if "meta" in tables else {}
        if meta.get("application") != APPLICATION:
            raise LocalStoreError(
                f"{self.path} is not a kubectl spark history database; it was left as it is: "
                "use --history-db PATH or --no-history"
            )
        version = int(meta.get("schema_version", "0") or 0)
        if version > SCHEMA_VERSION:
            raise LocalStoreError(
                f"the history database {self.path} was written by a newer kubectl spark (schema "
                f"{version}; this one reads {SCHEMA_VERSION}); it was left as it is: upgrade, or "
                "use --history-db PATH or --no-history"
            )

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        assert self.db is not None
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
            self.db.execute("COMMIT")
        except BaseException as exc:
            # SQLite has already rolled back after some errors (a full disk among them): a
            # second rollback would fail and hide what happened.
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.OperationalError) and "full" in str(exc):
                raise LocalStoreError(
                    f"the history database {self.path}: the disk is full ({exc}); nothing of "
                    "this batch was kept: free some space, or use --history-db PATH elsewhere"
                ) from exc
            raise

    # ------------------------------------------------------------------------- writing
    def record(
        self,
        scope: Scope,
        kind: str,
        objects: Iterable[tuple[Mapping[str, object], bool]],
        *,
        seen_at: str | None = None,
    ) -> int:
        """Keep (object, deleted?) pairs; an older resourceVersion never replaces a newer one."""
        with self._lock:
            return self._record(scope, kind, objects, seen_at)

    def _record(
        self,
        scope: Scope,
        kind: str,
        objects: Iterable[tuple[Mapping[str, object], bool]],
        seen_at: str | None,
    ) -> int:
        if self.db is None:
            return 0
        stamp = seen_at or _now()
        rows = []
        for obj, deleted in objects:
            found = obj.get("metadata")
            meta = found if isinstance(found, Mapping) else {}
            if not meta.get("uid"):
                continue
            rows.append(
                (
                    scope.cluster,
                    scope.context,
                    str(meta.get("namespace") or ""),
                    kind,
                    str(meta["uid"]),
                    _rv(meta.get("resourceVersion")),
                    stamp,
                    stamp if deleted else None,
                    orjson.dumps(obj),
                )
            )
        if not rows:
            return 0
        with self._transaction() as db:
            db.executemany(
                """INSERT INTO objects VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                   ON CONFLICT (cluster, context, namespace, kind, uid) DO UPDATE SET
                     resource_version = excluded.resource_version,
                     seen_at = excluded.seen_at,
                     deleted_at = COALESCE(excluded.deleted_at, objects.deleted_at),
                     body = excluded.body
                   WHERE excluded.resource_version >= objects.resource_version""",
                rows,
            )
        self._maybe_prune()
        return len(rows)

    def _maybe_prune(self) -> None:
        if time.monotonic() - self._pruned_at < _PRUNE_EVERY:
            return
        self._pruned_at = time.monotonic()
        self.prune()

    def prune(self, *, days: float = RETENTION_DAYS, max_rows: int = MAX_ROWS) -> None:
        with self._lock:
            self._prune(days, max_rows)

    def _prune(self, days: float, max_rows: int) -> None:
        if self.db is None:
            return
        cutoff = (datetime.now(UTC) - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")
        with self._transaction() as db:
            db.execute("DELETE FROM objects WHERE seen_at < ?", (cutoff,))
            (count,) = db.execute("SELECT COUNT(*) FROM objects").fetchone()
            if count > max_rows:
                db.execute(
                    "DELETE FROM objects WHERE rowid IN "
                    "(SELECT rowid FROM objects ORDER BY seen_at LIMIT ?)",
                    (count - max_rows,),
                )

    # ------------------------------------------------------------------------- reading
    def load(
        self, scope: Scope, kind: str, namespace: str | None
    ) -> list[tuple[dict[str, Any], str, str | None]]:
        """(object, seen at, deleted at) for one kind, in a namespace or everywhere."""
        with self._lock:
            return self._load(scope, kind, namespace)

    def page(
        self, scope: Scope, kind: str, namespace: str | None, *, after: int, limit: int
    ) -> list[tuple[int, bytes, str, str | None]]:
        """Up to ``limit`` rows after the row ``after``: (row id, body as stored, seen, deleted).

        Keyset paging on the row id, which an update keeps (``ON CONFLICT DO UPDATE``): a reader
        paging while a recorder writes misses no object, and a page costs what it holds, never
        the whole table (the recorder's answers, ``app/recorder_http.py``).
        """
        with self._lock:
            if self.db is None:
                return []
            # In one namespace the scope index holds its rows in rowid order already; across
            # namespaces the index would sort the whole scope for every page: the table is
            # walked in rowid order instead (EXPLAIN QUERY PLAN: "USING INTEGER PRIMARY KEY").
            table = "objects" if namespace else "objects NOT INDEXED"
            query = (
                f"SELECT rowid, body, seen_at, deleted_at FROM {table} WHERE cluster=? "  # noqa: S608 - one of two literals
                "AND context=? AND kind=? AND rowid > ?"
            )
            args: list[Any] = [scope.cluster, scope.context, kind, after]
            if namespace:
                query += " AND namespace=?"
                args.append(namespace)
            query += " ORDER BY rowid LIMIT ?"
            args.append(limit)
            return list(self.db.execute(query, args))

    def has(self, scope: Scope, kind: str, namespace: str, uid: str) -> bool:
        """Whether an object of this kind and key is kept (whatever its state)."""
        with self._lock:
            if self.db is None:
                return False
            row = self.db.execute(
                "SELECT 1 FROM objects WHERE cluster=? AND context=? AND namespace=? AND kind=? "
                "AND uid=?",
                (scope.cluster, scope.context, namespace, kind, uid),
            ).fetchone()
            return row is not None

    def load_under(
        self, scope: Scope, kind: str, namespace: str, prefix: str
    ) -> list[dict[str, Any]]:
        """The objects of one kind in a namespace whose key starts with ``prefix`` + "/"."""
        with self._lock:
            if self.db is None:
                return []
            rows = self.db.execute(
                "SELECT body FROM objects WHERE cluster=? AND context=? AND kind=? "
                "AND namespace=? AND substr(uid, 1, ?) = ?",
                (scope.cluster, scope.context, kind, namespace, len(prefix) + 1, prefix + "/"),
            )
            return [orjson.loads(body) for (body,) in rows]

    def _load(
        self, scope: Scope, kind: str, namespace: str | None
    ) -> list[tuple[dict[str, Any], str, str | None]]:
        if self.db is None:
            return []
        query = (
            "SELECT body, seen_at, deleted_at FROM objects WHERE cluster=? AND context=? AND kind=?"
        )
        args: list[Any] = [scope.cluster, scope.context, kind]
        if namespace:
            query += " AND namespace=?"
            args.append(namespace)
        return [
            (orjson.loads(body), seen, deleted)
            for body, seen, deleted in self.db.execute(query, args)
        ]
