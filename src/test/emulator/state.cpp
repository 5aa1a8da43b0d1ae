// Configuration, the API lock, stderr reporting and the handle registry.
#include "state.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <chrono>
#include <thread>
#include <unordered_set>

namespace emu {

namespace {

bool g_initialized = false;
CUresult g_sticky = CUDA_SUCCESS;

const char* env(const char* name) {
    const char* v = getenv(name);
    return v && *v ? v : nullptr;
}

// A seed chosen from the clock when none is given; printed at the first launch, so the run can be replayed.
uint64_t clock_seed() {
    auto now = std::chrono::system_clock::now().time_since_epoch();
    return (uint64_t) std::chrono::duration_cast<std::chrono::microseconds>(now).count() % 4294967296u;
}

// "MODE" or "MODE:SEED" with a decimal SEED: true when value names mode; *seed is the given or a clock seed.
bool seeded_mode(const char* value, const char* mode, uint64_t* seed, bool* valid) {
    size_t n = strlen(mode);
    if (strncmp(value, mode, n) != 0 || (value[n] != '\0' && value[n] != ':')) return false;
    *valid = true;
    if (value[n] == '\0') {
        *seed = clock_seed();
        return true;
    }
    const char* digits = value + n + 1;
    char* end = nullptr;
    errno = 0;
    unsigned long long v = strtoull(digits, &end, 10);
    *valid = *digits >= '0' && *digits <= '9' && *end == '\0' && errno == 0;
    *seed = v;
    return true;
}

// A positive int from the environment within [lo, hi], else the default (with a line saying so).
int int_setting(const char* name, int fallback, long lo, long hi) {
    const char* v = env(name);
    if (v == nullptr) return fallback;
    char* end = nullptr;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (*end != '\0' || errno != 0 || n < lo || n > hi) {
        report("ignoring %s=%s (expected an integer in %ld..%ld)", name, v, lo, hi);
        return fallback;
    }
    return (int) n;
}

}  // namespace

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
        bool valid = false;
        if (strcmp(order, "reverse") == 0) c.order = ThreadOrder::kReverse;
        else if (seeded_mode(order, "shuffle", &c.shuffleSeed, &valid) && valid) c.order = ThreadOrder::kShuffle;
        else if (strcmp(order, "forward") != 0) report("ignoring MECHSPEC_EMU_THREAD_ORDER=%s", order);
    }
    if (const char* math = env("MECHSPEC_EMU_MATH")) {
        bool valid = false;
        if (seeded_mode(math, "adversarial", &c.mathSeed, &valid) && valid) c.adversarialMath = true;
        else if (strcmp(math, "host") != 0) report("ignoring MECHSPEC_EMU_MATH=%s", math);
    }
    c.multiprocessors = int_setting("MECHSPEC_EMU_SM_COUNT", c.multiprocessors, 1, 1 << 16);
    c.l2Bytes = int_setting("MECHSPEC_EMU_L2_BYTES", c.l2Bytes, 0, 2147483647L);
    if (const char* v = env("MECHSPEC_EMU_VERBOSE")) c.verbose = strcmp(v, "0") != 0;
    return c;
}

std::recursive_mutex& api_mutex() {
    static std::recursive_mutex* m = new std::recursive_mutex;   // never destroyed: usable during exit
    return *m;
}

bool initialized() { return g_initialized; }
void set_initialized() { g_initialized = true; }

CUresult sticky_error() { return g_sticky; }
void set_sticky_error(CUresult error) {
    if (g_sticky == CUDA_SUCCESS) g_sticky = error;
}

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
