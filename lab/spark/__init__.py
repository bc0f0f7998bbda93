"""Spark and Kafka: the rate controller, balanced splits and the lab's own Kafka reader for Structured Streaming.

The pure parts (`backpressure`, `splits`, `ratelimit`'s TokenBucket) import without PySpark; `session`, `source` and
`rate_limited_map` need the `spark` extra (`pip install -e '.[spark]'`, which `python3 run.py` installs) and Java 17+.
"""
