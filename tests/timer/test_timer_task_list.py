"""TimerTaskList and TimerTask entries: Kafka's TimerTaskListTest vectors and scenarios."""

from __future__ import annotations

from lab.timer import MockTime, TaskCounter, TimerTask, TimerTaskEntry, TimerTaskList
from tests.vectors import load

CASES = {case["name"]: case for case in load("kafka_timer_purgatory.json")["timer_cases"]}


def test_vector_test_all_a_task_lives_in_one_list_and_the_counter_counts_live_entries() -> None:
    expected = [step["expected"] for step in CASES["kafka-timer-TimerTaskListTest.testAll"]["steps"]]
    counter = TaskCounter()
    list1, list2, list3 = TimerTaskList(counter), TimerTaskList(counter), TimerTaskList(counter)
    tasks = [TimerTask(0) for _ in range(10)]

    counts = []
    for task in tasks:
        list1.add(TimerTaskEntry(task, 10))
        counts.append(counter.value)
    assert counts == expected[0]["shared_counter_after_each_add"]
    assert (len(list1), counter.value) == (expected[0]["list1"], expected[0]["counter"])

    for task in tasks[:4]:  # a new entry for an existing task moves it
        before = counter.value
        list2.add(TimerTaskEntry(task, 10))
        assert counter.value == before
    assert (len(list1), len(list2), counter.value) == (
        expected[1]["list1"], expected[1]["list2"], expected[1]["counter"])

    for task in tasks[4:]:
        list3.add(TimerTaskEntry(task, 10))
    assert (len(list1), len(list2), len(list3), counter.value) == (
        expected[2]["list1"], expected[2]["list2"], expected[2]["list3"], expected[2]["counter"])

    for step, bucket in zip(expected[3:], (list1, list2, list3), strict=True):
        bucket.foreach(lambda task: task.cancel())
        assert (len(list1), len(list2), len(list3)) == (step["list1"], step["list2"], step["list3"])
    assert counter.value == 0


def test_vector_get_delay_is_the_time_left_until_the_bucket_expires() -> None:
    case = CASES["kafka-timer-TimerTaskListTest.testGetDelay"]
    clock = MockTime(start_ms=123_456)
    bucket = TimerTaskList(TaskCounter())
    bucket.set_expiration(clock.milliseconds() + 10_000)
    clock.sleep(5_000)
    assert bucket.get_delay(clock.milliseconds()) // 1000 == case["steps"][1]["expected"]["getDelay_seconds"]
    clock.sleep(50_000)
    assert bucket.get_delay(clock.milliseconds()) == 0


def test_set_expiration_reports_only_a_change_so_the_bucket_is_queued_once_per_slot() -> None:
    bucket = TimerTaskList(TaskCounter())
    assert bucket.set_expiration(40) is True
    assert bucket.set_expiration(40) is False
    assert bucket.set_expiration(60) is True


def test_flush_hands_every_entry_over_in_insertion_order_and_resets_the_bucket() -> None:
    counter = TaskCounter()
    bucket = TimerTaskList(counter)
    tasks = [TimerTask(i) for i in range(3)]
    for task in tasks:
        bucket.add(TimerTaskEntry(task, 7))
    bucket.set_expiration(7)
    flushed: list[TimerTaskEntry] = []
    bucket.flush(flushed.append)
    assert [entry.timer_task for entry in flushed] == tasks
    assert (len(bucket), counter.value, bucket.expiration) == (0, 0, -1)
    assert all(entry.list is None for entry in flushed)


def test_removing_from_the_middle_keeps_the_ring_intact() -> None:
    bucket = TimerTaskList(TaskCounter())
    tasks = [TimerTask(i) for i in range(5)]
    for task in tasks:
        bucket.add(TimerTaskEntry(task, 1))
    tasks[2].cancel()
    tasks[0].cancel()
    assert [entry.timer_task for entry in bucket.entries()] == [tasks[1], tasks[3], tasks[4]]


def test_a_cancelled_entry_is_marked_cancelled_and_an_entry_replaced_by_a_newer_one_too() -> None:
    task = TimerTask(5)
    old = TimerTaskEntry(task, 5)
    new = TimerTaskEntry(task, 9)
    assert old.cancelled() and not new.cancelled()
    task.cancel()
    assert new.cancelled()
