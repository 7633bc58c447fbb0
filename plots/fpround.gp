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
#   nseries   series after the first column (hist) or after EXACT (running)
#   out, term         output file, and "png" (pngcairo) or "svg"
#   width, height     pixels (PNG) or points (SVG)
#   title             shown as is (not enhanced text)

if (!exists("term")) term = "png"
if (!exists("width")) width = 1000
if (!exists("height")) height = 600
if (!exists("title")) title = ""
if (!exists("kind")) kind = "hist"

if (term eq "svg") {
    set terminal svg size width, height dynamic noenhanced font "sans,11" background rgb "white"
} else {
    set terminal pngcairo size width, height noenhanced font "sans,11" background rgb "white"
}
set output out

# Okabe-Ito colours: distinguishable in colour-blind vision and in print.
palette = "#0072B2 #D55E00 #009E73 #CC79A7 #E69F00 #56B4E9 #000000 #F0E442"
col(i) = word(palette, (i - 1) % 8 + 1)

set title title
set key outside right top
set grid back lc rgb "#dddddd"
set border 3
set tics nomirror

if (kind eq "hist") {
    set xlabel "rounding error (q - x) sign(x) in ulps of the format at x (end bins: beyond 1 ulp)"
    set ylabel "fraction of elements"
    set xrange [-1.05:1.05]
    set yrange [0:*]
    set xtics 0.25
    plot for [i=1:nseries] datafile using 1:(column(i + 1)) with histeps \
        lw 2 lc rgb col(i) title columnhead(i + 1)
} else {
    set xlabel "elements added"
    set ylabel "running value"
    set format y "%g"
    plot datafile using 1:2 with lines lw 4 lc rgb "#999999" title "exact", \
        for [i=1:nseries] datafile using 1:(column(i + 2)) with lines \
        lw 2 lc rgb col(i) title columnhead(i + 2)
}
