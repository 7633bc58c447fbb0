/* The libFuzzer harness of one target, chosen when compiled:
 * -DFUZZ_TARGET=fuzz_npy (see fuzz.h and make fuzz). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return FUZZ_TARGET(data, size);
}
