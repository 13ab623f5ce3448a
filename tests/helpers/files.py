"""Made-up files for the upload tests: photos of noise, a PNG that only claims its size, ZIPs and a ZIP member
with its headers changed."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from pathlib import Path

import numpy as np
from PIL import Image


def png_bytes(seed: int, size: tuple[int, int] = (64, 64)) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(np.random.default_rng(seed).integers(0, 256, (*size, 3), dtype=np.uint8)).save(buffer, "PNG")
    return buffer.getvalue()


def header_only_png(width: int, height: int) -> bytes:
    """A PNG whose header claims width x height pixels, a few bytes long."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 16)) + chunk(b"IEND", b"")
    )


def write_photos_zip(path: Path) -> Path:
    """Five photos in a folder inside the ZIP, a text file and an unreadable image."""
    with zipfile.ZipFile(path, "w") as archive:
        for i in range(5):
            archive.writestr(f"photos/{i}.png", png_bytes(i, (48 + 8 * i, 64)))
        archive.writestr("photos/readme.txt", "not an image")
        archive.writestr("photos/broken.jpg", b"\xff\xd8 truncated")
    return path


def patch_member(
    archive: bytes, name: str, *, flags: int | None = None, method: int | None = None, flip_data_byte: bool = False
) -> bytes:
    """`archive` with member `name`'s flag bits or compression method changed in its local and central
    headers, or one byte of its data flipped (a bad CRC)."""
    data, encoded = bytearray(archive), name.encode()
    for signature, name_at, flags_at in ((b"PK\x03\x04", 30, 6), (b"PK\x01\x02", 46, 8)):
        start = 0
        while (start := data.find(signature, start)) >= 0:
            length = struct.unpack_from("<H", data, start + name_at - 4 if signature == b"PK\x03\x04" else start + 28)[
                0
            ]
            if bytes(data[start + name_at : start + name_at + length]) == encoded:
                if flags is not None:
                    struct.pack_into(
                        "<H", data, start + flags_at, struct.unpack_from("<H", data, start + flags_at)[0] | flags
                    )
                if method is not None:
                    struct.pack_into("<H", data, start + flags_at + 2, method)
                if flip_data_byte and signature == b"PK\x03\x04":
                    extra = struct.unpack_from("<H", data, start + 28)[0]
                    data[start + 30 + length + extra + 20] ^= 0xFF
            start += 4
    return bytes(data)
