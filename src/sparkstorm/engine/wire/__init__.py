"""What crosses process boundaries: framing, typed requests and replies, row batches."""
