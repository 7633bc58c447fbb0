#!/bin/sh
# Builds fpkit's Python extension (python/) for the Python $1 against this
# build tree's libfpkit, into python/build here (nothing is written into
# the source tree), and prints the directory to put on that Python's path.
# Run from the build directory with srcdir set, as make check and make
# bench do; the build's messages go to python/build.log.
set -eu
srcdir=$(cd "${srcdir:-.}" && pwd)
builddir=$(pwd)
py=$1
mkdir -p python
FPKIT_CFLAGS="-I$srcdir/lib/core -I$srcdir/lib/tensor" \
FPKIT_LIBS="-L$builddir/lib/.libs -lfpkit" \
FPKIT_VERSION=$(sed -n 's/^Version: //p' fpkit.pc) \
FPKIT_EXTRA_CFLAGS=-Werror PYTHONDONTWRITEBYTECODE=1 \
    "$py" "$srcdir/python/setup.py" -q egg_info -e "$builddir/python" \
    build -b "$builddir/python/build" >python/build.log 2>&1 || {
    cat python/build.log >&2
    echo "python_build: the extension does not build with $py" >&2
    exit 1
}
"$py" -c 'import sys, sysconfig
print("%s/python/build/lib.%s-%s" % (sys.argv[1], sysconfig.get_platform(), sys.implementation.cache_tag))' \
    "$builddir"
