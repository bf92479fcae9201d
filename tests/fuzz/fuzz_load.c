/* libFuzzer target: the image loader from memory (vkimg_load_memory: every format,
 * each file's one decoder found by its magic bytes) and the metadata readers and
 * writers on the same bytes (EXIF, ICC). The checks: tests/fuzz/fuzz.h. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_one_load(data, size);
    return 0;
}
