"""Small helpers over confluent-kafka for the scenarios, lessons and tests: consumers that poll in threads of their
own (`members`), producers that record what the broker acknowledged (`producer`), topic and group housekeeping
(`admin`), and waits that poll until something holds (`waits`).

None of it knows which backend it talks to: everything goes through `bootstrap.servers`.
"""
