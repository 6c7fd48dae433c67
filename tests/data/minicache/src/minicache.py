"""minicache: small mutable mappings with a bounded size (LRU and TTL eviction).

A small library in the style of cachetools, written for Meridian's tests (MIT).
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable, Hashable, Iterator, MutableMapping
from typing import Any

__all__ = ["Cache", "LRUCache", "TTLCache", "cached"]


class _NullLock:
    """A lock that does nothing, for caches used from one thread."""

    def __enter__(self) -> _NullLock:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def acquire(self) -> bool:
        return True

    def release(self) -> None:
        pass


class Cache(MutableMapping[Hashable, Any]):
    """A mapping with a maximum size; subclasses choose what to evict."""

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self.maxsize = maxsize
        self._data: dict[Hashable, Any] = {}

    def __getitem__(self, key: Hashable) -> Any:
        try:
            return self._data[key]
        except KeyError:
            return self.__missing__(key)

    def __missing__(self, key: Hashable) -> Any:
        raise KeyError(key)

    def __setitem__(self, key: Hashable, value: Any) -> None:
        if key not in self._data and len(self._data) >= self.maxsize:
            self.popitem()
        self._data[key] = value

    def __delitem__(self, key: Hashable) -> None:
        del self._data[key]

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def popitem(self) -> tuple[Hashable, Any]:
        raise NotImplementedError()  # pragma: no cover

    def on_evict(self, key: Hashable, value: Any) -> None:
        """Called with each evicted item; does nothing unless overridden."""


class LRUCache(Cache):
    """Evicts the least recently used item."""

    def __init__(self, maxsize: int) -> None:
        super().__init__(maxsize)
        self._order: collections.OrderedDict[Hashable, None] = collections.OrderedDict()

    def __getitem__(self, key: Hashable) -> Any:
        value = super().__getitem__(key)
        self._order.move_to_end(key)
        return value

    def __setitem__(self, key: Hashable, value: Any) -> None:
        super().__setitem__(key, value)
        self._order[key] = None
        self._order.move_to_end(key)

    def __delitem__(self, key: Hashable) -> None:
        super().__delitem__(key)
        del self._order[key]

    def popitem(self) -> tuple[Hashable, Any]:
        key, _ = self._order.popitem(last=False)
        value = self._data.pop(key)
        self.on_evict(key, value)
        return key, value


class TTLCache(LRUCache):
    """An LRU cache whose items expire ``ttl`` seconds after they were set."""

    def __init__(self, maxsize: int, ttl: float,
                 timer: Callable[[], float] = time.monotonic) -> None:
        super().__init__(maxsize)
        self.ttl = ttl
        self.timer = timer
        self._expires: dict[Hashable, float] = {}

    def __setitem__(self, key: Hashable, value: Any) -> None:
        super().__setitem__(key, value)
        self._expires[key] = self.timer() + self.ttl

    def __getitem__(self, key: Hashable) -> Any:
        if key in self._expires and self._expires[key] <= self.timer():
            del self[key]
        return super().__getitem__(key)

    def __delitem__(self, key: Hashable) -> None:
        super().__delitem__(key)
        self._expires.pop(key, None)

    def expire(self) -> list[Hashable]:
        """Remove every expired item; return their keys."""
        now = self.timer()
        gone = [k for k, t in self._expires.items() if t <= now]
        for key in gone:
            del self[key]
        return gone


def cached(cache: MutableMapping[Hashable, Any], lock: Any = None) -> Callable[..., Any]:
    """Memoise a function in ``cache`` (keyed by its positional arguments)."""
    guard = lock if lock is not None else _NullLock()

    def decorator(function: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Hashable) -> Any:
            with guard:
                try:
                    return cache[args]
                except KeyError:
                    pass
            value = function(*args)
            with guard:
                cache[args] = value
            return value

        wrapper.cache = cache  # type: ignore[attr-defined]
        return wrapper

    return decorator


def threadsafe(cache: MutableMapping[Hashable, Any]) -> Callable[..., Any]:
    return cached(cache, threading.RLock())
