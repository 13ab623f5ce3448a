"""Reading images out of a ZIP without trusting it: each member's declared size and compression ratio
are checked before it is read, members are streamed with a cap, and a member that is encrypted, corrupt
or packed with an unsupported method is refused with its name and the reason (the caller skips it).
A pixel budget bounds the decoding work of a whole request.
"""

from __future__ import annotations

import io
import lzma
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from .errors import ImageError, shown

SUPPORTED_METHODS = {
    zipfile.ZIP_STORED: "stored",
    zipfile.ZIP_DEFLATED: "deflate",
    zipfile.ZIP_BZIP2: "bzip2",
    zipfile.ZIP_LZMA: "lzma",
}
READ_ERRORS = (zipfile.BadZipFile, zlib.error, lzma.LZMAError, EOFError, NotImplementedError, RuntimeError, OSError)


@dataclass(frozen=True)
class ZipLimits:
    """What one member may unpack to: `member_bytes` at most, and at most `ratio` times its packed size."""

    member_bytes: int = 64 * 2**20
    ratio: float = 100.0


def member_problem(info: zipfile.ZipInfo, limits: ZipLimits) -> str | None:
    """Why member `info` must not be read, from its header alone; None if it may be."""
    if info.flag_bits & 0x1:
        return "encrypted"
    if info.compress_type not in SUPPORTED_METHODS:
        return f"packed with compression method {info.compress_type}, which is not supported (use deflate)"
    if info.file_size > limits.member_bytes:
        return (
            f"unpacks to {info.file_size / 2**20:.0f} MB, over the {limits.member_bytes / 2**20:.0f} MB limit per file"
        )
    if info.file_size > 64 * 2**10 and info.file_size > limits.ratio * max(1, info.compress_size):
        return (
            f"compressed {info.file_size / max(1, info.compress_size):.0f}:1, over {limits.ratio:.0f}:1 (a ZIP bomb?)"
        )
    return None


def read_member(archive: zipfile.ZipFile, name: str, limits: ZipLimits = ZipLimits()) -> bytes:
    """The bytes of member `name`, streamed and capped; ImageError naming the member and the reason
    for one that cannot be read safely."""
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise ImageError(f"{shown(name)}: not in the ZIP") from None
    problem = member_problem(info, limits)
    if problem:
        raise ImageError(f"{shown(name)}: {problem}")
    try:
        with archive.open(info) as member:  # stops at the declared size, checks the CRC at the end
            data = member.read(limits.member_bytes + 1)
    except READ_ERRORS as exc:
        raise ImageError(f"{shown(name)}: corrupt in the ZIP ({shown(exc, 80)})") from None
    if len(data) > limits.member_bytes:
        raise ImageError(f"{shown(name)}: unpacks to more than {limits.member_bytes / 2**20:.0f} MB")
    return data


def image_size(data: bytes | Path) -> tuple[int, int] | None:
    """(width, height) from an image's header, without decoding it; None if it is not a readable image."""
    try:
        with Image.open(io.BytesIO(data) if isinstance(data, bytes) else data) as image:
            return image.size
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombError):
        return None


def check_pixel_budget(sizes: list[tuple[int, int] | None], budget: int, what: str) -> int:
    """The total pixels of `sizes` (unreadable ones count 0); ImageError if over `budget`."""
    total = sum(w * h for w, h in (s for s in sizes if s))
    if total > budget:
        raise ImageError(
            f"{what} hold {total / 1e6:,.0f} megapixels in all; this server decodes at most "
            f"{budget / 1e6:,.0f} per request: downscale the images, send fewer, or run "
            "python -m engine curves yourself"
        )
    return total
