package org.mechspec.pnmix;

import org.mechspec.compute.FloatArrays;
import org.mechspec.compute.HalfFloat;
import org.mechspec.compute.OneBitLevels;
import org.mechspec.compute.Rng;
import org.mechspec.spec.FlashRule;

/**
 * Differential checks of a backend's packed-cache kernels against the CPU twin, on fresh inputs from Rng(seed):
 * bit equality for quantize/pack/unpack/dequantize, the FlashAttention rule for attention.
 */
public final class PnMixKernelChecks {
    private PnMixKernelChecks() {
    }

    /** Bytes, codes and values (bitwise) where {@code device} differs from {@code cpu}; poisoned leftovers count. */
    public static long quantizePackMismatches(PackedCacheOps device, PackedCacheOps cpu, long seed) {
        Rng rng = new Rng(seed);
        long bad = 0;
        // The pinned shapes (128 tokens, 64 channels of 3/1 bits, values per token of 32 channels at 2 bits),
        // then random ones; each with a constant channel and signed zeros.
        int[][] shapes = {{128, 64, 32, 2}, {1 + (int) (rng.uniform() * 200), 1 + (int) (rng.uniform() * 9), 0, 0},
                {1 + (int) (rng.uniform() * 40), 12, 4, 1 + (int) (rng.uniform() * 8)}};
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
            int[] codes = new int[tokens * channels];
            int[] tokenCodes = new int[tokens * channels];
            for (int i = 0; i < codes.length; i++) {
                codes[i] = (int) (rng.uniform() * (1 << bits[i % channels]));
                tokenCodes[i] = (int) (rng.uniform() * (1 << tokenBits));
            }
            byte[] packed = cpu.packPerChannel(codes, tokens, bits);
            bad += PnMixChecks.differingBytes(device.packPerChannel(codes, tokens, bits), packed);
            bad += differing(device.unpackPerChannel(packed, tokens, bits), codes);
            byte[] packedTokens = cpu.packPerToken(tokenCodes, tokens, channels, gc, tokenBits);
            bad += PnMixChecks.differingBytes(device.packPerToken(tokenCodes, tokens, channels, gc, tokenBits), packedTokens);
            bad += differing(device.unpackPerToken(packedTokens, tokens, channels, gc, tokenBits), tokenCodes);
        }
        return bad;
    }

    /** A packed cache and queries for the attention differential: the pinned shape or a random small one. */
    public record AttentionCase(PackedKvCache cache, int queryHeads, int queryLen, boolean causal, double[] q) {
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
        StreamingCache cache = new StreamingCache(c, new CpuPackedCacheOps(),
                mask.channelBits(c.model().headDim(), c.model().layout(), c.cache().highBits(), c.cache().lowBits()), mask.bytes());
        for (int t = 0; t < tokens; t++) {
            cache.append(half(rng, c.model().kvChannels()), half(rng, c.model().kvChannels()));
        }
        double[] q = half(rng, c.model().queryHeads() * queries * c.model().headDim());
        return new AttentionCase(cache.view(), c.model().queryHeads(), queries, which == 0 || rng.uniform() < 0.5, q);
    }

    /** fp64 kernel: within chain·u64·max(1,|oracle|) of the CPU fp64 oracle over the same packed cache. */
    public static FlashRule.Verdict attentionFp64(PackedCacheOps device, AttentionCase a) {
        double[] oracle = new CpuPackedCacheOps().attend(a.cache(), a.q(), a.queryHeads(), a.queryLen(), a.causal(), false).out();
        double[] out = device.attend(a.cache(), a.q(), a.queryHeads(), a.queryLen(), a.causal(), false).out();
        return FlashRule.judge(out, oracle, oracle, FlashRule.FP64_UNIT_ROUNDOFF, a.chain());
    }

    /** fp32 kernel: the FlashAttention rule with the CPU fp32 twin as the naive reference. */
    public static FlashRule.Verdict attentionFp32(PackedCacheOps device, AttentionCase a) {
        CpuPackedCacheOps cpu = new CpuPackedCacheOps();
        double[] oracle = cpu.attend(a.cache(), a.q(), a.queryHeads(), a.queryLen(), a.causal(), false).out();
        double[] naive = FloatArrays.widen(cpu.attendFp32(a.cache(), a.qf(), a.queryHeads(), a.queryLen(), a.causal()));
        double[] out = FloatArrays.widen(device.attendFp32(a.cache(), a.qf(), a.queryHeads(), a.queryLen(), a.causal()));
        return FlashRule.judge(out, oracle, naive, FlashRule.FP32_UNIT_ROUNDOFF, a.chain());
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
