"""Where the disk cache of compiled kernels lives (ggc.cache.cache_dir):
$GGC_CACHE_DIR, else the XDG cache directory, else ~/.cache."""

import os

from ggc import cache


def test_ggc_cache_dir_wins(monkeypatch, tmp_path):
    monkeypatch.setenv("GGC_CACHE_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == str(tmp_path / "mine")


def test_xdg_cache_home_is_followed(monkeypatch, tmp_path):
    monkeypatch.delenv("GGC_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == os.path.join(str(tmp_path / "xdg"), "ggc")


def test_home_cache_without_xdg_or_with_a_relative_one(monkeypatch, tmp_path):
    monkeypatch.delenv("GGC_CACHE_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    expected = os.path.join(str(tmp_path), ".cache", "ggc")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert cache.cache_dir() == expected
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # ignored, as XDG says
    assert cache.cache_dir() == expected


def test_off_disables_it(monkeypatch):
    for off in ("off", "0", ""):
        monkeypatch.setenv("GGC_CACHE_DIR", off)
        assert cache.cache_dir() is None
