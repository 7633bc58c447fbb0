#!/bin/sh
# fpkit's Python package (python/): built against this build tree's
# libfpkit (python/setup.py with FPKIT_CFLAGS and FPKIT_LIBS, into
# python/build here, nothing written into the source tree) and tested with
# pytest (python/tests/) against the C tools' output on the same data
# (fpgrad, fpinspect, fpvectors, tests/mldtypes_dump, tests/recipe_dump)
# and against ml_dtypes; then python/examples/vanishing_gradients.py runs
# with torch.  Skipped (77) without python3, NumPy or pytest (Debian
# packages python3-numpy, python3-pytest); the comparisons with ml_dtypes
# skip without it, torch's without torch (FPK_TORCH_PYTHON names a Python
# that has it).  PYTHON names the Python to use; FPK_PYTHON_TESTS, the
# test files to run (default: all of python/tests/).
#
# make check runs it from the build directory with srcdir set.
set -eu

srcdir=$(cd "${srcdir:-.}" && pwd)
export srcdir
builddir=$(pwd)
if [ ! -e lib/libfpkit.la ]; then
    echo "check_python: run from the build directory (lib/libfpkit.la is missing)" >&2
    exit 99
fi

# The first Python with NumPy and pytest, preferring one with ml_dtypes too.
py=
for want in 'numpy, pytest, ml_dtypes' 'numpy, pytest'; do
    for cand in ${PYTHON:-} python3 /usr/bin/python3; do
        if "$cand" -c "import $want" >/dev/null 2>&1; then
            py=$cand
            break 2
        fi
    done
done
if [ -z "$py" ]; then
    echo "check_python: python3 with NumPy and pytest is needed; skipped"
    exit 77
fi

# The extension for a Python, built against the build tree; its path.
build() {
    "$srcdir/tests/python_build.sh" "$1"
}

path=$(build "$py")
echo "check_python: $("$py" -c 'import sys, numpy; print("python", sys.version.split()[0], "numpy", numpy.__version__)') ($py)"

tests=
for t in ${FPK_PYTHON_TESTS:-}; do
    tests="$tests $srcdir/python/tests/$t"
done
# (pytest's status 5, no test run, is no failure where FPK_PYTHON_TESTS
# names tests that this Python skips whole: test_torch.py without torch,
# run below with a Python that has it)
rc=0
# shellcheck disable=SC2086 # a list of paths
FPKIT_BINDIR=$builddir/bin FPKIT_TESTDIR=$builddir/tests FPKIT_SRCDIR=$srcdir \
PYTHONPATH=$path PYTHONDONTWRITEBYTECODE=1 \
    "$py" -m pytest -q -p no:cacheprovider -rs ${tests:-"$srcdir/python/tests"} || rc=$?
if [ "$rc" -ne 0 ] && ! { [ "$rc" -eq 5 ] && [ -n "$tests" ]; }; then
    exit "$rc"
fi

# The example, with torch.
tpy=
for cand in ${FPK_TORCH_PYTHON:-} "$py"; do
    if "$cand" -c 'import torch, numpy' >/dev/null 2>&1; then
        tpy=$cand
        break
    fi
done
if [ -z "$tpy" ]; then
    echo "check_python: SKIP: python/examples/vanishing_gradients.py needs torch"
    exit 0
fi
tpath=$(build "$tpy")
out=$(PYTHONPATH=$tpath PYTHONDONTWRITEBYTECODE=1 "$tpy" "$srcdir/python/examples/vanishing_gradients.py")
echo "$out"
# (the example's own checks: it prints its table and fails on a mismatch)
echo "$out" | grep -q '^vanish in fp16:' || {
    echo "check_python: the example printed no verdict" >&2
    exit 1
}
# the torch tests too, with that Python, where pytest is there
if [ "$tpy" != "$py" ] && "$tpy" -c 'import pytest' >/dev/null 2>&1; then
    FPKIT_BINDIR=$builddir/bin FPKIT_TESTDIR=$builddir/tests FPKIT_SRCDIR=$srcdir \
    PYTHONPATH=$tpath PYTHONDONTWRITEBYTECODE=1 \
        "$tpy" -m pytest -q -p no:cacheprovider -rs "$srcdir/python/tests/test_torch.py"
fi
