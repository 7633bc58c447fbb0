/* ref_parse: MPFR reads the text itself (mpfr_strtofr, base 0: decimal, or
 * hexadecimal after "0x") toward zero at a precision far above any format's,
 * and ref_round rounds that value plus the ternary's direction once.
 * S must be text that fpk_parse accepts (MPFR accepts more); the checks of
 * what fpk_parse rejects do not go through here. */
#include <string.h>

#include "ref.h"

ref_result ref_parse(const fpk_format *f, const char *s, const fpk_ctx *c)
{
    size_t len = strlen(s);
    mpfr_prec_t prec = 4096;
    if (len < ((size_t)MPFR_PREC_MAX - 64) / 4 && (mpfr_prec_t)(4 * len + 64) > prec)
        prec = (mpfr_prec_t)(4 * len + 64);
    mpfr_flags_t saved = mpfr_flags_save();
    mpfr_clear_flags();
    mpfr_t x;
    mpfr_init2(x, prec);
    int ternary = mpfr_strtofr(x, s, NULL, 0, MPFR_RNDZ);
    int dir = ternary < 0 ? 1 : ternary > 0 ? -1 : 0; /* sign(true - x) */
    bool neg = mpfr_signbit(x);
    ref_result r;
    if (mpfr_nan_p(x)) {
        r = ref_nan(f, false);
    } else if (mpfr_inf_p(x)) {
        /* RNDZ never overflows to infinity: the text was "inf" */
        r = ref_convert(f, &fpk_fp64, neg ? UINT64_C(0xfff0000000000000)
                                          : UINT64_C(0x7ff0000000000000), c);
    } else {
        /* Beyond MPFR's exponent range: a stand-in of the same magnitude
         * class, far outside every format's range, truncated the same way. */
        if (mpfr_underflow_p()) {
            mpfr_set_si_2exp(x, neg ? -1 : 1, -4000, MPFR_RNDN);
            dir = neg ? 1 : -1;
        } else if (mpfr_overflow_p()) {
            mpfr_set_si_2exp(x, neg ? -1 : 1, 4000, MPFR_RNDN);
            dir = neg ? -1 : 1;
        }
        r = ref_round(f, x, dir, c);
    }
    mpfr_clear(x);
    mpfr_flags_restore(saved, MPFR_FLAGS_ALL);
    return r;
}
