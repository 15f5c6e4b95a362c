"""Stimuli: shipped banks, user files with one-line errors, per-session sampling, inkblots."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from psymetrics_plugin_projective.inkblot import CHROMATIC, make_card, make_session
from psymetrics_plugin_projective.sct import (
    DOMAINS,
    builtin_stems,
    is_chinese,
    read_stem_file,
    sample_stems,
)
from psymetrics_plugin_projective.tat import builtin_scenes, read_image_folder, sample_scenes

from psymetrics_core.api import PsymError


def test_builtin_banks_cover_the_paper_design() -> None:
    stems = builtin_stems()
    assert {s.domain for s in stems} == set(DOMAINS)
    assert all(sum(s.domain == d for s in stems) == 8 for d in DOMAINS)
    assert len({s.id for s in stems}) == len(stems) and not is_chinese(stems)
    scenes = builtin_scenes()
    counts = {
        c: sum(s.category == c for s in scenes)
        for c in ("interpersonal", "solitary", "environmental")
    }
    assert counts == {"interpersonal": 13, "solitary": 10, "environmental": 5}  # the paper's pool


def test_sct_sampler_reproduces_the_authors_selection(genpt: Path) -> None:
    # Wang et al. (2026) code release, seed 42: the 20 stems listed in the extraction notes §4.5
    stems = read_stem_file(genpt / "sct_final_filtered.json")
    assert len(stems) == 97 and is_chinese(stems)
    assert stems[0].id == "1.1_01" and stems[0].domain == "FA"
    picked = [s.id for s in sample_stems(stems, 42)]
    assert picked == [
        "4.1_06",
        "2.2_04",
        "2.2_01",
        "4.3_03",
        "4.2_01",
        "3.3_04",
        "4.2_05",
        "3.3_02",
        "1.1_04",
        "1.3_04",
        "1.1_03",
        "1.2_08",
        "1.4_01",
        "1.4_09",
        "1.4_08",
        "1.4_02",
        "2.1_08",
        "3.1_01",
        "3.1_04",
        "2.1_01",
    ]
    assert sample_stems(builtin_stems(), 42) == sample_stems(builtin_stems(), 42)
    assert len(sample_stems(builtin_stems(), 7)) == 20


def test_tat_sampler_reproduces_the_authors_selection() -> None:
    # same logic as the authors' code on a 13/10/5 pool, seed 42 (extraction notes §4.5)
    picked = [s.id for s in sample_scenes(builtin_scenes(), 42)]
    assert picked == [
        "inter_11",
        "inter_02",
        "inter_01",
        "inter_05",
        "solit_04",
        "solit_10",
        "solit_03",
        "envir_01",
    ]


def test_stem_file_errors_name_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "stems.csv"
    bad.write_text("id,domain,stem\na1,FA,My mother…\na2,XX,My job…\n", encoding="utf-8")
    with pytest.raises(PsymError, match=r"stems.csv, line 3: domain 'XX'"):
        read_stem_file(bad)
    ok = tmp_path / "ok.csv"
    ok.write_text("id,stem\n1.4_09,My friends…\n", encoding="utf-8")
    assert read_stem_file(ok)[0].domain == "IR"  # domain from the sub-construct id
    js = tmp_path / "bank.json"
    bank = {
        "SCT_WB_C": {
            "dimensions": [
                {
                    "dimension_id": "I",
                    "secondary_constructs": [
                        {"construct_id": "1.1", "items": ["1. 我觉得……"]},
                        {"construct_id": "9.9", "items": ["2. x"]},
                    ],
                }
            ]
        }
    }
    js.write_text(json.dumps(bank, ensure_ascii=False, indent=2), encoding="utf-8")
    with pytest.raises(PsymError, match=r"bank.json, line 1[0-9]: construct_id '9.9'"):
        read_stem_file(js)
    broken = tmp_path / "broken.json"
    broken.write_text('{"SCT_WB_C": {\n  "dimensions": [\n}', encoding="utf-8")
    with pytest.raises(PsymError, match=r"broken.json, line 3: not valid JSON"):
        read_stem_file(broken)


def _png(path: Path) -> None:
    Image.new("RGB", (8, 8), "white").save(path, format="PNG")


def test_image_folder_manifest_is_validated(tmp_path: Path) -> None:
    _png(tmp_path / "a.png")
    (tmp_path / "b.png").write_bytes(b"not an image")
    (tmp_path / "manifest.csv").write_text(
        "file,category\na.png,interpersonal\nb.png,solitary\n", encoding="utf-8"
    )
    with pytest.raises(PsymError, match=r"manifest.csv, line 3: b.png is not a PNG or JPEG"):
        read_image_folder(tmp_path)
    (tmp_path / "manifest.csv").write_text("file,category\na.png,lonely\n", encoding="utf-8")
    with pytest.raises(PsymError, match=r"line 2: category 'lonely'"):
        read_image_folder(tmp_path)
    (tmp_path / "manifest.csv").write_text(
        "file,category\na.png,interpersonal\n../x.png,solitary\n", encoding="utf-8"
    )
    with pytest.raises(PsymError, match=r"line 3: no image file '../x.png'"):
        read_image_folder(tmp_path)
    (tmp_path / "manifest.csv").write_text("file,category\na.png,solitary\n", encoding="utf-8")
    scenes = read_image_folder(tmp_path)
    assert scenes[0].id == "solit_01" and scenes[0].image == (tmp_path / "a.png").resolve()


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)


def test_inkblots_are_symmetric_seeded_and_coloured_like_the_classic_set() -> None:
    cards = make_session(11, width=256, height=192)
    assert [c.roman for c in cards] == ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X"]
    for card in cards:
        px = _pixels(card.png)
        assert px.shape == (192, 256, 3)
        assert np.array_equal(px, px[:, ::-1]), card.roman  # exact bilateral symmetry
        ink = (px.min(axis=2) < 200).mean()
        assert 0.05 < ink < 0.6, (card.roman, ink)  # an inkblot, not a blank or a black card
        chroma = (px.max(axis=2) - px.min(axis=2)) > 40
        assert bool(chroma.any()) == (card.number in CHROMATIC), card.roman
        grey_levels = len(np.unique(px[px.min(axis=2) < 200][:, 0]))
        assert grey_levels > 10, card.roman  # shading, not a flat silhouette
    make_card.cache_clear()  # drawn afresh, not the cards kept from the first session
    again = make_session(11, width=256, height=192)
    assert [c.sha256 for c in again] == [c.sha256 for c in cards]  # reproducible from the seed
    other = make_card(1, 12, width=256, height=192)
    assert other.sha256 != cards[0].sha256
