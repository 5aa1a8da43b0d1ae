package org.mechspec.model;

/**
 * One Qwen2 decoder layer: x + o_proj(attention(RoPE(q), RoPE(k), v)) over RMSNorm(x), then
 * + down_proj(silu(gate_proj(h))·up_proj(h)) over RMSNorm of that. Explicit backward, llm.c style.
 */
final class DecoderLayer {
    final int index;
    final RmsNorm inputNorm;
    final RmsNorm postNorm;
    final Linear q;
    final Linear k;
    final Linear v;
    final Linear o;
    final Linear gate;
    final Linear up;
    final Linear down;
    AttentionBlock attention = new SoftmaxAttention();

    DecoderLayer(int index, RmsNorm inputNorm, RmsNorm postNorm, Linear q, Linear k, Linear v, Linear o,
                 Linear gate, Linear up, Linear down) {
        this.index = index;
        this.inputNorm = inputNorm;
        this.postNorm = postNorm;
        this.q = q;
        this.k = k;
        this.v = v;
        this.o = o;
        this.gate = gate;
        this.up = up;
        this.down = down;
    }

    record Pass(LayerActivations activations, RmsNorm.Pass norm1, Linear.Pass qPass, Linear.Pass kPass,
                Linear.Pass vPass, AttentionBlock.Gradient attentionGradient, Linear.Pass oPass, Tensor middle,
                RmsNorm.Pass norm2, Linear.Pass gatePass, Linear.Pass upPass, Linear.Pass downPass) {
    }

    Pass forward(Tensor x, HeadLayout layout, RotaryEmbedding rope, DropoutMasks masks) {
        int rows = layout.tokens();
        RmsNorm.Pass norm1 = inputNorm.forward(x, rows);
        Linear.Pass qPass = q.forward(norm1.y(), rows, masks);
        Linear.Pass kPass = k.forward(norm1.y(), rows, masks);
        Linear.Pass vPass = v.forward(norm1.y(), rows, masks);
        Tensor queries = qPass.y();
        Tensor keys = kPass.y();
        rope.rotate(queries, layout.batch(), layout.seqLen(), layout.heads(), 1);
        rope.rotate(keys, layout.batch(), layout.seqLen(), layout.kvHeads(), 1);
        Tensor attended = Tensor.zeros(x.precision(), rows, layout.heads() * layout.headDim());
        AttentionBlock.Gradient attentionGradient = attention.forward(layout, queries, keys, vPass.y(), attended);
        Linear.Pass oPass = o.forward(attended, rows, masks);
        Tensor middle = sum(x, oPass.y());
        RmsNorm.Pass norm2 = postNorm.forward(middle, rows);
        Linear.Pass gatePass = gate.forward(norm2.y(), rows, null);
        Linear.Pass upPass = up.forward(norm2.y(), rows, null);
        Tensor hidden = swiglu(gatePass.y(), upPass.y());
        Linear.Pass downPass = down.forward(hidden, rows, null);
        Tensor output = sum(middle, downPass.y());
        LayerActivations activations = new LayerActivations(layout, x, queries, keys, vPass.y(), attended, output);
        return new Pass(activations, norm1, qPass, kPass, vPass, attentionGradient, oPass, middle, norm2, gatePass,
                upPass, downPass);
    }

    /** ∂loss/∂input from ∂loss/∂output; accumulates parameter gradients. */
    Tensor backward(Pass p, Tensor dOutput, RotaryEmbedding rope) {
        HeadLayout layout = p.activations().layout();
        Precision precision = dOutput.precision();
        int rows = layout.tokens();

        Tensor dHidden = Tensor.zeros(precision, rows, gate.out);
        down.backward(p.downPass(), dOutput, dHidden);
        Tensor dGate = Tensor.zeros(precision, rows, gate.out);
        Tensor dUp = Tensor.zeros(precision, rows, up.out);
        swigluBackward(p.gatePass().y(), p.upPass().y(), dHidden, dGate, dUp);
        Tensor dNorm2 = Tensor.zeros(precision, rows, gate.in);
        gate.backward(p.gatePass(), dGate, dNorm2);
        up.backward(p.upPass(), dUp, dNorm2);
        Tensor dMiddle = sum(dOutput, postNorm.backward(p.norm2(), dNorm2));

        Tensor dAttended = Tensor.zeros(precision, rows, o.in);
        o.backward(p.oPass(), dMiddle, dAttended);
        Tensor dq = Tensor.zeros(precision, rows, q.out);
        Tensor dk = Tensor.zeros(precision, rows, k.out);
        Tensor dv = Tensor.zeros(precision, rows, v.out);
        p.attentionGradient().accumulate(dAttended, dq, dk, dv);
        // RoPE is a rotation, so its transpose (what the gradient needs) is the inverse rotation.
        rope.rotate(dq, layout.batch(), layout.seqLen(), layout.heads(), -1);
        rope.rotate(dk, layout.batch(), layout.seqLen(), layout.kvHeads(), -1);
        Tensor dNorm1 = Tensor.zeros(precision, rows, q.in);
        q.backward(p.qPass(), dq, dNorm1);
        k.backward(p.kPass(), dk, dNorm1);
        v.backward(p.vPass(), dv, dNorm1);
        return sum(dMiddle, inputNorm.backward(p.norm1(), dNorm1));
    }

    static Tensor sum(Tensor a, Tensor b) {
        Tensor s = Tensor.zeros(a.precision(), a.shape());
        for (int i = 0; i < s.size(); i++) {
            s.set(i, a.get(i) + b.get(i));
        }
        return s;
    }

    /** silu(g)·u with silu(g) = g·σ(g). */
    static Tensor swiglu(Tensor g, Tensor u) {
        Tensor h = Tensor.zeros(g.precision(), g.shape());
        for (int i = 0; i < h.size(); i++) {
            double gi = g.get(i);
            h.set(i, gi * sigmoid(gi) * u.get(i));
        }
        return h;
    }

    /** dg = dh·u·σ(g)·(1 + g·(1 − σ(g))), du = dh·silu(g). */
    static void swigluBackward(Tensor g, Tensor u, Tensor dh, Tensor dg, Tensor du) {
        for (int i = 0; i < dh.size(); i++) {
            double gi = g.get(i);
            double s = sigmoid(gi);
            dg.set(i, dh.get(i) * u.get(i) * s * (1.0 + gi * (1.0 - s)));
            du.set(i, dh.get(i) * gi * s);
        }
    }

    static double sigmoid(double x) {
        return 1.0 / (1.0 + StrictMath.exp(-x));
    }
}
