// cuInit, the driver version and the one emulated device's identity and attributes. The clock rates, bus
// width and similar numbers are fixed fakes that merely look plausible; nothing here measures the host.
#include <stdio.h>
#include <string.h>

#include <string>

#include "state.h"

namespace {

// The Java side detects the emulator by the prefix "mechspec CUDA emulator". With adversarial math the device is
// a different GPU for every seed, and says so: artifacts record the name, and the report gate compares the
// metrics of such a run with no reference's (its check outcomes it does compare).
std::string device_name() {
    const emu::Config& c = emu::config();
    if (!c.adversarialMath) return "mechspec CUDA emulator (CPU)";
    return "mechspec CUDA emulator (CPU, adversarial math, seed " + std::to_string(c.mathSeed) + ")";
}
const char kPciBusId[] = "0000:01:00.0";

CUresult check_device(CUdevice dev) {
    if (!emu::initialized()) return CUDA_ERROR_NOT_INITIALIZED;
    return dev == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

// Value of a CUdevice_attribute, or false for one the emulator does not know.
bool attribute(int attr, int* value) {
    using namespace emu_limits;
    const emu::Config& c = emu::config();
    switch (attr) {
        case 1: *value = kMaxThreadsPerBlock; return true;
        case 2: case 3: *value = kMaxBlockDimXY; return true;
        case 4: *value = kMaxBlockDimZ; return true;
        case 5: *value = (int) kMaxGridDimX; return true;
        case 6: case 7: *value = (int) kMaxGridDimYZ; return true;
        case 8: *value = kSharedPerBlock; return true;
        case 9: *value = 65536; return true;              // total constant memory
        case 10: *value = 32; return true;                // warp size
        case 11: *value = 2147483647; return true;        // max pitch
        case 12: *value = 65536; return true;             // registers per block
        case 13: *value = 1500000; return true;           // clock rate, kHz (fake)
        case 14: *value = 512; return true;               // texture alignment
        case 15: *value = 1; return true;                 // gpu overlap
        case 16: *value = c.multiprocessors; return true; // multiprocessor count (MECHSPEC_EMU_SM_COUNT)
        case 17: *value = 0; return true;                 // kernel exec timeout
        case 18: *value = 0; return true;                 // integrated
        case 19: *value = 1; return true;                 // can map host memory
        case 20: *value = c.exclusiveProcess ? 3 : 0; return true;   // compute mode
        case 21: *value = 131072; return true;
        case 22: case 23: *value = 65536; return true;
        case 24: case 25: case 26: *value = 16384; return true;
        case 27: case 28: *value = 32768; return true;
        case 29: *value = 2048; return true;
        case 30: *value = 512; return true;               // surface alignment
        case 31: *value = 1; return true;                 // concurrent kernels
        case 32: *value = 0; return true;                 // ECC
        case 33: *value = 1; return true;                 // PCI bus
        case 34: *value = 0; return true;                 // PCI device
        case 35: *value = 0; return true;                 // TCC driver
        case 36: *value = 7001000; return true;           // memory clock rate, kHz (fake)
        case 37: *value = 256; return true;               // global memory bus width, bits (fake)
        case 38: *value = c.l2Bytes; return true;         // L2 cache bytes (MECHSPEC_EMU_L2_BYTES)
        case 39: *value = 2048; return true;              // max threads per multiprocessor
        case 40: *value = 2; return true;                 // async engines
        case 41: *value = 1; return true;                 // unified addressing
        case 42: *value = 32768; return true;
        case 43: *value = 2048; return true;
        case 44: *value = 1; return true;
        case 45: case 46: *value = 32768; return true;
        case 47: case 48: *value = 8192; return true;
        case 49: *value = 32768; return true;
        case 50: *value = 0; return true;                 // PCI domain
        case 51: *value = 32; return true;                // texture pitch alignment
        case 52: case 53: *value = 32768; return true;
        case 54: *value = 2046; return true;
        case 55: *value = 32768; return true;
        case 56: *value = 131072; return true;
        case 57: *value = 65536; return true;
        case 58: case 59: case 60: *value = 16384; return true;
        case 61: *value = 32768; return true;
        case 62: *value = 2048; return true;
        case 63: case 64: *value = 32768; return true;
        case 65: *value = 2048; return true;
        case 66: case 67: *value = 32768; return true;
        case 68: *value = 2046; return true;
        case 69: *value = 268435456; return true;
        case 70: *value = 131072; return true;
        case 71: *value = 65000; return true;
        case 72: *value = 2097120; return true;
        case 73: case 74: *value = 32768; return true;
        case 75: *value = c.ccMajor; return true;
        case 76: *value = c.ccMinor; return true;
        case 77: *value = 32768; return true;
        case 78: *value = 1; return true;                 // stream priorities
        case 79: case 80: *value = 1; return true;        // global / local L1 cache
        case 81: *value = kSharedPerMultiprocessor; return true;
        case 82: *value = 65536; return true;             // registers per multiprocessor
        case 83: *value = 1; return true;                 // managed memory
        case 84: case 85: *value = 0; return true;        // multi-GPU board
        case 86: *value = 0; return true;                 // host native atomics
        case 87: *value = 2; return true;                 // single-to-double perf ratio
        case 88: *value = 0; return true;                 // pageable memory access
        case 89: *value = 1; return true;                 // concurrent managed access
        case 90: *value = 1; return true;                 // compute preemption
        case 91: *value = 1; return true;
        case 92: case 93: case 94: *value = 0; return true;
        case 95: *value = 1; return true;                 // cooperative launch
        case 96: *value = 0; return true;
        case 97: *value = kSharedPerBlockOptin; return true;
        case 98: *value = 0; return true;
        case 99: *value = 1; return true;                 // host register supported
        case 100: case 101: *value = 0; return true;
        case 102: *value = 0; return true;                // virtual memory management (not emulated)
        case 103: case 104: case 105: *value = 0; return true;
        case 106: *value = 32; return true;               // max blocks per multiprocessor
        case 107: case 108: case 109: case 110: *value = 0; return true;
        case 111: *value = 1024; return true;             // reserved shared memory per block
        case 112: case 113: case 114: case 115: case 116: case 117: case 118: case 119: *value = 0; return true;
        case 120: case 121: case 122: case 123: case 124: *value = 0; return true;
        default: return false;
    }
}

}  // namespace

EMU_API CUresult cuInit(unsigned int flags) {
    EMU_LOCK;
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    emu::config();
    emu::set_initialized();
    return CUDA_SUCCESS;
}

EMU_API CUresult cuDriverGetVersion(int* version) {
    if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *version = emu::config().driverVersion;
    return CUDA_SUCCESS;
}

EMU_API CUresult cuDeviceGetCount(int* count) {
    EMU_LOCK;
    if (!emu::initialized()) return CUDA_ERROR_NOT_INITIALIZED;
    if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *count = 1;
    return CUDA_SUCCESS;
}

EMU_API CUresult cuDeviceGet(CUdevice* device, int ordinal) {
    EMU_LOCK;
    if (!emu::initialized()) return CUDA_ERROR_NOT_INITIALIZED;
    if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
    *device = 0;
    return CUDA_SUCCESS;
}

EMU_API CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
    EMU_LOCK;
    if (CUresult r = check_device(dev)) return r;
    if (name == nullptr || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t) len, "%s", device_name().c_str());
    return CUDA_SUCCESS;
}

EMU_API CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) {
    EMU_LOCK;
    if (CUresult r = check_device(dev)) return r;
    if (uuid == nullptr) return CUDA_ERROR_INVALID_VALUE;
    static const unsigned char kUuid[16] = {0x6d, 0x65, 0x63, 0x68, 0x73, 0x70, 0x65, 0x63,
                                            0x2d, 0x65, 0x6d, 0x75, 0x00, 0x00, 0x00, 0x01};   // fixed fake
    memcpy(uuid->bytes, kUuid, sizeof kUuid);
    return CUDA_SUCCESS;
}

EMU_API CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
    EMU_LOCK;
    if (CUresult r = check_device(dev)) return r;
    if (bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *bytes = emu_limits::kTotalMemory;
    return CUDA_SUCCESS;
}

EMU_API CUresult cuDeviceGetAttribute(int* pi, int attrib, CUdevice dev) {
    EMU_LOCK;
    if (CUresult r = check_device(dev)) return r;
    if (pi == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return attribute(attrib, pi) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EMU_API CUresult cuDeviceComputeCapability(int* major, int* minor, CUdevice dev) {
    EMU_LOCK;
    if (CUresult r = check_device(dev)) return r;
    if (major == nullptr || minor == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *major = emu::config().ccMajor;
    *minor = emu::config().ccMinor;
    return CUDA_SUCCESS;
}

EMU_API CUresult cuDeviceGetProperties(CUdevprop* prop, CUdevice dev) {
    EMU_LOCK;
    if (CUresult r = check_device(dev)) return r;
    if (prop == nullptr) return CUDA_ERROR_INVALID_VALUE;
    int v[14];
    const int attrs[14] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
    for (int i = 0; i < 14; i++) attribute(attrs[i], &v[i]);
    *prop = CUdevprop{v[0], {v[1], v[2], v[3]}, {v[4], v[5], v[6]}, v[7], v[8], v[9], v[10], v[11], v[12], v[13]};
    return CUDA_SUCCESS;
}

EMU_API CUresult cuDeviceGetPCIBusId(char* pciBusId, int len, CUdevice dev) {
    EMU_LOCK;
    if (CUresult r = check_device(dev)) return r;
    if (pciBusId == nullptr || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    snprintf(pciBusId, (size_t) len, "%s", kPciBusId);
    return CUDA_SUCCESS;
}

EMU_API CUresult cuDeviceGetByPCIBusId(CUdevice* dev, const char* pciBusId) {
    EMU_LOCK;
    if (!emu::initialized()) return CUDA_ERROR_NOT_INITIALIZED;
    if (dev == nullptr || pciBusId == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (strcasecmp(pciBusId, kPciBusId) != 0 && strcasecmp(pciBusId, kPciBusId + 5) != 0) {
        return CUDA_ERROR_INVALID_DEVICE;
    }
    *dev = 0;
    return CUDA_SUCCESS;
}

EMU_API CUresult cuDeviceCanAccessPeer(int* canAccessPeer, CUdevice dev, CUdevice peerDev) {
    EMU_LOCK;
    if (CUresult r = check_device(dev)) return r;
    if (canAccessPeer == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (peerDev != 0) return CUDA_ERROR_INVALID_DEVICE;
    *canAccessPeer = 0;
    return CUDA_SUCCESS;
}
