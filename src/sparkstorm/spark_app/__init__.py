"""The topology as a Spark application: the file spark-submit runs, and its hosting of executors."""
