/* libFuzzer target: the PNG encoder round trip (an image made from the bytes ->
 * vki_png_encode_ex -> vkimg_load_memory: the same pixels, and the same metadata
 * when some is added). The checks: tests/fuzz/fuzz.h. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_one_png(data, size) ? 0 : -1; /* -1: too short to say what image, not kept */
}
