package org.mechspec.pnmix;

import org.mechspec.compute.BitPacking;

/**
 * Global-memory traffic of one split-K decode call ({@code pnmix_decode.cu}: one launch, whose last block per KV
 * head merges that head's chunks), summed over its device buffers. {@code rawBytes} counts each byte the kernels read or write once;
 * {@code sectorBytes} counts the distinct 32-byte sectors ({@link Sectors}) that the kernels' access pattern touches
 * in each buffer, 32 bytes each, which is what the memory system moves. The split-K partials count twice: every
 * block writes its own and the merging block reads them back. The per-KV-head counters (4 bytes each) count
 * twice too: read and written, by the blocks' atomics and the merging block's reset.
 *
 * <p>The access pattern, per KV head h of {@code d} channels (the chunk kernel's blocks of head h read only h's
 * channels, all of the cache's tokens over its chunks): fp16 rows [token][kvHead·d] are runs of 2d bytes at a stride
 * of the whole row; a group's key streams, scales and zeros, bit widths and offsets are h's channels of that group;
 * value codes and scales and zeros [token][valueGroup] are h's value groups, one run per token at the stride of a
 * token's value groups (metadata read at a stride: 4 bytes of h in each token's row). The query, partials, output
 * and dims are read or written whole.
 */
record DecodeTraffic(long rawBytes, long sectorBytes) {
    private static final int DIMS_BYTES = 11 * 4;

    /** One call over {@code cache} for {@code queryHeads} heads in {@code chunks} chunks per KV head, elements of {@code elementBytes}. */
    static DecodeTraffic of(PackedKvCache cache, int queryHeads, int chunks, int elementBytes) {
        Tally t = new Tally();
        int d = cache.headDim();
        int kv = cache.kvHeads();
        if (cache.groups().isEmpty()) { // the fp16 kernel reads sink and residual as one buffer of rows
            int rows = cache.sinkTokens() + cache.residualTokens();
            t.add(2L * rows * cache.channels(), fp16Rows(rows, kv, d));
            t.add(2L * rows * cache.channels(), fp16Rows(rows, kv, d));
        } else {
            t.add(cache.sinkKeys().length, fp16Rows(cache.sinkTokens(), kv, d));
            t.add(cache.sinkValues().length, fp16Rows(cache.sinkTokens(), kv, d));
            t.add(cache.residualKeys().length, fp16Rows(cache.residualTokens(), kv, d));
            t.add(cache.residualValues().length, fp16Rows(cache.residualTokens(), kv, d));
            addGroups(t, cache);
            t.add(DIMS_BYTES, new Sectors().touch(0, DIMS_BYTES));
        }
        long e = elementBytes;
        long q = queryHeads * d * e;
        long partials = (long) queryHeads * chunks * e;
        t.add(q, new Sectors().touch(0, q));
        for (long bytes : new long[] {partials, partials, partials * d}) { // m, l, acc: written, then read back
            t.add(bytes, new Sectors().touch(0, bytes));
            t.add(bytes, new Sectors().touch(0, bytes));
        }
        t.add(q, new Sectors().touch(0, q)); // the output has the query's shape
        long counters = 4L * kv;
        t.add(counters, new Sectors().touch(0, counters));
        t.add(counters, new Sectors().touch(0, counters));
        return new DecodeTraffic(t.raw, t.sectors);
    }

    /** fp16 [token][kvHead][d]: each head reads its 2d bytes of every row. */
    private static Sectors fp16Rows(int tokens, int kvHeads, int d) {
        Sectors s = new Sectors();
        for (int h = 0; h < kvHeads; h++) {
            s.touchStrided(2L * h * d, 2L * d, 2L * kvHeads * d, tokens);
        }
        return s;
    }

    /** The quantized groups' buffers, laid out as {@link CudaCacheCopy} uploads them. */
    private static void addGroups(Tally t, PackedKvCache cache) {
        int d = cache.headDim();
        int kv = cache.kvHeads();
        int channels = cache.channels();
        int groups = cache.groups().size();
        int tokens = cache.groupTokens();
        Sectors keyCodes = new Sectors();
        long keyCodeBytes = 0;
        for (PackedKvCache.Group g : cache.groups()) {
            int[] off = BitPacking.channelOffsets(tokens, g.keyBits());
            int[] padded = CudaCacheCopy.paddedKeyOffsets(tokens, g.keyBits());
            // Every token of a channel: its whole stream, from a 16-byte boundary. (A code's next word, read whether or
            // not the code runs into it, is in a sector already counted unless the stream ends on a sector boundary.)
            for (int c = 0; c < channels; c++) {
                keyCodes.touch(keyCodeBytes + padded[c], off[c + 1] - off[c]);
            }
            keyCodeBytes += padded[channels];
        }
        t.add(keyCodeBytes + CudaCacheCopy.KEY_CODE_TAIL, keyCodes);
        Sectors perChannel = new Sectors(); // scales and zeros, bit widths, offsets: 4 bytes per (group, channel)
        for (int g = 0; g < groups; g++) {
            for (int h = 0; h < kv; h++) {
                perChannel.touch(4L * (g * (long) channels + h * d), 4L * d);
            }
        }
        for (int i = 0; i < 3; i++) {
            t.add(4L * channels * groups, perChannel);
        }
        int gc = cache.valueGroupChannels();
        int bits = cache.valueBits();
        int vgroups = channels / gc;
        long vgBytes = BitPacking.tokenGroupBytes(gc, bits);
        Sectors valueCodes = new Sectors();
        Sectors valueMeta = new Sectors();
        for (int g = 0; g < groups; g++) {
            long firstToken = (long) g * tokens;
            for (int h = 0; h < kv; h++) {
                for (int vg = h * d / gc; vg <= (h * d + d - 1) / gc; vg++) {
                    // h's channels within value group vg, and the bytes their codes occupy in each token's group
                    int from = Math.max(h * d, vg * gc) - vg * gc;
                    int to = Math.min(h * d + d, (vg + 1) * gc) - vg * gc;
                    long byteFrom = (long) from * bits / 8;
                    long byteTo = ((long) to * bits - 1) / 8;
                    valueCodes.touchStrided((firstToken * vgroups + vg) * vgBytes + byteFrom, byteTo - byteFrom + 1, vgroups * vgBytes, tokens);
                    valueMeta.touchStrided(4 * (firstToken * vgroups + vg), 4, 4L * vgroups, tokens);
                }
            }
        }
        t.add(groups * tokens * vgroups * vgBytes, valueCodes);
        t.add(4L * groups * tokens * vgroups, valueMeta);
    }

    private static final class Tally {
        long raw;
        long sectors;

        void add(long rawBytes, Sectors s) {
            raw += rawBytes;
            sectors += s.bytes();
        }
    }
}
