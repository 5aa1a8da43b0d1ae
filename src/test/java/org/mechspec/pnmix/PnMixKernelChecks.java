package org.mechspec.pnmix;

import java.util.ArrayList;
import java.util.List;
import org.mechspec.compute.BitPacking;
import org.mechspec.compute.FloatArrays;
import org.mechspec.compute.HalfFloat;
import org.mechspec.compute.OneBitLevels;
import org.mechspec.compute.Rng;
import org.mechspec.spec.FlashRule;

/**
 * Differential checks of a backend's packed-cache kernels against the CPU twin, on fresh inputs from Rng(seed):
 * bit equality for quantize/pack/unpack/dequantize, the FlashAttention rule for attention. An outside implementation
 * with its own layout is judged on caches it built, read for the twin's oracle through its own unpack, and its bytes
 * only where the paper fixes them ({@link #owner}, {@link #quantizePackMismatchesOwnLayout}).
 */
public final class PnMixKernelChecks {
    private PnMixKernelChecks() {
    }

    /** One shape's inputs to the quantize and pack operations: values to quantize, and codes to pack. */
    record QuantizeInputs(int tokens, int channels, int groupChannels, int tokenBits, int[] bits, double[] x, int[] codes,
                          int[] tokenCodes) {
    }

    /**
     * The pinned shapes (128 tokens, 64 channels of 3/1 bits, values per token of 32 channels at 2 bits), then random
     * ones; each with a constant channel and signed zeros. Both device-side comparisons draw these from {@code seed}.
     */
    static List<QuantizeInputs> quantizeInputs(long seed) {
        Rng rng = new Rng(seed);
        int[][] shapes = {{128, 64, 32, 2}, {1 + (int) (rng.uniform() * 200), 1 + (int) (rng.uniform() * 9), 0, 0},
                {1 + (int) (rng.uniform() * 40), 12, 4, 1 + (int) (rng.uniform() * 8)}};
        List<QuantizeInputs> out = new ArrayList<>();
        for (int[] s : shapes) {
            int tokens = s[0];
            int channels = s[1];
            int gc = s[2] == 0 ? channels : s[2];
            int tokenBits = s[3] == 0 ? 1 + (int) (rng.uniform() * 8) : s[3];
            int[] bits = new int[channels];
            for (int c = 0; c < channels; c++) {
                bits[c] = s[0] == 128 ? (rng.uniform() < 0.5 ? 3 : 1) : 1 + (int) (rng.uniform() * 8);
            }
            double[] x = new double[tokens * channels];
            for (int i = 0; i < x.length; i++) {
                int c = i % channels;
                x[i] = c == 0 ? 0.75 : c == 1 && rng.uniform() < 0.5 ? (rng.uniform() < 0.5 ? 0.0 : -0.0)
                        : HalfFloat.roundToHalf(rng.normal() * 2);
            }
            int[] codes = new int[tokens * channels];
            int[] tokenCodes = new int[tokens * channels];
            for (int i = 0; i < codes.length; i++) {
                codes[i] = (int) (rng.uniform() * (1 << bits[i % channels]));
                tokenCodes[i] = (int) (rng.uniform() * (1 << tokenBits));
            }
            out.add(new QuantizeInputs(tokens, channels, gc, tokenBits, bits, x, codes, tokenCodes));
        }
        return out;
    }

    /** Bytes, codes and values (bitwise) where {@code device} differs from {@code cpu}; poisoned leftovers count. */
    public static long quantizePackMismatches(PackedCacheOps device, PackedCacheOps cpu, long seed) {
        long bad = 0;
        for (QuantizeInputs in : quantizeInputs(seed)) {
            int tokens = in.tokens();
            int channels = in.channels();
            int gc = in.groupChannels();
            int tokenBits = in.tokenBits();
            int[] bits = in.bits();
            double[] x = in.x();
            for (OneBitLevels mode : OneBitLevels.values()) {
                PackedBlock a = device.quantizePerChannel(x, tokens, bits, mode);
                PackedBlock b = cpu.quantizePerChannel(x, tokens, bits, mode);
                bad += PnMixChecks.differingBytes(a.codes(), b.codes()) + PnMixChecks.differingBytes(a.meta(), b.meta());
                PackedBlock at = device.quantizePerToken(x, tokens, channels, gc, tokenBits, mode);
                PackedBlock bt = cpu.quantizePerToken(x, tokens, channels, gc, tokenBits, mode);
                bad += PnMixChecks.differingBytes(at.codes(), bt.codes()) + PnMixChecks.differingBytes(at.meta(), bt.meta());
                bad += differing(device.dequantizePerChannel(b, tokens, bits), cpu.dequantizePerChannel(b, tokens, bits));
                bad += differing(device.dequantizePerToken(bt, tokens, channels, gc, tokenBits),
                        cpu.dequantizePerToken(bt, tokens, channels, gc, tokenBits));
            }
            int[] codes = in.codes();
            int[] tokenCodes = in.tokenCodes();
            byte[] packed = cpu.packPerChannel(codes, tokens, bits);
            bad += PnMixChecks.differingBytes(device.packPerChannel(codes, tokens, bits), packed);
            bad += differing(device.unpackPerChannel(packed, tokens, bits), codes);
            byte[] packedTokens = cpu.packPerToken(tokenCodes, tokens, channels, gc, tokenBits);
            bad += PnMixChecks.differingBytes(device.packPerToken(tokenCodes, tokens, channels, gc, tokenBits), packedTokens);
            bad += differing(device.unpackPerToken(packedTokens, tokens, channels, gc, tokenBits), tokenCodes);
        }
        return bad;
    }

    /**
     * The operations that build the caches a device-side check hands to {@code device}: an outside implementation's own
     * (its layout is its own: a cache mechspec built is not one it must read), else the CPU twin (mechspec's CUDA twin
     * reads the CPU's layout).
     */
    public static PackedCacheOps owner(PackedCacheOps device) {
        return device instanceof WorkerPackedCacheOps ? device : new CpuPackedCacheOps();
    }

    /** The reader of a backend's caches for the checks: {@link #owner} of its operations. */
    public static PackedCacheOps reader(org.mechspec.compute.Backend backend) {
        return owner(PackedCacheOps.forBackend(backend));
    }

    /**
     * {@link #quantizePackMismatches} for an implementation with its own layout, judged only where the paper fixes the
     * bytes: on the same inputs, metadata bytes (fp16 scale, fp16 zero per group) and code byte counts equal the CPU
     * twin's, the codes its own unpack reads from its blocks and the values its own dequantize reads equal the twin's
     * (bitwise), and its pack then unpack returns every code in the twin's byte count. The bit order is never compared.
     */
    public static long quantizePackMismatchesOwnLayout(PackedCacheOps device, PackedCacheOps cpu, long seed) {
        long bad = 0;
        for (QuantizeInputs in : quantizeInputs(seed)) {
            int tokens = in.tokens();
            int channels = in.channels();
            int gc = in.groupChannels();
            int tokenBits = in.tokenBits();
            int[] bits = in.bits();
            double[] x = in.x();
            for (OneBitLevels mode : OneBitLevels.values()) {
                PackedBlock a = device.quantizePerChannel(x, tokens, bits, mode);
                PackedBlock b = cpu.quantizePerChannel(x, tokens, bits, mode);
                bad += PnMixChecks.differingBytes(a.meta(), b.meta()) + Math.abs(a.codes().length - b.codes().length);
                if (a.codes().length == b.codes().length && a.meta().length == b.meta().length) {
                    bad += differing(device.unpackPerChannel(a.codes(), tokens, bits), cpu.unpackPerChannel(b.codes(), tokens, bits));
                    bad += differing(device.dequantizePerChannel(a, tokens, bits), cpu.dequantizePerChannel(b, tokens, bits));
                }
                PackedBlock at = device.quantizePerToken(x, tokens, channels, gc, tokenBits, mode);
                PackedBlock bt = cpu.quantizePerToken(x, tokens, channels, gc, tokenBits, mode);
                bad += PnMixChecks.differingBytes(at.meta(), bt.meta()) + Math.abs(at.codes().length - bt.codes().length);
                if (at.codes().length == bt.codes().length && at.meta().length == bt.meta().length) {
                    bad += differing(device.unpackPerToken(at.codes(), tokens, channels, gc, tokenBits),
                            cpu.unpackPerToken(bt.codes(), tokens, channels, gc, tokenBits));
                    bad += differing(device.dequantizePerToken(at, tokens, channels, gc, tokenBits),
                            cpu.dequantizePerToken(bt, tokens, channels, gc, tokenBits));
                }
            }
            int[] codes = in.codes();
            int[] tokenCodes = in.tokenCodes();
            byte[] packed = device.packPerChannel(codes, tokens, bits);
            int want = BitPacking.channelOffsets(tokens, bits)[channels];
            bad += Math.abs(packed.length - want);
            if (packed.length == want) {
                bad += differing(device.unpackPerChannel(packed, tokens, bits), codes);
            }
            byte[] packedTokens = device.packPerToken(tokenCodes, tokens, channels, gc, tokenBits);
            int wantTokens = tokens * (channels / gc) * BitPacking.tokenGroupBytes(gc, tokenBits);
            bad += Math.abs(packedTokens.length - wantTokens);
            if (packedTokens.length == wantTokens) {
                bad += differing(device.unpackPerToken(packedTokens, tokens, channels, gc, tokenBits), tokenCodes);
            }
        }
        return bad;
    }

    /**
     * The cache in mechspec's layout, for the CPU twin's oracle: each quantized block's codes read by {@code owner}'s
     * own unpack and packed by the CPU twin; the metadata and fp16 buffers, which the paper fixes, as they are. The
     * cache itself when {@code owner} is the CPU twin. Fails in the paper's terms where the byte counts are not the paper's.
     */
    public static PackedKvCache inMechspecLayout(PackedKvCache cache, PackedCacheOps owner) {
        if (owner instanceof CpuPackedCacheOps) {
            return cache;
        }
        PnMixChecks.requirePaperByteCounts(cache);
        CpuPackedCacheOps cpu = new CpuPackedCacheOps();
        int g = cache.groupTokens();
        int c = cache.channels();
        List<PackedKvCache.Group> groups = new ArrayList<>();
        for (PackedKvCache.Group gr : cache.groups()) {
            byte[] keys = cpu.packPerChannel(owner.unpackPerChannel(gr.keys().codes(), g, gr.keyBits()), g, gr.keyBits());
            byte[] values = cpu.packPerToken(owner.unpackPerToken(gr.values().codes(), g, c, cache.valueGroupChannels(), cache.valueBits()),
                    g, c, cache.valueGroupChannels(), cache.valueBits());
            groups.add(new PackedKvCache.Group(new PackedBlock(keys, gr.keys().meta()), gr.keyBits(), new PackedBlock(values, gr.values().meta())));
        }
        return new PackedKvCache(cache.kvHeads(), cache.headDim(), cache.sinkTokens(), cache.sinkKeys(), cache.sinkValues(),
                cache.groupTokens(), groups, cache.valueBits(), cache.valueGroupChannels(), cache.residualTokens(),
                cache.residualKeys(), cache.residualValues());
    }

    /** A packed cache and queries for the attention differential: the pinned shape or a random small one. */
    public record AttentionCase(PackedKvCache cache, int queryHeads, int queryLen, boolean causal, double[] q,
                                PackedKvCache reference) {
        public float[] qf() {
            float[] f = new float[q.length];
            for (int i = 0; i < q.length; i++) {
                f[i] = (float) q[i];
            }
            return f;
        }

        public int chain() {
            return cache.length() + cache.headDim();
        }
    }

    /** Case 0: the pinned 448-token cache with 64 causal decode queries; case 1: a random small shape. */
    public static AttentionCase attentionCase(long seed, int which) {
        return attentionCase(seed, which, new CpuPackedCacheOps());
    }

    /** The same case, its cache built by {@code owner} (the CPU twin's oracle reads it {@link #inMechspecLayout}). */
    public static AttentionCase attentionCase(long seed, int which, PackedCacheOps owner) {
        Rng rng = new Rng(seed * 31 + which);
        PnMixConfig c;
        int tokens;
        int queries;
        if (which == 0) {
            c = PnMixConfig.pinned();
            tokens = c.totalTokens();
            queries = c.tokens().decode();
        } else {
            int kv = 1 + (int) (rng.uniform() * 3);
            int d = 2 * (1 + (int) (rng.uniform() * 16));
            c = new PnMixConfig(new PnMixConfig.Model(256, 16, kv * (1 + (int) (rng.uniform() * 3)), kv, d, 10000.0, PairLayout.ADJACENT),
                new PnMixConfig.CachePolicy((int) (rng.uniform() * 6), 8, 16, 0.5, 1 + (int) (rng.uniform() * 8), 1 + (int) (rng.uniform() * 8), 1 + (int) (rng.uniform() * 8), 128, OneBitLevels.CONDITIONAL_MEANS), new PnMixConfig.Tokens(40, 0));
            tokens = 1 + (int) (rng.uniform() * 300);
            queries = 1 + (int) (rng.uniform() * Math.min(tokens, 7));
        }
        PairMask mask = RandomMasks.draw(rng, 1, c.model().kvHeads(), c.model().pairs(), c.highPairsPerHead())[0];
        StreamingCache cache = new StreamingCache(c, owner,
                mask.channelBits(c.model().headDim(), c.model().layout(), c.cache().highBits(), c.cache().lowBits()), mask.bytes());
        for (int t = 0; t < tokens; t++) {
            cache.append(half(rng, c.model().kvChannels()), half(rng, c.model().kvChannels()));
        }
        double[] q = half(rng, c.model().queryHeads() * queries * c.model().headDim());
        PackedKvCache view = cache.view();
        return new AttentionCase(view, c.model().queryHeads(), queries, which == 0 || rng.uniform() < 0.5, q,
                inMechspecLayout(view, owner));
    }

    /** fp64 kernel: within chain·u64·max(1,|oracle|) of the CPU fp64 oracle over the same packed cache. */
    public static FlashRule.Verdict attentionFp64(PackedCacheOps device, AttentionCase a) {
        double[] oracle = new CpuPackedCacheOps().attend(a.reference(), a.q(), a.queryHeads(), a.queryLen(), a.causal(), false).out();
        double[] out = device.attend(a.cache(), a.q(), a.queryHeads(), a.queryLen(), a.causal(), false).out();
        return FlashRule.judge(out, oracle, oracle, FlashRule.FP64_UNIT_ROUNDOFF, a.chain());
    }

    /** fp32 kernel: the FlashAttention rule with the CPU fp32 twin as the naive reference. */
    public static FlashRule.Verdict attentionFp32(PackedCacheOps device, AttentionCase a) {
        CpuPackedCacheOps cpu = new CpuPackedCacheOps();
        double[] oracle = cpu.attend(a.reference(), a.q(), a.queryHeads(), a.queryLen(), a.causal(), false).out();
        double[] naive = FloatArrays.widen(cpu.attendFp32(a.reference(), a.qf(), a.queryHeads(), a.queryLen(), a.causal()));
        double[] out = FloatArrays.widen(device.attendFp32(a.cache(), a.qf(), a.queryHeads(), a.queryLen(), a.causal()));
        return FlashRule.judge(out, oracle, naive, FlashRule.FP32_UNIT_ROUNDOFF, a.chain());
    }

    /**
     * One decode step over a packed cache and over the fp16 cache of the same tokens: {@code q} [queryHeads][headDim]
     * at the last position; {@code chunkKeys} keys per split-K block on CUDA (0: automatic).
     */
    public record DecodeCase(String name, PackedKvCache packed, PackedKvCache fp16, int queryHeads, double[] q,
                             int chunkKeys, PackedKvCache packedReference) {
        /** The cache the CPU twin's oracle reads for {@code cache}: the packed one in mechspec's layout. */
        PackedKvCache reference(PackedKvCache cache) {
            return cache == packed ? packedReference : cache;
        }

        public float[] qf() {
            return FloatArrays.narrow(q);
        }

        /** The same caches with another query: q's elements negated, in reverse order. */
        DecodeCase withSecondQuery() {
            double[] q2 = new double[q.length];
            for (int i = 0; i < q.length; i++) {
                q2[i] = -q[q.length - 1 - i];
            }
            return new DecodeCase(name, packed, fp16, queryHeads, q2, chunkKeys, packedReference);
        }

        public int chain() {
            return packed.length() + packed.headDim();
        }
    }

    /** Keys per split-K block in the boundary grid: not a power of two, so tiles end partly filled at chunk ends. */
    static final int DECODE_CHUNK = 96;

    /**
     * The split-K grid: key lengths 1, chunk−1, chunk, chunk+1 and three chunks plus a partial one, for head dims
     * 32/64/128 and 1/2/5/8 query heads per KV head over 2 KV heads; then all-equal logits (q = 0), one dominant
     * key (the others' weights underflow to zero), 131079 keys (2^17 + 7) with the automatic chunking in the pinned
     * cache policy that the decode bench times (128-token groups, where 3-bit key codes cross 16-byte words), and head
     * dims 6 and 42 (not multiples of 4).
     */
    public static List<DecodeCase> decodeCases(long seed) {
        return decodeCases(seed, new CpuPackedCacheOps());
    }

    /** The same cases, their packed caches built by {@code owner}. */
    public static List<DecodeCase> decodeCases(long seed, PackedCacheOps owner) {
        Rng rng = new Rng(seed * 31 + 7);
        List<DecodeCase> cases = new ArrayList<>();
        int[] lengths = {1, DECODE_CHUNK - 1, DECODE_CHUNK, DECODE_CHUNK + 1, 3 * DECODE_CHUNK + 40};
        for (int d : new int[] {32, 64, 128}) {
            for (int group : new int[] {1, 2, 5, 8}) {
                for (int length : lengths) {
                    cases.add(decodeCase("d" + d + " group" + group + " keys" + length, rng, 2, group, d, length,
                            DECODE_CHUNK, false, false, owner));
                }
            }
        }
        // Head dims whose d/8 is not a power of two: lanes past d in a key's team must read nothing (16-channel value
        // groups, which divide them).
        for (int d : new int[] {48, 80, 96}) {
            for (int length : new int[] {DECODE_CHUNK + 1, 3 * DECODE_CHUNK + 40}) {
                cases.add(decodeCase("d" + d + " group5 keys" + length, rng, 2, 5, d, length, DECODE_CHUNK, false, false, owner,
                        new PnMixConfig.CachePolicy(4, 32, 32, 0.5, 3, 1, 2, 16, OneBitLevels.CONDITIONAL_MEANS)));
            }
        }
        // The decode bench's configuration: 128-token groups, 3-bit keys whose slices cross 16-byte code words, d = 128.
        cases.add(decodeCase("bench configuration, d128", rng, 2, 4, 128, 32 + 4 * 128 + 37, DECODE_CHUNK, false, false, owner,
                PnMixConfig.pinned().cache()));
        cases.add(decodeCase("all-equal logits", rng, 2, 3, 64, 2 * DECODE_CHUNK + 5, DECODE_CHUNK, true, false, owner));
        cases.add(decodeCase("one dominant key", rng, 2, 4, 64, 3 * DECODE_CHUNK + 1, DECODE_CHUNK, false, true, owner));
        cases.add(decodeCase("131079 keys, pinned cache policy", rng, 1, 4, 32, (1 << 17) + 7, 0, false, false, owner,
                PnMixConfig.pinned().cache()));
        // Head dims that are not multiples of 4: keys one channel at a time, fp16 rows 2 bytes at a time, values one code
        // a channel (2-channel value groups).
        for (int d : new int[] {6, 42}) {
            cases.add(decodeCase("d" + d + " group3 keys" + (3 * DECODE_CHUNK + 40), rng, 2, 3, d, 3 * DECODE_CHUNK + 40, DECODE_CHUNK,
                    false, false, owner, new PnMixConfig.CachePolicy(4, 32, 32, 0.5, 3, 1, 2, 2, OneBitLevels.CONDITIONAL_MEANS)));
        }
        // Key widths 2 to 8 with a pair's channels far apart (half-split), so a lane's neighbouring channels differ in
        // width; groups whose last 32-token block is short (40 tokens) or that are shorter than a block (20); head dims
        // the fp32 kernel's 16-channel tensor-core steps overrun (40, 24).
        cases.add(decodeCase("d40 group4, 40-token groups of 8- and 5-bit keys", rng, 2, 4, 40, 3 * DECODE_CHUNK + 40, DECODE_CHUNK,
                false, false, owner, new PnMixConfig.CachePolicy(4, 40, 40, 0.5, 8, 5, 4, 8, OneBitLevels.CONDITIONAL_MEANS),
                PairLayout.HALF_SPLIT));
        cases.add(decodeCase("d24 group2, 20-token groups of 7- and 2-bit keys", rng, 2, 2, 24, 2 * DECODE_CHUNK + 13, DECODE_CHUNK,
                false, false, owner, new PnMixConfig.CachePolicy(4, 20, 20, 0.5, 7, 2, 1, 8, OneBitLevels.CONDITIONAL_MEANS),
                PairLayout.HALF_SPLIT));
        // The fp32 kernel's two key loops, with values on tensor cores (a value group a head, 2 bits): key_pair_scores
        // where every adjacent channel pair of a group shares a width of at most 4 bits (4 and 1 here: four tokens'
        // runs fill a 16-bit half), key_tile_scores where a pair's width is 5 or its two channels differ (half-split
        // pairs at 3 and 1 bits).
        for (int[] bits : new int[][] {{4, 1}, {5, 2}}) {
            cases.add(decodeCase("d64 group3, " + bits[0] + "- and " + bits[1] + "-bit adjacent pairs", rng, 2, 3, 64, 2 * 520 + 77,
                    520, false, false, owner, new PnMixConfig.CachePolicy(4, 64, 64, 0.5, bits[0], bits[1], 2, 64,
                            OneBitLevels.CONDITIONAL_MEANS)));
        }
        cases.add(decodeCase("d64 group3, 3- and 1-bit half-split pairs", rng, 2, 3, 64, 2 * 520 + 77, 520, false, false, owner,
                new PnMixConfig.CachePolicy(4, 64, 64, 0.5, 3, 1, 2, 64, OneBitLevels.CONDITIONAL_MEANS), PairLayout.HALF_SPLIT));
        // Value groups of a whole head (the fp32 kernel's values on tensor cores) at 1 and 4 bits (2: the bench
        // configuration and the d32 cases), with a group's last block short (40 tokens).
        cases.add(decodeCase("d64 group3, 4-bit values a head a group", rng, 2, 3, 64, 3 * DECODE_CHUNK + 40, DECODE_CHUNK,
                false, false, owner, new PnMixConfig.CachePolicy(4, 40, 40, 0.5, 3, 1, 4, 64, OneBitLevels.CONDITIONAL_MEANS)));
        cases.add(decodeCase("d128 group5, 1-bit values a head a group", rng, 1, 5, 128, 2 * DECODE_CHUNK + 7, DECODE_CHUNK,
                false, false, owner, new PnMixConfig.CachePolicy(4, 32, 32, 0.5, 2, 1, 1, 128, OneBitLevels.CONDITIONAL_MEANS)));
        // Windows of two 32-token blocks (the fp32 kernel's values on tensor cores, group_pair_window): chunks long
        // enough that a warp's stretch holds pairs, in groups of 128, 96 (a pair and a lone block) and 64 tokens, a
        // 4-token sink putting every block off the chunks' and stretches' ends (windows that start inside block A,
        // and end inside block B), and 2-, 4- and 1-bit values.
        cases.add(decodeCase("d128 group4, windows of two blocks, 128-token groups", rng, 2, 4, 128, 3 * 520 + 77, 520,
                false, false, owner, new PnMixConfig.CachePolicy(4, 128, 128, 0.5, 3, 1, 2, 128, OneBitLevels.CONDITIONAL_MEANS)));
        cases.add(decodeCase("d64 group3, windows of two blocks, 96-token groups of 4-bit values", rng, 2, 3, 64, 4 * 200 + 31, 200,
                false, false, owner, new PnMixConfig.CachePolicy(4, 96, 96, 0.5, 3, 1, 4, 64, OneBitLevels.CONDITIONAL_MEANS)));
        cases.add(decodeCase("d32 group5, windows of two blocks, 64-token groups of 1-bit values", rng, 1, 5, 32, 2 * 333 + 9, 333,
                false, false, owner, new PnMixConfig.CachePolicy(4, 64, 64, 0.5, 3, 1, 1, 32, OneBitLevels.CONDITIONAL_MEANS)));
        // Values a head a group where a lane's run of d·b/8 bits would cross a word (d = 80 at 2 bits, 48 at 4, 96 at 1:
        // CudaSplitKDecode.chunkKernel keeps them off the fp32 _bB kernels, on packed_decode_chunk_f32; they failed
        // before it did), and d = 16 at 4 bits, one m-tile (value_mtiles' guard past it).
        for (int[] shape : new int[][] {{80, 2}, {48, 4}, {96, 1}, {16, 4}}) {
            cases.add(decodeCase("d" + shape[0] + " group2, " + shape[1] + "-bit values a head a group", rng,
                    2, 2, shape[0], 2 * 520 + 77, 520, false, false, owner,
                    new PnMixConfig.CachePolicy(4, 64, 64, 0.5, 3, 1, shape[1], shape[0], OneBitLevels.CONDITIONAL_MEANS)));
        }
        // 85 chunks: the CUDA merge's unrolled groups of chunks (U = 32 a group where a lane owns one or two output
        // channels in fp32, 16, 8 or 4 where it owns more), then the 21 past the last whole 32: whole groups of U
        // where U < 21, then a tail of U whose loads past the chunks are predicated off; lanes owning 1, 2, 4 and 8
        // channels (d = 160: the last three of 8 past d).
        for (int d : new int[] {32, 64, 128, 160}) {
            cases.add(decodeCase("d" + d + " group3, 85 chunks", rng, 1, 3, d, 84 * DECODE_CHUNK + 46, DECODE_CHUNK, false, false, owner));
        }
        // d = 16, the smallest head dim whose fp16 rows the fp32 kernel takes on tensor cores (one step, one m-tile, a
        // lane's slice one word), in chunks of 520 keys: warps' stretches of 160, windows of two blocks and of one, a
        // last chunk of 41.
        cases.add(decodeCase("d16 group4 keys" + (3 * 520 + 41), rng, 2, 4, 16, 3 * 520 + 41, 520, false, false, owner));
        // A max that rises in some heads and not in others: a dominant key (logit about 690 in log2 units) at token 100,
        // in the second window of block 0's first warp (chunks of 520: stretches of 160), for every query head but each
        // KV head's first, whose query is 0 (its logits all 0: its max never rises after its first window). A window
        // that rescaled only where the first held head's max rose would weigh that key 2^690: inf in fp32. Values a head
        // a group (the fp32 kernel's tensor-core windows).
        DecodeCase risesApart = decodeCase("d64 group4, a dominant key in every head but each KV head's first", rng, 2, 4, 64,
                2 * 520 + 77, 520, false, 100, owner,
                new PnMixConfig.CachePolicy(4, 128, 128, 0.5, 3, 1, 2, 64, OneBitLevels.CONDITIONAL_MEANS), PairLayout.ADJACENT);
        double[] q = risesApart.q().clone();
        for (int h = 0; h < risesApart.queryHeads(); h += 4) {
            java.util.Arrays.fill(q, h * 64, (h + 1) * 64, 0.0);
        }
        cases.add(new DecodeCase(risesApart.name(), risesApart.packed(), risesApart.fp16(), risesApart.queryHeads(), q,
                risesApart.chunkKeys(), risesApart.packedReference()));
        return cases;
    }

    static DecodeCase decodeCase(String name, Rng rng, int kv, int group, int d, int length, int chunk,
                                         boolean zeroQuery, boolean dominantKey) {
        return decodeCase(name, rng, kv, group, d, length, chunk, zeroQuery, dominantKey, new CpuPackedCacheOps());
    }

    static DecodeCase decodeCase(String name, Rng rng, int kv, int group, int d, int length, int chunk,
                                 boolean zeroQuery, boolean dominantKey, PackedCacheOps owner) {
        return decodeCase(name, rng, kv, group, d, length, chunk, zeroQuery, dominantKey, owner,
                new PnMixConfig.CachePolicy(4, 32, 32, 0.5, 3, 1, 2, 32, OneBitLevels.CONDITIONAL_MEANS));
    }

    static DecodeCase decodeCase(String name, Rng rng, int kv, int group, int d, int length, int chunk,
                                 boolean zeroQuery, boolean dominantKey, PackedCacheOps owner, PnMixConfig.CachePolicy policy) {
        return decodeCase(name, rng, kv, group, d, length, chunk, zeroQuery, dominantKey, owner, policy, PairLayout.ADJACENT);
    }

    static DecodeCase decodeCase(String name, Rng rng, int kv, int group, int d, int length, int chunk, boolean zeroQuery,
                                 boolean dominantKey, PackedCacheOps owner, PnMixConfig.CachePolicy policy, PairLayout layout) {
        return decodeCase(name, rng, kv, group, d, length, chunk, zeroQuery, dominantKey ? -2 : -1, owner, policy, layout);
    }

    /** dominant: the token whose keys are all 60 (−2: one drawn from rng; −1: none), the query then all ones. */
    static DecodeCase decodeCase(String name, Rng rng, int kv, int group, int d, int length, int chunk, boolean zeroQuery,
                                 int dominantAt, PackedCacheOps owner, PnMixConfig.CachePolicy policy, PairLayout layout) {
        boolean dominantKey = dominantAt != -1;
        PnMixConfig c = new PnMixConfig(new PnMixConfig.Model(256, 16, kv * group, kv, d, 10000.0, layout),
                policy, new PnMixConfig.Tokens(40, 0));
        PairMask mask = RandomMasks.draw(rng, 1, kv, c.model().pairs(), c.highPairsPerHead())[0];
        StreamingCache packed = new StreamingCache(c, owner,
                mask.channelBits(d, c.model().layout(), c.cache().highBits(), c.cache().lowBits()), mask.bytes());
        int channels = kv * d;
        byte[] keys = new byte[2 * length * channels];
        byte[] values = new byte[2 * length * channels];
        int dominant = dominantAt == -2 ? (int) (rng.uniform() * length) : dominantAt;
        for (int t = 0; t < length; t++) {
            double[] k = half(rng, channels);
            double[] v = half(rng, channels);
            if (t == dominant) {
                java.util.Arrays.fill(k, 60.0); // logit 60·√d = 480 at d = 64 against a query of ones
            }
            packed.append(k, v);
            for (int i = 0; i < channels; i++) {
                BitPacking.putHalf(keys, 2 * (t * channels + i), HalfFloat.toHalfBits(k[i]));
                BitPacking.putHalf(values, 2 * (t * channels + i), HalfFloat.toHalfBits(v[i]));
            }
        }
        double[] q = zeroQuery ? new double[kv * group * d] : half(rng, kv * group * d);
        if (dominantKey) {
            java.util.Arrays.fill(q, 1.0);
        }
        PackedKvCache view = packed.view();
        return new DecodeCase(name, view, PackedKvCache.fp16(kv, d, length, keys, values), kv * group, q, chunk,
                inMechspecLayout(view, owner));
    }

    /** Split-K decode in fp64 against the CPU fp64 oracle over the same cache (naive = oracle). */
    public static FlashRule.Verdict decodeFp64(PackedCacheOps device, PackedKvCache cache, DecodeCase c) {
        double[] oracle = new CpuPackedCacheOps().decode(c.reference(cache), c.q(), c.queryHeads());
        double[] out = device instanceof CudaPackedCacheOps cuda ? cuda.decode(cache, c.q(), c.queryHeads(), c.chunkKeys())
                : device.decode(cache, c.q(), c.queryHeads());
        return FlashRule.judge(out, oracle, oracle, FlashRule.FP64_UNIT_ROUNDOFF, c.chain());
    }

    /**
     * {@code second}'s query decoded right after {@code first}'s over the same cache, judged as {@link #decodeFp64}: on
     * CUDA both through one launch setup (one {@link CudaSplitKDecode}), so state a call leaves on the device, or an
     * output kept from the first call, shows here.
     */
    public static FlashRule.Verdict decodeFp64AfterAnother(PackedCacheOps device, PackedKvCache cache, DecodeCase first,
                                                           DecodeCase second) {
        double[] oracle = new CpuPackedCacheOps().decode(second.reference(cache), second.q(), second.queryHeads());
        double[] out;
        if (device instanceof CudaPackedCacheOps cuda) {
            out = cuda.decodeEach(cache, new double[][] {first.q(), second.q()}, second.queryHeads(), second.chunkKeys())[1];
        } else {
            device.decode(cache, first.q(), first.queryHeads());
            out = device.decode(cache, second.q(), second.queryHeads());
        }
        return FlashRule.judge(out, oracle, oracle, FlashRule.FP64_UNIT_ROUNDOFF, second.chain());
    }

    /** Split-K decode in fp32: the FlashAttention rule with the CPU fp32 twin as the naive reference. */
    public static FlashRule.Verdict decodeFp32(PackedCacheOps device, PackedKvCache cache, DecodeCase c) {
        CpuPackedCacheOps cpu = new CpuPackedCacheOps();
        double[] oracle = cpu.decode(c.reference(cache), c.q(), c.queryHeads());
        double[] naive = FloatArrays.widen(cpu.decodeFp32(c.reference(cache), c.qf(), c.queryHeads()));
        float[] out = device instanceof CudaPackedCacheOps cuda ? cuda.decodeFp32(cache, c.qf(), c.queryHeads(), c.chunkKeys())
                : device.decodeFp32(cache, c.qf(), c.queryHeads());
        return FlashRule.judge(FloatArrays.widen(out), oracle, naive, FlashRule.FP32_UNIT_ROUNDOFF, c.chain());
    }

    private static double[] half(Rng rng, int n) {
        double[] x = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = HalfFloat.roundToHalf(rng.normal());
        }
        return x;
    }

    private static long differing(double[] a, double[] b) {
        long n = Math.abs(a.length - b.length);
        for (int i = 0; i < Math.min(a.length, b.length); i++) {
            n += Double.doubleToRawLongBits(a[i]) == Double.doubleToRawLongBits(b[i]) ? 0 : 1;
        }
        return n;
    }

    private static long differing(int[] a, int[] b) {
        long n = Math.abs(a.length - b.length);
        for (int i = 0; i < Math.min(a.length, b.length); i++) {
            n += a[i] == b[i] ? 0 : 1;
        }
        return n;
    }
}
