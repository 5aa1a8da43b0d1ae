// The split-K decode's merge (pnmix_decode.cu's header, "Then"): the last chunk block of a KV head to finish merges
// its query heads' chunk partials into the output, in the same launch. Shared with pnmix_decode.cu only; edit it and
// the SASS fixture must be regenerated (sass-counts.py).
#pragma once
#include "warp_ops.cuh"

// U chunks j .. j + U - 1 of a group (their rows from row on, j + u < 32: U divides 32) into the lane's acc, each
// weighed by its lane's wk. TAIL: the group's last U, which may run past its n chunks: those load nothing and weigh 0
// (their lanes' wk is 0), and adding +0 leaves every sum's bits as they were.
template <typename T, int CPL, int U, bool TAIL>
__device__ __forceinline__ void merge_group(const T* row, T wk, int j, int n, const bool (&own)[CPL], T (&acc)[CPL]) {
    constexpr int S = 32 * CPL;   // merge_row(d)
    T v[U][CPL];
#pragma unroll
    for (int u = 0; u < U; u++) {
#pragma unroll
        for (int i = 0; i < CPL; i++) v[u][i] = own[i] && (!TAIL || j + u < n) ? row[u * S + 32 * i] : (T) 0;
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
        T w = __shfl_sync(FULL, wk, j + u);
#pragma unroll
        for (int i = 0; i < CPL; i++) acc[i] += w * v[u][i];
    }
}

// One warp merges query head h's chunks (the header's merge_chunks). Lanes take chunks k, k + 32, ...: the max and
// the denominator by xor shuffles; then, 32 chunks at a time, each chunk's weight is broadcast to the lanes, which
// own channels lane, lane + 32, ... of the output: CPL of them, the fewest that cover d (CPL = merge_row(d) / 32).
// Each output channel sums its chunks in chunk order. A chunk's acc row is merge_row(d) wide, so chunk u of an
// unrolled group lies a constant u·32·CPL elements on (one load with an immediate offset); U chunks' loads are issued
// before any is used (64 registers of them a lane, at most 32 chunks): one L2 latency for U chunks, not one a chunk.
// A group's last U may run past its chunks (a count not a multiple of U: the host's balanced splits): one more
// iteration, its loads past them predicated off (merge_group's TAIL), so it too costs one latency, not one a chunk;
// where U = 32 every group is that one iteration.
__device__ __forceinline__ int merge_row(int d) { return d <= 32 ? 32 : d <= 64 ? 64 : d <= 128 ? 128 : 256; }

template <typename T, int CPL>
__device__ __forceinline__ void merge_chunks(const T* partM, const T* partL, const T* partAcc, T* out, int h, int chunks, int d,
                                             int lane) {
    const T* m = partM + (long) h * chunks;
    const T* l = partL + (long) h * chunks;
    T M = -INFINITY;
    for (int k = lane; k < chunks; k += 32) {
        T mk = m[k];
        M = mk > M ? mk : M;
    }
    M = warp_max(M);
    T denom = 0;
    for (int k = lane; k < chunks; k += 32) {
        T mk = m[k];
        denom += mk == -INFINITY ? (T) 0 : l[k] * exp2_t<T>(mk - M);
    }
    denom = warp_sum(denom);
    constexpr int S = 32 * CPL;   // merge_row(d)
    constexpr int U = 64 / (CPL * (int) (sizeof(T) / 4)) < 32 ? 64 / (CPL * (int) (sizeof(T) / 4)) : 32;
    bool own[CPL];
    T acc[CPL];
#pragma unroll
    for (int i = 0; i < CPL; i++) {
        own[i] = 32 * i + lane < d;
        acc[i] = 0;
    }
    const T* row = partAcc + (long) h * chunks * S + lane;   // chunk k0 + j's row, at the lane's first channel
    for (int k0 = 0; k0 < chunks; k0 += 32) {
        int k = k0 + lane;
        T mk = k < chunks ? m[k] : (T) -INFINITY;
        T wk = mk != -INFINITY ? exp2_t<T>(mk - M) : (T) 0;
        int n = chunks - k0 < 32 ? chunks - k0 : 32, j = 0;
        if constexpr (U < 32) {
            for (; j + U <= n; j += U, row += U * S) merge_group<T, CPL, U, false>(row, wk, j, n, own, acc);
        }
        // merge tail: once at most (where U = 32, the group)
        for (; j < n; j += U, row += U * S) merge_group<T, CPL, U, true>(row, wk, j, n, own, acc);
    }
#pragma unroll
    for (int i = 0; i < CPL; i++) {
        if (own[i]) out[(long) h * d + 32 * i + lane] = acc[i] / denom;
    }
}

// The end of every chunk block (the header's "Then"): each thread's fence, then the barrier, put all of the block's
// partial writes before its count; the block that counts last resets the counter (every block has counted) and
// merges, a warp a query head (warps: the block's). Not inlined, and nothing is live after it, so the merge's registers do not add to the chunk loop's; one
// copy per CPL (decode_chunk picks it from d), so a lane loads only channels it owns.
template <typename T, int CPL>
__device__ __noinline__ void merge_if_last(const T* partM, const T* partL, const T* partAcc, T* out, unsigned int* done,
                                           T* sFlag, int kvh, int gq, int chunks, int d, int warps) {
    __threadfence();
    __syncthreads();   // after it no thread reads the shared state, so sFlag carries the verdict
    if (threadIdx.x == 0) sFlag[0] = atomicAdd(&done[kvh], 1u) == (unsigned int) (chunks - 1) ? (T) 1 : (T) 0;
    __syncthreads();
    if (sFlag[0] == (T) 0) return;
    if (threadIdx.x == 0) done[kvh] = 0;
    __threadfence();
    for (int h = threadIdx.x >> 5; h < gq; h += warps) {
        merge_chunks<T, CPL>(partM, partL, partAcc, out, kvh * gq + h, chunks, d, threadIdx.x & 31);
    }
}
