#version 460
// yiq_aa: pixelmatch's YIQ comparison with its anti-aliasing detector (--aa) (shaders/lib/yiq.glsl)
#extension GL_GOOGLE_include_directive : require
#define YIQ_AA 1
#include "yiq.glsl"
