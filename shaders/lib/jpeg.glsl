// Shared by the JPEG codec's kernels (shaders/codec): libjpeg's accurate integer
// DCTs (jidctint.c, jfdctint.c) work in CONST_BITS = 13 fixed point with
// PASS1_BITS = 2 between their passes, rounding by DESCALE.
const int FIX_0_298631336 = 2446, FIX_0_390180644 = 3196, FIX_0_541196100 = 4433, FIX_0_765366865 = 6270,
          FIX_0_899976223 = 7373, FIX_1_175875602 = 9633, FIX_1_501321110 = 12299, FIX_1_847759065 = 15137,
          FIX_1_961570560 = 16069, FIX_2_053119869 = 16819, FIX_2_562915447 = 20995, FIX_3_072711026 = 25172;

// DESCALE: x / 2^n rounded to nearest (half up), arithmetic shift
int descale(int x, int n)
{
    return (x + (1 << (n - 1))) >> n;
}
