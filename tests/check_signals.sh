#!/bin/sh
# Interrupted runs leave no partial file.  fpgrad is stopped by SIGINT or
# SIGTERM in the middle of its outputs: while gnuplot (a stand-in that
# writes half a picture, then waits) draws the --plot or a --report's
# histogram, after the JSON was written and renamed into place.  fpgrad
# must die of the signal, kill its gnuplot, and leave no temporary file
# beside the outputs and no temporary directory in $TMPDIR; what it had
# finished stays whole.  Also stopped while reading a 1 TiB sparse dump,
# before any output, it leaves nothing; and SIGHUP, ignored when fpgrad
# starts (nohup), stays ignored: the run completes.  A dump cut short
# while fpgrad reads its mapping ends it with an error, not a crash.
#
# make check runs it from the build directory with srcdir set; FPGRAD names
# another binary.
set -eu

srcdir=$(cd "${srcdir:-.}" && pwd)
FPGRAD=${FPGRAD:-./bin/fpgrad}
FPKIT_PLOTDIR=$srcdir/plots
export FPKIT_PLOTDIR
tool=fpgrad tool_bin=$FPGRAD
. "$srcdir/tests/toolcheck.sh"

# Background jobs of a shell without job control start with SIGINT
# ignored, and sh cannot undo it: bg starts them with it restored.
if env --default-signal=INT true 2>/dev/null; then
    bg() { env --default-signal=INT "$@" & }
elif [ "$have_python" = yes ]; then
    bg() {
        python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' "$@" &
    }
else
    echo "check_signals: neither env --default-signal nor python3 to restore SIGINT"
    exit 77
fi

# The stand-in gnuplot: writes part of the picture to the file named by
# out='...', records its pid, then waits for $tmp/release (at most 30 s)
# before finishing the picture.
cat >"$tmp/gnuplot" <<EOF
#!/bin/sh
out=\$(printf '%s\n' "\$2" | sed -n "s/.*out='\([^']*\)'.*/\1/p")
printf '\211PNG\r\n\032\n' >"\$out"
echo \$\$ >"$tmp/gnuplot.pid"
i=0
while [ ! -e "$tmp/release" ] && [ \$i -lt 300 ]; do
    sleep 0.1
    i=\$((i + 1))
done
printf 'the rest of the picture\n' >>"\$out"
EOF
chmod +x "$tmp/gnuplot"
FPKIT_GNUPLOT=$tmp/gnuplot
export FPKIT_GNUPLOT
TMPDIR=$tmp/tmpdir
export TMPDIR
mkdir "$TMPDIR"

cp "$srcdir/tests/data/f16.npy" "$tmp/in.npy"

# wait_for FILE: until FILE exists, at most 20 s.
wait_for() {
    i=0
    while [ ! -e "$1" ] && [ $i -lt 200 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    [ -e "$1" ]
}

# finish PID: sets rc to its exit status, killing it after 20 s.
finish() {
    (
        i=0
        while kill -0 "$1" 2>/dev/null && [ $i -lt 200 ]; do
            sleep 0.1
            i=$((i + 1))
        done
        kill -KILL "$1" 2>/dev/null
    ) &
    watchdog=$!
    rc=0
    { wait "$1"; } 2>/dev/null || rc=$?
    wait "$watchdog" || true
}

# no_leftovers NAME DIR: nothing in DIR but the finished outputs (no
# dot-file), no temporary directory in $TMPDIR, the stand-in gnuplot gone.
no_leftovers() {
    if [ -n "$(find "$2" -name '.*' ! -name . | head -n 1)" ]; then
        bad "$1: temporary files left: $(find "$2" -name '.*' ! -name .)"
    else
        ok
    fi
    if [ -n "$(ls -A "$TMPDIR")" ]; then
        bad "$1: left in \$TMPDIR: $(ls -A "$TMPDIR")"
    else
        ok
    fi
    if [ -s "$tmp/gnuplot.pid" ] && kill -0 "$(cat "$tmp/gnuplot.pid")" 2>/dev/null; then
        bad "$1: gnuplot still runs"
        kill "$(cat "$tmp/gnuplot.pid")"
    else
        ok
    fi
}

# whole_json FILE: FILE is complete JSON.
whole_json() {
    if [ "$have_python" = no ]; then
        skipped "$1 is whole JSON (needs python3)"
    elif python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null; then
        ok
    else
        bad "$1 is not whole JSON"
    fi
}

# interrupt NAME SIGNAL OPTIONS...: fpgrad OPTIONS in.npy, stopped by
# SIGNAL once gnuplot has begun; OPTIONS write into $tmp/NAME.
interrupt() {
    name=$1 sig=$2
    shift 2
    rm -f "$tmp/gnuplot.pid" "$tmp/release"
    mkdir "$tmp/$name"
    bg "$FPGRAD" --quiet "$@" "$tmp/in.npy" 2>"$tmp/$name.err"
    pid=$!
    if ! wait_for "$tmp/gnuplot.pid"; then
        bad "$name: gnuplot never started: $(cat "$tmp/$name.err")"
        kill "$pid"
        return
    fi
    sleep 0.2
    kill "-$sig" "$pid"
    finish "$pid"
    case $sig in
    INT) code=130 ;;
    TERM) code=143 ;;
    esac
    if [ "$rc" -eq "$code" ]; then ok; else bad "$name: exit status $rc, expected $code (SIG$sig)"; fi
    touch "$tmp/release"
    sleep 0.3 # time for a surviving gnuplot to write the picture
    no_leftovers "$name" "$tmp/$name"
}

interrupt plot INT --json "$tmp/plot/o.json" --csv "$tmp/plot/o.csv" --plot "$tmp/plot/p.png"
if [ "$(cd "$tmp/plot" && ls -A | tr '\n' ' ')" = "o.csv o.json " ]; then
    ok
else
    bad "plot: expected o.csv and o.json only: $(ls -A "$tmp/plot")"
fi
whole_json "$tmp/plot/o.json"

# A report is built beside its directory and put in place whole: an
# interrupted one leaves nothing, and an earlier report as it was.
interrupt report TERM --report "$tmp/report/r"
if [ -z "$(ls -A "$tmp/report")" ]; then
    ok
else
    bad "report: expected nothing left: $(ls -A "$tmp/report")"
fi
mkdir -p "$tmp/old/r"
echo old >"$tmp/old/r/index.html"
interrupt report-old TERM --report "$tmp/old/r"
if [ "$(ls -A "$tmp/old")" = r ] && [ "$(ls -A "$tmp/old/r")" = index.html ] &&
    [ "$(cat "$tmp/old/r/index.html")" = old ]; then
    ok
else
    bad "report-old: the earlier report changed: $(ls -A "$tmp/old" "$tmp/old/r")"
fi

# SIGHUP ignored from the start stays ignored: the run completes.
rm -f "$tmp/gnuplot.pid" "$tmp/release"
mkdir "$tmp/hup"
(
    trap '' HUP
    exec "$FPGRAD" --quiet --plot "$tmp/hup/p.png" "$tmp/in.npy" 2>"$tmp/hup.err"
) &
pid=$!
if wait_for "$tmp/gnuplot.pid"; then
    kill -HUP "$pid"
    sleep 0.2
    touch "$tmp/release"
    finish "$pid"
    if [ "$rc" -eq 0 ] && grep -q 'the rest of the picture' "$tmp/hup/p.png"; then
        ok
    else
        bad "hup: exit status $rc, or no whole picture: $(cat "$tmp/hup.err")"
    fi
    no_leftovers hup "$tmp/hup"
else
    bad "hup: gnuplot never started: $(cat "$tmp/hup.err")"
    kill "$pid"
fi

# Stopped while reading, long before any output.
n=137438953472 # 2^37 float64: 1 TiB
dict="{'descr': '<f8', 'fortran_order': False, 'shape': ($n,), }"
{
    printf '\223NUMPY\001\000\166\000'
    printf '%s%*s\n' "$dict" $((128 - 10 - ${#dict} - 1)) ''
} >"$tmp/huge.npy"
if truncate -s $((128 + 8 * n)) "$tmp/huge.npy" 2>/dev/null &&
    [ "$(du -k "$tmp/huge.npy" | cut -f 1)" -le 1024 ]; then
    for sig in INT TERM; do
        mkdir "$tmp/read-$sig"
        bg "$FPGRAD" --quiet --json "$tmp/read-$sig/o.json" --csv "$tmp/read-$sig/o.csv" \
            "$tmp/huge.npy" 2>"$tmp/read.err"
        pid=$!
        sleep 0.5
        kill "-$sig" "$pid"
        finish "$pid"
        if [ "$rc" -gt 128 ] && [ -z "$(ls -A "$tmp/read-$sig")" ]; then
            ok
        else
            bad "read-$sig: exit status $rc, or files written: $(ls -A "$tmp/read-$sig") $(cat "$tmp/read.err")"
        fi
    done
else
    skipped "interrupting a read of a 1 TiB sparse dump (the file system cannot hold it)"
fi
rm -f "$tmp/huge.npy"

# A float32 dump that shrinks while fpgrad reads its mapping (fpk_dump_view):
# the SIGBUS ends fpgrad with status 2 and a message naming the file, not a
# crash.  The file is cut short once /proc shows it mapped, which is
# before fpgrad reads the elements a 16 GiB sparse dump still holds.
n=4294967296 # 2^32 float32
dict="{'descr': '<f4', 'fortran_order': False, 'shape': ($n,), }"
{
    printf '\223NUMPY\001\000\166\000'
    printf '%s%*s\n' "$dict" $((128 - 10 - ${#dict} - 1)) ''
} >"$tmp/shrinks.npy"
if [ ! -r /proc/self/maps ]; then
    skipped "a dump that shrinks while mapped (no /proc/PID/maps to see the mapping)"
elif truncate -s $((128 + 4 * n)) "$tmp/shrinks.npy" 2>/dev/null &&
    [ "$(du -k "$tmp/shrinks.npy" | cut -f 1)" -le 1024 ]; then
    "$FPGRAD" --quiet --threads 2 "$tmp/shrinks.npy" 2>"$tmp/shrinks.err" &
    pid=$!
    i=0
    while ! grep -q shrinks.npy "/proc/$pid/maps" 2>/dev/null && kill -0 "$pid" 2>/dev/null &&
        [ $i -lt 2000 ]; do
        sleep 0.01
        i=$((i + 1))
    done
    truncate -s 128 "$tmp/shrinks.npy"
    finish "$pid"
    if [ "$rc" -eq 2 ] &&
        grep -q "^fpgrad: .*shrinks.npy: the file shrank while it was being read\$" "$tmp/shrinks.err"
    then
        ok
    else
        bad "shrinks: exit status $rc, expected 2 and the file named: $(cat "$tmp/shrinks.err")"
    fi
else
    skipped "a dump that shrinks while mapped (the file system cannot hold a 16 GiB sparse file)"
fi
rm -f "$tmp/shrinks.npy"
summary
