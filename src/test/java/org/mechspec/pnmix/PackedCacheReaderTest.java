package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.AttentionShape;
import org.mechspec.compute.BitPacking;
import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.FloatArrays;
import org.mechspec.compute.HalfFloat;
import org.mechspec.compute.Rng;

/**
 * The block reader against the definition, element by element (fp16 bytes; BitPacking.get + zero + code·scale
 * from the fp16 metadata), and {@link CpuPackedCacheOps}'s attention against {@link CpuBackend}'s over the cache
 * dequantized by that definition: they follow one arithmetic order, so the bits must agree (fp64 and fp32).
 */
class PackedCacheReaderTest {

    /** kvHeads, headDim, sink, groupTokens, groups, valueBits, valueGroupChannels, residual, max key bits. */
    private static final int[][] SHAPES = {
            {2, 32, 32, 128, 3, 2, 32, 77, 3},   // pinned pn-mix sizes
            {1, 4, 2, 4, 3, 2, 4, 3, 3},
            {2, 6, 1, 5, 4, 3, 4, 1, 3},         // value groups straddle heads
            {2, 8, 0, 3, 5, 2, 16, 0, 2},        // value group spans both heads; no sink, no residual
            {3, 8, 130, 200, 2, 1, 2, 300, 8},   // fp16 parts and a group longer than one fp16 block
            {1, 2, 0, 1, 7, 4, 1, 2, 3},
            {2, 4, 5, 7, 0, 2, 4, 9, 3},         // fp16 only
    };

    @Test
    void blocksReadTheDefinitionsValues() {
        Rng rng = new Rng(11);
        for (int[] s : SHAPES) {
            PackedKvCache cache = randomCache(rng, s);
            checkReader(cache, rng);
        }
        PackedKvCache stream = streamed(32 + 5 * 128 + 45);
        checkReader(stream, rng);
    }

    /** The fp32 attention's reads: keys by channel, values by row, whole blocks and ranges starting mid-block. */
    @Test
    void fp32BlocksReadTheDefinitionsValues() {
        Rng rng = new Rng(14);
        List<PackedKvCache> caches = new ArrayList<>();
        for (int[] s : SHAPES) {
            caches.add(randomCache(rng, s));
        }
        caches.add(streamed(32 + 5 * 128 + 45));
        for (PackedKvCache c : caches) {
            PackedCacheReader reader = new PackedCacheReader(c);
            int d = c.headDim();
            float[][] keys = new float[d][reader.maxBlockTokens()];
            float[][] values = new float[reader.maxBlockTokens()][d];
            for (int kvh = 0; kvh < c.kvHeads(); kvh++) {
                for (int from = 0, to; from < c.length(); from = to) {
                    to = reader.blockEnd(from);
                    int a = from + (int) (rng.uniform() * (to - from));
                    int b = a + 1 + (int) (rng.uniform() * (to - a));
                    for (int[] range : new int[][] {{from, to}, {a, b}}) {
                        reader.keys(range[0], range[1], kvh, keys);
                        reader.values(range[0], range[1], kvh, values);
                        for (int j = range[0]; j < range[1]; j++) {
                            for (int i = 0; i < d; i++) {
                                same(keys[i][j - range[0]], definition(c, j, kvh * d + i, true, true));
                                same(values[j - range[0]][i], definition(c, j, kvh * d + i, false, true));
                            }
                        }
                    }
                }
            }
        }
    }

    @Test
    void quantizedBlocksMatchTheDequantizeOps() {
        CpuPackedCacheOps ops = new CpuPackedCacheOps();
        Rng rng = new Rng(12);
        for (int[] s : SHAPES) {
            PackedKvCache c = randomCache(rng, s);
            PackedCacheReader reader = new PackedCacheReader(c);
            int d = c.headDim();
            int gt = c.groupTokens();
            double[] rows = new double[reader.maxBlockTokens() * d];
            for (int g = 0; g < c.groups().size(); g++) {
                PackedKvCache.Group gr = c.groups().get(g);
                double[] k = ops.dequantizePerChannel(gr.keys(), gt, gr.keyBits());
                double[] v = ops.dequantizePerToken(gr.values(), gt, c.channels(), c.valueGroupChannels(), c.valueBits());
                int from = c.sinkTokens() + g * gt;
                for (int kvh = 0; kvh < c.kvHeads(); kvh++) {
                    reader.keys(from, from + gt, kvh, rows);
                    for (int t = 0; t < gt; t++) {
                        for (int i = 0; i < d; i++) {
                            same(rows[t * d + i], k[t * c.channels() + kvh * d + i]);
                        }
                    }
                    reader.values(from, from + gt, kvh, rows);
                    for (int t = 0; t < gt; t++) {
                        for (int i = 0; i < d; i++) {
                            same(rows[t * d + i], v[t * c.channels() + kvh * d + i]);
                        }
                    }
                }
            }
        }
    }

    @Test
    void attentionOverThePackedCacheGivesCpuBackendsBitsOverTheDequantizedCache() {
        Rng rng = new Rng(13);
        CpuPackedCacheOps ops = new CpuPackedCacheOps();
        List<PackedKvCache> caches = new ArrayList<>();
        for (int[] s : SHAPES) {
            caches.add(randomCache(rng, s));
        }
        caches.add(streamed(32 + 3 * 128 + 100));
        caches.add(streamed(32 + 2 * 128));
        for (PackedKvCache c : caches) {
            double[] k = dequantized(c, true, false);
            double[] v = dequantized(c, false, false);
            float[] k32 = FloatArrays.narrow(dequantized(c, true, true));
            float[] v32 = FloatArrays.narrow(dequantized(c, false, true));
            for (int queryHeads : new int[] {c.kvHeads(), 4 * c.kvHeads()}) {
                for (int queryLen : new int[] {1, 3}) {
                    for (boolean causal : new boolean[] {false, true}) {
                        AttentionShape shape = AttentionShape.of(1, queryHeads, c.kvHeads(), queryLen, c.length(), c.headDim(),
                                c.headDim(), causal);
                        double[] q = PnMixFixtures.halfRows(rng, queryHeads * queryLen, c.headDim(), 1.0);
                        PackedAttention now = ops.attend(c, q, queryHeads, queryLen, causal, true);
                        sameAll(now.out(), CpuBackend.INSTANCE.attention(shape, q, k, v, null));
                        sameAll(now.logits(), logits(c, q, k, queryHeads, queryLen, causal));
                        float[] q32 = FloatArrays.narrow(q);
                        sameAll(FloatArrays.widen(ops.attendFp32(c, q32, queryHeads, queryLen, causal)),
                                FloatArrays.widen(CpuBackend.INSTANCE.attention(shape, q32, k32, v32, null)));
                    }
                }
            }
        }
    }

    /** Whole blocks, single rows and ranges starting mid-block (mid-byte in the streams) against the definition. */
    private static void checkReader(PackedKvCache c, Rng rng) {
        PackedCacheReader reader = new PackedCacheReader(c);
        int d = c.headDim();
        double[] rows = new double[reader.maxBlockTokens() * d];
        double[] row = new double[d];
        for (int kvh = 0; kvh < c.kvHeads(); kvh++) {
            for (int from = 0, to; from < c.length(); from = to) {
                to = reader.blockEnd(from);
                assertThat(to - from).isBetween(1, reader.maxBlockTokens());
                reader.keys(from, to, kvh, rows);
                for (int j = from; j < to; j++) {
                    for (int i = 0; i < d; i++) {
                        same(rows[(j - from) * d + i], definition(c, j, kvh * d + i, true, false));
                    }
                }
                reader.values(from, to, kvh, rows);
                for (int j = from; j < to; j++) {
                    for (int i = 0; i < d; i++) {
                        same(rows[(j - from) * d + i], definition(c, j, kvh * d + i, false, false));
                    }
                }
                int a = from + (int) (rng.uniform() * (to - from));
                int b = a + 1 + (int) (rng.uniform() * (to - a));
                reader.keys(a, b, kvh, rows);
                for (int j = a; j < b; j++) {
                    for (int i = 0; i < d; i++) {
                        same(rows[(j - a) * d + i], definition(c, j, kvh * d + i, true, false));
                    }
                }
                reader.key(a, kvh, row);
                for (int i = 0; i < d; i++) {
                    same(row[i], definition(c, a, kvh * d + i, true, false));
                }
                reader.value(b - 1, kvh, row);
                for (int i = 0; i < d; i++) {
                    same(row[i], definition(c, b - 1, kvh * d + i, false, false));
                }
            }
        }
    }

    /** Element (position j, channel ch) from the layout's definition; fp32: zero + code·scale in float. */
    private static double definition(PackedKvCache c, int j, int ch, boolean key, boolean fp32) {
        if (j < c.sinkTokens()) {
            return HalfFloat.fromHalfBits(BitPacking.getHalf(key ? c.sinkKeys() : c.sinkValues(), 2 * (j * c.channels() + ch)));
        }
        if (j >= c.residualStart()) {
            int t = j - c.residualStart();
            return HalfFloat.fromHalfBits(BitPacking.getHalf(key ? c.residualKeys() : c.residualValues(), 2 * (t * c.channels() + ch)));
        }
        int g = (j - c.sinkTokens()) / c.groupTokens();
        int t = j - c.sinkTokens() - g * c.groupTokens();
        PackedKvCache.Group gr = c.groups().get(g);
        int code;
        int meta;
        byte[] metaBytes;
        if (key) {
            code = BitPacking.get(gr.keys().codes(), BitPacking.channelOffsets(c.groupTokens(), gr.keyBits())[ch], t, gr.keyBits()[ch]);
            meta = ch;
            metaBytes = gr.keys().meta();
        } else {
            int groups = c.channels() / c.valueGroupChannels();
            int vg = t * groups + ch / c.valueGroupChannels();
            int bytes = BitPacking.tokenGroupBytes(c.valueGroupChannels(), c.valueBits());
            code = BitPacking.get(gr.values().codes(), vg * bytes, ch % c.valueGroupChannels(), c.valueBits());
            meta = vg;
            metaBytes = gr.values().meta();
        }
        double scale = HalfFloat.fromHalfBits(BitPacking.getHalf(metaBytes, 4 * meta));
        double zero = HalfFloat.fromHalfBits(BitPacking.getHalf(metaBytes, 4 * meta + 2));
        if (fp32) {
            float s = (float) scale;
            float z = (float) zero;
            float v = z + code * s;
            return v;
        }
        return zero + code * scale;
    }

    private static void same(double actual, double expected) {
        if (Double.compare(actual, expected) != 0) {
            throw new AssertionError("got " + actual + ", expected " + expected);
        }
    }

    private static void sameAll(double[] actual, double[] expected) {
        assertThat(actual).hasSameSizeAs(expected);
        for (int i = 0; i < actual.length; i++) {
            if (Double.compare(actual[i], expected[i]) != 0) {
                throw new AssertionError("element " + i + ": got " + actual[i] + ", expected " + expected[i]);
            }
        }
    }

    /** A cache built like PnMixBench.setup: the pinned configuration streamed through the mechanism. */
    private static PackedKvCache streamed(int tokens) {
        PnMixConfig c = PnMixConfig.pinned();
        Rng rng = new Rng(42);
        PairMask mask = RandomMasks.draw(rng, 1, c.model().kvHeads(), c.model().pairs(), c.highPairsPerHead())[0];
        StreamingCache cache = new StreamingCache(c, new CpuPackedCacheOps(), mask.channelBits(c.model().headDim(),
                c.model().layout(), c.cache().highBits(), c.cache().lowBits()), mask.bytes());
        int channels = c.model().kvChannels();
        for (int t = 0; t < tokens; t++) {
            cache.append(PnMixFixtures.halfRows(rng, 1, channels, 1.0), PnMixFixtures.halfRows(rng, 1, channels, 1.0));
        }
        return cache.view();
    }

    /** Random code bytes (every code occurs, padding bits too) and random finite fp16 scales, zeros and rows. */
    private static PackedKvCache randomCache(Rng rng, int[] s) {
        int kvHeads = s[0], headDim = s[1], sink = s[2], gt = s[3], groups = s[4], valueBits = s[5], gc = s[6];
        int residual = s[7], maxKeyBits = s[8];
        int channels = kvHeads * headDim;
        List<PackedKvCache.Group> list = new ArrayList<>();
        for (int g = 0; g < groups; g++) {
            int[] bits = new int[channels];
            for (int ch = 0; ch < channels; ch++) {
                bits[ch] = 1 + (int) (rng.uniform() * maxKeyBits);
            }
            byte[] keyCodes = randomBytes(rng, BitPacking.channelOffsets(gt, bits)[channels]);
            byte[] keyMeta = halfs(rng, 2 * channels);
            int vgroups = gt * (channels / gc);
            byte[] valueCodes = randomBytes(rng, vgroups * BitPacking.tokenGroupBytes(gc, valueBits));
            byte[] valueMeta = halfs(rng, 2 * vgroups);
            list.add(new PackedKvCache.Group(new PackedBlock(keyCodes, keyMeta), bits, new PackedBlock(valueCodes, valueMeta)));
        }
        return new PackedKvCache(kvHeads, headDim, sink, halfs(rng, sink * channels), halfs(rng, sink * channels), gt,
                list, valueBits, gc, residual, halfs(rng, residual * channels), halfs(rng, residual * channels));
    }

    private static byte[] randomBytes(Rng rng, int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) rng.next();
        }
        return b;
    }

    /** fp16 values below 8 in magnitude, subnormals and signed zeros included. */
    private static byte[] halfs(Rng rng, int n) {
        byte[] b = new byte[2 * n];
        for (int i = 0; i < n; i++) {
            int sign = rng.uniform() < 0.5 ? 0x8000 : 0;
            int e = (int) (rng.uniform() * 18);
            int m = (int) (rng.uniform() * 1024);
            BitPacking.putHalf(b, 2 * i, (short) (sign | e << 10 | m));
        }
        return b;
    }

    /** The cache dequantized by the definition, head-major ([kvHeads, length, headDim]) as CpuBackend reads it. */
    private static double[] dequantized(PackedKvCache c, boolean key, boolean fp32) {
        int d = c.headDim();
        double[] out = new double[c.kvHeads() * c.length() * d];
        for (int kvh = 0; kvh < c.kvHeads(); kvh++) {
            for (int j = 0; j < c.length(); j++) {
                for (int i = 0; i < d; i++) {
                    out[(kvh * c.length() + j) * d + i] = definition(c, j, kvh * d + i, key, fp32);
                }
            }
        }
        return out;
    }

    /** The fp64 logits by their definition: the dot product in CpuBackend's order, times 1/√d; −∞ where not visible. */
    private static double[] logits(PackedKvCache c, double[] q, double[] k, int queryHeads, int queryLen, boolean causal) {
        int d = c.headDim();
        int n = c.length();
        double scale = 1.0 / Math.sqrt(d);
        double[] out = new double[queryHeads * queryLen * n];
        java.util.Arrays.fill(out, Double.NEGATIVE_INFINITY);
        for (int h = 0; h < queryHeads; h++) {
            int kvh = h / (queryHeads / c.kvHeads());
            for (int i = 0; i < queryLen; i++) {
                for (int j = 0; j <= CpuPackedCacheOps.lastVisible(i, queryLen, n, causal); j++) {
                    double dot = 0.0;
                    for (int ch = 0; ch < d; ch++) {
                        dot += q[(h * queryLen + i) * d + ch] * k[(kvh * n + j) * d + ch];
                    }
                    out[(h * queryLen + i) * n + j] = dot * scale;
                }
            }
        }
        return out;
    }
}
