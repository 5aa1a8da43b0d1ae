package org.mechspec.oal;

/**
 * Per-head calibration of the kernel coefficients (protocols.md, OAL): Adam (lr 0.05, β 0.9/0.999, ε 1e-8) on the
 * calibration blocks' output MSE, {@value #STEPS} steps from each of three initializations — the Taylor point and
 * that point plus N(0, 0.1²) noise twice — keeping the one whose result has the lowest loss on the grouping blocks
 * (ties keep the earlier one). The global baseline: one group, Taylor initialization only, same steps.
 */
final class Calibration {
    static final int STEPS = 10;
    static final int INITIALIZATIONS = 3;
    static final double LEARNING_RATE = 0.05;
    static final double BETA1 = 0.9;
    static final double BETA2 = 0.999;
    static final double ADAM_EPS = 1e-8;
    static final double NOISE_STD = 0.1;

    private Calibration() {
    }

    /**
     * One head's outcome: the kept factor, which initialization it came from, each candidate's selection and
     * calibration loss, and every initialization's start and fitted factor (for the check that fitting lowered the loss).
     */
    record HeadFit(double[] l, int chosen, double[] selectionLosses, double[] calibrationLosses, double[][] starts,
                   double[][] fitted) {
    }

    /**
     * The noise of the two perturbed initializations of every head, drawn from the protocol's stream in this order:
     * head by head, perturbation by perturbation, L's lower triangle row by row.
     */
    static double[][][] drawNoise(org.mechspec.compute.Rng rng, int heads, int side) {
        int entries = QuadraticForm.lowerEntries(side);
        double[][][] noise = new double[heads][INITIALIZATIONS - 1][];
        for (int h = 0; h < heads; h++) {
            for (int p = 0; p < INITIALIZATIONS - 1; p++) {
                noise[h][p] = rng.normals(entries, 0.0, NOISE_STD);
            }
        }
        return noise;
    }

    /** Taylor factor plus noise on the lower triangle (row by row). */
    static double[] perturbed(double[] l, int side, double[] noise) {
        double[] out = l.clone();
        int at = 0;
        for (int r = 0; r < side; r++) {
            for (int c = 0; c <= r; c++) {
                out[r * side + c] += noise[at++];
            }
        }
        return out;
    }

    static HeadFit calibrateHead(CalibrationObjective calibration, CalibrationObjective selection, double[][] headNoise) {
        int side = calibration.side();
        double[] taylor = QuadraticForm.taylorFactor(side - 1);
        double[][] starts = new double[INITIALIZATIONS][];
        starts[0] = taylor;
        for (int p = 1; p < INITIALIZATIONS; p++) {
            starts[p] = perturbed(taylor, side, headNoise[p - 1]);
        }
        double[] selectionLosses = new double[INITIALIZATIONS];
        double[] calibrationLosses = new double[INITIALIZATIONS];
        double[][] fitted = new double[INITIALIZATIONS][];
        double[] best = null;
        int chosen = -1;
        for (int p = 0; p < INITIALIZATIONS; p++) {
            fitted[p] = adam(calibration, starts[p], STEPS);
            calibrationLosses[p] = calibration.loss(fitted[p]);
            selectionLosses[p] = selection.loss(fitted[p]);
            if (best == null || selectionLosses[p] < selectionLosses[chosen]) {
                best = fitted[p];
                chosen = p;
            }
        }
        return new HeadFit(best, chosen, selectionLosses, calibrationLosses, starts, fitted);
    }

    /** The global baseline of one head: G = 1, Taylor initialization, {@value #STEPS} Adam steps. */
    static double[] globalHead(CalibrationObjective calibration) {
        return adam(calibration, QuadraticForm.taylorFactor(calibration.side() - 1), STEPS);
    }

    /** Bias-corrected Adam on L's lower triangle. */
    static double[] adam(CalibrationObjective objective, double[] start, int steps) {
        int side = objective.side();
        double[] l = start.clone();
        double[] grad = new double[side * side];
        double[] m = new double[side * side];
        double[] v = new double[side * side];
        for (int step = 1; step <= steps; step++) {
            objective.evaluate(l, grad);
            double c1 = 1.0 - StrictMath.pow(BETA1, step);
            double c2 = 1.0 - StrictMath.pow(BETA2, step);
            for (int r = 0; r < side; r++) {
                for (int c = 0; c <= r; c++) {
                    int e = r * side + c;
                    if (!Double.isFinite(grad[e])) {
                        throw new IllegalStateException("calibration gradient of L[" + r + "][" + c + "] is " + grad[e]);
                    }
                    m[e] = BETA1 * m[e] + (1.0 - BETA1) * grad[e];
                    v[e] = BETA2 * v[e] + (1.0 - BETA2) * grad[e] * grad[e];
                    l[e] -= LEARNING_RATE * (m[e] / c1) / (Math.sqrt(v[e] / c2) + ADAM_EPS);
                }
            }
        }
        return l;
    }
}
