/* The squared errors' portable body (kernels.h: fpki_sqerr_fn),
 * instantiated by sqerr_c.c: the sums behind fpk_array_sqerr, lane by
 * lane in the order every set adds them. */
#ifndef FPKIT_SQERR_BODY_H
#define FPKIT_SQERR_BODY_H

#include "kernel-util.h"

/* One tile of fpki_sqerr_generic: element l of XT and YT into lane l, its
 * terms zero where it is not counted (a sum of squares stays the same
 * when zero is added). */
FPKI_INLINE void fpki_sqerr_tile(const float *xt, const float *yt, double *sx, double *se)
{
    for (int l = 0; l < FPKI_SQERR_LANES; l++) {
        uint32_t xb, yb;
        memcpy(&xb, &xt[l], sizeof xb);
        memcpy(&yb, &yt[l], sizeof yb);
        bool counted =
            (xb & FPKI_F32_MAG) - 1 < FPKI_F32_INF - 1 && (yb & FPKI_F32_MAG) < FPKI_F32_INF;
        double xd = counted ? (double)xt[l] : 0, ed = counted ? (double)yt[l] - xd : 0;
        sx[l] += xd * xd;
        se[l] += ed * ed;
    }
}

/* fpki_sqerr_fn's body: the nonzero elements packed into tiles of
 * sixteen, the first at lane LANE, the lanes a tile leaves empty zeros,
 * so that every set adds the same terms in the same order.  Nothing here
 * is contracted into fused multiply-adds (kernel-util.h). */
FPKI_INLINE unsigned fpki_sqerr_generic(const float *x, const float *y, size_t n, unsigned lane,
                                        double *x2, double *e2)
{
    double sx[FPKI_SQERR_LANES] = {0}, se[FPKI_SQERR_LANES] = {0};
    if (x2)
        memcpy(sx, x2, sizeof sx);
    if (e2)
        memcpy(se, e2, sizeof se);
    float xt[FPKI_SQERR_LANES] = {0}, yt[FPKI_SQERR_LANES] = {0};
    unsigned l = lane;
    for (size_t i = 0; i < n; i++) {
        uint32_t xb;
        memcpy(&xb, &x[i], sizeof xb);
        if ((xb & FPKI_F32_MAG) == 0)
            continue;
        xt[l] = x[i];
        yt[l] = y ? y[i] : 0;
        if (++l == FPKI_SQERR_LANES) {
            fpki_sqerr_tile(xt, yt, sx, se);
            l = 0;
        }
    }
    if (l != 0) {
        for (unsigned k = l; k < FPKI_SQERR_LANES; k++)
            xt[k] = yt[k] = 0;
        fpki_sqerr_tile(xt, yt, sx, se);
    }
    if (x2)
        memcpy(x2, sx, sizeof sx);
    if (e2)
        memcpy(e2, se, sizeof se);
    return l;
}

#endif
