"""Reading images out of a ZIP without trusting it: each member's declared size and compression ratio
are checked before it is read, members are streamed with a cap, and a member that is encrypted, corrupt
or packed with an unsupported method is refused with its name and the reason (the caller skips it).
A pixel budget bounds the decoding work of a whole request. `unpack_images` reads a request's images once,
refusing directories that list a member twice or point two members at one copy, within a budget of unpacked
bytes and a deadline.
"""

from __future__ import annotations

import io
import lzma
import time
import zipfile
import zlib
from dataclasses import dataclass, replace
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from ..errors import ImageError, shown

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


@dataclass(frozen=True)
class Unpacked:
    """A ZIP's images written once into a folder: `files` maps each written file's name to its member's name;
    `skipped` names the members that could not be read safely."""

    folder: Path
    files: dict[str, str]
    skipped: list[str]


def shared_entries(archive: zipfile.ZipFile) -> str | None:
    """Why the ZIP's directory is refused: a name listed twice, or two members pointing at one stored copy (the
    way a few MB can name one large member hundreds of times); None for a plain archive."""
    seen_names: set[str] = set()
    seen_data: dict[int, str] = {}
    for info in archive.infolist():
        if info.filename in seen_names:
            return f"it lists {shown(info.filename, 40)} more than once"
        seen_names.add(info.filename)
        if info.is_dir():
            continue
        if info.header_offset in seen_data:
            return f"{shown(info.filename, 40)} and {shown(seen_data[info.header_offset], 40)} share one stored copy"
        seen_data[info.header_offset] = info.filename
    return None


def unpack_images(
    source: Path, names: list[str], folder: Path, budget: int, deadline: float | None = None, limits=ZipLimits()
) -> Unpacked:
    """Members `names` of ZIP `source`, each read once (checked and capped as `read_member` does) and written
    into `folder` as a numbered file with its suffix, so every later pass reads plain files. ImageError for an
    archive whose members share names or data, whose images unpack to more than `budget` bytes in all (declared
    or read), or that is still being read past `deadline` (time.monotonic())."""
    files: dict[str, str] = {}
    skipped: list[str] = []
    with zipfile.ZipFile(source) as archive:
        problem = shared_entries(archive)
        if problem:
            raise ImageError(f"the ZIP is refused: {problem}; pack each image once (zip -r images.zip DIR)")
        infos = [archive.getinfo(name) for name in names]
        declared = sum(info.file_size for info in infos if member_problem(info, limits) is None)  # those to read
        if declared > budget:
            raise ImageError(
                f"the ZIP's images unpack to {declared / 2**20:,.0f} MB; this server unpacks at most "
                f"{budget / 2**20:,.0f} MB per request: send fewer or smaller images"
            )
        inflated = 0
        for index, name in enumerate(names):
            if deadline is not None and time.monotonic() > deadline:
                raise ImageError(
                    f"stopped after unpacking {index} of {len(names)} images: the request ran past its time budget"
                )
            try:
                data = read_member(archive, name, replace(limits, member_bytes=min(limits.member_bytes, budget)))
            except ImageError:
                skipped.append(name)
                continue
            inflated += len(data)
            if inflated > budget:
                raise ImageError(f"the ZIP's images unpack to more than {budget / 2**20:,.0f} MB per request")
            file = f"{index:05d}{Path(name).suffix.lower()}"
            (folder / file).write_bytes(data)
            files[file] = name
    return Unpacked(folder, files, skipped)
