#version 460
// yiq: pixelmatch's YIQ comparison without the anti-aliasing detector (shaders/lib/yiq.glsl)
#extension GL_GOOGLE_include_directive : require
#define YIQ_AA 0
#include "yiq.glsl"
