// Grouped-quadratic linear attention (OAL, protocols.md (OAL)): sim(q, k) = eps + [1, z]·M·[1, z]^T with
// z_g = sum_{i in g} (q_i / sqrt(d))·k_i; causal output o_t = sum_{j<=t} sim·v_j / sum_{j<=t} sim.
// CPU twin: org.mechspec.oal.CpuGroupedQuadraticAttention. Layouts: org.mechspec.oal.QuadraticAttentionShape
// (q, out [B, T, H, d]; k, v [B, T, Hkv, d]; groups [H, d]; m [H, G+1, G+1]; den [B, T, H]).
// Every output element and every denominator is written; the host checks the denominators.

#include "reductions.cuh"

#define OAL_MAX_SIDE 9

// The members of each group in ascending index order (group a's are members[start[a] .. start[a + 1])), built
// once per block, so that phi below is summed over constant indices and stays in registers: accumulating
// phi[1 + grp[i]] indexes it at run time, which puts it in local memory.
__device__ inline void oal_group_members(const int* grp, int d, int G, int* members, int* start) {
    if (threadIdx.x == 0) {
        int p = 0;
        for (int a = 0; a < G; a++) {
            start[a] = p;
            for (int i = 0; i < d; i++) {
                if (grp[i] == a) members[p++] = i;
            }
        }
        start[G] = p;
    }
}

// eps + phi·M·phi, phi = [1, z]; qs is q already scaled by 1/sqrt(d). Each z_g sums its members in ascending i, as
// the CPU twin does.
template <typename T>
__device__ T oal_similarity(const T* qs, const T* krow, const int* members, const int* start, const T* mh, int side, T eps) {
    T phi[OAL_MAX_SIDE];
#pragma unroll
    for (int a = 0; a < OAL_MAX_SIDE; a++) {
        T z = a == 0 ? (T) 1 : (T) 0;
        if (a > 0 && a < side) {
            for (int p = start[a - 1]; p < start[a]; p++) z += qs[members[p]] * krow[members[p]];
        }
        phi[a] = z;
    }
    T quad = 0;
#pragma unroll
    for (int a = 0; a < OAL_MAX_SIDE; a++) {
        if (a < side) {
            T row = 0;
#pragma unroll
            for (int c = 0; c < OAL_MAX_SIDE; c++) {
                if (c < side) row += mh[a * side + c] * phi[c];
            }
            quad += phi[a] * row;
        }
    }
    return eps + quad;
}

// Dense form: one block per query row (b, t, h); the row of the masked T×T similarity matrix lives in shared memory.
// Shared memory: T + blockDim.x + d elements, then d + OAL_MAX_SIDE ints (the group members and their starts).
template <typename T>
__device__ void oal_dense_row(const T* q, const T* k, const T* v, const int* groups, const T* m, T* out, T* den,
                              int T_, int H, int Hkv, int d, int G, T invSqrtD, T eps) {
    extern __shared__ __align__(16) unsigned char oal_smem[]; // read as double and float: 16-byte aligned
    T* sims = reinterpret_cast<T*>(oal_smem);
    T* scratch = sims + T_;
    T* qs = scratch + blockDim.x;
    int* members = reinterpret_cast<int*>(qs + d);
    int* start = members + d;
    int row = blockIdx.x; // (b * T + t) * H + h
    int h = row % H;
    int t = (row / H) % T_;
    int b = row / (H * T_);
    int g = h / (H / Hkv);
    int side = G + 1;
    for (int i = threadIdx.x; i < d; i += blockDim.x) qs[i] = q[(long) row * d + i] * invSqrtD;
    const int* grp = groups + h * d;
    oal_group_members(grp, d, G, members, start);
    __syncthreads();
    const T* mh = m + h * side * side;
    T local = 0;
    for (int j = threadIdx.x; j < T_; j += blockDim.x) {
        T s = 0;
        if (j <= t) s = oal_similarity<T>(qs, k + ((long) (b * T_ + j) * Hkv + g) * d, members, start, mh, side, eps);
        sims[j] = s;
        local += s;
    }
    T sum = block_reduce<T, false>(local, scratch);
    if (threadIdx.x == 0) den[row] = sum;
    for (int c = threadIdx.x; c < d; c += blockDim.x) {
        T acc = 0;
        for (int j = 0; j < T_; j++) acc += sims[j] * v[((long) (b * T_ + j) * Hkv + g) * d + c];
        out[(long) row * d + c] = acc / sum;
    }
}

// Recurrent form: one block per (b, h), scanning t. The state [features, d + 1] (features 1, k_i, k_i·k_j for
// i <= j) lives in global scratch; each thread owns value columns c (column d is the normalizer's "1").
// After adding token t, column c of the output is sum_p a_p(q_t)·state[p][c] in ascending p.
// Shared memory: 3·d + 2 + (d + 1) elements.
template <typename T>
__device__ void oal_recurrent_head(const T* q, const T* k, const T* v, const int* groups, const T* m, T* out, T* den,
                                   T* state, int T_, int H, int Hkv, int d, int G, T invSqrtD, T eps) {
    extern __shared__ __align__(16) unsigned char oal_smem[]; // read as double and float: 16-byte aligned
    T* qs = reinterpret_cast<T*>(oal_smem);
    T* kk = qs + d;
    T* vv = kk + d;      // d + 1
    T* col = vv + d + 1; // d + 1
    int bh = blockIdx.x; // b * H + h
    int h = bh % H;
    int b = bh / H;
    int g = h / (H / Hkv);
    int side = G + 1;
    int cols = d + 1;
    int features = 1 + d + d * (d + 1) / 2;
    const int* grp = groups + h * d;
    const T* mh = m + h * side * side;
    T* st = state + (long) bh * features * cols;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        for (int p = 0; p < features; p++) st[(long) p * cols + c] = (T) 0;
    }
    for (int t = 0; t < T_; t++) {
        long kvOff = ((long) (b * T_ + t) * Hkv + g) * d;
        long qOff = ((long) (b * T_ + t) * H + h) * d;
        for (int i = threadIdx.x; i < d; i += blockDim.x) {
            qs[i] = q[qOff + i] * invSqrtD;
            kk[i] = k[kvOff + i];
            vv[i] = v[kvOff + i];
        }
        if (threadIdx.x == 0) vv[d] = (T) 1;
        __syncthreads();
        for (int c = threadIdx.x; c < cols; c += blockDim.x) {
            T vc = vv[c];
            T acc = 0;
            T s = st[c] + vc; // feature 1
            st[c] = s;
            acc += (eps + mh[0]) * s;
            for (int i = 0; i < d; i++) {
                int gi = 1 + grp[i];
                long at = (long) (1 + i) * cols + c;
                s = st[at] + kk[i] * vc;
                st[at] = s;
                acc += ((mh[gi] + mh[gi * side]) * qs[i]) * s;
            }
            int p = 1 + d;
            for (int i = 0; i < d; i++) {
                int gi = 1 + grp[i];
                for (int j = i; j < d; j++, p++) {
                    int gj = 1 + grp[j];
                    long at = (long) p * cols + c;
                    s = st[at] + (kk[i] * kk[j]) * vc;
                    st[at] = s;
                    // Each unordered pair is stored once, so off the diagonal it counts twice: M_gh + M_hg.
                    T coef = i == j ? mh[gi * side + gi] : mh[gi * side + gj] + mh[gj * side + gi];
                    acc += ((coef * qs[i]) * qs[j]) * s;
                }
            }
            col[c] = acc;
        }
        __syncthreads();
        T sum = col[d];
        if (threadIdx.x == 0) den[(b * T_ + t) * H + h] = sum;
        for (int c = threadIdx.x; c < d; c += blockDim.x) out[qOff + c] = col[c] / sum;
        __syncthreads();
    }
}

extern "C" __global__ void oal_dense_f32(const float* q, const float* k, const float* v, const int* groups,
                                         const float* m, float* out, float* den, int T, int H, int Hkv, int d,
                                         int G, float invSqrtD, float eps) {
    oal_dense_row<float>(q, k, v, groups, m, out, den, T, H, Hkv, d, G, invSqrtD, eps);
}

extern "C" __global__ void oal_dense_f64(const double* q, const double* k, const double* v, const int* groups,
                                         const double* m, double* out, double* den, int T, int H, int Hkv, int d,
                                         int G, double invSqrtD, double eps) {
    oal_dense_row<double>(q, k, v, groups, m, out, den, T, H, Hkv, d, G, invSqrtD, eps);
}

extern "C" __global__ void oal_recurrent_f32(const float* q, const float* k, const float* v, const int* groups,
                                             const float* m, float* out, float* den, float* state, int T, int H,
                                             int Hkv, int d, int G, float invSqrtD, float eps) {
    oal_recurrent_head<float>(q, k, v, groups, m, out, den, state, T, H, Hkv, d, G, invSqrtD, eps);
}

extern "C" __global__ void oal_recurrent_f64(const double* q, const double* k, const double* v, const int* groups,
                                             const double* m, double* out, double* den, double* state, int T, int H,
                                             int Hkv, int d, int G, double invSqrtD, double eps) {
    oal_recurrent_head<double>(q, k, v, groups, m, out, den, state, T, H, Hkv, d, G, invSqrtD, eps);
}
