package org.mechspec.model;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The model's fp64 logits against a naive per-token transcription of Hugging Face's Qwen2 forward (RMSNorm,
 * q/k/v with biases, rotate_half RoPE, GQA causal softmax, o_proj, SwiGLU, final norm, tied or untied head).
 * Gradient checks cannot see a forward that is consistently wrong; this can.
 */
@Tag("model")
class ReferenceForwardTest {
    static final double TOLERANCE = 1e-12;

    /** The random fp64 model the reference is compared on. */
    static Qwen2Model randomModel(boolean tied) {
        return TinyModels.randomModel(TinyModels.config(tied), Precision.FP64, 61);
    }

    /** {model logits, reference logits (from the model's weights)} for one random batch. */
    static Tensor[] modelAndReference(Qwen2Model model) {
        Qwen2Config config = model.config();
        Batch batch = TinyModels.randomBatch(config, 2, 9, 62);
        Tensor ours = model.forward(batch).logits();
        Tensor reference = Tensor.zeros(Precision.FP64, ours.shape());
        for (int b = 0; b < batch.batch(); b++) {
            int[] tokens = new int[batch.seqLen()];
            System.arraycopy(batch.inputs(), b * batch.seqLen(), tokens, 0, tokens.length);
            double[][] logits = referenceLogits(model, tokens);
            for (int t = 0; t < tokens.length; t++) {
                for (int v = 0; v < config.vocabSize(); v++) {
                    reference.set((b * batch.seqLen() + t) * config.vocabSize() + v, logits[t][v]);
                }
            }
        }
        return new Tensor[] {ours, reference};
    }

    @Test
    void untiedModelMatchesTheReference() {
        Tensor[] l = modelAndReference(randomModel(false));
        assertThat(ModelChecks.forwardsAgree(l[0], l[1], TOLERANCE)).as("%s", ModelChecks.maxRelativeDifference(l[0], l[1]))
                .isTrue();
    }

    @Test
    void tiedModelMatchesTheReference() {
        Tensor[] l = modelAndReference(randomModel(true));
        assertThat(ModelChecks.forwardsAgree(l[0], l[1], TOLERANCE)).isTrue();
    }

    static double[][] referenceLogits(Qwen2Model m, int[] tokens) {
        Qwen2Config c = m.config();
        int n = tokens.length;
        int hidden = c.hiddenSize();
        int d = c.headDim();
        double[][] x = new double[n][];
        for (int t = 0; t < n; t++) {
            x[t] = row(w(m, "model.embed_tokens.weight"), tokens[t], hidden);
        }
        for (int l = 0; l < c.numHiddenLayers(); l++) {
            String p = "model.layers." + l + ".";
            double[][] h = new double[n][];
            double[][] q = new double[n][];
            double[][] k = new double[n][];
            double[][] v = new double[n][];
            for (int t = 0; t < n; t++) {
                h[t] = rmsNorm(x[t], w(m, p + "input_layernorm.weight"), c.rmsNormEps());
                q[t] = rope(linear(m, p + "self_attn.q_proj", h[t], true), t, c);
                k[t] = rope(linear(m, p + "self_attn.k_proj", h[t], true), t, c);
                v[t] = linear(m, p + "self_attn.v_proj", h[t], true);
            }
            for (int t = 0; t < n; t++) {
                double[] attn = new double[c.queryDim()];
                for (int head = 0; head < c.numAttentionHeads(); head++) {
                    int kv = head / (c.numAttentionHeads() / c.numKeyValueHeads());
                    double[] s = new double[t + 1];
                    double max = Double.NEGATIVE_INFINITY;
                    for (int j = 0; j <= t; j++) {
                        for (int i = 0; i < d; i++) {
                            s[j] += q[t][head * d + i] * k[j][kv * d + i] / Math.sqrt(d);
                        }
                        max = Math.max(max, s[j]);
                    }
                    double z = 0;
                    for (int j = 0; j <= t; j++) {
                        s[j] = StrictMath.exp(s[j] - max);
                        z += s[j];
                    }
                    for (int j = 0; j <= t; j++) {
                        for (int i = 0; i < d; i++) {
                            attn[head * d + i] += s[j] / z * v[j][kv * d + i];
                        }
                    }
                }
                double[] mid = add(x[t], linear(m, p + "self_attn.o_proj", attn, false));
                double[] h2 = rmsNorm(mid, w(m, p + "post_attention_layernorm.weight"), c.rmsNormEps());
                double[] gate = linear(m, p + "mlp.gate_proj", h2, false);
                double[] up = linear(m, p + "mlp.up_proj", h2, false);
                double[] act = new double[gate.length];
                for (int i = 0; i < act.length; i++) {
                    act[i] = gate[i] / (1 + StrictMath.exp(-gate[i])) * up[i];
                }
                x[t] = add(mid, linear(m, p + "mlp.down_proj", act, false));
            }
        }
        Tensor head = w(m, c.tieWordEmbeddings() ? "model.embed_tokens.weight" : "lm_head.weight");
        double[][] logits = new double[n][c.vocabSize()];
        for (int t = 0; t < n; t++) {
            double[] f = rmsNorm(x[t], w(m, "model.norm.weight"), c.rmsNormEps());
            for (int vocab = 0; vocab < c.vocabSize(); vocab++) {
                for (int i = 0; i < hidden; i++) {
                    logits[t][vocab] += head.get(vocab * hidden + i) * f[i];
                }
            }
        }
        return logits;
    }

    private static Tensor w(Qwen2Model m, String name) {
        return m.parameter(name).value();
    }

    private static double[] row(Tensor t, int r, int width) {
        double[] out = new double[width];
        for (int i = 0; i < width; i++) {
            out[i] = t.get(r * width + i);
        }
        return out;
    }

    private static double[] linear(Qwen2Model m, String name, double[] in, boolean bias) {
        Tensor weight = w(m, name + ".weight");
        int out = weight.dim(0);
        double[] y = new double[out];
        for (int o = 0; o < out; o++) {
            y[o] = bias ? w(m, name + ".bias").get(o) : 0.0;
            for (int i = 0; i < in.length; i++) {
                y[o] += weight.get(o * in.length + i) * in[i];
            }
        }
        return y;
    }

    private static double[] rmsNorm(double[] x, Tensor weight, double eps) {
        double ms = 0;
        for (double v : x) {
            ms += v * v / x.length;
        }
        double[] y = new double[x.length];
        for (int i = 0; i < x.length; i++) {
            y[i] = weight.get(i) * x[i] / Math.sqrt(ms + eps);
        }
        return y;
    }

    /** q·cos + rotate_half(q)·sin per head, rotate_half(q) = [−q2, q1], cos/sin of cat(freqs, freqs). */
    private static double[] rope(double[] x, int position, Qwen2Config c) {
        int d = c.headDim();
        double[] out = new double[x.length];
        for (int head = 0; head < x.length / d; head++) {
            for (int i = 0; i < d; i++) {
                double freq = position * StrictMath.pow(c.ropeTheta(), -(2.0 * (i % (d / 2))) / d);
                double rotateHalf = i < d / 2 ? -x[head * d + i + d / 2] : x[head * d + i - d / 2];
                out[head * d + i] = x[head * d + i] * StrictMath.cos(freq) + rotateHalf * StrictMath.sin(freq);
            }
        }
        return out;
    }

    private static double[] add(double[] a, double[] b) {
        double[] s = new double[a.length];
        for (int i = 0; i < a.length; i++) {
            s[i] = a[i] + b[i];
        }
        return s;
    }
}
