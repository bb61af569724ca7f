"""One event loop on a background thread, shared by the session's async SDK clients."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    """One event loop on a background thread for the whole session: the SDKs' async HTTP
    clients keep connections bound to the loop that opened them."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="optbench-loop", daemon=True)
        self.thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T], meanwhile: Callable[[], None] | None = None,
            after: threading.Event | None = None) -> T:
        """Run ``coroutine`` on the loop and wait for its result. ``meanwhile``: work of the
        calling thread done while it waits, once ``after`` is set (or the coroutine is done)."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        try:
            if meanwhile is not None:
                if after is not None:
                    future.add_done_callback(lambda _: after.set())
                    after.wait()
                meanwhile()
            return future.result()
        except BaseException:  # Ctrl-C: the requests in flight are cancelled, not left running
            future.cancel()
            raise

    def close(self) -> None:
        """Cancel what is still running (after Ctrl-C), then stop: a pending task destroyed
        with its loop prints "Task was destroyed but it is pending!"."""
        if self.loop.is_running():
            with contextlib.suppress(Exception):  # closing must never fail a finished run
                asyncio.run_coroutine_threadsafe(_cancel_pending(), self.loop).result(timeout=5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)
        if not self.thread.is_alive():
            self.loop.close()


async def _cancel_pending() -> None:
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
