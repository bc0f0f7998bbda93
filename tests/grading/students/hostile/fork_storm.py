"""Leaves children behind that would sleep for an hour, writing their pids where the test can find them."""

import os
import time

from lab.offsets.offset_manager import OffsetManager as Reference

PIDS = os.environ["LAB_TEST_PIDS_FILE"]


class OffsetManager(Reference):
    def find_next_commit_offset(self) -> int | None:
        for _ in range(5):
            child = os.fork()
            if child == 0:
                time.sleep(3600)
                os._exit(0)
            with open(PIDS, "a") as out:
                out.write(f"{child}\n")
        return super().find_next_commit_offset()
