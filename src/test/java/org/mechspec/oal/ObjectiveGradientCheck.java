package org.mechspec.oal;

/** Central finite differences of a calibration objective's loss against its analytic gradient. */
final class ObjectiveGradientCheck {
    private ObjectiveGradientCheck() {
    }

    /** Over every lower-triangular entry of L: max|numeric − analytic| / max(max|analytic|, 1e-300). */
    static double relativeError(CalibrationObjective o, double[] l, double h) {
        int side = o.side();
        double[] analytic = new double[side * side];
        o.evaluate(l, analytic);
        double maxDiff = 0.0;
        double maxAnalytic = 0.0;
        double[] probe = l.clone();
        for (int r = 0; r < side; r++) {
            for (int c = 0; c <= r; c++) {
                int e = r * side + c;
                probe[e] = l[e] + h;
                double plus = o.loss(probe);
                probe[e] = l[e] - h;
                double minus = o.loss(probe);
                probe[e] = l[e];
                double numeric = (plus - minus) / (2 * h);
                maxDiff = Math.max(maxDiff, Math.abs(numeric - analytic[e]));
                maxAnalytic = Math.max(maxAnalytic, Math.abs(analytic[e]));
            }
        }
        return maxDiff / Math.max(maxAnalytic, 1e-300);
    }
}
