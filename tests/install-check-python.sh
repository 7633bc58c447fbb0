#!/usr/bin/env bash
# Checks that fpkit's Python package installs against an installed fpkit,
# as a user installs it: pip install ./python in a fresh virtual
# environment, the library found through pkg-config.
#
#     tests/install-check-python.sh DESTDIR
#
# DESTDIR holds a staged install (make install DESTDIR=...); pkg-config
# looks there (PKG_CONFIG_SYSROOT_DIR), and the extension records the
# library's directory, so that nothing else is needed at run time.  The
# virtual environment sees the system's packages (NumPy, when Debian's
# python3-numpy is installed; pip fetches it otherwise); pip fetches the
# build's requirements (setuptools) from the package index.  Prints what
# fpkit.quantize gives for [1e-8, 3.14159] in fp16, which must be
# [0, 3.140625].  Exits 77 without python3 and its venv module.
set -euo pipefail

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
    echo "usage: tests/install-check-python.sh DESTDIR" >&2
    exit 2
fi
stage=$(cd "$1" && pwd)
srcdir=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}

fail() {
    echo "install-check-python: $*" >&2
    exit 1
}

if ! "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    echo "install-check-python: $PYTHON with venv and ensurepip is needed; skipped"
    exit 77
fi
pc=$(find "$stage" -name fpkit.pc -path '*/pkgconfig/*' | head -n 1)
[ -n "$pc" ] || fail "no pkgconfig/fpkit.pc under $stage"
export PKG_CONFIG_PATH=${pc%/fpkit.pc}
export PKG_CONFIG_SYSROOT_DIR=$stage
version=$(pkg-config --modversion fpkit)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# pip builds in the directory it is given: a copy, so that the source tree
# stays clean, without what an in-tree make check built there against the
# build tree (python/build, which setuptools would take as up to date)
cp -R "$srcdir/python" "$work/src"
rm -rf "$work/src/build" "$work/src/build.log" "$work/src"/*.egg-info
"$PYTHON" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check "$work/src" </dev/null ||
    fail "pip install ./python failed"
cd "$work"
got=$("$work/venv/bin/python" -c 'import fpkit, numpy
print(fpkit.__version__)
print(fpkit.quantize(numpy.float32([1e-8, 3.14159]), "fp16").tolist())')
echo "install-check-python: $got" | tr '\n' ' '
echo
[ "$(echo "$got" | sed -n 1p)" = "$version" ] ||
    fail "fpkit.__version__ is $(echo "$got" | sed -n 1p), the library's $version"
[ "$(echo "$got" | sed -n 2p)" = "[0.0, 3.140625]" ] ||
    fail "fpkit.quantize([1e-8, 3.14159], 'fp16') gave $(echo "$got" | sed -n 2p)"
# the libfpkit.so the extension loaded, as the process maps it (not ldd
# piped into grep -q: under pipefail, ldd's SIGPIPE when grep leaves early
# failed the check now and then)
loaded=$("$work/venv/bin/python" -c 'import fpkit._fpkit
for line in open("/proc/self/maps"):
    if "libfpkit.so" in line:
        print(line.split()[-1])
        break')
case $loaded in
"$stage"/*) ;;
*)
    fail "fpkit._fpkit loaded libfpkit.so from ${loaded:-nowhere}, not from $stage ($(ldd \
        "$("$work/venv/bin/python" -c 'import fpkit._fpkit as m; print(m.__file__)')" |
        grep fpkit))"
    ;;
esac
echo "install-check-python: passed (pip install ./python in a fresh virtual environment)"
