// The emulator's own smoke test (not run by Maven): exhaustive fp16/bf16 rounding checks, real kernels against
// plain C++ references, every self-test kernel, each kind of fault and the sticky error it leaves (in child
// processes: a fault ends CUDA for the process), the environment switches (child processes too), and timings.
//
//   src/test/emulator/build.sh /tmp/emu src/main/cuda src/test/cuda
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

#include <algorithm>
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
CUresult cuDevicePrimaryCtxGetState(int, unsigned*, int*);
CUresult cuCtxCreate_v2(Handle*, unsigned, int);
CUresult cuCtxDestroy_v2(Handle);
CUresult cuCtxSetCurrent(Handle);
CUresult cuCtxGetCurrent(Handle*);
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
CUresult cuGetErrorString(CUresult, const char**);
CUresult cuStreamCreate(Handle*, unsigned);
CUresult cuEventCreate(Handle*, unsigned);
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

CUdeviceptr alloc(size_t bytes) {
    CUdeviceptr p = 0;
    CHECK_RC(cuMemAlloc_v2(&p, bytes), 0);
    return p;
}

template <typename T>
std::vector<T> download(CUdeviceptr p, size_t count) {
    std::vector<T> out(count);
    CHECK_RC(cuMemcpyDtoH_v2(out.data(), p, count * sizeof(T)), 0);
    return out;
}

void launch(Handle f, unsigned grid, unsigned block, unsigned shared, void** params) {
    CHECK_RC(cuLaunchKernel(f, grid, 1, 1, block, 1, 1, shared, nullptr, params, nullptr), 0);
    CHECK_RC(cuCtxSynchronize(), 0);
}

uint64_t fnv1a(const void* data, size_t bytes, uint64_t h = 1469598103934665603ull) {
    const unsigned char* p = (const unsigned char*) data;
    for (size_t i = 0; i < bytes; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

const char* kSelftestPtx =
    ".visible .entry selftest_copy(.param .u64 a, .param .u64 b, .param .u32 n) { ret; }\n"
    ".visible .entry selftest_out_of_bounds(.param .u64 a, .param .u64 b, .param .u32 n) { ret; }\n"
    ".visible .entry selftest_divergent_barrier(.param .u64 a, .param .u32 n) { ret; }\n"
    ".visible .entry selftest_shared(.param .u64 a, .param .u32 n) { ret; }\n"
    ".visible .entry selftest_reverse_sensitive(.param .u64 a) { ret; }\n"
    ".visible .entry selftest_assert(.param .u64 a, .param .u32 n) { ret; }\n"
    ".visible .entry selftest_shared_leftover(.param .u64 a) { ret; }\n"
    ".visible .entry selftest_order_sensitive(.param .u64 a) { ret; }\n"
    ".visible .entry selftest_order_trace(.param .u64 a) { ret; }\n"
    ".visible .entry selftest_multiply_add(.param .u64 a, .param .u64 b, .param .u64 c, .param .u64 d) { ret; }\n"
    ".visible .entry selftest_math(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n) { ret; }\n";

const char* kRoundingPtx =
    ".visible .entry round_half_f64(.param .u64 a, .param .u64 b, .param .u32 n) { ret; }\n"
    ".visible .entry round_bf16_f64(.param .u64 a, .param .u64 b, .param .u32 n) { ret; }\n";

const char* kFoldBiasPtx =
    ".visible .entry fold_rank_one_f64(.param .u64 a, .param .u64 b, .param .u64 c, .param .u64 d, .param .u32 t,"
    " .param .u32 n) { ret; }\n";

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
    CUdeviceptr dx = upload(x.data(), n * 8), dout = alloc(n * 8);
    for (int bf = 0; bf < 2; bf++) {
        void* params[] = {&dx, &dout, &n};
        launch(function(module, bf ? "round_bf16_f64" : "round_half_f64"), (n + 255) / 256, 256, 0, params);
        std::vector<double> out = download<double>(dout, n);
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

// foldbias.cu rounds the product and the sum on their own (__dmul_rn, __dadd_rn): bit-identical to this reference,
// compiled without contraction, although the kernel is compiled with it.
void check_fold_bias(Handle module) {
    int t = 300, d = 70;
    std::vector<double> ck(t * d), beta(t), u(d), want(t * d);
    for (double& e : ck) e = (double) rand() / RAND_MAX * 2 - 1;
    for (double& e : beta) e = (double) rand() / RAND_MAX * 2 - 1;
    for (double& e : u) e = (double) rand() / RAND_MAX * 2 - 1;
    for (int j = 0; j < t; j++) {
        for (int c = 0; c < d; c++) want[j * d + c] = ck[j * d + c] + beta[j] * u[c];
    }
    CUdeviceptr dck = upload(ck.data(), ck.size() * 8), dbeta = upload(beta.data(), t * 8),
                du = upload(u.data(), d * 8), dout = alloc(ck.size() * 8);
    void* params[] = {&dck, &dbeta, &du, &dout, &t, &d};
    launch(function(module, "fold_rank_one_f64"), (t * d + 127) / 128, 128, 0, params);
    std::vector<double> out = download<double>(dout, ck.size());
    CHECK(memcmp(out.data(), want.data(), want.size() * 8) == 0);
    printf("smoke: fold_rank_one_f64 bit-identical to the unfused reference\n");
    for (CUdeviceptr p : {dck, dbeta, du, dout}) cuMemFree_v2(p);
}

// Softmax attention in long double (no tiles, no contraction): the kernel's online softmax and fused
// multiply-adds stay within a few ulps of it.
void reference_attention(const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v,
                         const double* bias, std::vector<double>& out, int Hq, int Hkv, int Tq, int Tk, int d, int dv,
                         double scale, int causal, int rows) {
    for (int row = 0; row < rows; row++) {
        int i = row % Tq, h = (row / Tq) % Hq, b = row / (Tq * Hq), kvh = h / (Hq / Hkv);
        long kvBase = ((long) b * Hkv + kvh) * Tk;
        int last = causal ? i + (Tk - Tq) : Tk - 1;
        std::vector<long double> s(last + 1);
        long double m = -INFINITY, sum = 0;
        for (int j = 0; j <= last; j++) {
            long double dot = 0;
            for (int c = 0; c < d; c++) dot += (long double) q[(long) row * d + c] * k[(kvBase + j) * d + c];
            s[j] = dot * scale + (bias ? bias[kvBase + j] : 0.0);
            m = s[j] > m ? s[j] : m;
        }
        for (int j = 0; j <= last; j++) sum += s[j] = expl(s[j] - m);
        for (int c = 0; c < dv; c++) {
            long double acc = 0;
            for (int j = 0; j <= last; j++) acc += s[j] * v[(kvBase + j) * dv + c];
            out[(long) row * dv + c] = (double) (acc / sum);
        }
    }
}

// attention_f64 for every causal/bias combination against the reference; returns a hash of the outputs (to
// compare thread orders bit for bit) and adds the launches' seconds to *seconds.
uint64_t check_attention(Handle module, int B, int repeats, double* seconds) {
    Handle f = function(module, "attention_f64");
    int Bt = 2, Hq = 4, Hkv = 2, Tq = 5, Tk = 37, d = 16, dv = 8;
    double scale = 0.25;
    srand(7);
    auto rnd = [](size_t n) {
        std::vector<double> x(n);
        for (double& e : x) e = (double) rand() / RAND_MAX * 2 - 1;
        return x;
    };
    std::vector<double> q = rnd((size_t) Bt * Hq * Tq * d), k = rnd((size_t) Bt * Hkv * Tk * d),
                        v = rnd((size_t) Bt * Hkv * Tk * dv), bias = rnd((size_t) Bt * Hkv * Tk);
    CUdeviceptr dq = upload(q.data(), q.size() * 8), dk = upload(k.data(), k.size() * 8),
                dv_ = upload(v.data(), v.size() * 8), db = upload(bias.data(), bias.size() * 8);
    int rows = Bt * Hq * Tq;
    CUdeviceptr dout = alloc((size_t) rows * dv * 8);
    uint64_t hash = 1469598103934665603ull;
    for (int causal = 0; causal < 2; causal++) {
        for (int withBias = 0; withBias < 2; withBias++) {
            CUdeviceptr biasPtr = withBias ? db : 0;
            void* params[] = {&dq, &dk, &dv_, &biasPtr, &dout, &Hq, &Hkv, &Tq, &Tk, &d, &dv, &scale, &causal};
            auto t0 = std::chrono::steady_clock::now();
            for (int r = 0; r < repeats; r++) {
                CHECK_RC(cuMemsetD8_v2(dout, 0xff, (size_t) rows * dv * 8), 0);
                CHECK_RC(cuLaunchKernel(f, rows, 1, 1, B, 1, 1, (2 * B + dv) * 8, nullptr, params, nullptr), 0);
            }
            CHECK_RC(cuCtxSynchronize(), 0);
            if (seconds) *seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            std::vector<double> out = download<double>(dout, (size_t) rows * dv), want(rows * dv);
            reference_attention(q, k, v, withBias ? bias.data() : nullptr, want, Hq, Hkv, Tq, Tk, d, dv, scale, causal,
                                rows);
            double worst = 0;
            for (size_t i = 0; i < out.size(); i++) worst = fmax(worst, fabs(out[i] - want[i]) / (fabs(want[i]) + 1e-300));
            CHECK(worst < 1e-12);
            hash = fnv1a(out.data(), out.size() * 8, hash);
        }
    }
    for (CUdeviceptr p : {dq, dk, dv_, db, dout}) cuMemFree_v2(p);
    return hash;
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
    s.y = alloc(s.n * 4);
    return s;
}

// a * b + c is fused as nvcc fuses it; __dmul_rn/__dadd_rn (and the float ones) are not; __fma_rn is.
void check_multiply_add(Handle module) {
    const double e = 0x1p-30;
    const float e32 = 0x1p-13f;
    double abc[3] = {1 + e, 1 - e, -1};
    float abc32[3] = {1 + e32, 1 - e32, -1};
    CUdeviceptr dabc = upload(abc, sizeof abc), dabc32 = upload(abc32, sizeof abc32), dout = alloc(24),
                dout32 = alloc(12);
    void* params[] = {&dabc, &dout, &dabc32, &dout32};
    launch(function(module, "selftest_multiply_add"), 1, 1, 0, params);
    std::vector<double> out = download<double>(dout, 3);
    std::vector<float> out32 = download<float>(dout32, 3);
    CHECK(out[0] == -e * e && out[1] == 0.0 && out[2] == -e * e);
    CHECK(out32[0] == -e32 * e32 && out32[1] == 0.0f && out32[2] == -e32 * e32);
    printf("smoke: a * b + c contracts as nvcc contracts it; __dmul_rn/__dadd_rn/__fmul_rn/__fadd_rn stay unfused\n");
    for (CUdeviceptr p : {dabc, dabc32, dout, dout32}) cuMemFree_v2(p);
}

// Fresh device memory and every block's shared memory hold the poison pattern; a freed range is reused.
void check_memory_like_a_gpu(Handle module) {
    CUdeviceptr fresh = alloc(4096);
    std::vector<unsigned char> bytes = download<unsigned char>(fresh, 4096);
    bool poisoned = true;
    for (unsigned char b : bytes) poisoned = poisoned && b == 0xFF;
    CHECK(poisoned);

    // 64 blocks on at most 4 workers: each worker runs several blocks, and each block must find poison, not the
    // index its worker's previous block left.
    int blocks = 64, threads = 32;
    CUdeviceptr y = alloc((size_t) blocks * threads * 4);
    void* params[] = {&y};
    launch(function(module, "selftest_shared_leftover"), blocks, threads, threads * 4, params);
    std::vector<uint32_t> seen = download<uint32_t>(y, (size_t) blocks * threads);
    bool fresh_each_block = true;
    for (uint32_t v : seen) fresh_each_block = fresh_each_block && v == 0xFFFFFFFFu;
    CHECK(fresh_each_block);

    // A stale pointer aliases the allocation that reuses its range: the copy kernel writes into `later` through it.
    CHECK_RC(cuMemFree_v2(fresh), 0);
    CUdeviceptr later = alloc(4096);
    CHECK(later == fresh);
    std::vector<float> x(1024, 42.0f);
    CUdeviceptr src = upload(x.data(), 4096);
    int n = 1024;
    void* copy[] = {&src, &fresh, &n};
    launch(function(module, "selftest_copy"), 4, 256, 0, copy);
    CHECK(download<float>(later, 1024)[1023] == 42.0f);
    // A smaller allocation takes the front of a freed range; its own gap follows it.
    CHECK_RC(cuMemFree_v2(later), 0);
    CUdeviceptr smaller = alloc(64);
    CHECK(smaller == later);
    for (CUdeviceptr p : {y, src, smaller}) CHECK_RC(cuMemFree_v2(p), 0);
    printf("smoke: fresh memory and each block's shared memory poisoned; freed ranges reused\n");
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
    launch(copy, 4, 256, 0, params);
    std::vector<float> y = download<float>(s.y, s.n);
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
    CHECK(download<float>(s.y, s.n)[999] == 999 * 0.5f);
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
    CHECK_RC(cuMemFree_v2(s.y + 4), 1);   // not an allocation's base: an error, not sticky

    // shared memory: enough, and too much for the function (until raised)
    Handle shared = function(s.module, "selftest_shared");
    void* sp[] = {&s.y, &s.n};
    launch(shared, 4, 256, 256 * 4, sp);
    y = download<float>(s.y, s.n);
    CHECK(y[0] == 1.0f && y[255] == 0.0f && y[256] == 257.0f);
    CHECK_RC(cuLaunchKernel(shared, 4, 1, 1, 256, 1, 1, 49153, nullptr, sp, nullptr), 1);
    int maxShared = 0;
    CHECK_RC(cuFuncGetAttribute(&maxShared, 8, shared), 0);
    CHECK(maxShared == 49152);
    CHECK_RC(cuFuncSetAttribute(shared, 8, 65536), 0);
    launch(shared, 4, 256, 49153, sp);

    // thread order: forward by default, one barrier phase after another
    int threads = 64;
    CUdeviceptr trace = alloc(2 * threads * 4);
    void* tp[] = {&trace};
    launch(function(s.module, "selftest_order_trace"), 1, threads, 4, tp);
    std::vector<int> order = download<int>(trace, 2 * threads);
    bool forward = true;
    for (int t = 0; t < threads; t++) forward = forward && order[t] == t && order[threads + t] == threads + t;
    CHECK(forward);

    check_multiply_add(s.module);
    check_memory_like_a_gpu(s.module);
    for (CUdeviceptr p : {s.x, s.y, trace}) CHECK_RC(cuMemFree_v2(p), 0);
    CHECK_RC(cuModuleUnload(s.module), 0);
    printf("smoke: self-test kernels checked\n");
}

// The racy kernel with one block: the last thread to run wins.
float reverse_sensitive() {
    Selftest s = selftest_setup();
    void* p[] = {&s.y};
    launch(function(s.module, "selftest_reverse_sensitive"), 1, 128, 0, p);
    float y0 = download<float>(s.y, 1)[0];
    for (CUdeviceptr d : {s.x, s.y}) CHECK_RC(cuMemFree_v2(d), 0);
    return y0;
}

// How many of 64 three-thread blocks of the racy selftest_order_sensitive ended with their middle thread.
int middle_thread_last() {
    Selftest s = selftest_setup();
    void* p[] = {&s.y};
    launch(function(s.module, "selftest_order_sensitive"), 64, 3, 0, p);
    std::vector<float> y = download<float>(s.y, 64);
    int middle = 0;
    for (float v : y) middle += v == 2.0f;
    for (CUdeviceptr d : {s.x, s.y}) CHECK_RC(cuMemFree_v2(d), 0);
    return middle;
}

// ---- faults: each in a child process, since a fault ends CUDA for the process ------------------------------

// After a sticky error every context call returns it, resets and destroys included; device queries and error
// names still work.
void expect_process_poisoned(CUresult want, Handle module, CUdeviceptr before) {
    CHECK_RC(cuCtxSynchronize(), want);
    CHECK_RC(cuCtxSynchronize(), want);
    CUdeviceptr p = 0;
    CHECK_RC(cuMemAlloc_v2(&p, 16), want);
    CHECK_RC(cuMemFree_v2(before), want);
    float buf[4] = {};
    CHECK_RC(cuMemcpyHtoD_v2(before, buf, 4), want);
    CHECK_RC(cuMemcpyDtoH_v2(buf, before, 4), want);
    CHECK_RC(cuMemsetD8_v2(before, 0, 4), want);
    size_t free = 0, total = 0;
    CHECK_RC(cuMemGetInfo_v2(&free, &total), want);
    Handle m = nullptr, f = nullptr, stream = nullptr, event = nullptr, ctx = nullptr;
    CHECK_RC(cuModuleLoadData(&m, (std::string(".version 8.0\n.target sm_80\n") + kRoundingPtx).c_str()), want);
    CHECK_RC(cuModuleGetFunction(&f, module, "selftest_copy"), want);
    CHECK_RC(cuModuleUnload(module), want);
    CHECK_RC(cuStreamCreate(&stream, 0), want);
    CHECK_RC(cuEventCreate(&event, 0), want);
    CHECK_RC(cuCtxGetCurrent(&ctx), want);
    CHECK_RC(cuCtxSetCurrent(nullptr), want);
    CHECK_RC(cuCtxCreate_v2(&ctx, 0, 0), want);
    CHECK_RC(cuDevicePrimaryCtxReset_v2(0), want);
    CHECK_RC(cuDevicePrimaryCtxRelease_v2(0), want);
    CHECK_RC(cuDevicePrimaryCtxRetain(&ctx, 0), want);
    unsigned flags = 0;
    int active = 0;
    CHECK_RC(cuDevicePrimaryCtxGetState(0, &flags, &active), want);
    CHECK_RC(cuCtxSynchronize(), want);   // still, after the reset
    // What does not touch a context still works.
    const char* name = nullptr;
    CHECK_RC(cuGetErrorName(want, &name), 0);
    CHECK_RC(cuGetErrorString(want, &name), 0);
    int count = 0, attr = 0;
    CHECK_RC(cuDeviceGetCount(&count), 0);
    CHECK_RC(cuDeviceGetAttribute(&attr, 75, 0), 0);
}

int fault_child(const std::string& mode) {
    retain();
    Selftest s = selftest_setup();
    void* params[] = {&s.x, &s.y, &s.n};
    void* yn[] = {&s.y, &s.n};
    CUresult want = 700;
    if (mode == "fault-out-of-bounds") {
        CHECK_RC(cuLaunchKernel(function(s.module, "selftest_out_of_bounds"), 4, 1, 1, 256, 1, 1, 0, nullptr, params,
                                nullptr), 0);   // the launch succeeds; the error is sticky
    } else if (mode == "fault-shared") {
        CHECK_RC(cuLaunchKernel(function(s.module, "selftest_shared"), 4, 1, 1, 256, 1, 1, 255 * 4, nullptr, yn,
                                nullptr), 0);
    } else if (mode == "fault-divergent") {
        want = 719;
        CHECK_RC(cuLaunchKernel(function(s.module, "selftest_divergent_barrier"), 2, 1, 1, 64, 1, 1, 0, nullptr, yn,
                                nullptr), 0);
    } else if (mode == "fault-assert") {
        want = 710;
        std::vector<float> x(s.n, 1.0f);
        x[500] = -1.0f;
        CHECK_RC(cuMemcpyHtoD_v2(s.x, x.data(), s.n * 4), 0);
        void* xn[] = {&s.x, &s.n};
        CHECK_RC(cuLaunchKernel(function(s.module, "selftest_assert"), 4, 1, 1, 256, 1, 1, 0, nullptr, xn, nullptr), 0);
    } else if (mode == "fault-freed") {
        // A freed range nobody reuses is still no memory: use after free is an illegal address.
        CHECK_RC(cuMemFree_v2(s.y), 0);
        CHECK_RC(cuLaunchKernel(function(s.module, "selftest_copy"), 4, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr), 0);
        s.y = s.x;
    }
    expect_process_poisoned(want, s.module, s.y);
    return g_failures == 0 ? 0 : 1;
}

// ---- adversarial math ----------------------------------------------------------------------------------

template <typename T>
int64_t ordered(T v) {
    if (sizeof(T) == 4) {
        int32_t i;
        memcpy(&i, &v, 4);
        return i < 0 ? -(int64_t) (i & 0x7fffffff) : i;
    }
    int64_t i;
    memcpy(&i, &v, 8);
    return i < 0 ? -(i & 0x7fffffffffffffffll) : i;
}

// ulps between got and the correctly rounded exact value (one less when exact is so near a midpoint that the
// reference cannot tell which neighbour is correctly rounded).
template <typename T>
int64_t ulps_from_correct(T got, long double exact) {
    T nearest = (T) exact;
    int64_t d = ordered(got) - ordered(nearest);
    d = d < 0 ? -d : d;
    T other = nextafter(nearest, exact > nearest ? (T) INFINITY : (T) -INFINITY);
    long double step = fabsl((long double) other - nearest);
    if (step > 0 && fabsl(exact - nearest) / step > 0.49L) {
        int64_t e = ordered(got) - ordered(other);
        e = e < 0 ? -e : e;
        d = d < e ? d : e;
    }
    return d;
}

// selftest_math's results against long double references: within CUDA's bounds, and (adversarial) not the
// host's. Returns a hash of all results.
uint64_t check_math(bool adversarial) {
    Handle module = load_module("selftest", kSelftestPtx);
    int n = 2000;
    std::vector<double> x(n);
    for (int i = 0; i < n; i++) x[i] = i < n / 2 ? 0.01 + i * 0.0173 : 0.5 + (i - n / 2) * 0.0015;   // covers [0.5, 2]
    CUdeviceptr dx = upload(x.data(), n * 8), dout = alloc(n * 8 * 8), dout32 = alloc(n * 10 * 4);
    void* params[] = {&dx, &dout, &dout32, &n};
    launch(function(module, "selftest_math"), (n + 127) / 128, 128, 0, params);
    std::vector<double> out = download<double>(dout, n * 8);
    std::vector<float> out32 = download<float>(dout32, n * 10);
    const char* names[] = {"exp", "exp2", "expm1", "log", "log2", "log1p", "tanh", "pow",
                           "expf", "exp2f", "expm1f", "logf", "log2f", "log1pf", "tanhf", "powf", "__expf", "__logf"};
    const int bound[] = {1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 2, 4, -1, -1};
    int64_t worst[18] = {};
    int differsFromHost[18] = {};
    for (int i = 0; i < n; i++) {
        long double v = x[i];
        float f = (float) x[i];
        long double lf = f;
        long double exact[18] = {expl(v), exp2l(v), expm1l(v), logl(v), log2l(v), log1pl(v), tanhl(v), powl(v, 1.37),
                                 expl(lf), exp2l(lf), expm1l(lf), logl(lf), log2l(lf), log1pl(lf), tanhl(lf),
                                 powl(lf, (long double) 1.37f), expl(lf), logl(lf)};
        double host[8] = {exp(x[i]), exp2(x[i]), expm1(x[i]), log(x[i]), log2(x[i]), log1p(x[i]), tanh(x[i]),
                          pow(x[i], 1.37)};
        float host32[10] = {expf(f), exp2f(f), expm1f(f), logf(f), log2f(f), log1pf(f), tanhf(f), powf(f, 1.37f),
                            expf(f), logf(f)};
        for (int k = 0; k < 18; k++) {
            bool single = k >= 8;
            double got = single ? out32[i * 10 + k - 8] : out[i * 8 + k];
            bool differs = single ? out32[i * 10 + k - 8] != host32[k - 8] : out[i * 8 + k] != host[k];
            differsFromHost[k] += differs;
            int64_t ulps = single ? ulps_from_correct<float>((float) got, exact[k]) : ulps_from_correct<double>(got, exact[k]);
            int64_t allowed = bound[k];
            if (k == 16) allowed = 2 + (int64_t) floor(fabs(1.173 * f));
            if (k == 17) {
                if (f >= 0.5f && f <= 2.0f) {
                    CHECK(!adversarial || fabsl((long double) got - exact[k]) <= powl(2, -21.41L));
                    continue;
                }
                allowed = 3;
            }
            worst[k] = ulps > worst[k] ? ulps : worst[k];
            if (adversarial && ulps > allowed) {   // the host's libm keeps its own bounds (glibc's tanh: 2 ulps)
                fprintf(stderr, "smoke: %s(%.17g) = %.17g is %lld ulps from correct, bound %lld\n", names[k],
                        single ? (double) f : x[i], got, (long long) ulps, (long long) allowed);
                g_failures++;
            }
        }
    }
    printf("smoke: math %s: worst ulps from the correctly rounded result:", adversarial ? "adversarial" : "host");
    for (int k = 0; k < 18; k++) printf(" %s %lld%s", names[k], (long long) worst[k], k == 17 ? "\n" : ",");
    for (int k = 0; k < 18; k++) {
        // Adversarial results differ from the host's for most inputs; host mode is the host's libm, bit for bit.
        if (adversarial) CHECK(differsFromHost[k] > n / 4);
        else CHECK(differsFromHost[k] == 0);
    }
    uint64_t hash = fnv1a(out.data(), out.size() * 8, fnv1a(out32.data(), out32.size() * 4));
    for (CUdeviceptr p : {dx, dout, dout32}) cuMemFree_v2(p);
    return hash;
}

// ---- child processes: the environment is read once per process ---------------------------------------------

std::string g_expected;   // SMOKE_EXPECTED: a hash the child must reproduce

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

std::string hex(uint64_t h) {
    char buf[32];
    snprintf(buf, sizeof buf, "%016llx", (unsigned long long) h);
    return buf;
}

// The order one block's 64 threads ran in, over two barrier phases.
std::vector<int> order_trace() {
    Handle module = load_module("selftest", kSelftestPtx);
    CUdeviceptr trace = alloc(128 * 4);
    void* tp[] = {&trace};
    launch(function(module, "selftest_order_trace"), 1, 64, 4, tp);
    std::vector<int> order = download<int>(trace, 128);
    cuMemFree_v2(trace);
    return order;
}

int child(const std::string& mode) {
    if (mode.rfind("fault-", 0) == 0) return fault_child(mode);
    retain();
    const char* expected = getenv("SMOKE_EXPECTED");
    if (mode == "reverse" || mode == "shuffle") {
        // A race-free kernel gives the same bits in any order; the racy ones do not.
        uint64_t h = check_attention(load_module("attention", kAttentionPtx), 64, 1, nullptr);
        CHECK(expected != nullptr && hex(h) == expected);
        if (mode == "reverse") {
            CHECK(reverse_sensitive() == 0.0f);
            CHECK(middle_thread_last() == 0);   // reverse order cannot expose this race
        } else {
            CHECK(middle_thread_last() > 0);
            // Each barrier phase runs the threads in a fresh permutation.
            std::vector<int> order = order_trace();
            std::vector<int> first(order.begin(), order.begin() + 64), second(64);
            for (int t = 0; t < 64; t++) second[t] = order[64 + t] - 64;
            std::vector<int> sorted = first;
            std::sort(sorted.begin(), sorted.end());
            bool permutation = true;
            for (int t = 0; t < 64; t++) permutation = permutation && sorted[t] == t;
            CHECK(permutation && first != second);
            printf("%s\n", hex(fnv1a(order.data(), order.size() * 4)).c_str());   // for the parent: replayable
        }
    } else if (mode == "adversarial") {
        uint64_t h = check_math(true);
        CHECK(check_math(true) == h);   // a fixed function of its inputs, like a GPU's
        printf("%s\n", hex(h).c_str());
    } else if (mode == "device-knobs") {
        int sms = 0, l2 = 0;
        CHECK_RC(cuDeviceGetAttribute(&sms, 16, 0), 0);
        CHECK_RC(cuDeviceGetAttribute(&l2, 38, 0), 0);
        CHECK(sms == 132 && l2 == 50 << 20);
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
    fflush(stdout);
    return g_failures == 0 ? 0 : 1;
}

// A child's exit status and its stdout's last line.
std::pair<int, std::string> run_child_output(const std::vector<std::string>& env, const char* mode) {
    int fds[2];
    if (pipe(fds) != 0) return {128, ""};
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        for (const std::string& e : env) putenv(strdup(e.c_str()));
        execl(g_self, g_self, g_dir.empty() ? "" : g_dir.c_str(), mode, (char*) nullptr);
        _exit(127);
    }
    close(fds[1]);
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, (size_t) n);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    while (!out.empty() && out.back() == '\n') out.pop_back();
    size_t nl = out.rfind('\n');
    std::string last = nl == std::string::npos ? out : out.substr(nl + 1);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : 128, last};
}

void check_exclusive() {
    std::vector<std::string> env = {"MECHSPEC_EMU_COMPUTE_MODE=exclusive-process",
                                    "MECHSPEC_EMU_LOCK=/tmp/mechspec-emu-smoke.lock"};
    pid_t holder = fork();
    if (holder == 0) _exit(run_child(env, "hold"));
    usleep(500 * 1000);
    // The device is held: retaining fails with CUDA_ERROR_DEVICE_UNAVAILABLE in a second process.
    CHECK(run_child(env, "busy") == 0);
    int status = 0;
    waitpid(holder, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(run_child(env, "try") == 0);   // released when the holder's context went away
    printf("smoke: exclusive-process mode checked\n");
}

// The strict modes in child processes: orders, faults, adversarial math, device knobs.
void check_children(uint64_t attentionHash) {
    std::string expected = "SMOKE_EXPECTED=" + hex(attentionHash);
    CHECK(run_child({"MECHSPEC_EMU_THREAD_ORDER=reverse", "MECHSPEC_EMU_WORKERS=3", expected}, "reverse") == 0);
    auto a = run_child_output({"MECHSPEC_EMU_THREAD_ORDER=shuffle:1", expected}, "shuffle");
    auto b = run_child_output({"MECHSPEC_EMU_THREAD_ORDER=shuffle:1", "MECHSPEC_EMU_WORKERS=1", expected}, "shuffle");
    auto c = run_child_output({"MECHSPEC_EMU_THREAD_ORDER=shuffle:2", expected}, "shuffle");
    CHECK(a.first == 0 && b.first == 0 && c.first == 0);
    CHECK(a.second == b.second && a.second != c.second);   // the seed, not the workers, fixes the order
    printf("smoke: thread orders checked (reverse, shuffle:1 twice, shuffle:2)\n");
    for (const char* fault : {"fault-out-of-bounds", "fault-shared", "fault-divergent", "fault-assert", "fault-freed"}) {
        CHECK(run_child({}, fault) == 0);
    }
    printf("smoke: every fault leaves the process's sticky error on every later context call\n");
    auto m1 = run_child_output({"MECHSPEC_EMU_MATH=adversarial:1", "MECHSPEC_EMU_THREAD_ORDER=shuffle:5"}, "adversarial");
    auto m2 = run_child_output({"MECHSPEC_EMU_MATH=adversarial:1"}, "adversarial");
    auto m3 = run_child_output({"MECHSPEC_EMU_MATH=adversarial:2"}, "adversarial");
    CHECK(m1.first == 0 && m2.first == 0 && m3.first == 0);
    CHECK(m1.second == m2.second && m1.second != m3.second);
    printf("smoke: adversarial math within CUDA's bounds, reproducible from its seed in any thread order\n");
    CHECK(run_child({"MECHSPEC_EMU_SM_COUNT=132", "MECHSPEC_EMU_L2_BYTES=52428800"}, "device-knobs") == 0);
    CHECK(run_child({"MECHSPEC_EMU_DRIVER_VERSION=12040"}, "old-driver") == 0);
    check_exclusive();
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
    CHECK_RC(cuDeviceGetAttribute(&attr, 16, 0), 0);
    CHECK(attr == 4 || getenv("MECHSPEC_EMU_SM_COUNT") != nullptr);
    CHECK_RC(cuDeviceGetAttribute(&attr, 38, 0), 0);
    CHECK(attr == 4 << 20 || getenv("MECHSPEC_EMU_L2_BYTES") != nullptr);
    CHECK_RC(cuDeviceGetAttribute(&attr, 9999, 0), 1);

    check_rounding(load_module("rounding", kRoundingPtx));
    check_fold_bias(load_module("foldbias", kFoldBiasPtx));
    Handle attention = load_module("attention", kAttentionPtx);
    int binaryVersion = 0;
    CHECK_RC(cuFuncGetAttribute(&binaryVersion, 6, function(attention, "attention_f64")), 0);
    CHECK(binaryVersion == 90);
    uint64_t attentionHash = check_attention(attention, 64, 1, nullptr);
    for (int B : {1, 32, 128, 1024}) check_attention(attention, B, 1, nullptr);
    printf("smoke: attention_f64 within 1e-12 of the long double reference for 1, 32, 64, 128, 1024 threads\n");
    run_selftests();
    CHECK(reverse_sensitive() == 127.0f);
    CHECK(middle_thread_last() == 0);
    check_math(false);

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
    double seconds = 0;
    check_attention(attention, B, repeats, &seconds);
    // per row and key tile (one tile: 37 keys <= B): 2 reductions x (log2(B) + 2) barriers, one more barrier,
    // plus the fiber's start and exit
    double switches = 4.0 * repeats * 40 * B * (2 * (10 + 2) + 1 + 2);
    printf("smoke: attention_f64, 40 rows x %d threads: %.2f ms per launch, <= %.0f ns per fiber switch\n", B,
           seconds / (4 * repeats) * 1e3, seconds / switches * 1e9);
    CHECK_RC(cuDevicePrimaryCtxRelease_v2(0), 0);

    check_children(attentionHash);
    printf(g_failures == 0 ? "smoke: all checks passed\n" : "smoke: %d checks FAILED\n", g_failures);
    return g_failures == 0 ? 0 : 1;
}
