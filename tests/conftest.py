"""Hypothesis profiles for the plugin's own tests (here, not in the repository's conftest.py:
the audit command runs with the plain install, which has no Hypothesis)."""

import os

import pytest
from hypothesis import HealthCheck, settings

# dev: quick local runs; ci: Hypothesis's own default of 100 examples, no deadline (CI machines
# are noisy), the blob to reproduce a failure; fuzz-long: the deep run (docs/faults.md). At 200
# examples the property tests alone took 75 s of the suite's 200 s of CPU.
settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile(
    "ci", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.register_profile("fuzz-long", max_examples=5000, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(scope="module")
def shared_server():
    """One local fake OpenAI/Anthropic server per test module; each test configures it afresh
    (``FakeAPI.reconfigure``), so no setting or request leaks from one test to the next."""
    from pytest_optbench.testing import FakeAPI

    with FakeAPI() as server:
        yield server


@pytest.fixture
def elicitors(tmp_path):
    """``elicitors(provider, engine, store=None, kind=ApiElicitor, **kwargs)``: an elicitor
    (``ApiElicitor``, or ``kind=BatchElicitor``) on one store file of this test (each with its own
    connection, like processes), closed with its store when the test ends. The unit tests of the
    engine, batches, modes and hostile replies build theirs here."""
    from pytest_optbench.elicit.engine import ApiElicitor
    from pytest_optbench.elicit.store import ResponseStore

    created = []

    def build(provider, engine, store=None, kind=ApiElicitor, **kwargs):
        elicitor = kind(provider, ResponseStore(store or tmp_path / "responses.sqlite"), engine, **kwargs)
        created.append(elicitor)
        return elicitor

    yield build
    for elicitor in created:
        elicitor.close()
        elicitor.store.close()
