package org.mechspec.pnmix;

import java.util.ArrayList;
import java.util.List;
import org.mechspec.compute.BitPacking;
import org.mechspec.compute.HalfFloat;

/**
 * A run's error figures recomputed from protocols.md (pn-mix)'s definitions, apart from the protocol's code and kernels.
 * key/value MSE: the final cache's codes read from its bytes (value = zero + code·scale) against the truth, over the
 * positions the configuration quantizes. attention_kl, output MSE and cosine: for every online call the cache as it
 * stood then (sink and the groups complete by then as stored, the rest fp16 truth), plain fp64 softmax attention
 * over it and over the truth of tokens 0..t, and the three figures from those.
 *
 * <p>Bounds (u = 2^−53; both computations round, so each bound covers two): a logit of d terms is within
 * δz = 2(d+2)u·A, A = max_j Σ|q||k_j|/√d; a log-probability within Δl = 2δz + 4(L+3)u(1 + max|z|) over L keys; a
 * row's KL within 2Δl + 2(Δl + (L+1)u)·Σp|lp − lq|; an output element within ε = 2·max|v|·(Δl + (L+2)u); a
 * squared output error within 4|a−b|ε + 4ε², a cosine within 2√d·ε(1/‖a‖ + 1/‖b‖) + 4(d+2)u; a dequantized value
 * within δx = 2u(|zero| + |code·scale|), its squared error within 2|e|δx + δx²; a mean of N terms adds 2(N+4)u of
 * its sum.
 */
public final class FigureChecks {
    private static final double U = 0x1.0p-53;

    private FigureChecks() {
    }

    /** One figure as the run reported it, as defined, and the bound on their difference. */
    public record Figure(String name, double mechanism, double definition, double bound) {
        public double overBound() {
            double e = Math.abs(mechanism - definition);
            return e == 0 ? 0 : e / bound; // NaN (a NaN figure) never passes holds()
        }

        public boolean holds() {
            return overBound() <= 1.0;
        }
    }

    /** {@link #figures(PnMixResult, Projections, PackedCacheOps)} of a cache in mechspec's layout. */
    public static List<Figure> figures(PnMixResult r, Projections truth) {
        return figures(r, truth, new CpuPackedCacheOps());
    }

    /**
     * key_mse, value_mse, attention_kl, attention_output_mse, attention_output_cosine of {@code r}, its cache's quantized
     * groups read back by the implementation's own dequantize ({@code ops}: the bit order is its own; the byte counts,
     * checked first, and the fp16 metadata are the paper's). Whether those values are protocols.md (pn-mix)'s levels is
     * quantizer_levels_exact's to judge.
     */
    public static List<Figure> figures(PnMixResult r, Projections truth, PackedCacheOps ops) {
        PnMixConfig c = r.config();
        PnMixChecks.requirePaperByteCounts(r.finalCache());
        Stored keys = Stored.read(r.finalCache(), true, ops);
        Stored values = Stored.read(r.finalCache(), false, ops);
        int ch = c.model().kvChannels();
        int from = Math.min(r.tokens(), c.cache().sinkTokens());
        int to = ConfigCounts.residualStart(c, r.tokens());
        List<Figure> out = new ArrayList<>();
        out.add(mse("key_mse", r.quality().keyMse(), keys, truth.k(), from * ch, to * ch));
        out.add(mse("value_mse", r.quality().valueMse(), values, truth.v(), from * ch, to * ch));
        Online online = new Online();
        online.call(c, truth, keys, values, c.tokens().prefill() - 1);
        for (int t = c.tokens().prefill(); t < c.totalTokens(); t++) {
            online.call(c, truth, keys, values, t);
        }
        int rows = online.rows;
        out.add(new Figure("attention_kl", r.quality().attentionKl(), online.kl / rows, (online.klBound + 2 * rows * U * online.klAbs) / rows));
        long n = (long) rows * c.model().headDim();
        out.add(new Figure("attention_output_mse", r.quality().attentionOutputMse(), online.sq / n,
                (online.sqBound + 2 * (n + 4) * U * online.sq) / n));
        out.add(new Figure("attention_output_cosine", r.quality().attentionOutputCosine(), online.cos / rows,
                (online.cosBound + 2 * rows * U * online.cosAbs) / rows));
        return out;
    }

    /** The main run's figures, the uniform baseline's attention KL and the mean attention KL over the random masks. */
    public static List<Figure> figures(PnMixExperiment e) {
        return figures(e, new CpuPackedCacheOps());
    }

    /** The same, the caches read back by {@code ops}. */
    public static List<Figure> figures(PnMixExperiment e, PackedCacheOps ops) {
        List<Figure> out = new ArrayList<>(figures(e.main(), e.truth(), ops));
        Figure uniform = attentionKl(figures(e.uniform(), e.truth(), ops));
        out.add(new Figure("uniform_2bit_attention_kl", uniform.mechanism(), uniform.definition(), uniform.bound()));
        double sum = 0;
        double bound = 0;
        for (PnMixResult r : e.randomMasks()) {
            Figure f = attentionKl(figures(r, e.truth(), ops));
            sum += f.definition();
            bound += f.bound();
        }
        int m = e.randomMasks().length;
        out.add(new Figure("random_mask_attention_kl_mean", e.randomMaskKlMean(), sum / m, (bound + 2 * (m + 2) * U * sum) / m));
        return out;
    }

    private static Figure attentionKl(List<Figure> figures) {
        return figures.stream().filter(f -> f.name().equals("attention_kl")).findFirst().orElseThrow();
    }

    /** The largest deviation over its bound among the figures (≤ 1 when all hold). */
    public static double maxOverBound(List<Figure> figures) {
        double worst = 0;
        for (Figure f : figures) {
            worst = Math.max(worst, f.overBound());
        }
        return worst;
    }

    private static Figure mse(String name, double reported, Stored s, double[] truth, int from, int to) {
        double sum = 0;
        double bound = 0;
        for (int i = from; i < to; i++) {
            double e = s.x[i] - truth[i];
            sum += e * e;
            bound += 2 * Math.abs(e) * s.round[i] + s.round[i] * s.round[i];
        }
        int n = to - from;
        return n == 0 ? new Figure(name, reported, 0.0, 0.0)
                : new Figure(name, reported, sum / n, (bound + 2 * (n + 4) * U * sum) / n);
    }

    /** Token-major stored values: sink and residual fp16 decoded, groups dequantized by the implementation. */
    private record Stored(double[] x, double[] round) {
        static Stored read(PackedKvCache cache, boolean keys, PackedCacheOps ops) {
            int c = cache.channels();
            double[] x = new double[cache.length() * c];
            double[] round = new double[x.length];
            halfs(keys ? cache.sinkKeys() : cache.sinkValues(), x, 0);
            halfs(keys ? cache.residualKeys() : cache.residualValues(), x, cache.residualStart() * c);
            int g = cache.groupTokens();
            for (int gi = 0; gi < cache.groups().size(); gi++) {
                PackedKvCache.Group gr = cache.groups().get(gi);
                int first = (cache.sinkTokens() + gi * g) * c;
                if (keys) {
                    double[] v = ops.dequantizePerChannel(gr.keys(), g, gr.keyBits());
                    for (int t = 0; t < g; t++) {
                        for (int k = 0; k < c; k++) {
                            put(x, round, first + t * c + k, gr.keys(), k, v[t * c + k]);
                        }
                    }
                } else {
                    int gc = cache.valueGroupChannels();
                    int vg = c / gc;
                    double[] v = ops.dequantizePerToken(gr.values(), g, c, gc, cache.valueBits());
                    for (int t = 0; t < g; t++) {
                        for (int k = 0; k < c; k++) {
                            put(x, round, first + t * c + k, gr.values(), t * vg + k / gc, v[t * c + k]);
                        }
                    }
                }
            }
            return new Stored(x, round);
        }

        /**
         * A dequantized value and the rounding bound of its zero + code·scale: code·scale = value − zero, exactly, where
         * the value is the level (fp16 zero and scale, codes below 2^8: the sum and the difference are exact in fp64).
         */
        private static void put(double[] x, double[] round, int i, PackedBlock b, int group, double value) {
            x[i] = value;
            round[i] = 2 * U * (Math.abs(b.zero(group)) + Math.abs(value - b.zero(group)));
        }

        private static void halfs(byte[] bytes, double[] out, int at) {
            for (int i = 0; i < bytes.length / 2; i++) {
                out[at + i] = HalfFloat.fromHalfBits(BitPacking.getHalf(bytes, 2 * i));
            }
        }
    }

    /** Sums of the figures and of their bounds over the online calls' (call, query head) rows. */
    private static final class Online {
        double kl;
        double klAbs;
        double klBound;
        double sq;
        double sqBound;
        double cos;
        double cosAbs;
        double cosBound;
        int rows;

        /** The call for query t: positions below residualStart(t + 1) as stored, the rest the truth. */
        void call(PnMixConfig c, Projections truth, Stored keys, Stored values, int t) {
            int d = c.model().headDim();
            int ch = c.model().kvChannels();
            int len = t + 1;
            int stored = ConfigCounts.residualStart(c, len) * ch;
            int group = c.model().queryHeads() / c.model().kvHeads();
            for (int h = 0; h < c.model().queryHeads(); h++) {
                int qAt = (t * c.model().queryHeads() + h) * d;
                int kv = (h / group) * d;
                double[] zr = new double[len];
                double[] zq = new double[len];
                double a = 0;
                double m = 0;
                double vMax = 0;
                for (int j = 0; j < len; j++) {
                    int at = j * ch + kv;
                    double[] kq = at < stored ? keys.x : truth.k();
                    double[] vq = at < stored ? values.x : truth.v();
                    double dr = 0;
                    double dq = 0;
                    double ar = 0;
                    double aq = 0;
                    for (int i = 0; i < d; i++) {
                        double q = truth.q()[qAt + i];
                        dr += q * truth.k()[at + i];
                        dq += q * kq[at + i];
                        ar += Math.abs(q * truth.k()[at + i]);
                        aq += Math.abs(q * kq[at + i]);
                        vMax = Math.max(vMax, Math.max(Math.abs(truth.v()[at + i]), Math.abs(vq[at + i])));
                    }
                    zr[j] = dr / StrictMath.sqrt(d);
                    zq[j] = dq / StrictMath.sqrt(d);
                    a = Math.max(a, Math.max(ar, aq) / StrictMath.sqrt(d));
                    m = Math.max(m, Math.max(Math.abs(zr[j]), Math.abs(zq[j])));
                }
                double[] lp = logSoftmax(zr);
                double[] lq = logSoftmax(zq);
                double rowKl = 0;
                double spread = 0;
                double[] or = new double[d];
                double[] oq = new double[d];
                for (int j = 0; j < len; j++) {
                    double p = StrictMath.exp(lp[j]);
                    double pq = StrictMath.exp(lq[j]);
                    rowKl += p * (lp[j] - lq[j]);
                    spread += p * Math.abs(lp[j] - lq[j]);
                    int at = j * ch + kv;
                    double[] vq = at < stored ? values.x : truth.v();
                    for (int i = 0; i < d; i++) {
                        or[i] += p * truth.v()[at + i];
                        oq[i] += pq * vq[at + i];
                    }
                }
                double dz = 2 * (d + 2) * U * a;
                double dl = 2 * dz + 4 * (len + 3) * U * (1 + m);
                double eps = 2 * vMax * (dl + (len + 2) * U);
                kl += rowKl;
                klAbs += Math.abs(rowKl);
                klBound += 2 * dl + 2 * (dl + (len + 1) * U) * spread;
                double dot = 0;
                double na = 0;
                double nb = 0;
                for (int i = 0; i < d; i++) {
                    double e = oq[i] - or[i];
                    sq += e * e;
                    sqBound += 4 * Math.abs(e) * eps + 4 * eps * eps;
                    dot += oq[i] * or[i];
                    na += oq[i] * oq[i];
                    nb += or[i] * or[i];
                }
                double cosine = dot / (StrictMath.sqrt(na) * StrictMath.sqrt(nb));
                cos += cosine;
                cosAbs += Math.abs(cosine);
                cosBound += 2 * StrictMath.sqrt(d) * eps * (1 / StrictMath.sqrt(na) + 1 / StrictMath.sqrt(nb)) + 4 * (d + 2) * U;
                rows++;
            }
        }

        private static double[] logSoftmax(double[] z) {
            double max = Double.NEGATIVE_INFINITY;
            for (double v : z) {
                max = Math.max(max, v);
            }
            double s = 0;
            for (double v : z) {
                s += StrictMath.exp(v - max);
            }
            double lse = max + StrictMath.log(s);
            double[] out = new double[z.length];
            for (int j = 0; j < z.length; j++) {
                out[j] = z[j] - lse;
            }
            return out;
        }
    }
}
