#!/usr/bin/env bash
# Checks an installed fpkit as a program outside the tree sees it.
#
#     tests/install-check.sh DESTDIR
#
# DESTDIR holds a staged install (make install DESTDIR=...).  Through
# pkg-config, with PKG_CONFIG_SYSROOT_DIR pointing at DESTDIR, this builds a
# program that converts 1.5 to fp16 and must print 0x3e00, linked against the
# shared library and then statically (fully, where every dependency ships
# an archive); builds and runs README.md's library
# example and compares its output with the README's; checks that the header
# compiles as C++, that the man pages are installed (and lint clean, where
# mandoc is), that the shared library exports fpk_ names only, and that
# pkg-config's pythondir is the folder of the installed fpkit_dump.py, which
# fpkit-dumps(5) names (and, where a python3 imports torch, that the
# installed dumper runs).  Exits nonzero on the first failure.
set -euo pipefail

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
    echo "usage: tests/install-check.sh DESTDIR" >&2
    exit 2
fi
stage=$(cd "$1" && pwd)
srcdir=$(cd "$(dirname "$0")/.." && pwd)
CC=${CC:-cc}
CXX=${CXX:-c++}

fail() {
    echo "install-check: $*" >&2
    exit 1
}

pc=$(find "$stage" -name fpkit.pc -path '*/pkgconfig/*' | head -n 1)
[ -n "$pc" ] || fail "no pkgconfig/fpkit.pc under $stage"
libdir=$(dirname "$(dirname "$pc")")
export PKG_CONFIG_PATH=${pc%/fpkit.pc}
export PKG_CONFIG_SYSROOT_DIR=$stage
cflags=$(pkg-config --cflags fpkit)
libs=$(pkg-config --libs fpkit)
static_libs=$(pkg-config --static --libs fpkit)
echo "install-check: $pc: version $(pkg-config --modversion fpkit)"
echo "install-check: cflags: $cflags"
echo "install-check: libs: $libs; static: $static_libs"

for f in "$libdir/libfpkit.a" "$libdir/libfpkit.so"; do
    [ -e "$f" ] || fail "$f is missing"
done
for page in man3/libfpkit.3 man7/fpkit-formats.7; do
    [ -n "$(find "$stage" -path "*/man/$page")" ] || fail "man page $page is not installed"
done

# The dumper: where fpkit.pc says, and where its man page says.  pkg-config
# may or may not put the sysroot before a variable; the page names the
# folder without it.
pythondir=$(pkg-config --variable=pythondir fpkit)
[ -n "$pythondir" ] || fail "fpkit.pc has no pythondir"
pythondir=${pythondir#"$stage"}
[ -f "$stage$pythondir/fpkit_dump.py" ] ||
    fail "pkg-config's pythondir $pythondir does not hold fpkit_dump.py"
dumps_page=$(find "$stage" -path '*/man/man5/fpkit-dumps.5' | head -n 1)
[ -n "$dumps_page" ] || fail "man page man5/fpkit-dumps.5 is not installed"
grep -qF "$pythondir/fpkit_dump.py" "$dumps_page" ||
    fail "$dumps_page does not name $pythondir/fpkit_dump.py"
if grep -n '@[a-z_]*@' "$dumps_page"; then
    fail "$dumps_page holds a name left unsubstituted (above)"
fi
echo "install-check: fpkit_dump.py is in $pythondir, as fpkit.pc and fpkit-dumps(5) say"
if command -v mandoc >/dev/null 2>&1; then
    find "$stage" -path '*/man/man[1-8]/*' -type f -exec mandoc -Tlint -Wwarning {} + ||
        fail "the installed man pages do not lint clean (above)"
    echo "install-check: the installed man pages lint clean"
fi
for py in ${FPK_TORCH_PYTHON:-} python3 /usr/bin/python3; do
    if "$py" -c 'import torch' >/dev/null 2>&1; then
        demo=$(mktemp -d)
        PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=$stage$pythondir "$py" -c 'import sys, fpkit_dump
sys.exit(fpkit_dump.main(["--demo", sys.argv[1], "--steps", "1"]))' "$demo" >/dev/null ||
            fail "the installed fpkit_dump.py, imported, does not run its demo"
        [ -f "$demo/step-000000.safetensors" ] || fail "the installed dumper's demo wrote no dump"
        rm -rf "$demo"
        echo "install-check: the installed fpkit_dump.py runs (with $py)"
        break
    fi
done

leaked=$(nm -D --defined-only "$libdir/libfpkit.so" | awk '$2 ~ /^[TDBRVW]$/ && $3 !~ /^fpk_/ { print $3 }')
[ -z "$leaked" ] || fail "libfpkit.so exports names outside fpk_: $leaked"
echo "install-check: libfpkit.so exports $(nm -D --defined-only "$libdir/libfpkit.so" | grep -c ' fpk_') fpk_ names and nothing else"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/half.c" <<'EOF'
#include <stdio.h>
#include <fpkit.h>

int main(void)
{
    fpk_ctx ctx = fpk_ctx_default();
    printf("0x%04llx\n", (unsigned long long)fpk_from_double(&fpk_fp16, 1.5, &ctx));
    return ctx.flags != 0;
}
EOF
# shellcheck disable=SC2086 # the pkg-config output is a list of words
"$CC" -Wall -Wextra -Werror -o "$work/half" "$work/half.c" $cflags $libs
# (ldd's output taken whole: under pipefail, grep -q leaving early could
# fail the pipe with ldd's SIGPIPE)
deps=$(LD_LIBRARY_PATH=$libdir ldd "$work/half")
case $deps in
*"$libdir/libfpkit.so"*) ;;
*) fail "the program does not load libfpkit.so from $libdir" ;;
esac
out=$(LD_LIBRARY_PATH=$libdir "$work/half")
[ "$out" = 0x3e00 ] || fail "1.5 in fp16: expected 0x3e00, got '$out' (shared)"
echo "install-check: shared: 1.5 in fp16 is $out"

# Static: fully static where every library of Libs.private ships an archive;
# otherwise (Debian's libzip ships none) libfpkit.a alone is linked
# statically, which still proves that Libs.private names all it needs.
static_mode=-static
missing_archive=
for word in $static_libs; do
    case $word in
    -lfpkit) ;;
    -l*)
        name=lib${word#-l}.a
        found=
        for dir in $(echo "$static_libs" | tr ' ' '\n' | sed -n 's/^-L//p'); do
            [ -e "$dir/$name" ] && found=1
        done
        [ -n "$found" ] || [ "$("$CC" -print-file-name="$name")" != "$name" ] ||
            missing_archive="$missing_archive $name"
        ;;
    esac
done
if [ -n "$missing_archive" ]; then
    static_mode=
    static_libs=$(echo " $static_libs " | sed 's/ -lfpkit / -l:libfpkit.a /')
fi
# shellcheck disable=SC2086
"$CC" $static_mode -Wall -Wextra -Werror -o "$work/half-static" "$work/half.c" $cflags $static_libs
deps=$(ldd "$work/half-static" 2>/dev/null || true)
case $deps in
*libfpkit*) fail "the static program loads libfpkit.so" ;;
esac
out=$("$work/half-static")
[ "$out" = 0x3e00 ] || fail "1.5 in fp16: expected 0x3e00, got '$out' (static)"
if [ -n "$missing_archive" ]; then
    echo "install-check: static libfpkit.a (no archive for:$missing_archive): 1.5 in fp16 is $out"
else
    echo "install-check: static: 1.5 in fp16 is $out"
fi

printf '#include <fpkit.h>\nint main() { return fpk_fp16.width == 16 ? 0 : 1; }\n' >"$work/cxx.cc"
# shellcheck disable=SC2086
"$CXX" -Wall -Wextra -Werror -o "$work/cxx" "$work/cxx.cc" $cflags $libs
LD_LIBRARY_PATH=$libdir "$work/cxx" || fail "fpkit.h from C++: wrong fpk_fp16"
echo "install-check: fpkit.h compiles and links as C++"

# README.md: the first ```c block is the library example, the first ```text
# block after it is its output.
awk '/^```c$/ && !s { s = 1; next } s == 1 && /^```$/ { exit } s == 1' \
    "$srcdir/README.md" >"$work/readme.c"
awk '/^```c$/ && !s { s = 1; next } s == 1 && /^```$/ { s = 2; next }
     s == 2 && /^```text$/ { s = 3; next } s == 3 && /^```$/ { exit } s == 3' \
    "$srcdir/README.md" >"$work/readme.expected"
[ -s "$work/readme.c" ] || fail "README.md has no \`\`\`c example"
[ -s "$work/readme.expected" ] || fail "README.md has no \`\`\`text output after its example"
# shellcheck disable=SC2086
"$CC" -std=c11 -Wall -Wextra -Werror -o "$work/readme" "$work/readme.c" $cflags $libs
LD_LIBRARY_PATH=$libdir "$work/readme" >"$work/readme.out"
if ! diff -u "$work/readme.expected" "$work/readme.out"; then
    fail "README.md's example prints something else than the README says (diff above)"
fi
echo "install-check: README.md example: $(wc -l <"$work/readme.out") lines as documented"
echo "install-check: passed"
