"""A local fake of the OpenAI and Anthropic HTTP APIs for tests that never touch the internet.

``FakeAPI`` (``server``) speaks the real wire protocol of the real-time endpoints; its batch
APIs are ``batches``, its token log-probabilities ``logprobs``, what it saw of each request
``requests``. Users' own tests import it from ``pytest_optbench.api``.
"""

from .requests import FakeRequest
from .server import FakeAPI, default_answer

__all__ = ["FakeAPI", "FakeRequest", "default_answer"]
