"""Java's orderings, reproduced so that the lab's assignors tie-break exactly as Kafka's Java client does.

Two Java habits leak into Kafka's assignment results:

* `String.compareTo` compares UTF-16 code units, not Unicode code points. For ordinary ASCII ids both orders agree; they
  differ only for characters outside the Basic Multilingual Plane. `java_string_key` sorts the Java way.
* Kafka keeps members in a `java.util.HashMap`, and the sticky assignor walks that map when it decides who keeps owned
  partitions (and so who gets the scarce "max quota" slots). A HashMap iterates bucket by bucket: bucket
  `(h ^ (h >>> 16)) & (capacity - 1)` where `h = key.hashCode()`, and within a bucket in insertion order.

Worked example: `consumer1..consumer4` hash to consecutive values (only the last character differs), land in four
consecutive buckets of a 16-bucket table in *descending* order, so Kafka visits them as
`consumer4, consumer3, consumer2, consumer1`:

    >>> java_hash_map_order(["consumer1", "consumer2", "consumer3", "consumer4"])
    ['consumer4', 'consumer3', 'consumer2', 'consumer1']

Only the default-constructed map is modelled (capacity 16, doubled while more than 3/4 full). Java turns a bucket with
more than 8 colliding keys into a tree, which can reorder that bucket; with 32-bit string hashes that does not happen
for realistic member ids, and the lab ignores it.
"""

from __future__ import annotations

from collections.abc import Iterable

_MASK32 = 0xFFFFFFFF


def java_string_key(text: str) -> bytes:
    """A sort key that orders strings as Java's `String.compareTo` does (UTF-16 code units)."""
    return text.encode("utf-16-be")


def java_string_hash(text: str) -> int:
    """Java's `String.hashCode()` as an unsigned 32-bit number: `s[0]*31^(n-1) + ... + s[n-1]` over UTF-16 units."""
    data = text.encode("utf-16-be")
    value = 0
    for index in range(0, len(data), 2):
        value = (31 * value + (data[index] << 8 | data[index + 1])) & _MASK32
    return value


def _bucket_of(text: str, capacity: int) -> int:
    h = java_string_hash(text)
    return (h ^ (h >> 16)) & (capacity - 1)


def java_hash_map_capacity(size: int) -> int:
    """Table size of a default `new HashMap<>()` after `size` insertions (16, doubled whenever over 3/4 full)."""
    capacity = 16
    while size > capacity * 3 // 4:
        capacity *= 2
    return capacity


def java_hash_map_order(keys: Iterable[str]) -> list[str]:
    """The order in which a default `java.util.HashMap` holding `keys` (inserted in the given order) iterates them."""
    unique = list(dict.fromkeys(keys))
    capacity = java_hash_map_capacity(len(unique))
    # sorted() is stable, so keys sharing a bucket keep their insertion order, as in Java's bucket lists.
    return sorted(unique, key=lambda key: _bucket_of(key, capacity))
