/* libFuzzer target: the pipeline parser (vkimg_pipeline_parse), the description
 * round trip and the stage shapes. The checks: tests/fuzz/fuzz.h. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_one_parse(data, size) ? 0 : -1; /* -1: not a pipeline text, not kept */
}
