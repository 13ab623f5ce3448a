"""Fair turns on the models: a visitor's short job goes between the batches of another visitor's long one, is told
its place while it waits, and neither job's hooks or lesions act on the other's passes."""

from __future__ import annotations

import threading
import time

import numpy as np
import torch

import engine
from app.backend.service import Service
from app.server.context import CURRENT, VISITOR, Work
from app.server.refusal import Refused
from app.server.turns import Turns
from app.server.work import PER_VISITOR

BATCHES, BATCH_S = 12, 0.2


def test_a_short_job_waits_about_one_batch_of_a_long_one():
    turns, finished, told = Turns(), {}, []
    long_started = threading.Event()

    def long_job() -> None:
        with turns.turn("teacher"):
            long_started.set()
            for _ in range(BATCHES):
                time.sleep(BATCH_S)  # a batch
                turns.pause()  # its boundary
        finished["long"] = time.monotonic()

    def short_job() -> None:
        asked = time.monotonic()
        with turns.turn("student", lambda fraction, line: told.append(line)):
            finished["short"] = time.monotonic()
        finished["short wait"] = finished["short"] - asked

    teacher = threading.Thread(target=long_job)
    teacher.start()
    long_started.wait(5)
    student = threading.Thread(target=short_job)
    student.start()
    student.join(30)
    teacher.join(30)
    assert finished["short"] < finished["long"] - (BATCHES - 3) * BATCH_S  # before most of the long job's batches
    assert finished["short wait"] < 3 * BATCH_S + 0.5
    assert told and told[0].startswith("Waiting for the models: 1 job ahead of yours, about ")


def test_a_short_job_passes_long_maps_at_each_of_its_own_boundaries():
    """Four visitors' long maps have been computing for a while; a fifth visitor's analysis pauses at 5 boundaries of
    its own. Served in turns alone it would wait one batch of every map at each boundary (about 20 batches); having
    computed least, it goes first each time and waits at most the batch in progress."""
    turns, batches, lock = Turns(band_s=0.25), [], threading.Lock()  # bands of 0.25 s, batches of 0.05 s
    stop, short_done = threading.Event(), {}

    def long_job(visitor: str) -> None:
        with turns.turn(visitor):
            while not stop.is_set():
                time.sleep(0.05)  # a batch
                with lock:
                    batches.append(time.monotonic())
                turns.pause()

    def short_job() -> None:
        with turns.turn("student"):
            short_done["first turn"] = time.monotonic()
            for _ in range(5):
                time.sleep(0.005)  # a tenth of a band in all, as a plain analysis is to a long map
                turns.pause()
        short_done["end"] = time.monotonic()

    maps = [threading.Thread(target=long_job, args=(f"visitor {i}",)) for i in range(4)]
    for thread in maps:
        thread.start()
    while len(batches) < 4 * 6:  # every map has computed over a band (maps take turns: 6 batches each)
        time.sleep(0.05)
    student = threading.Thread(target=short_job)
    student.start()
    student.join(60)
    stop.set()
    for thread in maps:
        thread.join(30)
    during = sum(short_done["first turn"] < t < short_done["end"] for t in batches)
    assert during <= 1, f"{during} batches of other maps ran between the analysis' first turn and its end"


def test_visitors_are_served_in_turns_not_in_order_of_asking():
    turns, order = Turns(), []

    def job(visitor: str, name: str) -> None:
        with turns.turn(visitor):
            order.append(name)

    with turns.turn("busy"):  # while one job holds the turn, a greedy visitor asks 3 times, then another once
        threads = [threading.Thread(target=job, args=("greedy", f"greedy {i}")) for i in range(3)]
        threads.append(threading.Thread(target=job, args=("other", "other")))
        for thread in threads:
            thread.start()
            time.sleep(0.1)  # in this order of asking
    for thread in threads:
        thread.join(10)
    assert order == ["greedy 0", "other", "greedy 1", "greedy 2"]


def test_a_lesion_acts_only_on_the_passes_of_the_job_that_made_it():
    model = engine.create_model("resnet18", "random")
    x = torch.from_numpy(np.random.default_rng(0).random((1, 3, 224, 224), dtype=np.float32))
    with torch.inference_mode():
        intact = model.module(x)
    seen: dict[str, torch.Tensor] = {}
    lesioned, other_ran = threading.Event(), threading.Event()

    def other_job() -> None:  # another visitor's pass, made while the lesion is on
        lesioned.wait(10)
        with torch.inference_mode():
            seen["other"] = model.module(x)
        other_ran.set()

    other = threading.Thread(target=other_job)
    other.start()
    units = [i for i, spec in enumerate(model.spec.blocks(model.module)) if spec.can_lesion][:3]
    with engine.Lesion(model, units), torch.inference_mode():
        lesioned.set()
        other_ran.wait(30)
        seen["own"] = model.module(x)
    other.join(10)
    assert torch.equal(seen["other"], intact)
    assert not torch.allclose(seen["own"], intact)


def test_a_plain_analysis_is_answered_while_another_visitors_map_computes(sample_photo):
    """A student's analysis is answered while a teacher's long map is still computing (it then stops the map, which
    ends at its next batch)."""
    service = Service()
    run = service.analyze(sample_photo, ["vit_tiny_patch16_224"], "random")[0]
    marks: dict[str, float] = {}
    teachers = Work("teacher", None)

    def map_job() -> None:
        CURRENT.set(teachers)
        try:
            service.attribution(run, "Integrated Gradients", 0, steps=128)
            marks["map"] = time.monotonic()
        except Refused:
            marks["map stopped"] = time.monotonic()

    teacher = threading.Thread(target=map_job)
    teacher.start()
    while service.forward_passes < 3:  # its first batches
        time.sleep(0.05)
    VISITOR.set("student")
    runs = service.analyze(sample_photo, ["vit_tiny_patch16_224"], "random")
    marks["analysis"] = time.monotonic()
    teachers.stopped = "the teacher left"
    teacher.join(600)
    assert "map" not in marks and marks["analysis"] < marks["map stopped"]  # answered while the map computed
    assert runs[0].result.blocks == run.result.blocks  # measured as if alone


def test_a_visitor_has_at_most_the_per_address_limit_of_jobs_waiting():
    """Streamlit has no guard in front: the service counts a visitor's jobs itself, as the guard counts requests."""
    service, done, refused = Service(), [], []
    held, release = threading.Event(), threading.Event()

    def holder() -> None:  # every job waits behind this one
        with service.turns.turn("someone else"):
            held.set()
            release.wait(60)

    def job(visitor: str) -> None:
        VISITOR.set(visitor)
        try:
            done.append(service.call(time.sleep, 0))
        except Refused as exc:
            refused.append(str(exc))

    threading.Thread(target=holder).start()
    held.wait(10)
    jobs = [threading.Thread(target=job, args=("greedy",)) for _ in range(PER_VISITOR)]
    for thread in jobs:
        thread.start()
    while service.turns.jobs("greedy") < PER_VISITOR:
        time.sleep(0.05)
    job("greedy")  # one more: refused at once
    assert refused == [
        f"{PER_VISITOR} jobs from your address are waiting or running (at most {PER_VISITOR}); "
        "try again when they have finished"
    ]
    jobs.append(threading.Thread(target=job, args=("another",)))  # another visitor is still let in
    jobs[-1].start()
    while service.turns.jobs("another") < 1:
        time.sleep(0.05)
    release.set()
    for thread in jobs:
        thread.join(30)
    assert len(done) == PER_VISITOR + 1
