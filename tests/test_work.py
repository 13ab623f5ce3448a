"""Where model work runs (app/server/work.py): one job for two askers of the same work at once, its result returned
to both and kept by neither runner; a job stopped or failed leaves its waiting asker to run its own."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from app.server.work import Flights, Inline, ModelThread


def test_one_job_for_two_askers_of_the_same_work_at_once():
    runner, made = ModelThread(), []

    def job(x: int) -> int:
        made.append(x)
        time.sleep(0.3)  # the second asker comes while it runs
        return 2 * x

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda _: runner.call_once("map", job, (21,), {}), range(2)))
    assert results == [42, 42] and made == [21]
    assert runner.call_once("map", job, (21,), {}) == 42 and made == [21, 21]  # nothing kept: made again
    assert Inline().call_once("other", job, (1,), {}) == 2


def test_a_waiting_asker_runs_its_own_job_when_the_first_fails_and_may_stop_waiting():
    flights, started, made = Flights(), threading.Event(), []

    def failing() -> int:
        started.set()
        time.sleep(0.3)
        raise RuntimeError("stopped")

    def second() -> int:
        made.append("second")
        return 7

    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(flights.once, "map", failing)
        started.wait()
        assert flights.once("map", second) == 7 and made == ["second"]  # the first one's failure is not its own
        with pytest.raises(RuntimeError):
            first.result()

    def slow() -> int:
        started.set()
        time.sleep(1.5)
        return 1

    def stop() -> None:
        raise TimeoutError("the waiting page went away")

    started.clear()
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(flights.once, "map", slow)
        started.wait()
        with pytest.raises(TimeoutError, match="went away"):
            flights.once("map", second, waiting=stop)
        assert running.result() == 1
