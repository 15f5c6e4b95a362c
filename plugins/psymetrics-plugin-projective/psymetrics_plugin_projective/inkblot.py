"""Seeded procedural inkblots: ten cards per session that no model can have seen before.

Each card is drawn on the left half of the canvas from smooth value noise (low-resolution
uniform noise upsampled bicubically), a central envelope and a few random lobes; the ink mask
is the field above a coverage quantile, the ink carries grey shading from a second noise field,
and the half is mirrored, so every card is exactly bilaterally symmetric. Like the classic set,
cards II and III add red to black ink, VIII and IX are pastel colour with some grey, and X is
scattered multicolour blots; I, IV, V, VI and VII are achromatic. A card is a pure function of
(session seed, card number, size): the same seed gives byte-identical PNGs, and each card's
SHA-256 is recorded with the run.
"""

from __future__ import annotations

import functools
import hashlib
import io
from dataclasses import dataclass

import numpy as np

__all__ = ["Card", "ROMAN", "CHROMATIC", "make_card", "make_session", "card_seed"]

ROMAN = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X")
CHROMATIC = frozenset({2, 3, 8, 9, 10})
_RED = (0.78, 0.09, 0.13)
_PASTELS = ((0.93, 0.55, 0.62), (0.96, 0.62, 0.25), (0.45, 0.70, 0.52), (0.45, 0.62, 0.86))
_MULTI = (
    (0.93, 0.45, 0.55),
    (0.98, 0.75, 0.20),
    (0.35, 0.65, 0.40),
    (0.35, 0.50, 0.85),
    (0.90, 0.45, 0.15),
    (0.60, 0.45, 0.80),
)


@dataclass(frozen=True)
class Card:
    """One generated card: its number (1-10), seed, PNG bytes and their SHA-256."""

    number: int
    seed: int
    png: bytes
    width: int
    height: int

    @property
    def roman(self) -> str:
        """The card's Roman numeral, I to X."""
        return ROMAN[self.number - 1]

    @property
    def sha256(self) -> str:
        """SHA-256 of the PNG bytes (recorded so a run's stimuli can be verified)."""
        return hashlib.sha256(self.png).hexdigest()

    @property
    def chromatic(self) -> bool:
        """Whether the card carries colour (II, III, VIII, IX, X)."""
        return self.number in CHROMATIC


def card_seed(session_seed: int, number: int) -> int:
    """The seed of card ``number`` in the session seeded ``session_seed``."""
    digest = hashlib.sha256(f"psym-inkblot:{session_seed}:{number}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def make_session(seed: int, width: int = 1024, height: int = 768) -> list[Card]:
    """Cards I-X for one session."""
    return [make_card(n, seed, width, height) for n in range(1, 11)]


@functools.lru_cache(maxsize=10)  # a run's cards: each is sent, then hashed for the record
def make_card(number: int, session_seed: int, width: int = 1024, height: int = 768) -> Card:
    """Card ``number`` (1-10) of the session seeded ``session_seed`` as a PNG (the last ten
    made are kept: drawing one takes a fifth of a second, and a rorschach run needs each card
    when it sends it and again when it records its SHA-256)."""
    from PIL import Image

    if not 1 <= number <= 10:
        raise ValueError(f"card number must be 1-10, got {number}")
    if width % 2 or width < 64 or height < 48:
        raise ValueError("width must be even and at least 64 pixels, height at least 48")
    seed = card_seed(session_seed, number)
    rng = np.random.default_rng(seed)
    half = width // 2
    rgb = _draw_half(rng, number, half, height)
    full = np.concatenate([rgb, rgb[:, ::-1]], axis=1)
    buf = io.BytesIO()
    Image.fromarray(full, "RGB").save(buf, format="PNG")
    return Card(number, seed, buf.getvalue(), width, height)


def _noise(rng: np.random.Generator, h: int, w: int, cells: int) -> np.ndarray:
    """Smooth value noise in [0, 1] with about ``cells`` features across the height."""
    from PIL import Image

    gh, gw = max(2, cells), max(2, int(round(cells * w / h)))
    low = rng.random((gh, gw)).astype(np.float32)
    img = Image.fromarray(low, "F").resize((w, h), Image.Resampling.BICUBIC)
    return np.clip(np.asarray(img, dtype=np.float64), 0.0, 1.0)


def _draw_half(rng: np.random.Generator, number: int, w: int, h: int) -> np.ndarray:
    ys, xs = np.mgrid[0:h, 0:w]
    x = xs / (w - 1)  # 0 at the outer edge, 1 at the axis of symmetry
    y = (ys / (h - 1)) * 2 - 1
    field = 1 - (((1 - x) / 0.9) ** 2 + (y / 0.85) ** 2)
    field = field * 0.9 + 0.6 * _noise(rng, h, w, 5) + 0.25 * _noise(rng, h, w, 14)
    n_lobes = 8 if number == 10 else int(rng.integers(2, 6))
    for _ in range(n_lobes):
        cx, cy = rng.uniform(0.15, 0.95), rng.uniform(-0.75, 0.75)
        r = rng.uniform(0.05, 0.12) if number == 10 else rng.uniform(0.08, 0.22)
        field += rng.uniform(0.4, 0.8) * np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2 * r * r))
    if number in (2, 7, 9):  # a white space in the middle, as on these classic cards
        field -= 0.9 * np.exp(-((x - 1) ** 2 / 0.02 + (y - rng.uniform(-0.2, 0.2)) ** 2 / 0.06))
    if number == 10:  # scattered blots: keep the lobes, thin out the central mass
        field -= 0.55 * (1 - (((1 - x) / 0.9) ** 2 + (y / 0.85) ** 2)).clip(0, None)
    coverage = rng.uniform(0.22, 0.34) if number != 10 else rng.uniform(0.12, 0.18)
    thr = np.quantile(field, 1 - coverage)
    alpha = np.clip((field - thr) / 0.015, 0.0, 1.0)
    shade = 0.45 + 0.55 * _noise(rng, h, w, 9)  # ink darkness: diffuse grey shading (Y)
    ink = np.repeat((1 - shade)[..., None], 3, axis=2) * 0.85  # grey to black
    if number in CHROMATIC:
        ink = _colour(rng, number, ink, shade, h, w)
    canvas = np.ones((h, w, 3)) * (1 - alpha[..., None]) + ink * alpha[..., None]
    return np.asarray(np.round(canvas * 255), dtype=np.uint8)


def _colour(
    rng: np.random.Generator, number: int, ink: np.ndarray, shade: np.ndarray, h: int, w: int
) -> np.ndarray:
    hue = _noise(rng, h, w, 4 if number != 10 else 10)
    light = (1.25 - 0.5 * shade)[..., None]  # shading modulates the colour's lightness
    out = ink.copy()
    if number in (2, 3):
        red = hue > np.quantile(hue, 0.7)
        out[red] = np.clip(np.array(_RED) * light[red], 0, 1)
        return out
    palette = _PASTELS if number in (8, 9) else _MULTI
    grey_share = 0.3 if number == 8 else 0.15 if number == 9 else 0.0
    cuts = np.quantile(hue, np.linspace(grey_share, 1, len(palette) + 1))
    for i, c in enumerate(palette):
        sel = (hue >= cuts[i]) & (hue <= cuts[i + 1])
        out[sel] = np.clip(np.array(c) * light[sel], 0, 1)
    return out
