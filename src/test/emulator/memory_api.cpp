// cuMem*: allocation, copies and memsets. Everything is synchronous; async variants ignore their stream
// (after checking it). Every device side of a copy is checked against one live allocation.
#include <stdlib.h>
#include <string.h>

#include <unordered_map>

#include "memory.h"
#include "state.h"

namespace {

std::unordered_map<void*, size_t>& host_allocs() {
    static auto* m = new std::unordered_map<void*, size_t>;
    return *m;
}

// The common prologue: a current live context without a sticky error, and a valid stream.
#define EMU_CONTEXT_CALL(stream)                                  \
    EMU_LOCK;                                                     \
    CUctx_st* ctx;                                                \
    if (CUresult r_ = emu::current_context(&ctx)) return r_;      \
    if (CUresult r_ = emu::check_stream(stream)) return r_;       \
    (void) ctx

CUresult copy(void* dst, const void* src, size_t n) {
    if (n != 0) memmove(dst, src, n);
    return CUDA_SUCCESS;
}

template <typename T>
CUresult fill(const char* api, CUdeviceptr dst, T value, size_t count) {
    if ((dst % sizeof(T)) != 0) {
        emu::report("%s: 0x%llx is not aligned to %zu bytes", api, dst, sizeof(T));
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (count > ((size_t) -1) / sizeof(T)) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = emu::check_device_range(api, dst, count * sizeof(T))) return r;
    T* p = reinterpret_cast<T*>(dst);
    if (sizeof(T) == 1) {
        memset(p, (int) value, count);
    } else {
        for (size_t i = 0; i < count; i++) p[i] = value;
    }
    return CUDA_SUCCESS;
}

CUresult htod(const char* api, CUdeviceptr dst, const void* src, size_t n) {
    if (CUresult r = emu::check_device_range(api, dst, n)) return r;
    if (CUresult r = emu::check_host_range(api, src, n)) return r;
    return copy((void*) dst, src, n);
}

CUresult dtoh(const char* api, void* dst, CUdeviceptr src, size_t n) {
    if (CUresult r = emu::check_device_range(api, src, n)) return r;
    if (CUresult r = emu::check_host_range(api, dst, n)) return r;
    return copy(dst, (const void*) src, n);
}

CUresult dtod(const char* api, CUdeviceptr dst, CUdeviceptr src, size_t n) {
    if (CUresult r = emu::check_device_range(api, dst, n)) return r;
    if (CUresult r = emu::check_device_range(api, src, n)) return r;
    return copy((void*) dst, (const void*) src, n);
}

// cuMemcpy with unified addressing: each side is device memory when it lies in the device range.
CUresult unified(const char* api, CUdeviceptr dst, CUdeviceptr src, size_t n) {
    if (CUresult r = emu::check_host_range(api, (const void*) dst, n)) return r;
    if (CUresult r = emu::check_host_range(api, (const void*) src, n)) return r;
    return copy((void*) dst, (const void*) src, n);
}

}  // namespace

EMU_API CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
    EMU_CONTEXT_CALL(nullptr);
    if (dptr == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return emu::guarded([&] { return emu::device_alloc(ctx, bytesize, dptr); });
}

// Device memory is host memory here, so managed memory is simply device memory.
EMU_API CUresult cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize, unsigned int flags) {
    EMU_CONTEXT_CALL(nullptr);
    if (dptr == nullptr || (flags != 1 && flags != 2)) return CUDA_ERROR_INVALID_VALUE;
    return emu::guarded([&] { return emu::device_alloc(ctx, bytesize, dptr); });
}

EMU_API CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pPitch, size_t widthInBytes, size_t height,
                                    unsigned int elementSizeBytes) {
    EMU_CONTEXT_CALL(nullptr);
    if (dptr == nullptr || pPitch == nullptr || widthInBytes == 0 || height == 0) return CUDA_ERROR_INVALID_VALUE;
    if (elementSizeBytes != 4 && elementSizeBytes != 8 && elementSizeBytes != 16) return CUDA_ERROR_INVALID_VALUE;
    size_t pitch = (widthInBytes + 511) / 512 * 512;
    if (CUresult r = emu::guarded([&] { return emu::device_alloc(ctx, pitch * height, dptr); })) return r;
    *pPitch = pitch;
    return CUDA_SUCCESS;
}

EMU_API CUresult cuMemFree_v2(CUdeviceptr dptr) {
    EMU_CONTEXT_CALL(nullptr);
    if (dptr == 0) return CUDA_SUCCESS;
    CUresult r = emu::device_free(dptr);
    if (r != CUDA_SUCCESS) {
        char what[160];
        emu::describe((uintptr_t) dptr, 1, what, sizeof what);
        emu::report("cuMemFree_v2: 0x%llx is not a live allocation (%s)", dptr, what);
    }
    return r;
}

EMU_API CUresult cuMemGetInfo_v2(size_t* free, size_t* total) {
    EMU_CONTEXT_CALL(nullptr);
    if (free == nullptr || total == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *total = emu_limits::kTotalMemory;
    *free = emu_limits::kTotalMemory - emu::live_bytes();
    return CUDA_SUCCESS;
}

EMU_API CUresult cuMemGetAddressRange_v2(CUdeviceptr* pbase, size_t* psize, CUdeviceptr dptr) {
    EMU_CONTEXT_CALL(nullptr);
    const emu::Allocation* a = emu::find_allocation((uintptr_t) dptr);
    if (a == nullptr || !a->live || dptr - a->base >= a->size) return CUDA_ERROR_NOT_FOUND;
    if (pbase != nullptr) *pbase = a->base;
    if (psize != nullptr) *psize = a->size;
    return CUDA_SUCCESS;
}

EMU_API CUresult cuPointerGetAttribute(void* data, int attribute, CUdeviceptr ptr) {
    EMU_CONTEXT_CALL(nullptr);
    if (data == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const emu::Allocation* a = emu::find_allocation((uintptr_t) ptr);
    bool device = a != nullptr && a->live && ptr - a->base < a->size;
    if (!device && host_allocs().count((void*) ptr) == 0) return CUDA_ERROR_INVALID_VALUE;
    switch (attribute) {
        case 1: *(CUcontext*) data = device ? a->ctx : ctx; return CUDA_SUCCESS;               // CONTEXT
        case 2: *(unsigned*) data = device ? 2u : 1u; return CUDA_SUCCESS;                       // MEMORY_TYPE
        case 3: case 4: *(CUdeviceptr*) data = ptr; return CUDA_SUCCESS;                         // DEVICE/HOST_POINTER
        case 8: *(unsigned*) data = 0; return CUDA_SUCCESS;                                      // IS_MANAGED
        case 9: *(int*) data = 0; return CUDA_SUCCESS;                                           // DEVICE_ORDINAL
        case 11: if (!device) break; *(CUdeviceptr*) data = a->base; return CUDA_SUCCESS;      // RANGE_START_ADDR
        case 12: if (!device) break; *(size_t*) data = a->size; return CUDA_SUCCESS;           // RANGE_SIZE
        default: break;
    }
    return CUDA_ERROR_INVALID_VALUE;
}

EMU_API CUresult cuMemAllocHost_v2(void** pp, size_t bytesize) {
    EMU_CONTEXT_CALL(nullptr);
    if (pp == nullptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
    void* p = nullptr;
    if (posix_memalign(&p, 4096, bytesize) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = emu::guarded([&]() -> CUresult {
        host_allocs()[p] = bytesize;
        return CUDA_SUCCESS;
    });
    if (r != CUDA_SUCCESS) free(p);
    else *pp = p;
    return r;
}

EMU_API CUresult cuMemHostAlloc(void** pp, size_t bytesize, unsigned int flags) {
    (void) flags;
    return cuMemAllocHost_v2(pp, bytesize);
}

EMU_API CUresult cuMemFreeHost(void* p) {
    EMU_CONTEXT_CALL(nullptr);
    auto it = host_allocs().find(p);
    if (it == host_allocs().end()) return CUDA_ERROR_INVALID_VALUE;
    host_allocs().erase(it);
    free(p);
    return CUDA_SUCCESS;
}

EMU_API CUresult cuMemHostGetFlags(unsigned int* pFlags, void* p) {
    EMU_CONTEXT_CALL(nullptr);
    if (pFlags == nullptr || host_allocs().count(p) == 0) return CUDA_ERROR_INVALID_VALUE;
    *pFlags = 0;
    return CUDA_SUCCESS;
}

EMU_API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t n) {
    EMU_CONTEXT_CALL(nullptr);
    return htod("cuMemcpyHtoD_v2", dst, src, n);
}

EMU_API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t n, CUstream stream) {
    EMU_CONTEXT_CALL(stream);
    return htod("cuMemcpyHtoDAsync_v2", dst, src, n);
}

EMU_API CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t n) {
    EMU_CONTEXT_CALL(nullptr);
    return dtoh("cuMemcpyDtoH_v2", dst, src, n);
}

EMU_API CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t n, CUstream stream) {
    EMU_CONTEXT_CALL(stream);
    return dtoh("cuMemcpyDtoHAsync_v2", dst, src, n);
}

EMU_API CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
    EMU_CONTEXT_CALL(nullptr);
    return dtod("cuMemcpyDtoD_v2", dst, src, n);
}

EMU_API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream stream) {
    EMU_CONTEXT_CALL(stream);
    return dtod("cuMemcpyDtoDAsync_v2", dst, src, n);
}

EMU_API CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n) {
    EMU_CONTEXT_CALL(nullptr);
    return unified("cuMemcpy", dst, src, n);
}

EMU_API CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream stream) {
    EMU_CONTEXT_CALL(stream);
    return unified("cuMemcpyAsync", dst, src, n);
}

EMU_API CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t n) {
    EMU_CONTEXT_CALL(nullptr);
    return fill<unsigned char>("cuMemsetD8_v2", dst, value, n);
}

EMU_API CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t n, CUstream stream) {
    EMU_CONTEXT_CALL(stream);
    return fill<unsigned char>("cuMemsetD8Async", dst, value, n);
}

EMU_API CUresult cuMemsetD16_v2(CUdeviceptr dst, unsigned short value, size_t n) {
    EMU_CONTEXT_CALL(nullptr);
    return fill<unsigned short>("cuMemsetD16_v2", dst, value, n);
}

EMU_API CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t n, CUstream stream) {
    EMU_CONTEXT_CALL(stream);
    return fill<unsigned short>("cuMemsetD16Async", dst, value, n);
}

EMU_API CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int value, size_t n) {
    EMU_CONTEXT_CALL(nullptr);
    return fill<unsigned int>("cuMemsetD32_v2", dst, value, n);
}

EMU_API CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t n, CUstream stream) {
    EMU_CONTEXT_CALL(stream);
    return fill<unsigned int>("cuMemsetD32Async", dst, value, n);
}
