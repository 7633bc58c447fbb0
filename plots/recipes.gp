# Each tensor's SQNR under each recipe (fpgrad --recipes --plot, and its
# report), the tensors in the order of the best recipe's SQNR, lowest
# first; a dashed line at each recipe's keep threshold, under which a
# tensor stays in BF16.  fpgrad runs it as
#   gnuplot -e "datafile='...'; out='...'; ..." recipes.gp
# with these variables:
#   datafile  lines "I S1 S2 ...": the tensor's place (1, 2, ...), then its
#             SQNR in dB under each recipe, in names' order (NaN: none)
#   out, term         output file, and "png" (pngcairo) or "svg"
#   width, height     pixels (PNG) or points (SVG)
#   names             the recipe names, space-separated, best first
#   keeps             their keep thresholds in dB, in the same order
#   best              the best recipe's name, for the x axis's label

if (!exists("term")) term = "png"
if (!exists("width")) width = 1000
if (!exists("height")) height = 600
if (!exists("names")) names = ""
if (!exists("keeps")) keeps = ""
if (!exists("best")) best = ""

if (term eq "svg") {
    set terminal svg size width, height dynamic noenhanced font "sans,11" background rgb "white"
} else {
    set terminal pngcairo size width, height noenhanced font "sans,11" background rgb "white"
}
set output out

# Okabe-Ito colours, as hist.gp's.
palette = "#0072B2 #D55E00 #009E73 #CC79A7 #E69F00 #56B4E9 #000000 #F0E442"
col(i) = word(palette, (i - 1) % 8 + 1)
nr = words(names)

set border 3 lw 0.8
set xtics nomirror out
set ytics nomirror out
set xlabel sprintf("tensors, by their SQNR under %s (lowest first)", best)
set ylabel "SQNR (dB)"
set offsets graph 0.01, graph 0.01, graph 0.05, graph 0.05
set key outside right top Left reverse samplen 2 spacing 1.2 nobox
set grid ytics lc rgb "#dddddd" lw 0.6
set datafile missing "NaN"
plot for [i = 1 : nr] datafile using 1:(column(i + 1)) with linespoints \
        lc rgb col(i) lw 1.5 pt 7 ps 0.6 title word(names, i), \
    for [i = 1 : nr] (word(keeps, i) + 0) with lines lc rgb col(i) dt 2 lw 1 notitle
