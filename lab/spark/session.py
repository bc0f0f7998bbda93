"""One call to get a local SparkSession that works with the lab: `lab.spark.session()`.

Three things trip people who start PySpark by hand, and this module does them before the JVM starts:
- Spark's Python workers must run the same interpreter as the driver, or `lab` (and confluent-kafka) are missing there:
  `PYSPARK_PYTHON` is set to `sys.executable` unless the caller already chose one.
- The workers must import `lab`: the folder holding the `lab` package goes on their `PYTHONPATH` (an editable install
  already makes it importable; a plain checkout on `sys.path` does not reach the workers without this).
- Java must be there: a missing `java` gets a clear error instead of a py4j stack trace.

It also registers the lab's Kafka reader under the format name `lab-kafka`, installs the listener that feeds its rate
estimator (`lab.spark.feedback`), turns the Spark UI off (nothing here serves
web pages unless asked) and keeps Spark's log at WARN.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PACKAGE_PARENT = str(Path(__file__).resolve().parent.parent.parent)


class SparkUnavailable(RuntimeError):
    """PySpark or Java is missing; the message says how to get them."""


def worker_environment() -> dict[str, str]:
    """The environment variables Spark's Python workers need to run this interpreter and import `lab`."""
    paths = [PACKAGE_PARENT, *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
    unique = list(dict.fromkeys(paths))
    return {
        "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON") or sys.executable,
        "PYTHONPATH": os.pathsep.join(unique),
    }


def check_requirements() -> None:
    """Raise SparkUnavailable naming what is missing: the pyspark package or a Java runtime."""
    try:
        import pyspark  # noqa: F401
    except ImportError as exc:
        raise SparkUnavailable(
            "PySpark is not installed in this environment. `lab spark demo` and the Spark lessons install it on "
            "first use, and `python3 run.py test` with the tests; by hand: pip install -c requirements.lock -e "
            "'.[spark]'"
        ) from exc
    if not os.environ.get("JAVA_HOME") and shutil.which("java") is None:
        raise SparkUnavailable("Spark needs Java 17 or newer: no `java` on the PATH and JAVA_HOME is not set.")


def session(
    app_name: str = "lab",
    master: str | None = None,
    *,
    config: dict[str, Any] | None = None,
) -> SparkSession:
    """Get (or create) a SparkSession set up for the lab, with the `lab-kafka` source registered.

    `master` defaults to `local[2]` (this course's machines have two cores), or `LAB_SPARK_MASTER` when set, e.g.
    `spark://localhost:7077` for `lab up --profile spark`'s standalone cluster, whose executors run the Python of
    their own image (`LAB_SPARK_EXECUTOR_PYTHON`, default `python3`).
    """
    check_requirements()
    env = worker_environment()
    os.environ.update(env)  # the JVM, and the Python workers it forks, inherit these
    from pyspark.sql import SparkSession

    chosen = master or os.environ.get("LAB_SPARK_MASTER") or "local[2]"
    builder = (
        SparkSession.builder.appName(app_name)
        .master(chosen)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
    )
    if chosen.startswith("local"):
        builder = (builder.config("spark.executorEnv.PYSPARK_PYTHON", env["PYSPARK_PYTHON"])
                   .config("spark.executorEnv.PYTHONPATH", env["PYTHONPATH"]))
    else:
        # a cluster's executors run their own image's Python (compose/spark/Dockerfile installs the lab in it), not
        # this machine's interpreter path
        builder = (builder.config("spark.pyspark.python", os.environ.get("LAB_SPARK_EXECUTOR_PYTHON", "python3"))
                   .config("spark.pyspark.driver.python", env["PYSPARK_PYTHON"]))
    for key, value in (config or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    from lab.spark import feedback
    from lab.spark.source import LabKafkaDataSource

    spark.dataSource.register(LabKafkaDataSource)
    feedback.install(spark)
    return spark
