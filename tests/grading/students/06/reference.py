"""The lab's own policy (lab.clients.members.CommitOnRevoke): it has no on_lost, so on_lost does nothing."""

from lab.clients.members import CommitOnRevoke  # noqa: F401  the lab's own implementation
