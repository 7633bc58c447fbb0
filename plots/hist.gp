# The histogram of log2|x| of a tensor against the ranges of floating-point
# formats (fpgrad --plot, --report).  fpgrad runs it as
#   gnuplot -e "datafile='...'; out='...'; ..." hist.gp
# with these variables:
#   datafile  lines "E COUNT KIND": KIND 1 is the bin of |x| in [2^E, 2^(E+1)),
#             KIND 0 the exact zeros, drawn at E (= zerox)
#   out, term         output file, and "png" (pngcairo) or "svg"
#   width, height     pixels (PNG) or points (SVG)
#   xmin, xmax        the binades shown; zerox: where the zero bar stands
#   logy              1: counts on a log scale
#   small             1: a small multiple (narrow lanes, no legend, fewer labels)
#   title             shown as is (not enhanced text)
#   fmtnames          format names, space-separated; per format, in the same
#   fmtsub fmtnorm    order: log2 of the smallest subnormal and normal,
#   fmtmax            of the largest finite value, and of the thresholds
#   fmtunder fmtover  below which |x| rounds to zero and above which it
#                     overflows under the run's rounding mode (-9999: none)

if (!exists("term")) term = "png"
if (!exists("width")) width = 1000
if (!exists("height")) height = 600
if (!exists("logy")) logy = 0
if (!exists("small")) small = 0
if (!exists("title")) title = ""
if (!exists("fmtnames")) fmtnames = ""

fontsize = small ? 8 : 11
if (term eq "svg") {
    set terminal svg size width, height dynamic enhanced font sprintf("sans,%d", fontsize) background rgb "white"
} else {
    set terminal pngcairo size width, height enhanced font sprintf("sans,%d", fontsize) background rgb "white"
}
set output out

# The tallest bar, before any range is set (stats honours the ranges).
stats datafile using 1:2 nooutput
top_count = STATS_max_y > 1 ? STATS_max_y : 1

# Okabe-Ito colours: distinguishable in colour-blind vision and in print.
palette = "#0072B2 #D55E00 #009E73 #CC79A7 #E69F00 #56B4E9 #000000 #F0E442"
col(i) = word(palette, (i - 1) % 8 + 1)
nf = words(fmtnames)
val(list, i) = real(word(list, i))
inside(x) = x >= xmin && x <= xmax + 1

# Tics at multiples of a step that keeps about a dozen labels.
span = xmax + 1 - xmin
step = small ? (span <= 16 ? 4 : span <= 32 ? 8 : span <= 80 ? 16 : 32) \
             : (span <= 14 ? 1 : span <= 28 ? 2 : span <= 56 ? 4 : span <= 112 ? 8 : 16)
first = step * ceil(xmin * 1.0 / step)

# The zero bar stays visible however many binades the axis spans.
zerow = span > 60 ? span / 60.0 : 0.9
set xrange [zerox + 0.5 - zerow / 2 - 0.5 : xmax + 2]
set xtics scale 0.6, 0.3 nomirror out
set xtics ("0" zerox + 0.5)
do for [e = first : xmax + 1 : step] {
    set xtics add (sprintf("2^{%d}", e) e)
}
set mxtics step
set border 3 lw 0.8

lm = small ? 0.13 : 0.09
rm = small ? 0.97 : 0.76
top = small ? 0.86 : 0.90
lanes = nf == 0 ? 0 : small ? (nf * 0.07 < 0.35 ? nf * 0.07 : 0.35) \
                        : (nf * 0.045 < 0.3 ? nf * 0.045 : 0.3)
set lmargin at screen lm
set rmargin at screen rm

set multiplot
if (strlen(title) > 0) {
    set label 1 title at screen 0.5, screen (small ? 0.95 : 0.965) center noenhanced \
        font sprintf("sans,%d", fontsize + (small ? 0 : 2))
}

# The lanes: per format, its subnormal range (light) and normal range
# (dark), with the thresholds of rounding to zero and of overflow.
if (lanes > 0) {
    set tmargin at screen top
    set bmargin at screen top - lanes
    set yrange [0.5 : nf + 0.5]
    set ytics scale 0 nomirror
    set ytics ()
    unset xtics
    unset mxtics
    set border 0
    do for [i = 1 : nf] {
        lane = nf + 1 - i
        set ytics add (word(fmtnames, i) lane)
        set object 100 + 2 * i rectangle from val(fmtsub, i), lane - 0.32 to val(fmtnorm, i), lane + 0.32 \
            fillcolor rgb col(i) fillstyle solid 0.3 noborder clip
        set object 101 + 2 * i rectangle from val(fmtnorm, i), lane - 0.32 to val(fmtmax, i), lane + 0.32 \
            fillcolor rgb col(i) fillstyle solid 0.85 noborder clip
        if (inside(val(fmtunder, i))) {
            set arrow 100 + 2 * i from val(fmtunder, i), lane - 0.45 to val(fmtunder, i), lane + 0.45 \
                nohead lc rgb "black" dt 2 lw 1.2
        }
        if (inside(val(fmtover, i))) {
            set arrow 101 + 2 * i from val(fmtover, i), lane - 0.45 to val(fmtover, i), lane + 0.45 \
                nohead lc rgb "black" dt 3 lw 1.5
        }
    }
    plot NaN notitle
    unset label 1
    unset object
    unset arrow
    set border 3 lw 0.8
    set xtics scale 0.6, 0.3 nomirror out
    set xtics ("0" zerox + 0.5)
    do for [e = first : xmax + 1 : step] {
        set xtics add (sprintf("2^{%d}", e) e)
    }
    set mxtics step
}

# The histogram, with each format's thresholds across it.
set tmargin at screen top - lanes - (lanes > 0 ? 0.02 : 0)
set bmargin at screen (small ? 0.16 : 0.11)
set ytics auto nomirror out scale 0.6
set ylabel (small ? "" : "count")
set xlabel (small ? "" : "|x|  (bins [2^e, 2^{e+1}); exact zeros at 0)")
set format y (logy ? "10^{%T}" : "%g")
if (logy) {
    set logscale y
    set yrange [0.7 : (top_count * 3 > 10 ? top_count * 3 : 10)]
} else {
    set yrange [0 : top_count * 1.08]
}
set style fill solid 0.85 noborder
set boxwidth 0.9
do for [i = 1 : nf] {
    if (inside(val(fmtunder, i))) {
        set arrow 200 + 2 * i from val(fmtunder, i), graph 0 to val(fmtunder, i), graph 1 \
            nohead lc rgb col(i) dt 2 lw 1.5 front
    }
    if (inside(val(fmtover, i))) {
        set arrow 201 + 2 * i from val(fmtover, i), graph 0 to val(fmtover, i), graph 1 \
            nohead lc rgb col(i) dt 3 lw 2 front
    }
}
if (small) {
    unset key
} else {
    set key at screen rm + 0.015, screen top left top Left reverse samplen 1.5 spacing 1.15 \
        nobox noautotitle
}
plot datafile using ($3 == 1 ? $1 + 0.5 : NaN):2 with boxes lc rgb "#3a3a3a" title "elements", \
     datafile using ($3 == 0 ? $1 + 0.5 : NaN):2:(zerow) with boxes lc rgb "#9a9a9a" title "exact zeros", \
     for [i = 1 : nf] NaN with boxes fillstyle solid 0.85 lc rgb col(i) title word(fmtnames, i) . " normal", \
     for [i = 1 : nf] NaN with boxes fillstyle solid 0.3 lc rgb col(i) title word(fmtnames, i) . " subnormal", \
     NaN with lines lc rgb "black" dt 2 lw 1.5 title "rounds to 0 below", \
     NaN with lines lc rgb "black" dt 3 lw 2 title "overflows above"
unset multiplot
