"""Graded exercises: the catalogue (`exercises/catalogue.toml`), the graders (`graders/`, one module per exercise
family), the runner that grades a student's file in a subprocess with timeouts, hints, and the hash-chained grade log.
"""
