"""Bounds on image stimuli (TAT image folders, images sent to vision models).

An image file is checked before it is read: a regular file (no device, FIFO or /proc entry),
at most ``MAX_IMAGE_BYTES`` by its ``stat`` size, a PNG or JPEG by its first bytes, and at
most ``MAX_IMAGE_SIDE`` pixels a side by its header, which Pillow reads without decoding the
pixels (a 2^31 x 2^31 header is refused, never allocated). Pillow is imported only here and
only when an image is checked: the plugins that show images depend on it, the core does not.
"""

from __future__ import annotations

import io
import struct
from pathlib import Path
from typing import IO

from psymetrics_core.base.errors import PsymError
from psymetrics_core.base.reading import InputError, regular_file

__all__ = [
    "MAX_IMAGE_BYTES",
    "MAX_IMAGE_SIDE",
    "image_mime",
    "check_image_file",
    "check_image_bytes",
]

MAX_IMAGE_BYTES = 20 * 1024 * 1024  # a 10,000 x 10,000 PNG of a scanned card is well below
MAX_IMAGE_SIDE = 10_000


def image_mime(data: bytes) -> str | None:
    """``image/png`` or ``image/jpeg`` from the file's magic bytes, else None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    return None


def _dimensions(fh: IO[bytes], mime: str, where: str) -> tuple[int, int]:
    """(width, height) from the header only (Pillow's format plugin, no decoding and no
    decompression-bomb check: the bound below is ours)."""
    from PIL import JpegImagePlugin, PngImagePlugin  # on demand: images only (Pillow)

    cls = PngImagePlugin.PngImageFile if mime == "image/png" else JpegImagePlugin.JpegImageFile
    try:
        img = cls(fh)
    except (OSError, SyntaxError, ValueError, EOFError, struct.error, IndexError) as exc:
        raise PsymError(f"{where}: the image header cannot be read ({exc})"[:300]) from None
    return img.size


def _check_size(width: int, height: int, where: str) -> None:
    if not (0 < width <= MAX_IMAGE_SIDE and 0 < height <= MAX_IMAGE_SIDE):
        raise PsymError(
            f"{where}: the image header says {width:,} x {height:,} pixels, over the "
            f"{MAX_IMAGE_SIDE:,}-pixel-a-side limit for images"
        )


def check_image_file(path: str | Path, where: str = "") -> str:
    """The MIME type of the image file ``path`` after the checks of the module docstring;
    one ``PsymError`` naming ``where`` (default: the path) otherwise."""
    p = Path(path)
    where = where or str(p)
    try:
        st = regular_file(p, "PNG or JPEG image")
    except InputError as exc:
        raise PsymError(f"{where}: {str(exc).removeprefix(f'{p}: ')}") from None
    except OSError as exc:
        raise PsymError(f"{where}: cannot read the image ({exc.strerror or exc})") from None
    if st.st_size > MAX_IMAGE_BYTES:
        raise PsymError(
            f"{where}: the image is {st.st_size:,} bytes, over the {MAX_IMAGE_BYTES:,}-byte "
            "limit for images"
        )
    with p.open("rb") as fh:
        mime = image_mime(fh.read(16))
        if mime is None:
            raise PsymError(f"{where} is not a PNG or JPEG image")
        fh.seek(0)
        _check_size(*_dimensions(fh, mime, where), where)
    return mime


def check_image_bytes(data: bytes, where: str) -> str:
    """The MIME type of the image ``data`` (as sent to a model), with the same bounds."""
    if len(data) > MAX_IMAGE_BYTES:
        raise PsymError(
            f"{where}: the image is {len(data):,} bytes, over the {MAX_IMAGE_BYTES:,}-byte limit "
            "for images"
        )
    mime = image_mime(data[:16])
    if mime is None:
        raise PsymError(f"{where} is not a PNG or JPEG image")
    _check_size(*_dimensions(io.BytesIO(data), mime, where), where)
    return mime
