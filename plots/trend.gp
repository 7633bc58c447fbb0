# The share of the nonzero values each format loses (rounds to zero or
# overflows) at each training step (fpgrad --report).  fpgrad runs it as
#   gnuplot -e "datafile='...'; out='...'; ..." trend.gp
# with these variables:
#   datafile  lines "STEP P1 P2 ...": per format, in fmtnames' order, the
#             percentage lost at that step
#   out, term         output file, and "png" (pngcairo) or "svg"
#   width, height     pixels (PNG) or points (SVG)
#   fmtnames          the format names, space-separated

if (!exists("term")) term = "png"
if (!exists("width")) width = 1000
if (!exists("height")) height = 420
if (!exists("fmtnames")) fmtnames = ""

if (term eq "svg") {
    set terminal svg size width, height dynamic enhanced font "sans,11" background rgb "white"
} else {
    set terminal pngcairo size width, height enhanced font "sans,11" background rgb "white"
}
set output out

# Okabe-Ito colours, as hist.gp's.
palette = "#0072B2 #D55E00 #009E73 #CC79A7 #E69F00 #56B4E9 #000000 #F0E442"
col(i) = word(palette, (i - 1) % 8 + 1)
nf = words(fmtnames)

set border 3 lw 0.8
set xtics nomirror out
set ytics nomirror out
set xlabel "training step"
set ylabel "% of the nonzero values lost (to zero or overflow)"
set yrange [0 : *]
set offsets graph 0.02, graph 0.02, graph 0.05, 0
set key outside right top Left reverse samplen 2 spacing 1.2 nobox
set grid ytics lc rgb "#dddddd" lw 0.6
plot for [i = 1 : nf] datafile using 1:(column(i + 1)) with linespoints \
    lc rgb col(i) lw 2 pt 7 ps 0.9 title word(fmtnames, i)
