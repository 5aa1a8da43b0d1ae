// Configuration, the API lock, stderr reporting and the handle registry.
#include "state.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <thread>
#include <unordered_set>

namespace emu {

namespace {

bool g_initialized = false;

const char* env(const char* name) {
    const char* v = getenv(name);
    return v && *v ? v : nullptr;
}

Config read_config() {
    Config c;
    if (const char* cc = env("MECHSPEC_EMU_CC")) {
        int major = 0, minor = 0;
        if (sscanf(cc, "%d.%d", &major, &minor) == 2 && major > 0 && minor >= 0 && minor < 10) {
            c.ccMajor = major;
            c.ccMinor = minor;
        } else {
            report("ignoring MECHSPEC_EMU_CC=%s (expected MAJOR.MINOR, e.g. 8.6)", cc);
        }
    }
    if (const char* v = env("MECHSPEC_EMU_DRIVER_VERSION")) {
        int version = atoi(v);
        if (version >= 1000) c.driverVersion = version;
        else report("ignoring MECHSPEC_EMU_DRIVER_VERSION=%s (expected e.g. 12040)", v);
    }
    if (const char* mode = env("MECHSPEC_EMU_COMPUTE_MODE")) {
        if (strcmp(mode, "exclusive-process") == 0) c.exclusiveProcess = true;
        else if (strcmp(mode, "default") != 0) report("ignoring MECHSPEC_EMU_COMPUTE_MODE=%s", mode);
    }
    const char* lock = env("MECHSPEC_EMU_LOCK");
    c.lockPath = lock ? lock : "/tmp/mechspec-cuda-emulator.lock";
    unsigned hw = std::thread::hardware_concurrency();
    c.workers = hw == 0 ? 1 : (hw < 4 ? (int) hw : 4);
    if (const char* w = env("MECHSPEC_EMU_WORKERS")) {
        int n = atoi(w);
        if (n >= 1 && n <= 256) c.workers = n;
        else report("ignoring MECHSPEC_EMU_WORKERS=%s (expected 1..256)", w);
    }
    if (const char* order = env("MECHSPEC_EMU_THREAD_ORDER")) {
        if (strcmp(order, "reverse") == 0) c.reverseOrder = true;
        else if (strcmp(order, "forward") != 0) report("ignoring MECHSPEC_EMU_THREAD_ORDER=%s", order);
    }
    if (const char* v = env("MECHSPEC_EMU_VERBOSE")) c.verbose = strcmp(v, "0") != 0;
    return c;
}

}  // namespace

const Config& config() {
    static const Config c = read_config();
    return c;
}

std::recursive_mutex& api_mutex() {
    static std::recursive_mutex* m = new std::recursive_mutex;   // never destroyed: usable during exit
    return *m;
}

bool initialized() { return g_initialized; }
void set_initialized() { g_initialized = true; }

void report(const char* fmt, ...) {
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "mechspec CUDA emulator: %s\n", line);
    fflush(stderr);
}

namespace {
std::unordered_set<const void*>& handles() {
    static auto* h = new std::unordered_set<const void*>;
    return *h;
}
}  // namespace

bool is_handle(const void* p) { return p != nullptr && handles().count(p) != 0; }
void add_handle(const void* p) { handles().insert(p); }

}  // namespace emu

extern "C" __attribute__((visibility("hidden"))) int emu_not_emulated(const char* name, int* reported) {
    EMU_LOCK;
    if (!*reported) {
        *reported = 1;
        emu::report("%s is not emulated", name);
    }
    return CUDA_ERROR_NOT_SUPPORTED;
}
