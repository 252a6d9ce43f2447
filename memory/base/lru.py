"""Caches under one byte budget: the least recently used entry of any of them goes first."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

MB = 1024 * 1024


class CachePool:
    """The budget every per-user cache of one process shares (``PCAI_CACHE_MB``).

    One budget rather than one per cache: whichever cache the people active now need most gets
    the room, and a person not seen for a while is dropped from all of them in time. Each
    cache is a :class:`PoolCache` from :meth:`cache`. Safe to use from several threads.
    """

    def __init__(self, budget_bytes: int) -> None:
        self.budget = max(0, budget_bytes)
        self.used = 0
        self.evicted = 0
        self._items: OrderedDict[tuple[str, Hashable], tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()

    def cache(self, name: str) -> PoolCache[Any, Any]:
        """A cache named ``name`` in this pool (one name per cache)."""
        return PoolCache(self, name)

    def get(self, name: str, key: Hashable) -> Any:
        with self._lock:
            hit = self._items.get((name, key))
            if hit is None:
                return None
            self._items.move_to_end((name, key))
            return hit[0]

    def put(self, name: str, key: Hashable, value: Any, size: int) -> None:
        with self._lock:
            old = self._items.pop((name, key), None)
            if old is not None:
                self.used -= old[1]
            # An entry bigger than the whole budget is not kept: its reader takes the cold
            # path every time rather than emptying the pool for it.
            if size > self.budget:
                return
            self._items[(name, key)] = (value, size)
            self.used += size
            while self.used > self.budget:
                _, (_, gone) = self._items.popitem(last=False)
                self.used -= gone
                self.evicted += 1

    def pop(self, name: str, key: Hashable) -> None:
        with self._lock:
            old = self._items.pop((name, key), None)
            if old is not None:
                self.used -= old[1]

    def entries(self, name: str) -> list[tuple[Hashable, Any]]:
        with self._lock:
            return [(k[1], v[0]) for k, v in self._items.items() if k[0] == name]

    def clear(self, name: str) -> None:
        with self._lock:
            for k in [k for k in self._items if k[0] == name]:
                self.used -= self._items.pop(k)[1]


class PoolCache(Generic[K, V]):
    """One named cache of a :class:`CachePool`: ``get`` misses once an entry was evicted, so
    every reader keeps a cold path that computes the same value again."""

    def __init__(self, pool: CachePool, name: str) -> None:
        self.pool = pool
        self.name = name

    def get(self, key: K) -> V | None:
        """The cached value (now the most recently used), or None."""
        found: V | None = self.pool.get(self.name, key)
        return found

    def put(self, key: K, value: V, size: int) -> None:
        """Cache ``value`` taking ``size`` bytes; older entries of any cache go past the budget."""
        self.pool.put(self.name, key, value, size)

    def pop(self, key: K) -> None:
        """Drop ``key`` if cached."""
        self.pool.pop(self.name, key)

    def entries(self) -> list[tuple[K, V]]:
        """Every (key, value) of this cache, least recently used first."""
        return self.pool.entries(self.name)  # type: ignore[return-value]

    def clear(self) -> None:
        """Drop every entry of this cache."""
        self.pool.clear(self.name)


# How many people a small per-person map (a table name, a count, a language) keeps: a few
# hundred bytes each, so a fixed count bounds them; one not kept is read again (exact).
KEPT_PEOPLE = 1024


class CappedMap(Generic[K, V]):
    """A map of at most ``cap`` keys: past it, the least recently used key is dropped.

    For per-person values too small to weigh against ``PCAI_CACHE_MB`` one by one, which
    would otherwise grow with every person the process ever served. Not locked: its owner's
    lock is.
    """

    def __init__(self, cap: int = KEPT_PEOPLE) -> None:
        self.cap = max(1, cap)
        self._items: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        """The value (now the most recently used), or None."""
        found = self._items.get(key)
        if found is not None:
            self._items.move_to_end(key)
        return found

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __len__(self) -> int:
        return len(self._items)

    def __setitem__(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.cap:
            self._items.popitem(last=False)

    def pop(self, key: K, default: V | None = None) -> V | None:
        """Drop ``key``; its value, or ``default``."""
        return self._items.pop(key, default)

    def clear(self) -> None:
        """Drop every key."""
        self._items.clear()
