package org.mechspec.pnmix;

import org.mechspec.compute.HalfFloat;
import org.mechspec.compute.Rng;

/**
 * The random-initialized single RoPE GQA layer of the protocol. Drawn from the seed's stream in this order,
 * row-major, all N(0,1): embedding E [vocab][modelDim], W_q [modelDim][Hq·d], W_k [modelDim][Hkv·d],
 * W_v [modelDim][Hkv·d]; the W are scaled by 1/√modelDim. q, k, v are computed in fp64 (RoPE on q and k at
 * position = token index) and then rounded to fp16: that is the truth every metric compares against.
 */
public final class RandomRopeLayer {
    private final PnMixConfig config;
    private final PairLayout ropeLayout;
    private final double[] embedding;
    private final double[] wq;
    private final double[] wk;
    private final double[] wv;

    /** Draws the layer from {@code rng}, which continues from here for whatever the protocol draws next. */
    public RandomRopeLayer(Rng rng, PnMixConfig config, PairLayout ropeLayout) {
        this.config = config;
        this.ropeLayout = ropeLayout;
        double wScale = 1.0 / Math.sqrt(config.model().modelDim());
        embedding = rng.normals(config.model().vocab() * config.model().modelDim(), 0.0, 1.0);
        wq = scaled(rng.normals(config.model().modelDim() * config.model().queryHeads() * config.model().headDim(), 0.0, 1.0), wScale);
        wk = scaled(rng.normals(config.model().modelDim() * config.model().kvChannels(), 0.0, 1.0), wScale);
        wv = scaled(rng.normals(config.model().modelDim() * config.model().kvChannels(), 0.0, 1.0), wScale);
    }

    public RandomRopeLayer(Rng rng, PnMixConfig config) {
        this(rng, config, config.model().layout());
    }

    /** Projects the byte tokens (each 0..vocab−1) at positions 0..n−1. */
    public Projections project(byte[] tokens) {
        int n = tokens.length;
        int dModel = config.model().modelDim();
        int d = config.model().headDim();
        int wQ = config.model().queryHeads() * d;
        int wKV = config.model().kvChannels();
        double[] qPre = new double[n * wQ];
        double[] kPre = new double[n * wKV];
        double[] v = new double[n * wKV];
        for (int t = 0; t < n; t++) {
            int token = tokens[t] & 0xFF;
            if (token >= config.model().vocab()) {
                throw new IllegalArgumentException("token " + token + " at position " + t + " is outside the vocabulary of "
                        + config.model().vocab());
            }
            matVec(embedding, token * dModel, dModel, wq, wQ, qPre, t * wQ);
            matVec(embedding, token * dModel, dModel, wk, wKV, kPre, t * wKV);
            matVec(embedding, token * dModel, dModel, wv, wKV, v, t * wKV);
        }
        double[] qRope = qPre.clone();
        double[] kRope = kPre.clone();
        for (int t = 0; t < n; t++) {
            PairLayoutRope.apply(qRope, t * wQ, config.model().queryHeads(), d, t, config.model().ropeTheta(), ropeLayout);
            PairLayoutRope.apply(kRope, t * wKV, config.model().kvHeads(), d, t, config.model().ropeTheta(), ropeLayout);
        }
        return new Projections(n, config.model().queryHeads(), config.model().kvHeads(), d, qPre, kPre, qRope, kRope,
                half(qRope), half(kRope), half(v));
    }

    /** out[outOff + j] = Σ_m x[xOff + m]·W[m][j], m ascending. */
    private static void matVec(double[] x, int xOff, int rows, double[] w, int cols, double[] out, int outOff) {
        for (int j = 0; j < cols; j++) {
            double s = 0.0;
            for (int m = 0; m < rows; m++) {
                s += x[xOff + m] * w[m * cols + j];
            }
            out[outOff + j] = s;
        }
    }

    private static double[] scaled(double[] a, double s) {
        for (int i = 0; i < a.length; i++) {
            a[i] *= s;
        }
        return a;
    }

    private static double[] half(double[] a) {
        double[] out = new double[a.length];
        for (int i = 0; i < a.length; i++) {
            out[i] = HalfFloat.roundToHalf(a[i]);
        }
        return out;
    }
}
