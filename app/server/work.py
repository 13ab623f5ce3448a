"""Where model work runs: one seam, two places. A `Runner` takes a job (a method of the service or of an object
holding it, with its arguments) and runs it:

- `ModelThread`: on this process's model threads, one job at a time in visitors' turns (turns.py): a laptop, a CPU
  Space, a school server, and the CPU of a ZeroGPU Space when the GPU is not there for a visitor;
- `app.server.zero_gpu.ZeroGPU`: in the forked GPU worker of a Hugging Face ZeroGPU Space, chosen at start when
  `SPACES_ZERO_GPU` is set (`runner_for_this_host`).

Both refuse a visitor's job past `PER_VISITOR` waiting or running, tell a waiting job its place through its `report`,
and stop an abandoned job at its next batch boundary.

    runner = ModelThread()
    runner.call(Service.analyze, (service, picture, names), {"report": report})
"""

from __future__ import annotations

import contextvars
import threading
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, Callable, Hashable, Iterator, Protocol

from app.server.context import stoppable, visitor
from app.server.refusal import refuse
from app.server.turns import Turns
from app.server.visitors import Fairness

WAITING = "Waiting for the same work, asked for just before"
PER_VISITOR = Fairness().per_address  # jobs one visitor may have waiting or running
MODEL_THREADS = 64  # jobs waiting for their turn or computing at once (Gradio's queue holds 64)


class Runner(Protocol):
    """Where model work runs."""

    def call(self, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        """`fn(*args, **kwargs)` where model work runs, the caller waiting; at once when the caller's thread is
        already there (a job's own nested calls)."""

    def call_here(self, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        """`fn(*args, **kwargs)` on this process's own models (loading a model to read its architecture)."""

    def call_once(self, key: Hashable, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        """`fn(*args, **kwargs)` where model work runs, as `call`; asked again with the same `key` while that job runs
        (a Streamlit rerun asks again for the map its interrupted run waits for; a Gradio page sends a map's request
        again), it waits for the running job's result instead of computing it again (and, if that job fails or is
        stopped, runs its own). Nothing is kept: the callers keep what it returns."""

    def pause(self) -> None:
        """At a batch boundary: let another visitor's waiting job go first."""

    def computed(self) -> float:
        """Seconds the calling job has computed so far (0 outside a job)."""


WAITING_S = 0.5  # how often a job waiting for the same job's result looks whether it must stop


class Flights:
    """Jobs by key while they run: a second ask with the key of a running job waits for that job's result."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[Hashable, Future] = {}

    def once(self, key: Hashable, job: Callable[[], Any], waiting: Callable[[], None] = lambda: None) -> Any:
        """`job()`, or the result of the job running under `key` (`waiting` is called every WAITING_S meanwhile, and
        may raise to stop waiting); when that one fails or is stopped, this ask runs its own."""
        while True:
            with self._lock:
                running, mine = self._running.get(key), False
                if running is None:
                    running = self._running[key] = Future()
                    mine = True
            if mine:
                break
            while True:
                try:
                    return running.result(WAITING_S)
                except TimeoutError:
                    waiting()
                except Exception:  # noqa: BLE001 - its own ask's failure: this ask tries for itself
                    break
        try:
            result = job()
        except BaseException as exc:
            self._end(key)
            running.set_exception(exc)
            raise
        self._end(key)
        running.set_result(result)
        return result

    def _end(self, key: Hashable) -> None:
        with self._lock:
            del self._running[key]


def too_many(jobs: int) -> Exception:
    """The refusal of a visitor's job past PER_VISITOR."""
    return refuse(
        f"{jobs} jobs from your address are waiting or running (at most {PER_VISITOR}); "
        "try again when they have finished",
        "a job over its visitor's limit",
    )


class VisitorJobs:
    """How many jobs each visitor has waiting or running, refused past PER_VISITOR (the guard's per-address limit,
    for Streamlit and ZeroGPU too)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: Counter[str] = Counter()

    @contextmanager
    def one(self, who: str, waiting: int = 0) -> Iterator[None]:
        """Count a job of `who` for the block (`waiting`: their jobs counted elsewhere too); refused past the limit."""
        with self._lock:
            if (jobs := self._jobs[who] + waiting) >= PER_VISITOR:
                raise too_many(jobs)
            self._jobs[who] += 1
        try:
            yield
        finally:
            with self._lock:
                self._jobs[who] -= 1
                if not self._jobs[who]:
                    del self._jobs[who]


class ModelThread:
    """Model work on a model thread once it holds the models' turn, with the caller's context variables (Gradio's
    progress bar reads them), the caller waiting. While it waits, its `report` keyword (if any) is told its place
    and expected wait, and an abandoned request stops waiting. (Off the caller's thread, so that Streamlit's reruns
    cannot interrupt a computation.)"""

    def __init__(self, threads: int = MODEL_THREADS) -> None:
        self.turns = Turns()
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="models")
        self._flights = Flights()

    def call(self, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        if self.turns.holding():
            return fn(*args, **kwargs)
        who, report = visitor(), stoppable(kwargs.get("report"))
        if (jobs := self.turns.jobs(who)) >= PER_VISITOR:
            raise too_many(jobs)

        def in_turn() -> Any:
            with self.turns.turn(who, report):
                return fn(*args, **kwargs)

        return self._pool.submit(contextvars.copy_context().run, in_turn).result()

    call_here = call

    def call_once(self, key: Hashable, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        told = stoppable(kwargs.get("report"))
        return self._flights.once(key, lambda: self.call(fn, args, kwargs), lambda: told(0.0, WAITING))

    def pause(self) -> None:
        self.turns.pause()

    def computed(self) -> float:
        return self.turns.computed()


class Inline:
    """Model work on the calling thread: a ZeroGPU worker's own jobs, which arrive there one at a time."""

    def call(self, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        return fn(*args, **kwargs)

    call_here = call

    def call_once(self, key: Hashable, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        return fn(*args, **kwargs)

    def pause(self) -> None:
        return None

    def computed(self) -> float:
        return 0.0
