/* What the x86-64 statistics kernels of both sets share (stats_avx2.c,
 * stats_avx512.c): the window of exponent fields their histograms count
 * in carry-save adders, and the adders themselves. */
#ifndef FPKIT_STATS_X86_H
#define FPKIT_STATS_X86_H

#include "stats-body.h"

/* The exponent histograms of the statistics (stats_avx512.c,
 * stats_avx2.c) count a window of EXP_WINDOW exponent fields in
 * carry-save adders, from the exponent field BASE; those outside it are
 * counted one at a time.  exp_window_base(TOP): the base that the first
 * nonzero elements, of largest finite magnitude TOP (0: none), choose,
 * their exponent 8 below the window's top. */
#define EXP_WINDOW 64
static inline uint32_t exp_window_base(uint32_t top)
{
    uint32_t e = top ? top >> 23 : 255;
    return e < 56 ? 1 : e > 247 ? 192 : e - 55;
}

/* A group of the histogram's adders (Harley and Seal's carry-save adders:
 * each set's exp_hist_group) over H's bitsliced counters of vector type T
 * (plane p holds bit p of the counts), sixteen vectors a half:
 * PAIR(k, t0, t1) makes the one-hot vectors of both halves of the group's
 * vectors k and k + 1 and adds them into ones0 and ones1, their carries
 * into t0 and t1; CSA(hi, lo, a, b) adds a and b into lo, its carry into
 * hi; CARRY(h, w, p, c) adds c, of weight 2^p, to half w's planes.
 * EXP_ADDERS_QUAD adds four of a half's vectors' pairs, from vector k, into
 * the fours F0 and F1. */
#define EXP_ADDERS_QUAD(CSA, PAIR, k, f0, f1)                                                      \
    do {                                                                                           \
        PAIR(k, twos_a0, twos_a1);                                                                 \
        PAIR(k + 2, twos_b0, twos_b1);                                                             \
        CSA(f0, twos0, twos_a0, twos_b0);                                                          \
        CSA(f1, twos1, twos_a1, twos_b1);                                                          \
    } while (0)
#define EXP_ADDERS(T, CSA, PAIR, CARRY, h)                                                         \
    do {                                                                                           \
        T ones0 = (h)->plane[0][0], twos0 = (h)->plane[0][1], fours0 = (h)->plane[0][2];           \
        T eights0 = (h)->plane[0][3], ones1 = (h)->plane[1][0], twos1 = (h)->plane[1][1];          \
        T fours1 = (h)->plane[1][2], eights1 = (h)->plane[1][3];                                   \
        T twos_a0, twos_b0, fours_a0, fours_b0, eights_a0, eights_b0, sixteens0;                   \
        T twos_a1, twos_b1, fours_a1, fours_b1, eights_a1, eights_b1, sixteens1;                   \
        EXP_ADDERS_QUAD(CSA, PAIR, 0, fours_a0, fours_a1);                                         \
        EXP_ADDERS_QUAD(CSA, PAIR, 4, fours_b0, fours_b1);                                         \
        CSA(eights_a0, fours0, fours_a0, fours_b0);                                                \
        CSA(eights_a1, fours1, fours_a1, fours_b1);                                                \
        EXP_ADDERS_QUAD(CSA, PAIR, 8, fours_a0, fours_a1);                                         \
        EXP_ADDERS_QUAD(CSA, PAIR, 12, fours_b0, fours_b1);                                        \
        CSA(eights_b0, fours0, fours_a0, fours_b0);                                                \
        CSA(eights_b1, fours1, fours_a1, fours_b1);                                                \
        CSA(sixteens0, eights0, eights_a0, eights_b0);                                             \
        CSA(sixteens1, eights1, eights_a1, eights_b1);                                             \
        (h)->plane[0][0] = ones0, (h)->plane[0][1] = twos0, (h)->plane[0][2] = fours0;             \
        (h)->plane[0][3] = eights0, (h)->plane[1][0] = ones1, (h)->plane[1][1] = twos1;            \
        (h)->plane[1][2] = fours1, (h)->plane[1][3] = eights1;                                     \
        CARRY(h, 0, 4, sixteens0);                                                                 \
        CARRY(h, 1, 4, sixteens1);                                                                 \
    } while (0)

#endif
