"""Models run one job at a time, and visitors take turns: a job holds the turn while it computes and, at each batch
boundary, hands it to a waiting job of another visitor, so a plain analysis waits about one batch of someone else's
map, not the whole map. Of the visitors' first waiting jobs (one visitor's jobs go in the order asked for), the one
that has computed least goes first (in bands of BAND_S seconds; within a band, the visitor served least recently):
a short job passes other visitors' long maps at each of its own boundaries too, rather than waiting one batch of
every map each time.

    turns = Turns()
    with turns.turn("203.0.113.5", report):   # waits its turn, telling `report` its place and the expected wait
        ...                                   # model work; turns.pause() at each batch boundary
"""

from __future__ import annotations

import itertools
import statistics
import threading
import time
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Iterator

from engine.analyses.attributions import about

Report = Callable[[float, str], None]
TELL_EVERY_S = 2.0  # a waiting job's place is told again at least this often
DEFAULT_TURN_S = 2.0  # a turn's expected length before any has been measured
BAND_S = 1.0  # jobs that have computed within the same whole number of these seconds are served visitor by visitor


@dataclass(eq=False)
class Ticket:
    """One job wanting the turn: whose it is and when it first asked (its place among its visitor's jobs)."""

    visitor: str
    order: int
    thread: int = field(default_factory=threading.get_ident)
    computed: float = 0.0  # seconds it has held the turn so far


class Turns:
    """One job computes at a time. Each visitor's jobs go in the order asked for; of the visitors' first waiting jobs,
    the next is the one that has computed least (in bands of `band_s` seconds), then whose visitor was served least
    recently (a visitor never served first); a job pausing at a batch boundary (`pause`) lets such a job go first and
    then waits for its own next turn."""

    def __init__(self, band_s: float = BAND_S) -> None:
        self._band_s = band_s
        self._room = threading.Condition()
        self._holder: Ticket | None = None
        self._waiting: list[Ticket] = []
        self._served: dict[str, int] = {}  # visitor: serial of their latest turn
        self._serial = itertools.count()
        self._order = itertools.count()
        self._started = 0.0
        self._lengths: deque[float] = deque(maxlen=20)  # recent turns' lengths, in seconds

    def holding(self) -> bool:
        """Whether the calling thread holds the turn (its calls run at once)."""
        return self._holder is not None and self._holder.thread == threading.get_ident()

    def computed(self) -> float:
        """Seconds the calling thread's job has held the turn so far, its current turn included (0 without one)."""
        with self._room:
            if not self.holding():
                return 0.0
            return self._holder.computed + time.monotonic() - self._started

    def jobs(self, visitor: str) -> int:
        """`visitor`'s jobs waiting or computing."""
        with self._room:
            holder = self._holder is not None and self._holder.visitor == visitor
            return holder + sum(1 for ticket in self._waiting if ticket.visitor == visitor)

    @contextmanager
    def turn(self, visitor: str, report: Report | None = None) -> Iterator[None]:
        """Hold the turn for the block, waiting for it first (re-entrant in the thread holding it)."""
        if self.holding():
            yield
            return
        ticket = Ticket(visitor, next(self._order))
        self._wait(ticket, report)
        try:
            yield
        finally:
            with self._room:
                self._hand_over()

    def pause(self) -> None:
        """At a batch boundary: when another visitor's job waits, let the next job have the turn and wait for ours
        again; otherwise go on at once."""
        with self._room:
            ticket = self._holder
            if ticket is None or ticket.thread != threading.get_ident():
                return
            if not any(waiting.visitor != ticket.visitor for waiting in self._waiting):
                return
            self._hand_over()
        self._wait(ticket, None)

    def _wait(self, ticket: Ticket, report: Report | None) -> None:
        told = 0.0
        with self._room:
            self._waiting.append(ticket)
            self._room.notify_all()
        try:
            while True:
                with self._room:
                    if self._holder is None and self._next() is ticket:
                        self._waiting.remove(ticket)
                        self._holder, self._started = ticket, time.monotonic()
                        self._served[ticket.visitor] = next(self._serial)
                        return
                    jobs, seconds = self._place(ticket, self._waiting)
                    if report is None or time.monotonic() - told < TELL_EVERY_S:
                        self._room.wait(TELL_EVERY_S)
                        continue
                told = time.monotonic()
                report(0.0, waiting_line(jobs, seconds))  # outside the lock: it may stop the job (an abandoned one)
        except BaseException:
            with self._room:
                if ticket in self._waiting:
                    self._waiting.remove(ticket)
                self._room.notify_all()
            raise

    def _hand_over(self) -> None:
        """End the holder's turn (the lock held): its length noted, the waiting jobs woken."""
        length = time.monotonic() - self._started
        self._lengths.append(length)
        if self._holder is not None:
            self._holder.computed += length
        self._holder = None
        self._room.notify_all()

    def _rank(self, ticket: Ticket) -> tuple[int, int, int]:
        return int(ticket.computed // self._band_s), self._served.get(ticket.visitor, -1), ticket.order

    def _next(self) -> Ticket | None:
        """Among each visitor's first waiting job (a visitor's jobs go in the order asked for), the least ranked."""
        heads: dict[str, Ticket] = {}
        for ticket in self._waiting:
            if ticket.visitor not in heads or ticket.order < heads[ticket.visitor].order:
                heads[ticket.visitor] = ticket
        return min(heads.values(), key=self._rank, default=None)

    def _place(self, ticket: Ticket, waiting: list[Ticket]) -> tuple[int, float]:
        """Jobs before `ticket` (the holder's included) and their expected seconds, at the recent turns' median."""
        before = sum(1 for other in waiting if other is not ticket and self._rank(other) < self._rank(ticket))
        before += self._holder is not None
        turn = statistics.median(self._lengths) if self._lengths else DEFAULT_TURN_S
        return before, before * turn


def waiting_line(jobs: int, seconds: float) -> str:
    """'Waiting for the models: 2 jobs ahead of yours, about 20 s'."""
    return f"Waiting for the models: {jobs} job{'s' * (jobs != 1)} ahead of yours, {about(seconds)}"
