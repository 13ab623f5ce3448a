"""A ZIP whose central directory names one stored member many times, as issue 36's hostile run sent: built for
bench/hostile.py and tests/test_zip_budget.py alike."""

from __future__ import annotations

import io
import struct
import zipfile


def one_copy_named(copies: int, data: bytes) -> bytes:
    """A ZIP of `data` stored once (deflated) whose central directory names it `copies` times: a000.png,
    a001.png, ..., every entry pointing at the one stored copy."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("a000.png", data)
    raw = buffer.getvalue()
    end = raw.rindex(b"PK\x05\x06")
    size, offset = struct.unpack("<II", raw[end + 12 : end + 20])
    record = raw[offset : offset + size]
    records = b"".join(record.replace(b"a000.png", f"a{i:03d}.png".encode()) for i in range(copies))
    directory_end = raw[end : end + 8] + struct.pack("<HHII", copies, copies, len(records), offset) + raw[end + 20 :]
    return raw[:offset] + records + directory_end
