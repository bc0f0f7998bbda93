"""The graders of exercises 09-12, the Spark part of the course, a module each: the token bucket (09,
`token_bucket`, with its fake clock in `fake_clock` and its random scripts in `bucket_scripts`), the PID rate
estimator (10, `pid`), the batch limits `max_messages_per_partition` and `clamp` (11, `max_messages`), and balanced
splits (12, `splits`); `common` holds what they share.

Each grader judges three ways: the README's worked example; Spark's own test cases (`spark_backpressure_ratelimit.json`)
where Spark has some; and random inputs from hypothesis, either replayed on the lab's reference and compared (bucket
scripts, batch sequences, limits) or held to the rules every right answer obeys, whatever its algorithm (a split
never weighs more than its share plus one record). A failure names the step where things part:

    random batch sequences (seed 7): your result differs from Spark's on the smallest case found
    after step 2 (compute(20, 0, 10, 0)): yours returned 100, Spark's None
"""
