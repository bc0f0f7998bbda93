"""Kafka Internals Lab: learn how Kafka works inside by watching it and rebuilding it."""

__version__ = "0.1.0"
