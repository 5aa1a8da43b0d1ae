// CUDA's built-in vector types (vector_types.h), with the sizes and alignments CUDA declares, and their
// make_* constructors (vector_functions.h). Included by cuda_emu.h.
//
// The alignment is what makes a vector load one checked access: GCC's address-sanitizer instrumentation calls the
// fixed-size hook __asan_load16/__asan_store16 (or 8, 4, 2) for an access whose type claims that alignment, and
// access.cpp checks the address against it (CUDA_ERROR_MISALIGNED_ADDRESS otherwise), as a GPU's vector load
// instruction requires. A type that is only 4-aligned goes through __asan_loadN, which checks bounds only.
#pragma once

#define EMU_VECTOR2(name, T, align) \
    struct alignas(align) name {    \
        T x, y;                     \
    };
#define EMU_VECTOR3(name, T) \
    struct name {            \
        T x, y, z;           \
    };
#define EMU_VECTOR4(name, T, align) \
    struct alignas(align) name {    \
        T x, y, z, w;               \
    };

// uint3 and dim3 are declared by emu_builtins.h (threadIdx, blockDim).
EMU_VECTOR2(char2, signed char, 2)
EMU_VECTOR2(uchar2, unsigned char, 2)
EMU_VECTOR4(char4, signed char, 4)
EMU_VECTOR4(uchar4, unsigned char, 4)
EMU_VECTOR2(short2, short, 4)
EMU_VECTOR2(ushort2, unsigned short, 4)
EMU_VECTOR4(short4, short, 8)
EMU_VECTOR4(ushort4, unsigned short, 8)
EMU_VECTOR2(int2, int, 8)
EMU_VECTOR2(uint2, unsigned int, 8)
EMU_VECTOR3(int3, int)
EMU_VECTOR4(int4, int, 16)
EMU_VECTOR4(uint4, unsigned int, 16)
EMU_VECTOR2(float2, float, 8)
EMU_VECTOR3(float3, float)
EMU_VECTOR4(float4, float, 16)
EMU_VECTOR2(double2, double, 16)
EMU_VECTOR2(longlong2, long long, 16)
EMU_VECTOR2(ulonglong2, unsigned long long, 16)

#undef EMU_VECTOR2
#undef EMU_VECTOR3
#undef EMU_VECTOR4

#define EMU_MAKE2(name, T) \
    inline name make_##name(T x, T y) { return name{x, y}; }
#define EMU_MAKE3(name, T) \
    inline name make_##name(T x, T y, T z) { return name{x, y, z}; }
#define EMU_MAKE4(name, T) \
    inline name make_##name(T x, T y, T z, T w) { return name{x, y, z, w}; }

EMU_MAKE2(char2, signed char)
EMU_MAKE2(uchar2, unsigned char)
EMU_MAKE4(char4, signed char)
EMU_MAKE4(uchar4, unsigned char)
EMU_MAKE2(short2, short)
EMU_MAKE2(ushort2, unsigned short)
EMU_MAKE4(short4, short)
EMU_MAKE4(ushort4, unsigned short)
EMU_MAKE2(int2, int)
EMU_MAKE2(uint2, unsigned int)
EMU_MAKE3(int3, int)
EMU_MAKE3(uint3, unsigned int)
EMU_MAKE4(int4, int)
EMU_MAKE4(uint4, unsigned int)
EMU_MAKE2(float2, float)
EMU_MAKE3(float3, float)
EMU_MAKE4(float4, float)
EMU_MAKE2(double2, double)
EMU_MAKE2(longlong2, long long)
EMU_MAKE2(ulonglong2, unsigned long long)

#undef EMU_MAKE2
#undef EMU_MAKE3
#undef EMU_MAKE4

static_assert(sizeof(float4) == 16 && alignof(float4) == 16, "float4 as CUDA declares it");
static_assert(sizeof(double2) == 16 && alignof(double2) == 16, "double2 as CUDA declares it");
static_assert(sizeof(float2) == 8 && alignof(float2) == 8, "float2 as CUDA declares it");
static_assert(sizeof(short2) == 4 && alignof(short2) == 4, "short2 as CUDA declares it");
static_assert(sizeof(float3) == 12 && alignof(float3) == 4, "float3 as CUDA declares it");
