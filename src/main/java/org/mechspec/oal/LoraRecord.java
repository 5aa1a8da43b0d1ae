package org.mechspec.oal;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.mechspec.data.DataFiles;
import org.mechspec.model.DropoutMasks;
import org.mechspec.model.LoraAdapter;
import org.mechspec.model.Parameter;
import org.mechspec.model.Qwen2Model;

/**
 * What one model's LoRA adaptation actually got: its trainable tensors, the SHA-256 of its initial A matrices,
 * whether every B started at zero, the learning rate, batch rows and dropout masks of each step, and the
 * converted block's coefficients (trainable or not, SHA-256 before and after), and how far each step moved the
 * trainable tensors — read from the model itself, so a step that trained nothing shows as 0. The matched-budget
 * contracts compare two of these.
 */
final class LoraRecord {
    final List<String> trainableNames = new ArrayList<>();
    final List<Integer> trainableSizes = new ArrayList<>();
    final String initialA;
    final boolean initialBZero;
    final List<Double> learningRates = new ArrayList<>();
    final List<Integer> stepRows = new ArrayList<>();
    final List<DropoutMasks> masks = new ArrayList<>();
    final List<Double> stepChanges = new ArrayList<>();
    final String blockBefore;
    final boolean blockTrainable;
    String blockAfter;
    private final Qwen2Model model;
    private double[] lastTrainable;

    LoraRecord(Qwen2Model model, ConvertedAttention block) {
        for (Parameter p : model.trainableParameters()) {
            trainableNames.add(p.name());
            trainableSizes.add(p.value().size());
        }
        StringBuilder a = new StringBuilder();
        boolean zero = true;
        for (LoraAdapter adapter : model.loraAdapters()) {
            a.append(adapter.target()).append('=').append(sha256(adapter.a().value().toDoubles())).append('\n');
            for (double x : adapter.b().value().toDoubles()) {
                zero &= x == 0.0;
            }
        }
        initialA = DataFiles.sha256(a.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
        initialBZero = zero && !model.loraAdapters().isEmpty();
        blockBefore = block == null ? "" : sha256(block.factor().value().toDoubles());
        blockTrainable = block != null && block.factor().trainable();
        this.model = model;
        lastTrainable = trainableValues(model);
    }

    /** Called after each step: its settings, and the L2 norm of the change of every trainable tensor since the last call. */
    void step(double lr, int rows, DropoutMasks m) {
        learningRates.add(lr);
        stepRows.add(rows);
        masks.add(m);
        double[] now = trainableValues(model);
        double sum = 0.0;
        for (int i = 0; i < now.length; i++) {
            double d = now[i] - lastTrainable[i];
            sum += d * d;
        }
        stepChanges.add(Math.sqrt(sum));
        lastTrainable = now;
    }

    private static double[] trainableValues(Qwen2Model model) {
        List<double[]> parts = new ArrayList<>();
        int n = 0;
        for (Parameter p : model.trainableParameters()) {
            double[] x = p.value().toDoubles();
            parts.add(x);
            n += x.length;
        }
        double[] out = new double[n];
        int at = 0;
        for (double[] x : parts) {
            System.arraycopy(x, 0, out, at, x.length);
            at += x.length;
        }
        return out;
    }

    void finish(ConvertedAttention block) {
        blockAfter = block == null ? "" : sha256(block.factor().value().toDoubles());
    }

    static String sha256(double[] x) {
        ByteBuffer buf = ByteBuffer.allocate(x.length * Double.BYTES);
        for (double v : x) {
            buf.putDouble(v);
        }
        return DataFiles.sha256(buf.array());
    }
}
