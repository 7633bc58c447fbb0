#!/bin/sh
# The malformed-input corpus: every file of tests/data/bad/ (MANIFEST: the
# file, the options to read it with, the stable part of the message that
# must reject it) through every tool that reads dumps, and the inputs that
# cannot be committed, made here: a FIFO, a character device, a directory
# loop through a symbolic link, a link cycle, a dangling link, an unreadable
# file.  Each run must exit 2 within the time limit (no hang, no crash),
# write one line to stderr, "TOOL: FILE..." holding the message, nothing
# to stdout, and nothing at all to its output directory; afterwards every
# input is as it was, by checksum, and none has been added.  With python3,
# make-bad.py is rerun to check that the committed corpus is what it makes.
#
# make check runs it from the build directory with srcdir set; FPGRAD,
# FPROUND, FPSWAMP and FPSCALE name other binaries, BAD_TOOLS limits the
# tools run (default: all four).
set -eu

srcdir=$(cd "${srcdir:-.}" && pwd)
bad=$srcdir/tests/data/bad
tool=malformed
. "$srcdir/tests/toolcheck.sh"

limit=30
if [ -n "${VALGRIND:-}" ]; then
    limit=300
fi
if command -v timeout >/dev/null 2>&1; then
    with_limit="timeout $limit"
else
    with_limit=
fi

tools=${BAD_TOOLS:-fpgrad fpround fpswamp fpscale}
bin_of() {
    case $1 in
    fpgrad) echo "${FPGRAD:-./bin/fpgrad}" ;;
    fpround) echo "${FPROUND:-./bin/fpround}" ;;
    fpswamp) echo "${FPSWAMP:-./bin/fpswamp}" ;;
    fpscale) echo "${FPSCALE:-./bin/fpscale}" ;;
    esac
}
for t in $tools; do
    if [ ! -x "$(bin_of "$t")" ]; then
        echo "check_bad: $(bin_of "$t") is not an executable" >&2
        exit 99
    fi
done

# The outputs each tool is asked for; none may appear.
out=$tmp/out
outputs() {
    case $1 in
    fpgrad) echo "--json $out/o.json --csv $out/o.csv --report $out/report" ;;
    *) echo "--json $out/o.json" ;;
    esac
}

# reject TOOL FILE OPTIONS MESSAGE: TOOL OPTIONS FILE must fail as above.
reject() {
    t=$1 file=$2 opts=$3 msg=$4
    rm -rf "$out"
    mkdir "$out"
    rc=0
    # shellcheck disable=SC2086 # the prefixes and options are lists of words
    $with_limit $tool_exec "$(bin_of "$t")" $opts $(outputs "$t") "$file" \
        >"$tmp/r.out" 2>"$tmp/r.err" </dev/null || rc=$?
    n=$(wc -l <"$tmp/r.err" | tr -d ' ')
    what="$t $opts $file"
    if [ "$rc" -eq 124 ]; then
        bad "$what: still running after ${limit}s"
    elif [ "$rc" -ne 2 ]; then
        bad "$what: exit status $rc, expected 2: $(head -n 3 "$tmp/r.err")"
    elif [ -s "$tmp/r.out" ]; then
        bad "$what: wrote to stdout: $(head -n 1 "$tmp/r.out")"
    elif [ "$n" -ne 1 ]; then
        bad "$what: $n lines on stderr, expected 1: $(head -n 3 "$tmp/r.err")"
    elif ! grep -qF -- "$t: $file" "$tmp/r.err" || ! grep -qF -- "$msg" "$tmp/r.err"; then
        bad "$what: the message is not \"$t: $file...$msg...\": $(cat "$tmp/r.err")"
    elif [ -n "$(ls -A "$out")" ]; then
        bad "$what: wrote into the output directory: $(ls -A "$out" | tr '\n' ' ')"
    else
        ok
    fi
}

# The inputs' names and checksums, to compare after.
fingerprint() {
    (cd "$1" && ls -A | LC_ALL=C sort && find . -type f -exec cksum {} + | LC_ALL=C sort)
}
fingerprint "$bad" >"$tmp/before"

files=0
tab=$(printf '\t')
while IFS=$tab read -r name opts msg; do
    case $name in '#'* | '') continue ;; esac
    files=$((files + 1))
    [ "$opts" = - ] && opts=
    for t in $tools; do
        case $t:$opts in
        fpswamp:?* | fpscale:?*) continue ;; # raw files: fpgrad and fpround
        esac
        reject "$t" "$bad/$name" "$opts" "$msg"
    done
done <"$bad/MANIFEST"
if [ "$files" -lt 40 ]; then
    bad "MANIFEST lists $files files, fewer than 40"
fi

# What cannot be committed.
sp=$tmp/special
mkdir -p "$sp/loop/sub" "$sp/cycle" "$sp/dangling"
cp "$bad/../f16.npy" "$sp/loop/a.npy"
ln -s .. "$sp/loop/sub/up"
ln -s b.npy "$sp/cycle/a.npy"
ln -s a.npy "$sp/cycle/b.npy"
ln -s nowhere.npy "$sp/dangling/gone.npy"
specials=0
for t in $tools; do
    reject "$t" "$sp/loop" "" "symbolic link loop: this is directory $sp/loop again"
    reject "$t" "$sp/cycle/a.npy" "" "cannot open: "
    reject "$t" "$sp/cycle" "" "cannot open: "
    reject "$t" "$sp/dangling/gone.npy" "" "cannot open: No such file or directory"
    reject "$t" /dev/zero "" "is not a regular file (a FIFO, socket or device)"
    specials=$((specials + 5))
    case $t in
    fpgrad | fpround)
        reject "$t" "$sp/loop" "--dtype f32" "is a directory; --dtype reads raw files"
        specials=$((specials + 1))
        ;;
    esac
done
if command -v mkfifo >/dev/null 2>&1 && mkfifo "$sp/fifo.npy" 2>/dev/null; then
    for t in $tools; do
        reject "$t" "$sp/fifo.npy" "" "is not a regular file (a FIFO, socket or device)"
        specials=$((specials + 1))
    done
else
    skipped "a FIFO (mkfifo failed)"
fi
cp "$bad/../f16.npy" "$sp/locked.npy"
chmod 000 "$sp/locked.npy"
if ! cat "$sp/locked.npy" >/dev/null 2>&1; then
    for t in $tools; do
        reject "$t" "$sp/locked.npy" "" "cannot open: Permission denied"
        specials=$((specials + 1))
    done
else
    skipped "an unreadable file (root reads every file)"
fi
chmod 644 "$sp/locked.npy"

fingerprint "$bad" >"$tmp/after"
if cmp -s "$tmp/before" "$tmp/after"; then ok; else bad "tests/data/bad changed: $(diff "$tmp/before" "$tmp/after" | head -n 5)"; fi
if cmp -s "$bad/../f16.npy" "$sp/loop/a.npy"; then ok; else bad "an input in the loop changed"; fi

# The committed corpus is what make-bad.py writes.
if [ "$have_python" = yes ]; then
    mkdir "$tmp/regen"
    cp "$bad/make-bad.py" "$tmp/regen/"
    python3 "$tmp/regen/make-bad.py"
    rm "$tmp/regen/make-bad.py"
    fingerprint "$tmp/regen" >"$tmp/regen.sum"
    grep -v 'make-bad\.py' "$tmp/before" >"$tmp/committed.sum"
    if cmp -s "$tmp/committed.sum" "$tmp/regen.sum"; then
        ok
    else
        bad "tests/data/bad differs from what make-bad.py writes: $(diff "$tmp/committed.sum" "$tmp/regen.sum" | head -n 5)"
    fi
else
    skipped "make-bad.py against the committed corpus (needs python3)"
fi

echo "check_bad: $files corpus files and $specials special inputs, tools: $tools"
summary
