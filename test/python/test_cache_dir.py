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


def test_a_relative_cache_dir_is_made_absolute(monkeypatch, tmp_path):
    """Stages are read lazily, maybe after a chdir: the folder is fixed
    when it is looked up (a relative one followed the working directory)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GGC_CACHE_DIR", "relc")
    assert cache.cache_dir() == str(tmp_path / "relc")


def test_eviction_removes_what_stopped_writers_left(tmp_path):
    """A .tmp-* or .old-* folder of a process killed midway is removed once
    it is an hour old (it was kept, uncounted, until `ggc cache --clear`);
    a young one may be a writer at work and stays."""
    old, young = tmp_path / ".tmp-dead", tmp_path / ".old-young"
    for folder in (old, young):
        folder.mkdir()
        (folder / "stage").write_bytes(b"x" * 1000)
    two_hours_ago = os.path.getmtime(old) - 7200
    os.utime(old, (two_hours_ago, two_hours_ago))
    assert cache.evict(str(tmp_path), 1 << 30) == 0
    assert not old.exists() and young.exists()


def test_the_cache_command_reports_errors_without_a_traceback(monkeypatch, tmp_path, capsys):
    from ggc import __main__ as cli
    monkeypatch.setenv("GGC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("GGC_CACHE_MAX_MB", "lots")
    assert cli.cache_command(clear=False) == 1
    assert "ggc: error: GGC_CACHE_MAX_MB must be a finite number" in capsys.readouterr().err
