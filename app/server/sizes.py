"""What an object keeps in memory, deeply: the bytes of everything reachable from it that nothing shared holds (a
session's state without the page, the models and the code every session shares). One measure for the benchmark of
what a session keeps (bench/session_memory.py) and the test that bounds it (tests/test_session_memory.py).

    kept_bytes(page.runs)                                  # a page model's runs, all they reach
    kept_bytes(session, shared=reachable(demo, stop=[holder.session_data]))   # one Gradio session's own bytes
"""

from __future__ import annotations

import gc
import sys
import types
from typing import Iterable

import numpy as np

# reached but never a session's own: code and the modules, classes and threads it runs in
NOT_KEPT = (
    types.ModuleType,
    type,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.CodeType,
    types.FrameType,
    types.MappingProxyType,
)


def _referents(obj: object) -> list:
    """What `obj` holds: an array's base (numpy arrays are not traversed by gc), else gc's referents."""
    if isinstance(obj, np.ndarray):
        return [] if obj.base is None else [obj.base]
    return gc.get_referents(obj)


def _is_tensor(obj: object) -> bool:
    return type(obj).__module__.startswith("torch") and hasattr(obj, "untyped_storage")


def _storage(tensor: object) -> tuple[str, int]:
    """A mark of a tensor's storage, the same for every tensor (and view) on it."""
    return "storage", tensor.untyped_storage().data_ptr()  # type: ignore[attr-defined]


def _own_bytes(obj: object, seen: set) -> int:
    """`obj`'s own bytes: sys.getsizeof (an array owning its data counts it), a torch tensor's storage once."""
    size = sys.getsizeof(obj, 0)
    if _is_tensor(obj) and (mark := _storage(obj)) not in seen:
        seen.add(mark)
        size += obj.untyped_storage().nbytes()  # type: ignore[attr-defined]
    return size


def walk(root: object, seen: set) -> Iterable[object]:
    """Every object reachable from `root` not in `seen` (ids; they are added), but code, modules and classes."""
    todo = [root]
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, NOT_KEPT):
            continue
        seen.add(id(obj))
        yield obj
        if _is_tensor(obj):
            continue  # a tensor's storage is counted by its size; its autograd graph is not walked
        todo.extend(_referents(obj))


def reachable(root: object, stop: Iterable[object] = ()) -> set:
    """What is reachable from `root` (what is shared: the objects' ids and the tensors' storages), not going through
    the objects in `stop` (the sessions' own state) nor past them."""
    stops = {id(obj) for obj in stop}
    seen = set(stops)
    for obj in walk(root, seen):
        if _is_tensor(obj):
            seen.add(_storage(obj))
    return seen - stops


def kept_bytes(root: object, shared: set | None = None) -> int:
    """The bytes of everything reachable from `root` but not in `shared` (from `reachable`), each counted once: its
    Python objects, arrays' data and torch tensors' storage."""
    seen = set(shared or ())
    return sum(_own_bytes(obj, seen) for obj in walk(root, seen))
