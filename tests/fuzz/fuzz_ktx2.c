/* libFuzzer target: the strict KTX2 reader (vki_ktx2_decode), and the writer on
 * what it reads. The checks: tests/fuzz/fuzz.h. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_one_ktx2(data, size);
    return 0;
}
