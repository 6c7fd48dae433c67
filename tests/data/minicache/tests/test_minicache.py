import sys
import unittest

import pytest

from minicache import LRUCache, TTLCache, cached


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def assert_mapping(cache, expected):
    assert dict(cache.items()) == expected
    assert len(cache) == len(expected)


def test_lru_evicts_the_least_recently_used():
    cache = LRUCache(maxsize=2)
    cache["a"] = 1
    cache["b"] = 2
    assert cache["a"] == 1
    cache["c"] = 3
    assert_mapping(cache, {"a": 1, "c": 3})


def test_zero_size_is_refused():
    with pytest.raises(ValueError):
        LRUCache(maxsize=0)


def test_ttl_items_expire():
    clock = Clock()
    cache = TTLCache(maxsize=4, ttl=10, timer=clock)
    cache["k"] = "v"
    clock.now = 11
    with pytest.raises(KeyError):
        cache["k"]
    assert cache.expire() == []


def test_cached_calls_once_per_argument():
    calls = []

    @cached(LRUCache(maxsize=8))
    def square(x):
        calls.append(x)
        return x * x

    assert [square(3), square(3), square(4)] == [9, 9, 16]
    assert calls == [3, 4]


def test_delete_missing_key_after_eviction_does_not_raise():
    cache = LRUCache(maxsize=1)
    cache["a"] = 1
    cache["b"] = 2
    cache.pop("a", None)


@pytest.mark.skipif(sys.platform == "win32", reason="the monotonic clock is coarse there")
def test_default_timer_is_monotonic():
    cache = TTLCache(maxsize=1, ttl=60)
    cache["x"] = 1
    assert cache["x"] == 1


class EvictionHookTest(unittest.TestCase):
    def _evictions(self, maxsize, keys):
        seen = []

        class Recording(LRUCache):
            def on_evict(self, key, value):
                seen.append(key)

        cache = Recording(maxsize)
        for key in keys:
            cache[key] = key
        return seen

    def test_on_evict_sees_each_evicted_key(self):
        self.assertEqual(self._evictions(1, ["a", "b", "c"]), ["a", "b"])
