package org.mechspec.pnmix;

import java.util.Arrays;
import org.mechspec.compute.AttentionShape;
import org.mechspec.compute.BitPacking;
import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.HalfFloat;

/**
 * The pinned run of protocols.md (pn-mix) over given truth projections: saliency once from the non-sink prefill tokens;
 * append the prefill; one attention call for the last prefill query; per decode token append then one call;
 * finally one batched causal call of all decode queries over the final cache. Every attention call reads the
 * packed cache directly; the reference attends over the fp16 truth with the same kernel.
 */
public final class PnMixProtocol {
    private final PnMixConfig config;
    private final PackedCacheOps ops;
    private final SaliencyScores saliency;
    private final boolean measureOracle;

    /**
     * @param measureOracle also compare each online call with the definition: mechspec's fp64 CPU attention over the
     *                      cache as the implementation's own dequantize reads it (never the run's attention, which may
     *                      be the implementation's too)
     */
    public PnMixProtocol(PnMixConfig config, PackedCacheOps ops, boolean measureOracle) {
        this(config, ops, PairSaliency::scores, measureOracle);
    }

    /** @param saliency the pair scores the mask is chosen from (the protocol's: {@link PairSaliency#scores}) */
    PnMixProtocol(PnMixConfig config, PackedCacheOps ops, SaliencyScores saliency, boolean measureOracle) {
        this.config = config;
        this.ops = ops;
        this.saliency = saliency;
        this.measureOracle = measureOracle;
    }

    public PnMixResult run(Projections truth, KeyPlan plan) {
        long started = System.nanoTime();
        int n = config.totalTokens();
        if (truth.tokens() != n || truth.kvHeads() != config.model().kvHeads() || truth.queryHeads() != config.model().queryHeads()
                || truth.headDim() != config.model().headDim()) {
            throw new IllegalArgumentException("projections of " + truth.tokens() + " tokens do not fit the protocol's "
                    + n + " tokens and head shape");
        }
        int hq = config.model().queryHeads();
        int d = config.model().headDim();
        int c = config.model().kvChannels();
        PairLayout layout = config.model().layout();
        CountingOps counted = new CountingOps(ops);

        int saliencyComputations = 0;
        PairMask mask = null;
        if (plan.kind() == KeyPlan.Kind.SALIENCY) {
            mask = saliency(truth, config.tokens().prefill());
            saliencyComputations++;
        } else if (plan.kind() == KeyPlan.Kind.FIXED_MASK) {
            mask = plan.mask();
        }
        int[] keyBits = keyBits(mask, plan, layout);
        byte[] maskBytes = mask == null ? new byte[0] : mask.bytes();
        StreamingCache cache = new StreamingCache(config, counted, keyBits, maskBytes);
        for (int t = 0; t < config.tokens().prefill(); t++) {
            cache.append(Projections.row(truth.k(), c, t), Projections.row(truth.v(), c, t));
        }

        Online online = new Online(config);
        step(truth, cache, counted, config.tokens().prefill() - 1, online);
        boolean maskUnchanged = true;
        for (int t = config.tokens().prefill(); t < n; t++) {
            cache.append(Projections.row(truth.k(), c, t), Projections.row(truth.v(), c, t));
            maskUnchanged &= Arrays.equals(cache.maskBytes(), maskBytes);
            step(truth, cache, counted, t, online);
        }
        maskUnchanged &= Arrays.equals(cache.maskBytes(), maskBytes);

        // One batched call of every decode query against the final cache.
        int decode = config.tokens().decode();
        PackedKvCache last = cache.view();
        double[] finalOut = new double[hq * decode * d];
        if (decode > 0) {
            double[] q = new double[hq * decode * d];
            for (int h = 0; h < hq; h++) {
                for (int i = 0; i < decode; i++) {
                    System.arraycopy(truth.q(), (config.tokens().prefill() + i) * hq * d + h * d, q, (h * decode + i) * d, d);
                }
            }
            finalOut = counted.attend(last, q, hq, decode, true, true).out();
        }
        double maxDelta = 0.0;
        double unchanged = 0.0;
        double changed = 0.0;
        int unchangedCount = 0;
        for (int i = 0; i < decode; i++) {
            int t = config.tokens().prefill() + i;
            double delta = 0.0;
            for (int h = 0; h < hq; h++) {
                for (int k = 0; k < d; k++) {
                    delta = Math.max(delta, Math.abs(online.decodeOut[(h * decode + i) * d + k] - finalOut[(h * decode + i) * d + k]));
                }
            }
            maxDelta = Math.max(maxDelta, delta);
            // Query t saw tokens 0..t; those below the final residual start are quantized at the end. The call
            // saw the same storage iff each of them was already quantized (or sink) when it ran.
            boolean same = online.residualStartAtCall[i] >= Math.min(t + 1, last.residualStart());
            if (same) {
                unchanged = Math.max(unchanged, delta);
                unchangedCount++;
            } else {
                changed = Math.max(changed, delta);
            }
        }

        double[] keys = CacheContents.keys(last, counted);
        double[] values = CacheContents.values(last, counted);
        double keySq = 0.0;
        double valueSq = 0.0;
        int quantizedFrom = last.sinkTokens();
        int quantizedTo = last.residualStart();
        for (int t = quantizedFrom; t < quantizedTo; t++) {
            for (int k = 0; k < c; k++) {
                double dk = keys[t * c + k] - truth.k()[t * c + k];
                double dv = values[t * c + k] - truth.v()[t * c + k];
                keySq += dk * dk;
                valueSq += dv * dv;
            }
        }
        long quantizedElements = (long) (quantizedTo - quantizedFrom) * c;
        double sinkError = 0.0;
        for (int t = 0; t < Math.min(n, config.cache().sinkTokens()); t++) {
            for (int k = 0; k < c; k++) {
                sinkError = Math.max(sinkError, Math.abs(keys[t * c + k] - truth.k()[t * c + k]));
            }
        }
        double elapsed = (System.nanoTime() - started) / 1e9;
        PnMixResult.Quality quality = new PnMixResult.Quality(
                quantizedElements == 0 ? 0.0 : keySq / quantizedElements,
                quantizedElements == 0 ? 0.0 : valueSq / quantizedElements,
                online.errors.meanKl(), online.errors.outputMse(), online.errors.meanCosine(), sinkError,
                measureOracle ? online.oracleError : Double.NaN);
        PnMixResult.Saliency chosen = new PnMixResult.Saliency(saliencyComputations, maskUnchanged, mask, maskBytes,
                keyBits);
        PnMixResult.Calls calls = new PnMixResult.Calls(counted.attentionCalls(), maxDelta, unchanged, changed,
                unchangedCount, decode - unchangedCount);
        PnMixResult.Storage storage = new PnMixResult.Storage(cache.keyBytes(), cache.valueBytes(), cache.heldBytes(),
                cache.quantizedKeyBytes(), cache.quantizedTokens(), cache.sinkTokens(), cache.residualTokens(),
                cache.peakBytes() + ops.peakWorkingBytes());
        return new PnMixResult(config, n, quality, chosen, calls, storage, last, elapsed);
    }

    /** Saliency over the non-sink tokens before {@code end}, in the layout the mechanism uses. */
    private PairMask saliency(Projections truth, int end) {
        double[] scores = saliency.scores(truth, config.cache().sinkTokens(), end, config.model().layout());
        return PairSaliency.select(scores, config.model().kvHeads(), config.model().pairs(), config.highPairsPerHead());
    }

    private int[] keyBits(PairMask mask, KeyPlan plan, PairLayout layout) {
        if (plan.kind() == KeyPlan.Kind.UNIFORM) {
            int[] bits = new int[config.model().kvChannels()];
            Arrays.fill(bits, plan.uniformBits());
            return bits;
        }
        return mask.channelBits(config.model().headDim(), layout, config.cache().highBits(), config.cache().lowBits());
    }

    /** One online call for query t over the cache as it is now, and its reference over the fp16 truth. */
    private void step(Projections truth, StreamingCache cache, CountingOps counted, int t, Online acc) {
        int hq = config.model().queryHeads();
        int d = config.model().headDim();
        int c = config.model().kvChannels();
        PackedKvCache view = cache.view();
        double[] q = Projections.row(truth.q(), hq * d, t);
        PackedAttention quant = counted.attend(view, q, hq, 1, false, true);
        int len = t + 1;
        byte[] keys = halfBytes(truth.k(), len * c);
        byte[] values = halfBytes(truth.v(), len * c);
        PackedAttention ref = ops.attend(PackedKvCache.fp16(config.model().kvHeads(), d, len, keys, values), q, hq, 1, false, true);
        for (int h = 0; h < hq; h++) {
            acc.errors.add(ref.logits(), quant.logits(), h * len, len, ref.out(), quant.out(), h * d, t, h);
        }
        if (measureOracle) {
            double[] k = CacheContents.headMajor(CacheContents.keys(view, counted), len, config.model().kvHeads(), d);
            double[] v = CacheContents.headMajor(CacheContents.values(view, counted), len, config.model().kvHeads(), d);
            double[] o = CpuBackend.INSTANCE.attention(AttentionShape.of(1, hq, config.model().kvHeads(), 1, len, d, d, false), q, k, v, null);
            for (int i = 0; i < o.length; i++) {
                acc.oracleError = Math.max(acc.oracleError, Math.abs(o[i] - quant.out()[i]));
            }
        }
        int i = t - config.tokens().prefill();
        if (i >= 0) {
            for (int h = 0; h < hq; h++) {
                System.arraycopy(quant.out(), h * d, acc.decodeOut, (h * config.tokens().decode() + i) * d, d);
            }
            acc.residualStartAtCall[i] = view.residualStart();
        }
    }

    private static byte[] halfBytes(double[] a, int count) {
        byte[] out = new byte[2 * count];
        for (int i = 0; i < count; i++) {
            BitPacking.putHalf(out, 2 * i, HalfFloat.toHalfBits(a[i]));
        }
        return out;
    }

    /** Accumulators of the online calls. */
    private static final class Online {
        final AttentionErrors errors;
        double oracleError;
        final double[] decodeOut;
        final int[] residualStartAtCall;

        Online(PnMixConfig config) {
            errors = new AttentionErrors(config.model().headDim());
            decodeOut = new double[config.model().queryHeads() * config.tokens().decode() * config.model().headDim()];
            residualStartAtCall = new int[config.tokens().decode()];
        }
    }
}
