"""Kafka → parse → stateful count → files, every record exactly once with checkpoints.

Each record of the Kafka topic ``sales`` is one sale, its value JSON:
``{"sale": "s-17", "product": "apple"}``. ``KafkaSpout`` decodes the JSON (a record that is
not JSON is skipped and shown as the spout's error, ``KAFKA_RECORD_UNTRANSLATABLE``);
``ParseSale`` keeps the two fields (a value without them is shown as its error,
``SALE_UNPARSABLE`` in the message, and skipped); ``ProductCount`` counts the sales of each
product in its checkpointed ``KeyValueState`` and emits ``[sale, product, count]``, the
product's count after that sale; ``FileBolt`` writes those as JSON lines into ``SALES_OUT``.

Checkpoints are taken every 2 windows. The spout's offsets, the counts and the files move
together: offsets go to Kafka, and files become visible, only when a checkpoint commits, and
after a crash (kill -9 of any executor) the topology rolls back to the last committed one.
So the files hold every sale once, and each product's counts in them are 1, 2, ... n with n
its count in the state (``tests/integration/examples/test_kafka_sales_pipeline.py`` checks
that).

Run it against your broker (the topic must exist)::

    export KAFKA_SERVERS=127.0.0.1:9092 SALES_OUT=/tmp/sales-counts
    sparkstorm run examples/kafka_sales_to_files.py --time 60
"""

from __future__ import annotations

import os
from typing import Any

from sparkstorm import Bolt, Grouping, StatefulBolt, Topology
from sparkstorm.connectors.files import FileBolt
from sparkstorm.connectors.kafka import KafkaSpout, KafkaSpoutConfig, RecordTranslator
from sparkstorm.state import KeyValueState


class ParseSale(Bolt):
    """``[value]`` (a decoded JSON object) → ``[sale, product]``; skips and reports the rest."""

    outputs = ["sale", "product"]

    def process(self, tup: Any) -> None:
        """Emit the sale's two fields, anchored; a malformed value is reported and acked."""
        value = tup.values.value
        if not isinstance(value, dict) or not isinstance(value.get("sale"), str) \
                or not isinstance(value.get("product"), str):
            # reported (the component's error in the UI) and acked: bad data never stalls
            self.raise_exception(ValueError(
                f"SALE_UNPARSABLE: {value!r} is not {{'sale': str, 'product': str}}; "
                "the record is skipped"), tup)
            return
        self.emit([value["sale"], value["product"]])


class ProductCount(StatefulBolt):
    """Counts sales per product in its state; emits ``[sale, product, count]``."""

    outputs = ["sale", "product", "count"]

    def init_state(self, state: KeyValueState) -> None:
        """Keep the checkpointed counts (given again, restored, after a rollback)."""
        self.counts = state

    def process(self, tup: Any) -> None:
        """Count the sale; emit the product's count after it."""
        sale, product = tup.values
        count = self.counts.get(product, 0) + 1
        self.counts.put(product, count)
        self.emit([sale, product, count])


def sales_counts(servers: str, topic: str, out: str, group: str = "sales-counts",
                 par: int = 2) -> type[Topology]:
    """The topology reading ``topic`` at ``servers`` and writing into the folder ``out``."""

    class SalesCounts(Topology):
        config = {"topology.checkpoint.windows": 2}
        sales = KafkaSpout.spec(par=par, kafka=KafkaSpoutConfig(
            servers, topics=[topic], group_id=group,
            translator=RecordTranslator(fields=["value"], value_format="json")))
        parse = ParseSale.spec(inputs=[sales])
        count = ProductCount.spec(inputs={parse: Grouping.fields("product")}, par=par)
        files = FileBolt.spec(inputs=[count], path=out, format="json")

    return SalesCounts


SalesCounts = sales_counts(os.environ.get("KAFKA_SERVERS", "127.0.0.1:9092"),
                           os.environ.get("SALES_TOPIC", "sales"),
                           os.environ.get("SALES_OUT", "sales-counts"))
