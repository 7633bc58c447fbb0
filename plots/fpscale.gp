# The scale trajectory of a loss-scaling or FP8 delayed-scaling replay
# (fpscale --plot): log2 of the scale against the step, and on a second
# axis the share of the step's nonzero finite elements that underflows
# (rounds to zero) and that overflows (loss mode: skipped steps) or
# saturates (fp8).  fpscale runs it as
#   gnuplot -e "datafile='...'; out='...'; ..." fpscale.gp
# with these variables:
#   datafile  BLOCKS blocks of scales, then one block of shares, all two
#             blank lines apart, each headed by a line holding its quoted
#             name ("loss scale", a tensor's, "shares").  Scales: lines
#             "STEP SCALE MARKED", MARKED 1 for a skipped step (loss mode)
#             or a step where the tensor saturated (fp8 mode).  Shares:
#             lines "STEP UNDER OVER MARKED", percentages, MARKED as above
#             for the step as a whole
#   out, term         output file, and "png" (pngcairo) or "svg"
#   width, height     pixels (PNG) or points (SVG)
#   mode              "loss" or "fp8"
#   blocks            how many blocks of scales
#   title             shown as is (not enhanced text)
#   fmt               the format's name, for the labels

if (!exists("term")) term = "png"
if (!exists("width")) width = 1000
if (!exists("height")) height = 600
if (!exists("mode")) mode = "loss"
if (!exists("blocks")) blocks = 1
if (!exists("title")) title = ""
if (!exists("fmt")) fmt = ""

if (term eq "svg") {
    set terminal svg size width, height dynamic enhanced font "sans,11" background rgb "white"
} else {
    set terminal pngcairo size width, height enhanced font "sans,11" background rgb "white"
}
set output out

lg2(x) = log(x) / log(2)

# The range of log2 scale over every block, for integer tics.
stats datafile index 0:blocks-1 using (lg2($2)) nooutput
lo = floor(STATS_min) - 1
hi = ceil(STATS_max) + 1
span = hi - lo
ystep = span <= 12 ? 1 : span <= 24 ? 2 : span <= 48 ? 4 : span <= 96 ? 8 : 16
stats datafile index 0:blocks-1 using 1 nooutput
xlo = STATS_min
xhi = STATS_max
# The shares: the second axis from 0 to a little above the largest.
stats datafile index blocks every ::1 using 2 nooutput
umax = STATS_max
stats datafile index blocks every ::1 using 3 nooutput
omax = STATS_max
smax = (umax > omax ? umax : omax)
smax = smax > 0 ? smax * 1.15 : 1
xpad = xhi > xlo ? (xhi - xlo) * 0.03 : 1

set title title noenhanced
set xlabel "step"
set ylabel "scale"
set y2label sprintf("%% of the step's nonzero elements (%s)", fmt) noenhanced
set xrange [xlo - xpad : xhi + xpad]
set yrange [lo : hi]
set y2range [0 : smax]
set ytics ystep nomirror out scale 0.6
set y2tics nomirror out scale 0.6
set format y "2^{%.0f}"
set format y2 "%g%%"
set xtics nomirror out scale 0.6
set border 11 lw 0.8
set grid ytics lc rgb "#dddddd"
set key outside right top noenhanced

palette = "#0072B2 #D55E00 #009E73 #CC79A7 #E69F00 #56B4E9 #999999 #F0E442"
col(i) = word(palette, i % 8 + 1)
marked = mode eq "loss" ? "skipped step" : "saturated"
over = mode eq "loss" ? "overflow (%)" : "saturated (%)"

plot for [i = 0 : blocks - 1] datafile index i using 1:(lg2($2)) with steps \
         lc rgb col(i) lw 1.5 title columnheader(1), \
     for [i = 0 : blocks - 1] datafile index i using 1:(lg2($2)) with points \
         pt 7 ps 0.6 lc rgb col(i) notitle, \
     for [i = 0 : blocks - 1] datafile index i using 1:($3 == 1 ? lg2($2) : NaN) with points \
         pt 2 ps 1.8 lw 2 lc rgb "#000000" title (i == 0 ? marked : ""), \
     datafile index blocks every ::1 using 1:2 axes x1y2 with linespoints \
         dt 2 lw 2 pt 5 ps 0.8 lc rgb "#CC0000" title "underflow (%)", \
     datafile index blocks every ::1 using 1:3 axes x1y2 with linespoints \
         dt 3 lw 2 pt 9 ps 0.9 lc rgb "#7F3F00" title over
