"""The embedded Kafka-protocol broker: storage (`lab.broker.log`), events (`lab.broker.events`), the server."""
