package org.mechspec.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.Rng;

/** AdamW and clipping drive the loss down on one batch, deterministically. */
@Tag("model")
class TrainingTest {
    static final int STEPS = 40;
    static final double FRACTION = 0.5;

    /** One update from the current gradients: AdamW's, or a broken optimizer's. */
    interface Optimizer {
        void step(double lr);
    }

    /** AdamW with PyTorch's defaults, as the training loop uses it. */
    static Optimizer adamW(List<Parameter> parameters) {
        return AdamW.withoutWeightDecay(parameters)::step;
    }

    /** {initial loss, final loss} after {@link #STEPS} optimizer steps (lr 1e-2) on one fixed fp32 batch. */
    static double[] overfitOneBatch(Function<List<Parameter>, Optimizer> newOptimizer, boolean loraOnly) {
        Qwen2Config config = TinyModels.config(false);
        Qwen2Model model = TinyModels.randomModel(config, Precision.FP32, 41);
        Batch batch = TinyModels.randomBatch(config, 2, 8, 42);
        Rng rng = new Rng(43);
        if (loraOnly) {
            Lora.attach(model, new LoraConfig(4, 8.0, 0.0), rng);
        }
        Optimizer optimizer = newOptimizer.apply(model.trainableParameters());
        double initial = model.forward(batch).loss();
        for (int s = 0; s < STEPS; s++) {
            model.zeroGrad();
            model.forward(batch).backward();
            AdamW.clipGlobalNorm(model.trainableParameters(), 1.0);
            optimizer.step(1e-2);
        }
        return new double[] {initial, model.forward(batch).loss()};
    }

    @Test
    void lossFallsWhenOverfittingOneBatch() {
        double[] loss = overfitOneBatch(TrainingTest::adamW, false);
        assertThat(ModelChecks.lossFell(loss[0], loss[1], FRACTION)).as("%s", java.util.Arrays.toString(loss)).isTrue();
    }

    @Test
    void lossFallsWhenOnlyLoraTrains() {
        double[] loss = overfitOneBatch(TrainingTest::adamW, true);
        assertThat(ModelChecks.lossFell(loss[0], loss[1], 0.9)).as("%s", java.util.Arrays.toString(loss)).isTrue();
    }

    @Test
    void trainingIsBitReproducible() {
        Qwen2Model[] runs = new Qwen2Model[2];
        for (int r = 0; r < 2; r++) {
            Qwen2Config config = TinyModels.config(true);
            runs[r] = Qwen2Model.initialized(config, Precision.FP32, new Rng(44), Qwen2Model.INIT_STD);
            AdamW opt = new AdamW(runs[r].trainableParameters(), 0.9, 0.95, 1e-8, 0.1);
            for (int s = 0; s < 3; s++) {
                runs[r].zeroGrad();
                runs[r].forward(TinyModels.randomBatch(config, 2, 5, 45 + s)).backward();
                AdamW.clipGlobalNorm(runs[r].trainableParameters(), 0.5);
                opt.step(1e-2);
            }
        }
        assertThat(TinyModels.differingParameters(runs[0], runs[1])).isEmpty();
    }

    @Test
    void adamwFirstStepMovesEveryWeightByTheLearningRate() {
        // With bias correction, step 1 has m̂ = g and v̂ = g², so each weight moves by lr·g/(|g| + ε) ≈ ±lr.
        Tensor w = Tensor.of(Precision.FP64, new double[] {1.0, -2.0, 3.0}, 3);
        Parameter p = new Parameter("w", w, true);
        p.grad().set(0, 0.5);
        p.grad().set(1, -4.0);
        p.grad().set(2, 0.0);
        new AdamW(List.of(p), 0.9, 0.999, 1e-8, 0.0).step(0.1);
        assertThat(w.get(0)).isCloseTo(0.9, org.assertj.core.data.Offset.offset(1e-7));
        assertThat(w.get(1)).isCloseTo(-1.9, org.assertj.core.data.Offset.offset(1e-7));
        assertThat(w.get(2)).isEqualTo(3.0);
    }

    @Test
    void clippingScalesToTheMaxNormAndReportsTheNormBefore() {
        Parameter a = new Parameter("a", Tensor.zeros(Precision.FP64, 2), true);
        Parameter b = new Parameter("b", Tensor.zeros(Precision.FP64, 1), true);
        a.grad().set(0, 3.0);
        a.grad().set(1, 0.0);
        b.grad().set(0, 4.0);
        assertThat(AdamW.clipGlobalNorm(List.of(a, b), 1.0)).isEqualTo(5.0);
        double norm = Math.sqrt(a.grad().get(0) * a.grad().get(0) + b.grad().get(0) * b.grad().get(0));
        assertThat(norm).isCloseTo(1.0, org.assertj.core.data.Offset.offset(1e-6));
        assertThat(AdamW.clipGlobalNorm(List.of(a, b), 10.0)).isCloseTo(1.0, org.assertj.core.data.Offset.offset(1e-6));
    }

    @Test
    void frozenParametersAreRejectedAndNonFiniteGradientsStop() {
        Parameter frozen = new Parameter("frozen", Tensor.zeros(Precision.FP32, 2), false);
        assertThatThrownBy(() -> AdamW.withoutWeightDecay(List.of(frozen))).hasMessageContaining("frozen");
        Parameter p = new Parameter("p", Tensor.zeros(Precision.FP32, 2), true);
        p.grad().set(1, Double.NaN);
        assertThatThrownBy(() -> AdamW.withoutWeightDecay(List.of(p)).step(1e-3)).hasMessageContaining("p[1]");
    }
}
