"""The execution plan: tasks, executors, stages, chaining, and regrouping on rebalance."""
