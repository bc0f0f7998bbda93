"""Java orderings that decide Kafka's tie-breaks, checked against values computed by the JVM's published rules."""

from __future__ import annotations

from lab.assignors.java_order import java_hash_map_capacity, java_hash_map_order, java_string_hash, java_string_key


def test_string_hash_matches_java_for_known_strings() -> None:
    # Values of String.hashCode() in Java, as unsigned 32-bit numbers.
    assert java_string_hash("") == 0
    assert java_string_hash("topic") == 110546223
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("consumer1") == (-421004549) & 0xFFFFFFFF


def test_hash_map_visits_consumer1_to_consumer4_in_reverse() -> None:
    assert java_hash_map_order(["consumer1", "consumer2", "consumer3", "consumer4"]) == \
        ["consumer4", "consumer3", "consumer2", "consumer1"]


def test_hash_map_doubles_its_table_when_more_than_three_quarters_full() -> None:
    assert [java_hash_map_capacity(n) for n in (0, 12, 13, 24, 25)] == [16, 16, 32, 32, 64]


def test_java_string_order_compares_utf16_units() -> None:
    assert java_string_key("\uff5e") > java_string_key("\U0001f600")
    assert "\uff5e" < "\U0001f600"
