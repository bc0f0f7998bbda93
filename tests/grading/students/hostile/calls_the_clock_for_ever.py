"""Calls the grader's clock without end, shrugging off every failure it raises: the calls keep coming back to the
judge, which must still see the time run out."""


class TokenBucket:
    def __init__(self, rate: float, burst: float | None = None, *, clock, sleep) -> None:  # type: ignore[no-untyped-def]
        self.clock = clock

    def _spin(self) -> None:
        while True:
            try:
                self.clock()
            except Exception:
                pass

    def try_acquire(self, n: int = 1) -> bool:
        self._spin()
        return True

    def acquire(self, n: int = 1) -> float:
        self._spin()
        return 0.0

    @property
    def tokens(self) -> float:
        self._spin()
        return 0.0
