// The emulator's own smoke test (not run by Maven): exhaustive fp16/bf16 rounding checks, real kernels against
// plain C++ references, every self-test kernel, the environment switches (run in child processes), and timings.
//
//   g++ -std=c++17 -O2 -ffp-contract=off -Isrc/test/emulator/include -o /tmp/smoke
//       src/test/emulator/smoke.cpp -L/tmp/emu -l:libcuda.so.1 -Wl,-rpath,/tmp/emu -pthread
//   /tmp/smoke [FATBIN_DIR]
//
// FATBIN_DIR may hold rounding.fatbin, attention.fatbin, selftest.fatbin (nvcc -fatbin -no-compress) and
// compressed.fatbin (without -no-compress); without them the test loads PTX it writes itself (the emulator
// only reads a PTX image's version, target and entry signatures).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "emu_float16.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef void* Handle;
extern "C" {
CUresult cuInit(unsigned);
CUresult cuDriverGetVersion(int*);
CUresult cuDeviceGetCount(int*);
CUresult cuDeviceGet(int*, int);
CUresult cuDeviceGetName(char*, int, int);
CUresult cuDeviceGetAttribute(int*, int, int);
CUresult cuDevicePrimaryCtxRetain(Handle*, int);
CUresult cuDevicePrimaryCtxRelease_v2(int);
CUresult cuDevicePrimaryCtxReset_v2(int);
CUresult cuCtxSetCurrent(Handle);
CUresult cuCtxSynchronize(void);
CUresult cuMemAlloc_v2(CUdeviceptr*, size_t);
CUresult cuMemFree_v2(CUdeviceptr);
CUresult cuMemGetInfo_v2(size_t*, size_t*);
CUresult cuMemcpyHtoD_v2(CUdeviceptr, const void*, size_t);
CUresult cuMemcpyDtoH_v2(void*, CUdeviceptr, size_t);
CUresult cuMemsetD8_v2(CUdeviceptr, unsigned char, size_t);
CUresult cuModuleLoadData(Handle*, const void*);
CUresult cuModuleUnload(Handle);
CUresult cuModuleGetFunction(Handle*, Handle, const char*);
CUresult cuFuncGetAttribute(int*, int, Handle);
CUresult cuFuncSetAttribute(Handle, int, int);
CUresult cuLaunchKernel(Handle, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, Handle, void**,
                        void**);
CUresult cuGetErrorName(CUresult, const char**);
CUresult cuArrayCreate_v2(void*, const void*);
}

namespace {

int g_failures = 0;
std::string g_dir;
const char* g_self;

#define CHECK(...)                                                                  \
    do {                                                                            \
        if (!(__VA_ARGS__)) {                                                              \
            fprintf(stderr, "smoke: FAILED %s:%d: %s\n", __FILE__, __LINE__, #__VA_ARGS__); \
            g_failures++;                                                           \
        }                                                                           \
    } while (0)
#define CHECK_RC(call, want)                                                                          \
    do {                                                                                              \
        CUresult rc_ = (call);                                                                        \
        if (rc_ != (want)) {                                                                          \
            fprintf(stderr, "smoke: FAILED %s:%d: %s returned %d, wanted %d\n", __FILE__, __LINE__, #call, \
                    rc_, (want));                                                                     \
            g_failures++;                                                                             \
        }                                                                                             \
    } while (0)

// ---- fp16 / bf16 --------------------------------------------------------------------------------------------

// Independent references: the Java twin's algorithm (org.mechspec.compute.HalfFloat), in C++.
uint32_t twin_half(double x) {
    uint64_t bits;
    memcpy(&bits, &x, 8);
    uint32_t sign = (uint32_t) (bits >> 48) & 0x8000;
    if (isnan(x)) return sign | 0x7E00;
    double a = fabs(x);
    if (a >= 65520.0) return sign | 0x7C00;
    if (a < 0x1.0p-14) return sign | (uint32_t) rint(a * 0x1.0p24);
    int exp = ilogb(a);
    int m = (int) rint(a * scalbn(1.0, 10 - exp));
    int e = exp + 15;
    if (m == 2048) m = 1024, e++;
    if (e >= 31) return sign | 0x7C00;
    return sign | (uint32_t) (e << 10) | (uint32_t) (m - 1024);
}

uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

uint32_t twin_bf16(double x) {
    uint64_t bits;
    memcpy(&bits, &x, 8);
    if (isnan(x)) return ((uint32_t) (bits >> 48) & 0x8000) | 0x7FC0;
    double a = fabs(x);
    if (a != 0 && a < 0x1.0p-126) return float_bits((float) copysign(rint(a * 0x1.0p133) * 0x1.0p-133, x)) >> 16;
    if (a == 0 || isinf(a)) return float_bits((float) x) >> 16;
    int exp = ilogb(a);
    double q = rint(a * scalbn(1.0, 7 - exp)) * scalbn(1.0, exp - 7);
    return float_bits((float) copysign(q, x)) >> 16;
}

// For every code: decode/encode round-trips; between neighbours the midpoint goes to the even code and one
// double ulp either side to the nearer one. `top` is the largest finite magnitude code, `infValue` the value the
// next code (inf) would have without overflow.
template <int EXP, int MAN>
void check_format(const char* name, uint32_t (*twin)(double), uint32_t top, double infValue) {
    using emu_fp::round_from_double;
    using emu_fp::to_double;
    const uint32_t signBit = 1u << (EXP + MAN);
    const uint32_t quietNan = (((1u << EXP) - 1) << MAN) | (1u << (MAN - 1));
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        double v = to_double<EXP, MAN>(h);
        uint32_t back = round_from_double<EXP, MAN>(v);
        uint32_t want = isnan(v) ? ((h & signBit) | quietNan) : h;
        if (back != want || twin(v) != want) bad++;
        uint32_t mag = h & ~signBit;
        if (mag > top) continue;
        double lo = to_double<EXP, MAN>(h);
        double hi = mag == top ? copysign(infValue, lo) : to_double<EXP, MAN>(h + 1);
        double mid = (lo + hi) / 2;   // exact: both are short binary fractions
        uint32_t even = (h & 1) == 0 ? h : h + 1;
        double towardLo = nextafter(mid, lo), towardHi = nextafter(mid, hi);
        if (round_from_double<EXP, MAN>(mid) != even || twin(mid) != even) bad++;
        if (round_from_double<EXP, MAN>(towardLo) != h || twin(towardLo) != h) bad++;
        if (round_from_double<EXP, MAN>(towardHi) != h + 1 || twin(towardHi) != h + 1) bad++;
    }
    CHECK(round_from_double<EXP, MAN>(-0.0) == signBit);
    CHECK(round_from_double<EXP, MAN>(1e300) == ((1u << EXP) - 1) << MAN);
    CHECK(round_from_double<EXP, MAN>(-1e300) == (signBit | (((1u << EXP) - 1) << MAN)));
    CHECK(round_from_double<EXP, MAN>(-4.9e-324) == signBit);
    printf("smoke: %s: 65536 codes, midpoints and neighbours checked, %d mismatches\n", name, bad);
    CHECK(bad == 0);
}

// ---- driver helpers -------------------------------------------------------------------------------------

std::vector<char> read_file(const std::string& path) {
    std::vector<char> bytes;
    FILE* f = fopen(path.c_str(), "rb");
    if (f == nullptr) return bytes;
    char buf[65536];
    for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) bytes.insert(bytes.end(), buf, buf + n);
    fclose(f);
    bytes.push_back(0);
    return bytes;
}

// A module from FATBIN_DIR/<name>.fatbin, else from PTX made of `entries` (".entry k(.param .u64 a, ...)").
Handle load_module(const char* name, const char* entries, const char* version = "8.0") {
    std::vector<char> image = g_dir.empty() ? std::vector<char>() : read_file(g_dir + "/" + name + ".fatbin");
    if (image.empty()) {
        std::string ptx = std::string(".version ") + version + "\n.target sm_80\n.address_size 64\n" + entries;
        image.assign(ptx.begin(), ptx.end());
        image.push_back(0);
    }
    Handle m = nullptr;
    CHECK_RC(cuModuleLoadData(&m, image.data()), 0);
    return m;
}

Handle function(Handle module, const char* name) {
    Handle f = nullptr;
    CHECK_RC(cuModuleGetFunction(&f, module, name), 0);
    return f;
}

CUdeviceptr upload(const void* host, size_t bytes) {
    CUdeviceptr p = 0;
    CHECK_RC(cuMemAlloc_v2(&p, bytes), 0);
    CHECK_RC(cuMemcpyHtoD_v2(p, host, bytes), 0);
    return p;
}

const char* kSelftestPtx =
    ".visible .entry selftest_copy(.param .u64 a, .param .u64 b, .param .u32 n) { ret; }\n"
    ".visible .entry selftest_out_of_bounds(.param .u64 a, .param .u64 b, .param .u32 n) { ret; }\n"
    ".visible .entry selftest_divergent_barrier(.param .u64 a, .param .u32 n) { ret; }\n"
    ".visible .entry selftest_shared(.param .u64 a, .param .u32 n) { ret; }\n"
    ".visible .entry selftest_reverse_sensitive(.param .u64 a) { ret; }\n";

const char* kRoundingPtx =
    ".visible .entry round_half_f64(.param .u64 a, .param .u64 b, .param .u32 n) { ret; }\n"
    ".visible .entry round_bf16_f64(.param .u64 a, .param .u64 b, .param .u32 n) { ret; }\n";

const char* kAttentionPtx =
    ".visible .entry attention_f64(.param .u64 q, .param .u64 k, .param .u64 v, .param .u64 b, .param .u64 o,"
    " .param .u32 a0, .param .u32 a1, .param .u32 a2, .param .u32 a3, .param .u32 a4, .param .u32 a5,"
    " .param .f64 s, .param .u32 c) { ret; }\n";

Handle retain() {
    CHECK_RC(cuInit(0), 0);
    Handle ctx = nullptr;
    CHECK_RC(cuDevicePrimaryCtxRetain(&ctx, 0), 0);
    CHECK_RC(cuCtxSetCurrent(ctx), 0);
    return ctx;
}

// ---- real kernels against references --------------------------------------------------------------------

void check_rounding(Handle module) {
    std::vector<double> x;
    for (int i = 0; i < 4000; i++) x.push_back(ldexp((double) rand() / RAND_MAX - 0.5, rand() % 60 - 40));
    const double special[] = {0.0, -0.0, 65504.0, 65519.999, 65520.0, -65520.0, 1e-8, 2.9802322387695312e-08,
                              NAN, INFINITY, -INFINITY, 1.0 + 0x1p-11, 1.0 + 0x1p-11 + 0x1p-40, 3.4e38, 3.5e38};
    x.insert(x.end(), special, special + sizeof special / sizeof *special);
    int n = (int) x.size();
    CUdeviceptr dx = upload(x.data(), n * 8), dout = 0;
    CHECK_RC(cuMemAlloc_v2(&dout, n * 8), 0);
    for (int bf = 0; bf < 2; bf++) {
        Handle f = function(module, bf ? "round_bf16_f64" : "round_half_f64");
        void* params[] = {&dx, &dout, &n};
        CHECK_RC(cuLaunchKernel(f, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr), 0);
        CHECK_RC(cuCtxSynchronize(), 0);
        std::vector<double> out(n);
        CHECK_RC(cuMemcpyDtoH_v2(out.data(), dout, n * 8), 0);
        int bad = 0;
        for (int i = 0; i < n; i++) {
            double want = bf ? emu_fp::to_double<8, 7>(twin_bf16(x[i])) : emu_fp::to_double<5, 10>(twin_half(x[i]));
            if (!(out[i] == want && signbit(out[i]) == signbit(want)) && !(isnan(out[i]) && isnan(want))) bad++;
        }
        printf("smoke: %s over %d values: %d mismatches\n", bf ? "round_bf16_f64" : "round_half_f64", n, bad);
        CHECK(bad == 0);
    }
    cuMemFree_v2(dx);
    cuMemFree_v2(dout);
}

// attention.cu's algorithm with the same reduction order (threads t, t+B, ... then a fixed tree).
void reference_attention(const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v,
                         const double* bias, std::vector<double>& out, int Hq, int Hkv, int Tq, int Tk, int d, int dv,
                         double scale, int causal, int B, int rows) {
    for (int row = 0; row < rows; row++) {
        int i = row % Tq, h = (row / Tq) % Hq, b = row / (Tq * Hq), kvh = h / (Hq / Hkv);
        long kvBase = ((long) b * Hkv + kvh) * Tk;
        int last = causal ? i + (Tk - Tq) : Tk - 1;
        std::vector<double> s(Tk), part(B, -INFINITY);
        for (int t = 0; t < B; t++) {
            for (int j = t; j <= last; j += B) {
                double dot = 0;
                for (int c = 0; c < d; c++) dot += q[(long) row * d + c] * k[(kvBase + j) * d + c];
                s[j] = dot * scale + (bias ? bias[kvBase + j] : 0.0);
                part[t] = s[j] > part[t] ? s[j] : part[t];
            }
        }
        for (int st = B / 2; st > 0; st >>= 1)
            for (int t = 0; t < st; t++) part[t] = part[t + st] > part[t] ? part[t + st] : part[t];
        double m = part[0];
        std::vector<double> sum(B, 0.0);
        for (int t = 0; t < B; t++) {
            for (int j = t; j <= last; j += B) {
                s[j] = exp(s[j] - m);
                sum[t] += s[j];
            }
        }
        for (int st = B / 2; st > 0; st >>= 1)
            for (int t = 0; t < st; t++) sum[t] += sum[t + st];
        for (int c = 0; c < dv; c++) {
            double acc = 0;
            for (int j = 0; j <= last; j++) acc += s[j] * v[(kvBase + j) * dv + c];
            out[(long) row * dv + c] = acc / sum[0];
        }
    }
}

// Returns the seconds the launches took.
double check_attention(Handle module, int B, int repeats) {
    Handle f = function(module, "attention_f64");
    int Bt = 2, Hq = 4, Hkv = 2, Tq = 5, Tk = 37, d = 16, dv = 8;
    double scale = 0.25;
    auto rnd = [](size_t n) {
        std::vector<double> x(n);
        for (double& e : x) e = (double) rand() / RAND_MAX * 2 - 1;
        return x;
    };
    std::vector<double> q = rnd((size_t) Bt * Hq * Tq * d), k = rnd((size_t) Bt * Hkv * Tk * d),
                        v = rnd((size_t) Bt * Hkv * Tk * dv), bias = rnd((size_t) Bt * Hkv * Tk);
    CUdeviceptr dq = upload(q.data(), q.size() * 8), dk = upload(k.data(), k.size() * 8),
                dv_ = upload(v.data(), v.size() * 8), db = upload(bias.data(), bias.size() * 8), dout = 0;
    int rows = Bt * Hq * Tq;
    CHECK_RC(cuMemAlloc_v2(&dout, (size_t) rows * dv * 8), 0);
    double seconds = 0;
    for (int causal = 0; causal < 2; causal++) {
        for (int withBias = 0; withBias < 2; withBias++) {
            CUdeviceptr biasPtr = withBias ? db : 0;
            void* params[] = {&dq, &dk, &dv_, &biasPtr, &dout, &Hq, &Hkv, &Tq, &Tk, &d, &dv, &scale, &causal};
            auto t0 = std::chrono::steady_clock::now();
            for (int r = 0; r < repeats; r++) {
                CHECK_RC(cuMemsetD8_v2(dout, 0xff, (size_t) rows * dv * 8), 0);
                CHECK_RC(cuLaunchKernel(f, rows, 1, 1, B, 1, 1, (Tk + B) * 8, nullptr, params, nullptr), 0);
            }
            CHECK_RC(cuCtxSynchronize(), 0);
            seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            std::vector<double> out(rows * dv), want(rows * dv);
            CHECK_RC(cuMemcpyDtoH_v2(out.data(), dout, out.size() * 8), 0);
            reference_attention(q, k, v, withBias ? bias.data() : nullptr, want, Hq, Hkv, Tq, Tk, d, dv, scale, causal,
                                B, rows);
            CHECK(memcmp(out.data(), want.data(), out.size() * 8) == 0);
        }
    }
    for (CUdeviceptr p : {dq, dk, dv_, db, dout}) cuMemFree_v2(p);
    return seconds;
}

// ---- self-test kernels ---------------------------------------------------------------------------------

struct Selftest {
    Handle module;
    CUdeviceptr x, y;
    int n;
};

Selftest selftest_setup() {
    Selftest s{load_module("selftest", kSelftestPtx), 0, 0, 1000};
    std::vector<float> x(s.n);
    for (int i = 0; i < s.n; i++) x[i] = (float) i * 0.5f;
    s.x = upload(x.data(), s.n * 4);
    CHECK_RC(cuMemAlloc_v2(&s.y, s.n * 4), 0);
    return s;
}

// After a sticky error: every call fails until the primary context is reset, which frees everything.
void expect_sticky_then_reset(CUresult want, Handle module) {
    CHECK_RC(cuCtxSynchronize(), want);
    CUdeviceptr p = 0;
    CHECK_RC(cuMemAlloc_v2(&p, 16), want);
    float buf[4];
    CHECK_RC(cuMemcpyDtoH_v2(buf, 0, 4), want);
    CHECK_RC(cuDevicePrimaryCtxReset_v2(0), 0);
    CHECK_RC(cuCtxSynchronize(), 0);
    size_t free = 0, total = 0;
    CHECK_RC(cuMemGetInfo_v2(&free, &total), 0);
    CHECK(free == total);   // the reset freed every allocation
    Handle f = nullptr;
    CHECK_RC(cuModuleGetFunction(&f, module, "selftest_copy"), 400);   // and unloaded the modules
}

void run_selftests() {
    const char* name = nullptr;
    CHECK_RC(cuGetErrorName(700, &name), 0);
    CHECK(name && strcmp(name, "CUDA_ERROR_ILLEGAL_ADDRESS") == 0);
    CHECK_RC(cuArrayCreate_v2(nullptr, nullptr), 801);

    // copy, through kernelParams and through extra
    Selftest s = selftest_setup();
    Handle copy = function(s.module, "selftest_copy");
    void* params[] = {&s.x, &s.y, &s.n};
    CHECK_RC(cuLaunchKernel(copy, 4, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr), 0);
    CHECK_RC(cuCtxSynchronize(), 0);
    std::vector<float> y(s.n);
    CHECK_RC(cuMemcpyDtoH_v2(y.data(), s.y, s.n * 4), 0);
    bool same = true;
    for (int i = 0; i < s.n; i++) same = same && y[i] == (float) i * 0.5f;
    CHECK(same);
    struct {
        CUdeviceptr x, y;
        int n;
    } packed{s.x, s.y, s.n};
    size_t size = 20;   // 8 + 8 + 4: no tail padding
    void* extra[] = {(void*) 1, &packed, (void*) 2, &size, (void*) 0};
    CHECK_RC(cuMemsetD8_v2(s.y, 0, s.n * 4), 0);
    CHECK_RC(cuLaunchKernel(copy, 4, 1, 1, 256, 1, 1, 0, nullptr, nullptr, extra), 0);
    CHECK_RC(cuMemcpyDtoH_v2(y.data(), s.y, s.n * 4), 0);
    CHECK(y[999] == 999 * 0.5f);
    // configuration errors: returned at once, not sticky
    size = 16;
    CHECK_RC(cuLaunchKernel(copy, 4, 1, 1, 256, 1, 1, 0, nullptr, nullptr, extra), 1);
    CHECK_RC(cuLaunchKernel(copy, 4, 1, 1, 256, 1, 1, 0, nullptr, params, extra), 1);
    CHECK_RC(cuLaunchKernel(copy, 1, 1, 1, 1025, 1, 1, 0, nullptr, params, nullptr), 1);
    CHECK_RC(cuLaunchKernel(copy, 1, 1, 1, 1, 1, 65, 0, nullptr, params, nullptr), 1);
    CHECK_RC(cuLaunchKernel(copy, 1, 65536, 1, 1, 1, 1, 0, nullptr, params, nullptr), 1);
    CHECK_RC(cuLaunchKernel(copy, 0, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr), 1);
    CHECK_RC(cuCtxSynchronize(), 0);
    Handle missing = nullptr;
    CHECK_RC(cuModuleGetFunction(&missing, s.module, "no_such_kernel"), 500);

    // shared memory: enough, too much for the function (until raised), too little for the kernel
    Handle shared = function(s.module, "selftest_shared");
    void* sp[] = {&s.y, &s.n};
    CHECK_RC(cuLaunchKernel(shared, 4, 1, 1, 256, 1, 1, 256 * 4, nullptr, sp, nullptr), 0);
    CHECK_RC(cuMemcpyDtoH_v2(y.data(), s.y, s.n * 4), 0);
    CHECK(y[0] == 1.0f && y[255] == 0.0f && y[256] == 257.0f);
    CHECK_RC(cuLaunchKernel(shared, 4, 1, 1, 256, 1, 1, 49153, nullptr, sp, nullptr), 1);
    int maxShared = 0;
    CHECK_RC(cuFuncGetAttribute(&maxShared, 8, shared), 0);
    CHECK(maxShared == 49152);
    CHECK_RC(cuFuncSetAttribute(shared, 8, 65536), 0);
    CHECK_RC(cuLaunchKernel(shared, 4, 1, 1, 256, 1, 1, 49153, nullptr, sp, nullptr), 0);
    CHECK_RC(cuCtxSynchronize(), 0);
    CHECK_RC(cuLaunchKernel(shared, 4, 1, 1, 256, 1, 1, 255 * 4, nullptr, sp, nullptr), 0);
    expect_sticky_then_reset(700, s.module);

    // out of bounds: the launch succeeds, the error is sticky
    s = selftest_setup();
    Handle oob = function(s.module, "selftest_out_of_bounds");
    void* op[] = {&s.x, &s.y, &s.n};
    CHECK_RC(cuLaunchKernel(oob, 4, 1, 1, 256, 1, 1, 0, nullptr, op, nullptr), 0);
    expect_sticky_then_reset(700, s.module);

    // divergent barrier
    s = selftest_setup();
    Handle div = function(s.module, "selftest_divergent_barrier");
    CHECK_RC(cuLaunchKernel(div, 2, 1, 1, 64, 1, 1, 0, nullptr, sp, nullptr), 0);
    expect_sticky_then_reset(719, s.module);

    // use after free
    s = selftest_setup();
    copy = function(s.module, "selftest_copy");
    CHECK_RC(cuMemFree_v2(s.y), 0);
    CHECK_RC(cuMemFree_v2(s.y), 1);
    CHECK_RC(cuLaunchKernel(copy, 4, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr), 0);
    CHECK_RC(cuCtxSynchronize(), 700);
    CHECK_RC(cuDevicePrimaryCtxReset_v2(0), 0);
    printf("smoke: self-test kernels checked\n");
}

// The racy kernel with one block: the last thread to run wins.
float reverse_sensitive() {
    Selftest s = selftest_setup();
    Handle f = function(s.module, "selftest_reverse_sensitive");
    void* p[] = {&s.y};
    CHECK_RC(cuLaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, nullptr, p, nullptr), 0);
    float y0 = -1;
    CHECK_RC(cuMemcpyDtoH_v2(&y0, s.y, 4), 0);
    CHECK_RC(cuDevicePrimaryCtxReset_v2(0), 0);
    return y0;
}

// ---- child processes: the environment is read once per process ---------------------------------------------

int run_child(const std::vector<std::string>& env, const char* mode) {
    pid_t pid = fork();
    if (pid == 0) {
        for (const std::string& e : env) putenv(strdup(e.c_str()));
        execl(g_self, g_self, g_dir.empty() ? "" : g_dir.c_str(), mode, (char*) nullptr);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

int child(const std::string& mode) {
    retain();
    if (mode == "reverse") {
        // A race-free kernel gives the same bits in reverse order; the racy one does not.
        check_attention(load_module("attention", kAttentionPtx), 64, 1);
        CHECK(reverse_sensitive() == 0.0f);
    } else if (mode == "old-driver") {
        int version = 0;
        CHECK_RC(cuDriverGetVersion(&version), 0);
        CHECK(version == 12040);
        // PTX newer than the driver cannot be JIT-compiled (a fatbin's cubin for the device would still load).
        std::string ptx = std::string(".version 9.0\n.target sm_80\n") + kRoundingPtx;
        Handle m = nullptr;
        CHECK_RC(cuModuleLoadData(&m, ptx.c_str()), 222);
        std::string ok = std::string(".version 8.4\n.target sm_80\n") + kRoundingPtx;
        CHECK_RC(cuModuleLoadData(&m, ok.c_str()), 0);
    } else if (mode == "hold" || mode == "try") {
        // "hold": keep the device for a second; "try": another process must find it busy.
        int computeMode = -1;
        CHECK_RC(cuDeviceGetAttribute(&computeMode, 20, 0), 0);
        CHECK(computeMode == 3);
        if (mode == "hold") usleep(1500 * 1000);
    }
    return g_failures == 0 ? 0 : 1;
}

void check_exclusive() {
    std::vector<std::string> env = {"MECHSPEC_EMU_COMPUTE_MODE=exclusive-process",
                                    "MECHSPEC_EMU_LOCK=/tmp/mechspec-emu-smoke.lock"};
    pid_t holder = fork();
    if (holder == 0) _exit(run_child(env, "hold"));
    usleep(500 * 1000);
    // The device is held: retaining fails with CUDA_ERROR_DEVICE_UNAVAILABLE in a second process.
    pid_t tryer = fork();
    if (tryer == 0) {
        for (const std::string& e : env) putenv(strdup(e.c_str()));
        execl(g_self, g_self, g_dir.empty() ? "" : g_dir.c_str(), "busy", (char*) nullptr);
        _exit(127);
    }
    int status = 0;
    waitpid(tryer, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    waitpid(holder, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(run_child(env, "try") == 0);   // released when the holder's context went away
    printf("smoke: exclusive-process mode checked\n");
}

}  // namespace

int main(int argc, char** argv) {
    g_self = argv[0];
    if (argc > 1) g_dir = argv[1];
    if (argc > 2 && strcmp(argv[2], "busy") == 0) {
        CHECK_RC(cuInit(0), 0);
        Handle ctx = nullptr;
        CHECK_RC(cuDevicePrimaryCtxRetain(&ctx, 0), 46);
        return g_failures == 0 ? 0 : 1;
    }
    if (argc > 2) return child(argv[2]);

    check_format<5, 10>("fp16", twin_half, 0x7BFF, 65536.0);
    check_format<8, 7>("bf16", twin_bf16, 0x7F7F, 0x1p128);

    int count = -1;
    CHECK_RC(cuDeviceGetCount(&count), 3);   // before cuInit
    retain();
    char name[64];
    CHECK_RC(cuDeviceGetName(name, sizeof name, 0), 0);
    CHECK(strncmp(name, "mechspec CUDA emulator", 22) == 0);
    int attr = 0;
    CHECK_RC(cuDeviceGetAttribute(&attr, 75, 0), 0);
    CHECK(attr == 9);
    CHECK_RC(cuDeviceGetAttribute(&attr, 9999, 0), 1);

    check_rounding(load_module("rounding", kRoundingPtx));
    Handle attention = load_module("attention", kAttentionPtx);
    int binaryVersion = 0;
    CHECK_RC(cuFuncGetAttribute(&binaryVersion, 6, function(attention, "attention_f64")), 0);
    CHECK(binaryVersion == 90);
    for (int B : {1, 32, 128, 1024}) check_attention(attention, B, 1);
    printf("smoke: attention_f64 bit-identical to the reference for 1, 32, 128, 1024 threads\n");
    run_selftests();
    CHECK(reverse_sensitive() == 127.0f);

    // Compressed fatbins are refused; image checks name the kernel.
    std::vector<char> compressed = g_dir.empty() ? std::vector<char>() : read_file(g_dir + "/compressed.fatbin");
    Handle m = nullptr;
    if (!compressed.empty()) CHECK_RC(cuModuleLoadData(&m, compressed.data()), 200);
    CHECK_RC(cuModuleLoadData(&m, ".version 8.0\n.target sm_80\n.entry not_compiled_in(.param .u64 a) { ret; }"), 200);
    CHECK_RC(cuModuleLoadData(&m, ".version 8.0\n.target sm_80\n.entry selftest_reverse_sensitive(.param .u32 a) {}"), 200);
    CHECK_RC(cuModuleLoadData(&m, ".version 8.0\n.target sm_90\n.entry selftest_reverse_sensitive(.param .u64 a) {}"), 0);

    // Timings: many small launches, and barrier-heavy blocks (every thread switches at each __syncthreads).
    Selftest s = selftest_setup();
    Handle copy = function(s.module, "selftest_copy");
    int n = 256;
    void* params[] = {&s.x, &s.y, &n};
    const int launches = 5000;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < launches; i++) CHECK_RC(cuLaunchKernel(copy, 1, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr), 0);
    double perLaunch = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / launches;
    printf("smoke: one launch of 1 block x 256 threads: %.1f us\n", perLaunch * 1e6);
    const int repeats = 20, B = 1024;
    double seconds = check_attention(load_module("attention", kAttentionPtx), B, repeats);
    // per row: 2 reductions x (log2(B) + 2) barriers, plus the fiber's start and exit
    double switches = 4.0 * repeats * 40 * B * (2 * (10 + 2) + 2);
    printf("smoke: attention_f64, 40 rows x %d threads: %.2f ms per launch, <= %.0f ns per fiber switch\n", B,
           seconds / (4 * repeats) * 1e3, seconds / switches * 1e9);
    CHECK_RC(cuDevicePrimaryCtxRelease_v2(0), 0);

    CHECK(run_child({"MECHSPEC_EMU_THREAD_ORDER=reverse", "MECHSPEC_EMU_WORKERS=3"}, "reverse") == 0);
    CHECK(run_child({"MECHSPEC_EMU_DRIVER_VERSION=12040"}, "old-driver") == 0);
    check_exclusive();
    printf(g_failures == 0 ? "smoke: all checks passed\n" : "smoke: %d checks FAILED\n", g_failures);
    return g_failures == 0 ? 0 : 1;
}
