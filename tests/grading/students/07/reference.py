"""The lab's own replay."""

from lab.clients.replay import replay  # noqa: F401  the lab's own implementation
