"""Sessions over a store: create, append a turn, read, delete, and the stateless rewrite.

A worker keeps recently used :class:`turnscope.Session` objects in memory as a cache
keyed by session id and version. The store stays the truth: before every append the
worker reads the turns added since its cached version (by other workers, or before a
restart) and feeds them to the cached session, or rebuilds it from all stored turns,
which gives the same state as a session that saw the whole conversation live. A cached
session is taken *out* of the cache while a request uses it, so no two threads ever
share one ``Session``.
"""

from __future__ import annotations

import logging
import random
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from turnscope._exceptions import ConfigError, InputError
from turnscope._items import FollowUpItem, rewrite_item
from turnscope._session import Session
from turnscope._warmup import warm_up
from turnscope.entities import Vocabulary, bundled_name, bundled_vocabularies, bundled_vocabulary
from turnscope.scope import parse_policy
from turnscope.service._config import ServiceConfig
from turnscope.service._exceptions import (
    InvalidField,
    NotFound,
    SessionFull,
    VersionConflict,
)
from turnscope.service._store import (
    LOCK_SLOTS,
    SessionMeta,
    SessionRecord,
    SessionStore,
    StoredTurn,
    lock_slot,
)

__all__ = ["Engine", "SESSION_ID_PATTERN"]

logger = logging.getLogger("turnscope.service")

#: what ``secrets.token_urlsafe`` produces; anything else cannot be a session id, so it is
#: answered 404 without asking the store (and never reaches a store key)
SESSION_ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{16,64}")


@dataclass
class _Cached:
    session: Session
    version: int
    created: float


class Engine:
    """The service's logic, independent of HTTP.

    >>> import tempfile, os
    >>> from turnscope.service import ServiceConfig, open_store
    >>> cfg = ServiceConfig(store="sqlite:" + os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> eng = Engine(open_store(cfg.store, ttl_seconds=60), cfg)
    >>> sid = eng.create("", "default", "cloud")
    >>> eng.add_turn("", sid, "user", "Which EU regions support customer-managed keys?")["turn"]
    1
    """

    def __init__(self, store: SessionStore, config: ServiceConfig) -> None:
        self.store = store
        self.config = config
        self.limits = config.limits
        self._cache: OrderedDict[str, _Cached] = OrderedDict()
        self._cache_lock = threading.Lock()
        # per-slot thread locks: requests for one session inside one worker wait for each
        # other instead of computing the same turn twice and losing the version race
        self._stripes = [threading.Lock() for _ in range(LOCK_SLOTS)]
        self._vocab: dict[str, Vocabulary | None] = {}
        self._vocab_lock = threading.Lock()
        self._policies: set[str] = set()

    # -- names ---------------------------------------------------------------------
    def check_policy(self, name: str, field: str = "policy") -> str:
        """The policy spec as given, once :func:`turnscope.scope.parse_policy` accepts it
        (the grammar every surface shares; 422 naming the value and the choices otherwise)."""
        if name in self._policies:
            return name
        try:
            parse_policy(name)
        except ConfigError as exc:
            raise InvalidField(f"{field}: {exc}", field=field) from None
        self._policies.add(name)
        return name

    def vocabulary(self, name: str, field: str = "vocabulary") -> Vocabulary | None:
        """``none`` (the default), ``bundled`` (every shipped vocabulary), or one shipped
        vocabulary: ``bundled:cloud`` / ``bundled:ja-site`` (as the CLI writes them) or
        ``cloud`` / ``ja_site``. File paths are not accepted: a client must not make the
        server read files."""
        with self._vocab_lock:
            if name in self._vocab:
                return self._vocab[name]
        bare = bundled_name(name) or name  # "bundled:ja-site", as the CLI writes it, is ja_site
        if name == "bundled":
            vocab: Vocabulary | None = bundled_vocabularies()
        elif name == "none":
            vocab = None
        elif re.fullmatch(r"[a-z0-9_]{1,40}", bare):
            try:
                vocab = bundled_vocabulary(bare)
            except ConfigError:
                raise InvalidField(f"{field}: no bundled vocabulary named {name!r} (use 'none', "
                                   "'bundled', 'bundled:cloud' or 'bundled:ja-site')",
                                   field=field) from None
        else:
            raise InvalidField(f"{field}: no bundled vocabulary named {name[:80]!r}", field=field)
        with self._vocab_lock:
            self._vocab[name] = vocab
        return vocab

    def warm(self) -> None:
        """Load the default vocabulary and policy, and every model a turn needs
        (:func:`turnscope.warm_up`), before the first request: the app's lifespan runs this
        before the worker accepts a connection and before ``/readyz`` says ready."""
        vocab = self.vocabulary(self.config.default_vocabulary)
        policy = self.check_policy(self.config.default_policy)
        warm_up(policy=policy, vocabulary=vocab)

    def _new_session(self, policy: str, vocabulary: str) -> Session:
        return Session(policy=policy, vocabulary=self.vocabulary(vocabulary))

    # -- the session cache -----------------------------------------------------------
    def _take(self, sid: str) -> _Cached | None:
        with self._cache_lock:
            return self._cache.pop(sid, None)

    def _put(self, sid: str, entry: _Cached) -> None:
        if self.config.cache_sessions <= 0:
            return
        with self._cache_lock:
            self._cache[sid] = entry
            self._cache.move_to_end(sid)
            while len(self._cache) > self.config.cache_sessions:
                self._cache.popitem(last=False)

    def _drop(self, sid: str) -> None:
        with self._cache_lock:
            self._cache.pop(sid, None)

    # -- reading ---------------------------------------------------------------------
    def _load(self, tenant: str, sid: str, since: int = 0) -> SessionRecord:
        # another tenant's session is reported exactly like a missing one: a 404 must not
        # tell a caller that an id exists
        rec = self.store.load(sid, since) if SESSION_ID_PATTERN.fullmatch(sid) else None
        if rec is None or rec.meta.tenant != tenant:
            raise NotFound(f"no session {sid[:80]!r}", code="session_not_found", field="session_id")
        return rec

    def create(self, tenant: str, policy: str | None = None, vocabulary: str | None = None) -> str:
        """Create a session; returns its unguessable id (144 random bits)."""
        p = self.check_policy(policy if policy is not None else self.config.default_policy)
        v = vocabulary if vocabulary is not None else self.config.default_vocabulary
        self.vocabulary(v)
        sid = secrets.token_urlsafe(18)
        self.store.create(SessionMeta(sid, tenant, p, v, time.time()))
        return sid

    def view(self, tenant: str, sid: str) -> dict[str, Any]:
        """``GET /v1/sessions/{id}``: the turns as stored and the slot table after the last."""
        rec = self._load(tenant, sid)
        return {
            "session_id": sid,
            "policy": rec.meta.policy,
            "vocabulary": rec.meta.vocabulary,
            "version": rec.version,
            "turns": [t.public() for t in rec.turns],
            "slots": rec.turns[-1].slots if rec.turns else [],
        }

    def delete(self, tenant: str, sid: str) -> None:
        self._load(tenant, sid)
        self.store.delete(sid)
        self._drop(sid)

    # -- appending -------------------------------------------------------------------
    def _session_at(self, rec: SessionRecord, cached: _Cached | None) -> Session:
        """A session that has seen every stored turn of ``rec`` (``rec.turns`` holds the
        turns after ``cached.version`` when ``cached`` is given, else all of them)."""
        if cached is not None and cached.created == rec.meta.created and rec.since == cached.version:
            session = cached.session
        else:
            session = self._new_session(rec.meta.policy, rec.meta.vocabulary)
        for t in rec.turns:
            session.add(t.role, t.content, t.screen)
        return session

    def add_turn(self, tenant: str, sid: str, role: str, content: str,
                 screen: Mapping[str, Any] | None = None, *, if_match: int | None = None) -> dict[str, Any]:
        """Append a turn; a user turn returns its rewrite output plus ``turn``, an assistant
        turn ``{"turn": n}``. ``if_match`` makes it conditional on the session version."""
        tid = secrets.token_hex(8)
        delay = 0.002
        # inside the worker: one thread per session slot; across workers: the store's
        # session lock. Both only save work; the version check below is the guarantee.
        with self._stripes[lock_slot(sid)], self.store.session_lock(sid, self.config.lock_wait):
            # the retry budget starts once this request has its turn, not while it queues
            deadline = time.monotonic() + self.config.append_deadline
            while True:
                cached = self._take(sid)
                rec = self._load(tenant, sid, since=cached.version if cached else 0)
                if cached is not None and rec.version < cached.version:
                    # the store is behind this cache (e.g. a Redis restored from an older
                    # snapshot): the store is the truth, rebuild from it
                    cached = None
                    rec = self._load(tenant, sid)
                if if_match is not None and rec.version != if_match:
                    self._put_back(sid, rec, cached)
                    raise VersionConflict(f"session is at version {rec.version}, not {if_match}",
                                          field="If-Match")
                if rec.version >= self.limits.max_turns:
                    self._put_back(sid, rec, cached)
                    raise SessionFull(f"session holds the maximum of {self.limits.max_turns} turns; "
                                      "start a new session", field="turns")
                session = self._session_at(rec, cached)
                if session.state.last_index != rec.version:
                    # a cached object that disagrees with the store is not trusted
                    rec = self._load(tenant, sid)
                    session = self._session_at(rec, None)
                out, slots = self._compute(session, role, content, screen, rec.version + 1)
                turn = StoredTurn(rec.version + 1, role, content, dict(screen) if screen else None,
                                  out, slots, tid, time.time())
                try:
                    self.store.append(sid, rec.version, turn)
                except VersionConflict:
                    # another worker appended first; our session object now holds a turn that
                    # was not stored, so it is thrown away. Unless the "conflict" is our own
                    # write that landed before a dropped connection was retried:
                    mine = self._own_turn(tenant, sid, turn)
                    if mine is not None:
                        return self._answer(mine)
                    if if_match is not None:
                        raise
                    if time.monotonic() > deadline:
                        raise VersionConflict("too many concurrent writers on this session; retry",
                                              field=None) from None
                    time.sleep(delay * (0.5 + random.random()))
                    delay = min(delay * 2, 0.1)
                    continue
                self._put(sid, _Cached(session, turn.index, rec.meta.created))
                return self._answer(turn)

    def _put_back(self, sid: str, rec: SessionRecord, cached: _Cached | None) -> None:
        # a refused request changed nothing: keep the cached session if it is still current
        if cached is not None and rec.version == cached.version:
            self._put(sid, cached)

    def _own_turn(self, tenant: str, sid: str, turn: StoredTurn) -> StoredTurn | None:
        rec = self._load(tenant, sid, since=turn.index - 1)
        if rec.turns and rec.turns[0].tid == turn.tid:
            return rec.turns[0]
        return None

    @staticmethod
    def _answer(turn: StoredTurn) -> dict[str, Any]:
        if turn.output is None:
            return {"turn": turn.index}
        return {**turn.output, "turn": turn.index}

    def _compute(self, session: Session, role: str, content: str, screen: Mapping[str, Any] | None,
                 expect: int) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        try:
            if role == "user":
                r = session.user(content, screen=screen)
                out: dict[str, Any] | None = r.to_output()
                slots = [dict(x) for x in r.slot_table]
                got = r.turn
            else:
                session.assistant(content, screen=screen)
                out, slots = None, [dict(x) for x in session.slot_rows()]
                got = session.state.last_index
        except InputError as exc:
            raise InvalidField(f"content: {exc}", field="content") from None
        except Exception as exc:
            # a library fault on some input must not become a 5xx or poison the session: the
            # turn is refused, nothing is stored, and the traceback goes to the log
            logger.exception("turnscope could not process a %s turn", role)
            raise InvalidField(f"content: turnscope could not process this message "
                               f"({type(exc).__name__})", code="unprocessable", field="content") from None
        if got != expect:
            raise RuntimeError(f"session numbered the turn {got}, the store expects {expect}")
        return out, slots

    # -- stateless -------------------------------------------------------------------
    def rewrite(self, item: FollowUpItem, policy: str | None = None,
                vocabulary: str | None = None) -> dict[str, Any]:
        """``POST /v1/rewrite``: replay the item's prefix in a fresh session, rewrite its follow-up."""
        p = self.check_policy(policy if policy is not None else self.config.default_policy)
        v = self.vocabulary(vocabulary if vocabulary is not None else self.config.default_vocabulary)
        try:
            res = rewrite_item(item, lambda: Session(policy=p, vocabulary=v))
        except InputError as exc:
            raise InvalidField(str(exc), field="follow_up") from None
        except Exception as exc:
            logger.exception("turnscope could not rewrite item %r", item.id)
            raise InvalidField(f"turnscope could not process this item ({type(exc).__name__})",
                               code="unprocessable", field="follow_up") from None
        return res.to_output(item.id)
