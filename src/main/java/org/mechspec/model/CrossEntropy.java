package org.mechspec.model;

/** Softmax cross-entropy over the vocabulary, per token, in double with StrictMath. */
final class CrossEntropy {
    private CrossEntropy() {
    }

    /** −log softmax(logits_r)[target_r] per row; NaN where the target is ignored. */
    static double[] tokenNll(Tensor logits, int[] targets, int vocab) {
        double[] nll = new double[targets.length];
        for (int r = 0; r < targets.length; r++) {
            if (targets[r] == Batch.IGNORE) {
                nll[r] = Double.NaN;
                continue;
            }
            requireToken(targets[r], vocab, r);
            nll[r] = logSumExp(logits, r * vocab, vocab) - logits.get(r * vocab + targets[r]);
        }
        return nll;
    }

    /** ∂(mean NLL over counted targets)/∂logits. */
    static Tensor backward(Tensor logits, int[] targets, int vocab) {
        int counted = 0;
        for (int t : targets) {
            if (t != Batch.IGNORE) {
                counted++;
            }
        }
        if (counted == 0) {
            throw new IllegalArgumentException("every target is ignored: the loss has no terms");
        }
        Tensor d = Tensor.zeros(logits.precision(), logits.shape());
        for (int r = 0; r < targets.length; r++) {
            if (targets[r] == Batch.IGNORE) {
                continue;
            }
            requireToken(targets[r], vocab, r);
            int off = r * vocab;
            double lse = logSumExp(logits, off, vocab);
            for (int c = 0; c < vocab; c++) {
                double p = StrictMath.exp(logits.get(off + c) - lse);
                d.set(off + c, (p - (c == targets[r] ? 1.0 : 0.0)) / counted);
            }
        }
        return d;
    }

    private static double logSumExp(Tensor logits, int off, int vocab) {
        double max = Double.NEGATIVE_INFINITY;
        for (int c = 0; c < vocab; c++) {
            max = Math.max(max, logits.get(off + c));
        }
        double sum = 0.0;
        for (int c = 0; c < vocab; c++) {
            sum += StrictMath.exp(logits.get(off + c) - max);
        }
        return max + StrictMath.log(sum);
    }

    private static void requireToken(int token, int vocab, int row) {
        if (token < 0 || token >= vocab) {
            throw new IllegalArgumentException("target " + token + " at position " + row + " is outside the vocabulary of "
                    + vocab);
        }
    }
}
