class OffsetManager:
    def __init__(self, initial_fetch_offset: int) -> None
        self.committed = initial_fetch_offset
