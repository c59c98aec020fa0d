"""benchmarks/probes/masked_idle.py's named case and variant sets (CPU:
only the parsing, nothing compiles)."""

import os
import sys

import pytest

pytest.importorskip("torch")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "probes"))
import masked_idle  # noqa: E402


def test_records_name_the_batches_of_record():
    cases = masked_idle.parse_cases("records")
    assert (8, 512, 4096, 7168, 11) in cases and (16, 128, 4096, 7168, 1) in cases
    assert all(len(c) == 5 for c in cases) and len(cases) == len(set(cases))


def test_given_cases_parse_as_numbers():
    assert masked_idle.parse_cases("4,128,4096,7168,23;") == [(4, 128, 4096, 7168, 23)]


def test_tilings_expand_beside_more_variants():
    configs = dict(masked_idle.parse_configs("tilings;mine=|b_cache=evict_first"))
    assert set(configs) == {"sq", "w64", "w64d5", "p192", "mine"}
    assert configs["w64d5"].endswith("split_n = 2>|direct_stores=1")
    assert "cluster = [2, 1]" in configs["p192"] and configs["mine"] == "|b_cache=evict_first"
    # A config's own '=' signs stay in its spec.
    assert configs["sq"].startswith("#gg.config<block = [128, 128, 128], stages = 5")


def test_tile_counts_cover_every_tiling():
    # Two groups of 65 and 1 rows, N 4,096: a 64-row tile more for the first.
    assert masked_idle.tile_counts([65, 1], 4096) == [
        (128, 128, 64), (64, 256, 48), (128, 192, 44)]


def test_split_knobs_turn_one_knob_each():
    configs = dict(masked_idle.parse_configs("split_knobs"))
    base = configs.pop("split")
    assert base.endswith("split_n = 2>|direct_stores=1")
    for name, spec in configs.items():
        assert spec.startswith(base + "|") and spec.count("|") == 2, name
    assert "promotion = serial" in configs["serial"] and "store_columns = 2" in configs["cols2"]


@pytest.mark.parametrize("text", ["16,128,4096", "16,128,4096,7168,x", "records2"])
def test_a_malformed_case_is_named(text):
    with pytest.raises(SystemExit, match="--cases: each case is G,M,N,K,SEED"):
        masked_idle.parse_cases(text)
