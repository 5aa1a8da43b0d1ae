package org.mechspec.pnmix;

/**
 * The windows one block of the split-K decode kernel (pnmix_decode.cu, decode_chunk) takes over its chunk, worked
 * out as the kernel walks it, for {@link DecodeIssueModelTest}: the warps' stretches of the chunk (moved on to the
 * next pair of a group's blocks where the fp32 kernel takes its values on tensor cores), then each stretch's windows,
 * never across a segment (sink, a quantized group, residual) nor, in a group, across a 32-token block (or a pair of
 * them); where the fp32 fp16-cache kernel takes its rows on tensor cores, rows windows of up to two 32-key blocks.
 *
 * @param groupWindows windows in quantized groups (one 32-token block or two: the fp32 kernel scores both either way)
 * @param groupsStaged times a warp enters a group (its key weights staged)
 * @param rowsWindows  windows of fp16 rows (sink, residual; all of an fp16 cache)
 * @param rowsIterations rows_window iterations (P keys each)
 * @param rowBlocks    32-key blocks the rows windows score on tensor cores (rowTiles)
 * @param rowStretches warps' stretches of rows on tensor cores (the window loop's one iteration each)
 * @param rowsStaged   1 where the block has rows on tensor cores: warp 0 stages the query as their weights, once
 * @param keys         keys the windows hold, all told
 */
record DecodeWalk(long groupWindows, long groupsStaged, long rowsWindows, long rowsIterations, long rowBlocks,
                  long rowStretches, long rowsStaged, long keys) {
    static final int WARPS = CudaSplitKDecode.WARPS;
    static final int WINDOW = 32;
    static final int BLOCK = 32;

    /**
     * One chunk [from, to) of a cache of {@code sink} fp16 rows, then {@code groups} quantized groups of {@code group}
     * tokens, then fp16 rows to the end ({@code group} 0: all rows, an fp16 cache); {@code pairs}: windows of two
     * blocks (the fp32 kernel, values on tensor cores); {@code rowTiles}: an fp16 cache's rows on tensor cores (the
     * fp32 kernel: windows of up to two blocks, a warp's stretch one run of them); P keys a rows_window iteration.
     */
    static DecodeWalk of(int from, int to, int sink, int groups, int group, boolean pairs, boolean rowTiles, int tile,
                         int keysPerRowsIteration) {
        if (rowTiles && group != 0) {
            throw new IllegalArgumentException("rows on tensor cores: an fp16 cache's kernel only (group 0)");
        }
        long groupWindows = 0, staged = 0, rowsWindows = 0, rowsIterations = 0, rowBlocks = 0, rowStretches = 0, keys = 0;
        int window = Math.min(tile, WINDOW);
        int pairWindow = Math.min(tile, 2 * WINDOW);
        int residualStart = group == 0 ? Integer.MAX_VALUE : sink + groups * group;
        int span = (to - from + WARPS * WINDOW - 1) / (WARPS * WINDOW) * WINDOW;
        for (int w = 0; w < WARPS; w++) {
            int wfrom = from + w * span;
            int wto = to - wfrom < span ? to : wfrom + span;
            if (pairs) {
                if (w > 0) {
                    wfrom = Math.min(pairStart(wfrom, sink, group, residualStart), to);
                }
                if (w < WARPS - 1) {
                    wto = Math.min(pairStart(wto, sink, group, residualStart), to);
                }
            }
            int lastGroup = -1;
            if (rowTiles && wfrom < wto) {
                rowStretches++;
            }
            for (int j0 = wfrom, n; j0 < wto; j0 += n) {
                boolean rows = group == 0 || j0 < sink || j0 >= residualStart;
                int g = rows ? -1 : (j0 - sink) / group;
                int segStart = rows ? (j0 < sink ? 0 : residualStart) : sink + g * group;
                int segEnd = group == 0 ? Integer.MAX_VALUE : j0 < sink ? sink : rows ? Integer.MAX_VALUE : segStart + group;
                int end = Math.min(segEnd, wto);
                boolean pairsHere = !rows && pairs;
                n = Math.min(end - j0, pairsHere || rowTiles ? pairWindow : window);
                if (rows) {
                    keys += n;
                    rowsWindows++;
                    if (rowTiles) {
                        rowBlocks += n > BLOCK ? 2 : 1;
                    } else {
                        rowsIterations += (n + keysPerRowsIteration - 1) / keysPerRowsIteration;
                    }
                } else {
                    int e = (j0 - segStart) & (BLOCK - 1);
                    n = Math.min(n, (pairsHere ? 2 * BLOCK : BLOCK) - e);
                    keys += n;
                    groupWindows++;
                    if (g != lastGroup) {
                        staged++;
                        lastGroup = g;
                    }
                }
            }
        }
        return new DecodeWalk(groupWindows, staged, rowsWindows, rowsIterations, rowBlocks, rowStretches,
                rowTiles ? 1 : 0, keys);
    }

    /** PackedRows::pair_start: the first token at or after j where a pair of a group's blocks starts, or the group's end. */
    static int pairStart(int j, int sink, int group, int residualStart) {
        if (j <= sink || j >= residualStart) {
            return j;
        }
        int gs = sink + (j - sink) / group * group;
        int p = gs + ((j - gs + 2 * BLOCK - 1) & ~(2 * BLOCK - 1));
        return Math.min(p, gs + group);
    }
}
