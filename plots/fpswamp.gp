# Updates lost to swamping (fpswamp --plot).  fpswamp runs it as
#   gnuplot -e "datafile='...'; out='...'; ..." fpswamp.gp
# with these variables:
#   datafile  kind "bars": lines "LABEL P1 P2 ...", per tensor (and the
#             total, last) the percentage of its nonzero updates lost in
#             each format under round to nearest even, then stored under
#             each recipe;
#             kind "sweep": lines "LR P1 P2 ...", per learning rate the
#             percentage lost over all tensors
#   out, term         output file, and "png" (pngcairo) or "svg"
#   width, height     pixels (PNG) or points (SVG)
#   kind              "bars" or "sweep"
#   title             shown as is (not enhanced text)
#   fmtnames          format names, then recipe names, space-separated, in
#                     the columns' order

if (!exists("term")) term = "png"
if (!exists("width")) width = 1000
if (!exists("height")) height = 600
if (!exists("kind")) kind = "bars"
if (!exists("title")) title = ""
if (!exists("fmtnames")) fmtnames = ""

if (term eq "svg") {
    set terminal svg size width, height dynamic enhanced font "sans,11" background rgb "white"
} else {
    set terminal pngcairo size width, height enhanced font "sans,11" background rgb "white"
}
set output out

# Okabe-Ito colours, as hist.gp.
palette = "#0072B2 #D55E00 #009E73 #CC79A7 #E69F00 #56B4E9 #000000 #F0E442"
col(i) = word(palette, (i - 1) % 8 + 1)
nf = words(fmtnames)

set title title noenhanced
set border 3 lw 0.8
set ytics nomirror out scale 0.6
set ylabel "updates lost (%)"
set yrange [0 : 105]
set grid ytics lc rgb "#dddddd"
set key outside right top Left reverse samplen 1.5 spacing 1.15 nobox

if (kind eq "sweep") {
    set logscale x 2
    set format x "2^{%L}"
    set xtics nomirror out scale 0.6
    set xlabel "learning rate (update = -lr * gradient)"
    plot for [i = 1 : nf] datafile using 1:(column(i + 1)) with linespoints lw 2 pt 7 ps 0.8 \
        lc rgb col(i) title word(fmtnames, i)
} else {
    set style data histograms
    set style histogram clustered gap 1
    set style fill solid 0.85 noborder
    set boxwidth 0.9
    set xtics nomirror rotate by -50 left scale 0 noenhanced font ",9"
    set bmargin 10
    plot for [i = 1 : nf] datafile using (column(i + 1)):xtic(1) lc rgb col(i) \
        title word(fmtnames, i)
}
