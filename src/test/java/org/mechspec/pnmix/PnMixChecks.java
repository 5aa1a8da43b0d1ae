package org.mechspec.pnmix;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.mechspec.compute.BitPacking;
import org.mechspec.compute.HalfFloat;
import org.mechspec.compute.OneBitLevels;

/**
 * pn-mix's checks as plain predicates, shared by the contracts and the mutant tests. Where a check restates
 * the specification (saliency, quantizer levels) it does so here, independently of the mechanism's code.
 */
public final class PnMixChecks {
    private PnMixChecks() {
    }

    /** Byte figures from the real buffers equal the budget from the configuration, and add up as they should. */
    public static boolean byteAccountingExact(PnMixResult r) {
        ByteBudget b = ByteBudget.of(r.config(), r.tokens(), r.saliency().keyBitsAtStart(), r.saliency().maskAfterPrefill().length);
        return r.storage().keyBytes() == b.keyBytes() && r.storage().valueBytes() == b.valueBytes()
                && r.persistentCacheBytes() == r.storage().keyBytes() + r.storage().valueBytes()
                && r.keyBitsPerElement() == 8.0 * b.keyBytes() / ((double) r.tokens() * r.config().model().kvChannels())
                && !r.temporaryDequantizedCacheIncluded();
    }

    /** Sink, quantized and residual token counts equal the budget's split, and account for every token. */
    public static boolean tokenAccountingExact(PnMixResult r) {
        ByteBudget b = ByteBudget.of(r.config(), r.tokens(), r.saliency().keyBitsAtStart(), 0);
        return r.storage().sinkTokens() == b.sinkTokens() && r.storage().quantizedTokens() == b.quantizedTokens()
                && r.storage().residualTokens() == b.residualTokens()
                && r.storage().sinkTokens() + r.storage().quantizedTokens() + r.storage().residualTokens() == r.tokens();
    }

    /** The reported sink error and the one read straight from the final cache's fp16 sink bytes are within the threshold. */
    public static boolean sinkKeysExact(PnMixResult r, double[] truthK, double threshold) {
        return r.quality().sinkKeyMaxError() <= threshold && sinkKeyMaxErrorFromBytes(r, truthK) <= threshold;
    }

    /**
     * max |fp16 sink key − truth| over the first min(n, sinkTokens) positions, decoded from the final cache's sink
     * bytes; +∞ when the cache keeps fewer sink tokens than that.
     */
    static double sinkKeyMaxErrorFromBytes(PnMixResult r, double[] truthK) {
        PackedKvCache cache = r.finalCache();
        int want = Math.min(r.tokens(), r.config().cache().sinkTokens());
        if (cache.sinkTokens() < want) {
            return Double.POSITIVE_INFINITY;
        }
        double worst = 0;
        for (int i = 0; i < want * cache.channels(); i++) {
            worst = Math.max(worst, Math.abs(HalfFloat.fromHalfBits(BitPacking.getHalf(cache.sinkKeys(), 2 * i)) - truthK[i]));
        }
        return worst;
    }

    public static boolean saliencyComputedOnce(PnMixResult r) {
        return r.saliency().saliencyComputations() == 1;
    }

    public static boolean maskUnchangedAfterDecode(PnMixResult r) {
        return r.saliency().maskUnchangedAfterDecode() && Arrays.equals(r.saliency().mask().bytes(), r.saliency().maskAfterPrefill());
    }

    /**
     * Pairs whose stored class differs from the specification's saliency (top-k of mean‖k_p‖·mean‖q_p‖ over the
     * non-sink prefill tokens, in the configured layout, ties → lower index), plus key channels of any quantized
     * group whose bit width does not follow the stored mask in that layout.
     */
    public static int saliencyMaskMismatches(PnMixResult r, Projections truth) {
        PnMixConfig c = r.config();
        PairMask want = specSaliency(truth, c);
        int mismatches = 0;
        for (int h = 0; h < c.model().kvHeads(); h++) {
            for (int p = 0; p < c.model().pairs(); p++) {
                mismatches += want.high(h, p) == r.saliency().mask().high(h, p) ? 0 : 1;
            }
        }
        for (PackedKvCache.Group g : r.finalCache().groups()) {
            for (int h = 0; h < c.model().kvHeads(); h++) {
                for (int d = 0; d < c.model().headDim(); d++) {
                    int pair = c.model().layout() == PairLayout.ADJACENT ? d / 2 : d % c.model().pairs();
                    int expected = r.saliency().mask().high(h, pair) ? c.cache().highBits() : c.cache().lowBits();
                    mismatches += g.keyBits()[h * c.model().headDim() + d] == expected ? 0 : 1;
                }
            }
        }
        return mismatches;
    }

    /** The saliency mask written out from protocols.md (pn-mix) directly. */
    static PairMask specSaliency(Projections t, PnMixConfig c) {
        int d = c.model().headDim();
        int half = d / 2;
        int from = c.cache().sinkTokens();
        int to = c.tokens().prefill();
        int group = c.model().queryHeads() / c.model().kvHeads();
        boolean[] high = new boolean[c.model().kvHeads() * c.model().pairs()];
        for (int h = 0; h < c.model().kvHeads(); h++) {
            double[] score = new double[c.model().pairs()];
            for (int p = 0; p < c.model().pairs(); p++) {
                int a = c.model().layout() == PairLayout.ADJACENT ? 2 * p : p;
                int b = c.model().layout() == PairLayout.ADJACENT ? 2 * p + 1 : p + half;
                double kNorm = 0;
                double qNorm = 0;
                for (int tok = from; tok < to; tok++) {
                    int kBase = tok * c.model().kvChannels() + h * d;
                    kNorm += StrictMath.hypot(t.k()[kBase + a], t.k()[kBase + b]);
                    for (int qh = h * group; qh < (h + 1) * group; qh++) {
                        int qBase = tok * c.model().queryHeads() * d + qh * d;
                        qNorm += StrictMath.hypot(t.q()[qBase + a], t.q()[qBase + b]);
                    }
                }
                int n = to - from;
                score[p] = (kNorm / n) * (qNorm / ((double) n * group));
            }
            Integer[] order = new Integer[c.model().pairs()];
            for (int p = 0; p < order.length; p++) {
                order[p] = p;
            }
            // Descending score; equal scores keep the lower index first (stable sort).
            Arrays.sort(order, (x, y) -> Double.compare(score[y], score[x]));
            for (int k = 0; k < c.highPairsPerHead(); k++) {
                high[h * c.model().pairs() + order[k]] = true;
            }
        }
        return PairMask.of(c.model().kvHeads(), c.model().pairs(), high);
    }

    /** max over tokens, heads and pairs of |‖pair before RoPE‖ − ‖pair after RoPE‖| in the asked layout (q and k). */
    public static double ropePairNormMaxError(Projections p, PairLayout asked) {
        double worst = 0;
        int d = p.headDim();
        for (int t = 0; t < p.tokens(); t++) {
            for (int pair = 0; pair < d / 2; pair++) {
                for (int h = 0; h < p.queryHeads(); h++) {
                    worst = Math.max(worst, Math.abs(PairLayoutRope.pairNorm(p.qPreRope(), t * p.qWidth(), h, d, pair, asked)
                            - PairLayoutRope.pairNorm(p.qRope(), t * p.qWidth(), h, d, pair, asked)));
                }
                for (int h = 0; h < p.kvHeads(); h++) {
                    worst = Math.max(worst, Math.abs(PairLayoutRope.pairNorm(p.kPreRope(), t * p.kvWidth(), h, d, pair, asked)
                            - PairLayoutRope.pairNorm(p.kRope(), t * p.kvWidth(), h, d, pair, asked)));
                }
            }
        }
        return worst;
    }

    /**
     * What the paper fixes of a packed cache's bytes, and where the cache differs, in the paper's terms: a group's key
     * codes take Σ_c ⌈tokens·bits_c/8⌉ bytes (one stream per channel) and 4 bytes of metadata per channel (one
     * quantization group per channel); its value codes ⌈valueGroupChannels·valueBits/8⌉ bytes per (token, value
     * group) and 4 bytes of metadata per (token, value group). The bit order and the byte layout within a stream are
     * the implementation's, and are never read here. Empty when the counts hold.
     */
    public static List<String> byteCountFaults(PackedKvCache cache) {
        List<String> faults = new ArrayList<>();
        int c = cache.channels();
        int g = cache.groupTokens();
        int gc = cache.valueGroupChannels();
        for (int i = 0; i < cache.groups().size(); i++) {
            PackedKvCache.Group gr = cache.groups().get(i);
            int keyBytes = BitPacking.channelOffsets(g, gr.keyBits())[c];
            if (gr.keys().codes().length != keyBytes) {
                faults.add("group " + i + " keys: codes hold " + gr.keys().codes().length + " bytes; " + g + " tokens of "
                        + c + " channels at their per-channel widths (" + bitsSummary(gr.keyBits()) + ") pack into "
                        + keyBytes + " bytes");
            }
            if (gr.keys().meta().length != 4 * c) {
                faults.add("group " + i + " keys: metadata hold " + gr.keys().meta().length / 4 + " quantization groups ("
                        + gr.keys().meta().length + " bytes); one group per channel over " + g + " tokens makes " + c
                        + " groups (" + 4 * c + " bytes of fp16 scale and zero)");
            }
            int valueGroups = c / gc;
            int valueBytes = g * valueGroups * BitPacking.tokenGroupBytes(gc, cache.valueBits());
            if (gr.values().codes().length != valueBytes) {
                faults.add("group " + i + " values: codes hold " + gr.values().codes().length + " bytes; " + g + " tokens × "
                        + valueGroups + " groups of " + gc + " channels at " + cache.valueBits() + " bits pack into "
                        + valueBytes + " bytes");
            }
            if (gr.values().meta().length != 4 * g * valueGroups) {
                faults.add("group " + i + " values: metadata hold " + gr.values().meta().length / 4
                        + " quantization groups (" + gr.values().meta().length + " bytes); " + g + " tokens in groups of "
                        + gc + " channels over " + c + " channels make " + g * valueGroups + " groups ("
                        + 4 * g * valueGroups + " bytes of fp16 scale and zero)");
            }
        }
        return faults;
    }

    /** Fails with {@link #byteCountFaults} when the cache's byte counts are not the paper's. */
    public static void requirePaperByteCounts(PackedKvCache cache) {
        List<String> faults = byteCountFaults(cache);
        if (!faults.isEmpty()) {
            throw new AssertionError("the cache's bytes are not the paper's counts: " + String.join("; ", faults));
        }
    }

    private static String bitsSummary(int[] bits) {
        int[] count = new int[9];
        for (int b : bits) {
            count[b]++;
        }
        StringBuilder s = new StringBuilder();
        for (int b = 8; b >= 1; b--) {
            if (count[b] > 0) {
                s.append(s.length() == 0 ? "" : ", ").append(count[b]).append(" at ").append(b).append(" bits");
            }
        }
        return s.toString();
    }

    /**
     * Quantization groups of the cache whose stored scale, zero or levels differ from protocols.md (pn-mix) recomputed from the
     * fp16 truth: b ≥ 2 bits min/max levels, 1 bit the two conditional means (code = x ≥ group mean). The metadata
     * (fp16 scale then fp16 zero per group) are read from their bytes, which the paper fixes; the codes through the
     * implementation's own {@code dequantize} ({@code ops}), whose every value must be zero + code·scale with the
     * specification's code (exact in fp64 for fp16 scale and zero and codes of up to 8 bits). Fails first, in the
     * paper's terms, when the cache's byte counts are not the paper's.
     */
    public static long quantizerLevelMismatches(PackedKvCache cache, PackedCacheOps ops, double[] truthK, double[] truthV) {
        requirePaperByteCounts(cache);
        long bad = 0;
        int c = cache.channels();
        int g = cache.groupTokens();
        int gc = cache.valueGroupChannels();
        int vg = c / Math.max(gc, 1);
        for (int i = 0; i < cache.groups().size(); i++) {
            PackedKvCache.Group gr = cache.groups().get(i);
            int first = cache.sinkTokens() + i * g;
            double[] keys = ops.dequantizePerChannel(gr.keys(), g, gr.keyBits());
            for (int ch = 0; ch < c; ch++) {
                double[] x = new double[g];
                double[] got = new double[g];
                for (int t = 0; t < g; t++) {
                    x[t] = truthK[(first + t) * c + ch];
                    got[t] = keys[t * c + ch];
                }
                bad += groupMatchesSpec(x, gr.keyBits()[ch], gr.keys(), ch, got) ? 0 : 1;
            }
            double[] values = ops.dequantizePerToken(gr.values(), g, c, gc, cache.valueBits());
            for (int t = 0; t < g; t++) {
                for (int k = 0; k < vg; k++) {
                    double[] x = new double[gc];
                    double[] got = new double[gc];
                    for (int j = 0; j < gc; j++) {
                        x[j] = truthV[(first + t) * c + k * gc + j];
                        got[j] = values[t * c + k * gc + j];
                    }
                    bad += groupMatchesSpec(x, cache.valueBits(), gr.values(), t * vg + k, got) ? 0 : 1;
                }
            }
        }
        return bad;
    }

    /**
     * One group's stored scale and zero against the specification, from its values {@code x}, and its dequantized
     * values {@code got} (as the implementation reads them back) against zero + code·scale with the specification's
     * codes. Where the scale is zero every code reads back as the zero, so the codes are not observable there.
     */
    static boolean groupMatchesSpec(double[] x, int bits, PackedBlock block, int group, double[] got) {
        short scaleBits = BitPacking.getHalf(block.meta(), 4 * group);
        short zeroBits = BitPacking.getHalf(block.meta(), 4 * group + 2);
        double sum = 0;
        double min = x[0];
        double max = x[0];
        for (double v : x) {
            sum += v;
            min = Math.min(min, v);
            max = Math.max(max, v);
        }
        double mean = sum / x.length;
        short wantScale;
        short wantZero;
        if (bits == 1) {
            double lowSum = 0;
            double highSum = 0;
            int lowCount = 0;
            for (double v : x) {
                if (v < mean) {
                    lowSum += v;
                    lowCount++;
                } else {
                    highSum += v;
                }
            }
            double high = highSum / (x.length - lowCount);
            double low = lowSum / lowCount;
            wantZero = HalfFloat.toHalfBits(lowCount == 0 ? high : low);
            wantScale = lowCount == 0 ? 0 : HalfFloat.toHalfBits(high - low);
        } else {
            wantScale = HalfFloat.toHalfBits((max - min) / ((1 << bits) - 1));
            wantZero = HalfFloat.toHalfBits(min);
        }
        // Values, not bits: a group holding both 0.0 and -0.0 may keep either sign.
        if (HalfFloat.fromHalfBits(scaleBits) != HalfFloat.fromHalfBits(wantScale)
                || HalfFloat.fromHalfBits(zeroBits) != HalfFloat.fromHalfBits(wantZero)) {
            return false;
        }
        double scale = HalfFloat.fromHalfBits(wantScale);
        double zero = HalfFloat.fromHalfBits(wantZero);
        for (int t = 0; t < x.length; t++) {
            int want;
            if (scale == 0) {
                want = 0;
            } else if (bits == 1) {
                want = x[t] >= mean ? 1 : 0;
            } else {
                want = (int) Math.min((1 << bits) - 1, Math.max(0, Math.rint((x[t] - zero) / scale)));
            }
            // Exact: zero and scale are fp16 and want < 2^8, so zero + want·scale needs at most 49 significant bits.
            if (got[t] != zero + want * scale) {
                return false;
            }
        }
        return true;
    }

    /**
     * Bytes that differ when every packed stream of the cache is unpacked and packed again by the implementation (keys
     * per channel, values per token), plus codes its unpack reads that its dequantize does not: every dequantized value
     * must be zero + code·scale with the unpacked code and the group's fp16 scale and zero. The layout within a stream is
     * the implementation's; the byte counts are the paper's, and a cache off them fails first, in the paper's terms.
     */
    public static long packRoundTripMismatches(PackedKvCache cache, PackedCacheOps ops) {
        requirePaperByteCounts(cache);
        long bad = 0;
        int g = cache.groupTokens();
        int c = cache.channels();
        int gc = cache.valueGroupChannels();
        int vg = c / gc;
        for (PackedKvCache.Group gr : cache.groups()) {
            int[] keyCodes = ops.unpackPerChannel(gr.keys().codes(), g, gr.keyBits());
            bad += differingBytes(gr.keys().codes(), ops.packPerChannel(keyCodes, g, gr.keyBits()));
            double[] keys = ops.dequantizePerChannel(gr.keys(), g, gr.keyBits());
            for (int t = 0; t < g; t++) {
                for (int ch = 0; ch < c; ch++) {
                    bad += keys[t * c + ch] == level(gr.keys(), ch, keyCodes[t * c + ch]) ? 0 : 1;
                }
            }
            int[] valueCodes = ops.unpackPerToken(gr.values().codes(), g, c, gc, cache.valueBits());
            bad += differingBytes(gr.values().codes(), ops.packPerToken(valueCodes, g, c, gc, cache.valueBits()));
            double[] values = ops.dequantizePerToken(gr.values(), g, c, gc, cache.valueBits());
            for (int t = 0; t < g; t++) {
                for (int ch = 0; ch < c; ch++) {
                    bad += values[t * c + ch] == level(gr.values(), t * vg + ch / gc, valueCodes[t * c + ch]) ? 0 : 1;
                }
            }
        }
        return bad;
    }

    /** zero + code·scale of a group, from its fp16 metadata. */
    private static double level(PackedBlock block, int group, int code) {
        return block.zero(group) + code * block.scale(group);
    }

    /** Codes that do not survive pack then unpack (per channel and per token) on the backend. */
    public static long codeRoundTripMismatches(PackedCacheOps ops, int[] codes, int tokens, int[] channelBits,
                                               int groupChannels, int tokenBits) {
        long bad = 0;
        int[] back = ops.unpackPerChannel(ops.packPerChannel(codes, tokens, channelBits), tokens, channelBits);
        for (int i = 0; i < codes.length; i++) {
            bad += back[i] == codes[i] ? 0 : 1;
        }
        int channels = channelBits.length;
        int[] tokenCodes = new int[codes.length];
        for (int i = 0; i < codes.length; i++) {
            tokenCodes[i] = codes[i] & ((1 << tokenBits) - 1);
        }
        int[] back2 = ops.unpackPerToken(ops.packPerToken(tokenCodes, tokens, channels, groupChannels, tokenBits), tokens,
                channels, groupChannels, tokenBits);
        for (int i = 0; i < codes.length; i++) {
            bad += back2[i] == tokenCodes[i] ? 0 : 1;
        }
        return bad;
    }

    static long differingBytes(byte[] a, byte[] b) {
        if (a.length != b.length) {
            return Math.max(a.length, b.length);
        }
        long n = 0;
        for (int i = 0; i < a.length; i++) {
            n += a[i] == b[i] ? 0 : 1;
        }
        return n;
    }

    public static boolean packedMatchesOracle(PnMixResult r, double threshold) {
        return r.quality().packedVsOracleMaxError() <= threshold;
    }

    /**
     * Decode queries whose visible tokens were stored alike online and at the end give the same output (within
     * the threshold), and requantizing tokens a query saw does change its output (when there were such queries).
     */
    public static boolean onlineMatchesFinalOutsideRequantizedWindow(PnMixResult r, double threshold) {
        int unchanged = ConfigCounts.unchangedWindowQueries(r.config());
        return r.calls().unchangedWindowQueries() == unchanged && r.calls().changedWindowQueries() == r.config().tokens().decode() - unchanged
                && r.calls().unchangedWindowMaxDelta() <= threshold
                && (r.calls().changedWindowQueries() == 0 || r.calls().changedWindowMaxDelta() > threshold);
    }

    /** One call for the last prefill query, one per decode token, one batched call at the end (when there are decode tokens). */
    public static boolean attentionCallsCounted(PnMixResult r) {
        int decode = r.config().tokens().decode();
        return r.calls().attentionCalls() == 1 + decode + (decode > 0 ? 1 : 0);
    }

    public static boolean saliencyBeatsRandomMasks(PnMixExperiment e) {
        return e.main().quality().attentionKl() < e.randomMaskKlMean();
    }

    /**
     * The premise from the byte budget, not from the cache's counter: both runs hold the quantized key bytes the
     * pinned protocol (protocols.md, pn-mix) gives their widths, those budgets are equal, every uniform key channel has the uniform width; then the
     * mixed keys' attention KL is the lower.
     */
    public static boolean mixedBeatsUniformAtEqualBytes(PnMixExperiment e) {
        return equalQuantizedKeyBytes(e) && e.main().quality().attentionKl() < e.uniform().quality().attentionKl();
    }

    /** The mixed and uniform caches hold the budgets' quantized key bytes, the same number, uniform at its width. */
    public static boolean equalQuantizedKeyBytes(PnMixExperiment e) {
        PnMixConfig c = e.main().config();
        int n = e.main().tokens();
        int u = PnMixExperiment.UNIFORM_KEY_BITS;
        long mixed = ConfigCounts.quantizedKeyBytesBudget(c, n, c.cache().highBits(), c.cache().lowBits(), 2 * c.highPairsPerHead());
        long uniform = ConfigCounts.quantizedKeyBytesBudget(c, n, u, u, 0);
        return mixed == uniform && e.main().storage().quantizedKeyBytes() == mixed && e.uniform().storage().quantizedKeyBytes() == uniform
                && everyKeyChannelHas(e.uniform(), u);
    }

    /** Every key channel of the run, at the start and in every quantized group, has {@code bits} bits. */
    static boolean everyKeyChannelHas(PnMixResult r, int bits) {
        boolean all = Arrays.stream(r.saliency().keyBitsAtStart()).allMatch(b -> b == bits);
        for (PackedKvCache.Group g : r.finalCache().groups()) {
            all &= Arrays.stream(g.keyBits()).allMatch(b -> b == bits);
        }
        return all;
    }

    /** Every metric of two runs equal bit for bit (same names, same values). */
    public static boolean metricsIdentical(Map<String, Object> a, Map<String, Object> b) {
        if (!a.keySet().equals(b.keySet())) {
            return false;
        }
        for (Map.Entry<String, Object> e : a.entrySet()) {
            Object x = e.getValue();
            Object y = b.get(e.getKey());
            if (x instanceof Double dx && y instanceof Double dy) {
                if (Double.doubleToRawLongBits(dx) != Double.doubleToRawLongBits(dy)) {
                    return false;
                }
            } else if (!x.equals(y)) {
                return false;
            }
        }
        return true;
    }
}
