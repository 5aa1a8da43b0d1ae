package org.mechspec.pnmix;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Where the split-K decode's chunks start: block (kvh, k) of pnmix_decode.cu's chunk kernels reads keys
 * [starts[k], starts[k + 1]) of KV head kvh. Every chunk holds a key; the last ends at the cache's length.
 *
 * <p>The automatic split ({@link #balanced}) weighs the keys by what the kernel spends on them and gives the chunks
 * weights as even as whole pieces allow, so no block carries much more than the rest: a packed cache's fp16 rows
 * (its sink, its residual) weigh {@value #ROW_WEIGHT} quantized keys each; its chunk ends fall where a group starts
 * (where a warp's quarter starts staging one group's weights, and on its pairs of blocks) unless 64-token pieces
 * (a tile) would make the heaviest chunk lighter.
 */
record ChunkSplit(int[] starts) {
    /**
     * What an fp16 row of a packed cache costs the fp32 packed kernel against a key of a quantized group, rounded: 141.8
     * against 24.9 warp instructions at the layer shape (d = 128), from the compiled SASS (fixtures/sass;
     * DecodeIssueModelTest keeps it to that ratio).
     */
    static final int ROW_WEIGHT = 6;

    ChunkSplit {
        starts = starts.clone();
        if (starts.length < 2 || starts[0] != 0) {
            throw new IllegalArgumentException("a split starts at 0 and has a chunk, got " + Arrays.toString(starts));
        }
        for (int k = 1; k < starts.length; k++) {
            if (starts[k] <= starts[k - 1]) {
                throw new IllegalArgumentException("chunk " + (k - 1) + " holds no key: " + Arrays.toString(starts));
            }
        }
    }

    int chunks() {
        return starts.length - 1;
    }

    int from(int chunk) {
        return starts[chunk];
    }

    int to(int chunk) {
        return starts[chunk + 1];
    }

    /** Keys of the longest chunk. */
    int longest() {
        int n = 0;
        for (int k = 0; k < chunks(); k++) {
            n = Math.max(n, to(k) - from(k));
        }
        return n;
    }

    @Override
    public int[] starts() {
        return starts.clone();
    }

    /** Chunks of {@code chunkKeys} keys, the last one shorter: the contracts' way to put keys across chunk ends. */
    static ChunkSplit uniform(int length, int chunkKeys) {
        requireLength(length);
        if (chunkKeys <= 0) {
            throw new IllegalArgumentException("chunkKeys must be positive, got " + chunkKeys);
        }
        int n = (int) (((long) length + chunkKeys - 1) / chunkKeys);
        int[] s = new int[n + 1];
        for (int k = 0; k < n; k++) {
            s[k] = k * chunkKeys;
        }
        s[n] = length;
        return new ChunkSplit(s);
    }

    /** {@link #balanced(int, int, int, int, int, int)} over the cache's layout. */
    static ChunkSplit balanced(PackedKvCache cache, int tile, int wanted) {
        if (cache.groups().isEmpty()) {
            return balanced(0, 0, 0, cache.length(), tile, wanted);
        }
        return balanced(cache.sinkTokens(), cache.groupTokens(), cache.groups().size(), cache.residualTokens(), tile, wanted);
    }

    /**
     * At most {@code wanted} chunks of a cache of {@code sink} fp16 rows, {@code groups} quantized groups of
     * {@code groupTokens}, then {@code residual} fp16 rows, the heaviest as light as whole pieces allow: the rows
     * and each group cut into pieces of {@code tile} keys (a group's from its start, the last piece shorter), each chunk
     * as many pieces as fit under the least weight that needs no more than {@code wanted} chunks, taken in order. Where
     * whole groups (and the rows' pieces) reach that same weight, whole groups.
     */
    static ChunkSplit balanced(int sink, int groupTokens, int groups, int residual, int tile, int wanted) {
        if (sink < 0 || groups < 0 || residual < 0 || (groups > 0 && groupTokens <= 0) || tile <= 0 || wanted <= 0) {
            throw new IllegalArgumentException("no split for sink " + sink + ", " + groups + " groups of " + groupTokens
                    + ", residual " + residual + ", tile " + tile + ", " + wanted + " chunks");
        }
        requireLength((long) sink + (long) groups * groupTokens + residual);
        List<long[]> pieces = pieces(sink, groupTokens, groups, residual, tile, tile);
        long cap = leastCap(pieces, wanted);
        if (groups > 0 && groupTokens > tile) {
            List<long[]> whole = pieces(sink, groupTokens, groups, residual, tile, groupTokens);
            long wholeCap = leastCap(whole, wanted);
            if (wholeCap <= cap) {
                return fill(whole, wholeCap);
            }
        }
        return fill(pieces, cap);
    }

    /** Pieces in order, each {end, weight}: the rows' of {@code tile} keys, the groups' of {@code groupPiece}. */
    private static List<long[]> pieces(int sink, int groupTokens, int groups, int residual, int tile, int groupPiece) {
        List<long[]> out = new ArrayList<>();
        rows(out, 0, sink, tile);
        for (int g = 0; g < groups; g++) {
            long start = sink + (long) g * groupTokens;
            for (long j = start; j < start + groupTokens; j += groupPiece) {
                long end = Math.min(j + groupPiece, start + groupTokens);
                out.add(new long[] {end, end - j});
            }
        }
        rows(out, sink + (long) groups * groupTokens, residual, tile);
        return out;
    }

    private static void rows(List<long[]> out, long from, int rows, int tile) {
        for (long j = from; j < from + rows; j += tile) {
            long end = Math.min(j + tile, from + rows);
            out.add(new long[] {end, (end - j) * ROW_WEIGHT});
        }
    }

    /** The least weight whose in-order filling takes at most {@code wanted} chunks. */
    private static long leastCap(List<long[]> pieces, int wanted) {
        long lo = 0, hi = 0;
        for (long[] p : pieces) {
            lo = Math.max(lo, p[1]);
            hi += p[1];
        }
        while (lo < hi) {
            long mid = (lo + hi) >>> 1;
            if (chunksUnder(pieces, mid) <= wanted) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }

    private static long chunksUnder(List<long[]> pieces, long cap) {
        long n = 0, w = cap;
        for (long[] p : pieces) {
            if (w + p[1] > cap) {
                n++;
                w = 0;
            }
            w += p[1];
        }
        return n;
    }

    private static ChunkSplit fill(List<long[]> pieces, long cap) {
        List<Integer> s = new ArrayList<>();
        s.add(0);
        long w = 0;
        for (int i = 0; i < pieces.size(); i++) {
            long[] p = pieces.get(i);
            if (w > 0 && w + p[1] > cap) {
                s.add((int) pieces.get(i - 1)[0]);
                w = 0;
            }
            w += p[1];
        }
        s.add((int) pieces.get(pieces.size() - 1)[0]);
        return new ChunkSplit(s.stream().mapToInt(Integer::intValue).toArray());
    }

    private static void requireLength(long length) {
        if (length < 1 || length > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("a split-K decode needs 1 to 2^31 - 1 keys, got " + length);
        }
    }
}
