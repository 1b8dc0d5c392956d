// Shared by every Lathe compute shader: 64 invocations per workgroup, and
// a grid-stride loop so a dispatch capped at 65535 workgroups still covers
// every element (FOR_EACH(i, count) { ... }).
layout(local_size_x = 64) in;
#define WG 64u
#define FOR_EACH(i, count) for (uint i = gl_GlobalInvocationID.x; i < (count); i += gl_NumWorkGroups.x * WG)
#define kInf uintBitsToFloat(0x7f800000u)
