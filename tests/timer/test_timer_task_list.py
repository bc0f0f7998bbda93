"""TimerTaskList and TimerTask entries: Kafka's TimerTaskListTest vectors and scenarios."""

from __future__ import annotations

from lab.grading.timer_cases import judge_get_delay, judge_task_list_test_all
from lab.timer import TaskCounter, TimerTask, TimerTaskEntry, TimerTaskList
from tests.vectors import load

CASES = {case["name"]: case for case in load("kafka_timer_purgatory.json")["timer_cases"]}


def test_vector_test_all_a_task_lives_in_one_list_and_the_counter_counts_live_entries() -> None:
    assert judge_task_list_test_all(TimerTaskList, CASES["kafka-timer-TimerTaskListTest.testAll"]) is None


def test_vector_get_delay_is_the_time_left_until_the_bucket_expires() -> None:
    assert judge_get_delay(TimerTaskList, CASES["kafka-timer-TimerTaskListTest.testGetDelay"]) is None


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
