"""One local SparkSession for the whole test session (it takes ~10 s to start here), shared by every Spark test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    from lab.spark.session import SparkUnavailable, check_requirements, session

    try:
        check_requirements()
    except SparkUnavailable as missing:
        pytest.skip(f"Spark tests: {missing}")
    spark_session = session("lab-tests", "local[2]")
    yield spark_session
    spark_session.stop()
