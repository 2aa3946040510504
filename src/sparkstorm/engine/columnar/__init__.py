"""The Arrow paths of batch bolts and batch spouts: columnar batches, routing, anchoring."""
