"""Where model work runs (app/server/work.py): a result kept where the work runs is made once for two askers, and
stays kept for the next one."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from app.server.work import Inline, ModelThread


def test_a_kept_result_is_made_once_for_two_askers():
    runner, store, made = ModelThread(), {}, []

    def job(x: int) -> int:
        made.append(x)
        time.sleep(0.3)  # the second asker waits behind it for the turn
        return 2 * x

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda _: runner.call_kept(store, "map", job, (21,), {}), range(2)))
    assert results == [42, 42] and made == [21] and store == {"map": 42}
    assert runner.call_kept(store, "map", job, (21,), {}) == 42 and made == [21]  # kept: not made again
    assert Inline().call_kept(store, "other", job, (1,), {}) == 2 and store["other"] == 2
