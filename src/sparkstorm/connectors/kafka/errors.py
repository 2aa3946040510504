"""The error class of the Kafka connector."""

from __future__ import annotations

from sparkstorm.errors import SparkstormError


class KafkaConnectorError(SparkstormError, RuntimeError):
    """A Kafka problem the connector reports and survives.

    A commit or a delivery that failed, a record that could not be turned into a tuple: it is
    reported as the component's error (the UI shows it) and the spout or bolt goes on.
    """
