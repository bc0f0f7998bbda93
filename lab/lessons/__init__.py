"""The course: lessons (prose in `docs/lessons/`, steps in their `lesson.toml`), the environment their steps run in,
and each student's progress."""
