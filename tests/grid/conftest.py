"""A local Ray with 2 CPUs, started once for the test session by the tests that need it (a start takes seconds)."""

from __future__ import annotations

from typing import Iterator

import pytest


@pytest.fixture(scope="session")
def ray_address() -> Iterator[str]:
    import ray  # in the test extra: the Ray executor is always tested
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()

