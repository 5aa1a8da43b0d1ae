package org.mechspec.model;

/** y = w ⊙ x / √(mean(x²) + ε) per row, statistics in double, as Qwen2RMSNorm computes them in fp32. */
final class RmsNorm {
    final Parameter weight;
    private final double eps;

    RmsNorm(Parameter weight, double eps) {
        this.weight = weight;
        this.eps = eps;
    }

    /** The forward result and the per-row reciprocal RMS that backward reuses. */
    record Pass(Tensor x, Tensor y, double[] rstd) {
    }

    Pass forward(Tensor x, int rows) {
        int dim = weight.value().size();
        Tensor w = weight.value();
        Tensor y = Tensor.zeros(x.precision(), rows, dim);
        double[] rstd = new double[rows];
        for (int r = 0; r < rows; r++) {
            int off = r * dim;
            double sumSq = 0.0;
            for (int c = 0; c < dim; c++) {
                double v = x.get(off + c);
                sumSq += v * v;
            }
            rstd[r] = 1.0 / Math.sqrt(sumSq / dim + eps);
            for (int c = 0; c < dim; c++) {
                y.set(off + c, w.get(c) * (x.get(off + c) * rstd[r]));
            }
        }
        return new Pass(x, y, rstd);
    }

    /** dx = rstd·(ĝ − x̂·mean(ĝ·x̂)) with ĝ = w ⊙ dy, x̂ = x·rstd; dw += Σ_rows dy ⊙ x̂. */
    Tensor backward(Pass p, Tensor dy) {
        int dim = weight.value().size();
        int rows = p.rstd().length;
        Tensor w = weight.value();
        Tensor dw = weight.grad();
        Tensor dx = Tensor.zeros(dy.precision(), rows, dim);
        for (int r = 0; r < rows; r++) {
            int off = r * dim;
            double rs = p.rstd()[r];
            double dot = 0.0;
            for (int c = 0; c < dim; c++) {
                dot += w.get(c) * dy.get(off + c) * (p.x().get(off + c) * rs);
            }
            double mean = dot / dim;
            for (int c = 0; c < dim; c++) {
                double xHat = p.x().get(off + c) * rs;
                dx.set(off + c, rs * (w.get(c) * dy.get(off + c) - xHat * mean));
                if (dw != null) {
                    dw.add(c, dy.get(off + c) * xHat);
                }
            }
        }
        return dx;
    }
}
