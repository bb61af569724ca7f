"""Under pytest-xdist, the controller asks an API model for every prompt of the prefetch.

A worker is a new interpreter: before it could ask, it would import the provider's SDK (about
a second of one core for OpenAI's), after its own start and collection. The controller is up
first and idle while its workers start, so it imports the SDK then, and asks as soon as the
first worker has collected and handed over the prompts (session/handover.py: a file beside
the store, written whole, for this run only). The workers then read the answers from the store
as they arrive, exactly as they read those of the worker that asked before (engine.ASKER),
and ask for what the controller left missing only if it stops storing anything.

The controller asks only where a worker would: an API model in real time (not
``--optbench-batch``, not ``--optbench-offline``). Whether a conftest overrides the model
fixture only the workers can see; they hand over no prompts then, and nothing is asked.
"""

from __future__ import annotations

import contextlib
import threading

import pytest

from ..options import RunOptions
from .handover import plan_path, take_over
from .worker import WorkerSession, warm_scoring

ASKER_INPUT = "optbench_controller_asks"  # the workerinput flag: hand the prompts over, do not ask


def start_asker(options: RunOptions, run_id: str) -> ControllerAsker | None:
    """The controller's asker for these options, asking as soon as it is handed the prompts;
    None where the workers ask, or nobody does: no model, a simulated one, batches, offline."""
    if not options.model_spec or options.batch or options.engine.offline:
        return None
    asker = ControllerAsker(options, run_id)
    if asker.session.elicitor is None:  # not an API model: nothing to ask, no store
        asker.close()
        return None
    asker.start()
    return asker


class ControllerAsker:
    """The controller's engine (a WorkerSession that asks and runs no item) and the thread
    that waits for the prompts and asks for them."""

    def __init__(self, options: RunOptions, run_id: str) -> None:
        self.session = WorkerSession(options, run_id, asks=True)
        self.session.build_model()  # a bad spec, key or store: a usage error now; the SDK loads meanwhile
        self.path = plan_path(options.cache_dir, run_id)
        self._over = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="optbench-controller-asks", daemon=True)

    @property
    def notes(self) -> list[str]:
        return list(getattr(self.session.model, "notes", []) or [])

    def start(self) -> None:
        self._thread.start()

    def _serve(self) -> None:
        from ..elicit.engine import PEER_POLL  # loaded with the engine by build_model

        elicitor = self.session.elicitor
        while elicitor is not None and not self._over.is_set():
            specs = take_over(self.path)
            if specs is None:
                self._over.wait(PEER_POLL)
            elif specs:
                # The scoring modules load once every request slot holds a request: before, they
                # would hold up the SDK's import and the first requests.
                elicitor.prefetch(specs, warm_scoring)
                return
            else:
                warm_scoring()
                return

    def finish(self) -> dict[str, int]:
        """The items have all run: stop asking (a worker that stopped waiting asked itself)
        and return what this process asked of the server."""
        self._end("the session's items have all run")
        return self.session.request_counts()

    def _end(self, reason: str) -> None:
        self._over.set()
        if self._thread.is_alive() and self.session.elicitor is not None:
            self.session.elicitor.halt(reason)  # the requests in flight are cut short
        self._thread.join()
        with contextlib.suppress(OSError):
            self.path.unlink()

    def faults(self) -> list[str]:
        return self.session.faults()

    def close(self) -> None:
        """The session ends (also when interrupted, before finish): nothing is left asking."""
        if self._thread.ident is not None:
            self._end("the session ended")
        self.session.close()


ASKER_KEY = pytest.StashKey[ControllerAsker]()
