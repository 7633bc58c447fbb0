# fpround's plots (fpround --plot).  fpround runs it as
#   gnuplot -e "datafile='...'; out='...'; ..." fpround.gp
# with these variables:
#   datafile  a header line of quoted column titles, then rows:
#             kind "hist":    ERR F1 F2 ...  the fraction of the measured
#                             elements whose error (q - x) * sign(x) / ulp(x)
#                             falls in the bin centred on ERR, per series
#             kind "running": STEP EXACT S1 S2 ...  the exact running sum
#                             (or dot product) after STEP elements, and each
#                             series' running value in its format
#   nseries   series after the first column (hist) or after EXACT (running),
#             format by format, the modes of each in turn
#   fmtnames  the formats' names, space-separated; nmodes  modes per format
#   modenames the modes' names, space-separated
#   out, term         output file, and "png" (pngcairo) or "svg"
#   width, height     pixels (PNG) or points (SVG)
#   title             shown as is (not enhanced text)
# Every series stays visible: a colour per format and a dash pattern per
# mode; the histogram has a panel per format (each scaled to its own
# peak), the running sums a panel of the values and one of their error
# on a log scale, so that a series near another, or near an axis, still
# shows.

if (!exists("term")) term = "png"
if (!exists("width")) width = 1000
if (!exists("height")) height = 600
if (!exists("title")) title = ""
if (!exists("kind")) kind = "hist"
if (!exists("nmodes")) nmodes = 1
if (!exists("fmtnames")) fmtnames = ""
if (!exists("modenames")) modenames = ""

if (term eq "svg") {
    set terminal svg size width, height dynamic noenhanced font "sans,11" background rgb "white"
} else {
    set terminal pngcairo size width, height noenhanced font "sans,11" background rgb "white"
}
set output out

# Okabe-Ito colours: distinguishable in colour-blind vision and in print.
palette = "#0072B2 #D55E00 #009E73 #CC79A7 #E69F00 #56B4E9 #000000 #F0E442"
col(i) = word(palette, (i - 1) % 8 + 1)
# series i (1-based): format fmt(i), mode mode(i), both 1-based
fmt(i) = (i - 1) / nmodes + 1
mode(i) = (i - 1) % nmodes + 1
nf = words(fmtnames)
nf = nf > 0 ? nf : nseries

set grid back lc rgb "#dddddd"
set border 3
set tics nomirror

if (kind eq "hist") {
    # a panel per format, in a grid of two columns (one for one format)
    ncol = nf > 1 ? 2 : 1
    nrow = (nf + ncol - 1) / ncol
    set multiplot layout nrow, ncol title title
    set key outside top center horizontal samplen 2.5
    set xrange [-1.05:1.05]
    set yrange [0:*]
    set offsets 0, 0, graph 0.08, 0
    set xtics 0.5
    set xlabel (nrow > 2 ? "" : "error (q - x) sign(x) / ulp(x)")
    set ylabel (nrow > 2 ? "" : "fraction")
    do for [f = 1 : nf] {
        set title word(fmtnames, f)
        plot for [m = 1 : nmodes] datafile using 1:(column((f - 1) * nmodes + m + 1)) \
            with histeps lw 2 dt m lc rgb col(f) title word(modenames, m)
    }
    unset multiplot
} else {
    set multiplot layout 2, 1 title title
    set key outside right top samplen 2.5
    set lmargin 12
    set rmargin 20
    set autoscale xfix
    set xlabel ""
    set ylabel "running value"
    set format y "%g"
    set offsets 0, 0, graph 0.05, graph 0.05
    plot datafile using 1:2 with lines lw 5 lc rgb "#bbbbbb" title "exact", \
        for [i=1:nseries] datafile using 1:(column(i + 2)) with lines \
        lw 1.5 dt mode(i) lc rgb col(fmt(i)) title columnhead(i + 2)
    set xlabel "elements added"
    set ylabel "|value - exact|"
    set logscale y
    set format y "%.0e"
    set offsets 0, 0, 0, 0
    # (an error of 0 has no place on the log scale: it is left out)
    plot for [i=1:nseries] datafile using 1:(abs(column(i + 2) - $2) > 0 ? \
        abs(column(i + 2) - $2) : NaN) with lines lw 1.5 dt mode(i) lc rgb col(fmt(i)) notitle
    unset multiplot
}
