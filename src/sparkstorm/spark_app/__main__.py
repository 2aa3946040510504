"""The file ``spark-submit`` runs: ``spark-submit [Spark options] THIS_FILE FILE [options]``.

Its path: ``python -m sparkstorm.spark_app --path``. See :mod:`sparkstorm.spark_app.app`.
"""

import os
import sys

if __name__ == "__main__":
    # run as a file (spark-submit), Python put this folder first on sys.path: its module
    # names (app, link, share, ...) would hide the user's own modules of those names
    _HERE = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if not p or os.path.abspath(p) != _HERE]
    from sparkstorm.spark_app.app import main

    code = main()
    # everything of ours is stopped by now (drained, shares ended, Spark stopped); a window
    # thread still inside a Spark call that Spark's stop left unanswered must not keep this
    # process, and so spark-submit's JVM, alive: the interpreter's exit would join it forever
    import logging

    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
