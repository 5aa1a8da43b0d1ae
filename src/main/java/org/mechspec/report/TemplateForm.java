package org.mechspec.report;

import java.util.Arrays;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The forms an artifact template may use, defined once for the renderer and for the code that reads artifacts
 * back: a string form ({@code "$commit"}) or a one-key object form ({@code {"$stat": {...}}}). Its key is
 * {@code "$"} and the lower-case name.
 */
public enum TemplateForm {
    /** The seeds that ran. */
    SEEDS(false, false),
    /** The seed being rendered (inside {@code $each_seed}). */
    SEED(false, false),
    /** The first seed that ran. */
    FIRST_SEED(false, false),
    /** The seed's checks: name → held. */
    CHECKS(false, false),
    /** The seed's runtime facts. */
    RUNTIME(false, false),
    /** The negative-result sentence of the seeds that contradict a hypothesis (empty when none does). */
    NEGATIVE_RESULT(false, false),
    /** Whether the run claims an improvement under the manifest's claim policy. */
    CLAIMS_IMPROVEMENT(false, false),
    /** Whether a real GPU ran every contract (never on the emulated driver). */
    GPU_VALIDATED(false, false),
    /** The backend. */
    BACKEND(false, true),
    /** The device, in one line. */
    DEVICE(false, true),
    /** The JVM that ran. */
    JVM(false, true),
    /** The git commit of the build. */
    COMMIT(false, true),
    /** The data sets' SHA-256 (or the synthetic dataset block's). */
    DATASET_FINGERPRINT(false, true),
    /** The SHA-256 of every source file under the manifest's {@code sources}. */
    SOURCES(false, true),
    /** The SHA-256 of the run's records. */
    RECORDS_SHA256(false, true),
    /** Where the artifact is kept, {@code reports/<paper>.<backend>.json}. */
    ARTIFACT_PATH(false, true),
    /** The checkpoint the run used. */
    CHECKPOINT(false, false),
    /** An array: the argument rendered once per seed. */
    EACH_SEED(true, false),
    /** The seed's metrics (all, or those named). */
    METRICS(true, false),
    /** One metric's value, for the seed being rendered or a named one. */
    METRIC(true, false),
    /** One check's verdict, for the seed being rendered or a named one. */
    CHECK(true, false),
    /** Mean, std, n and 95% interval over seeds, per metric. */
    AGGREGATE(true, false),
    /** One statistic of one metric over seeds. */
    STAT(true, false),
    /** A field of the manifest, by dotted path. */
    MANIFEST(true, false);

    private static final Map<String, TemplateForm> BY_KEY =
            Arrays.stream(values()).collect(Collectors.toMap(TemplateForm::key, Function.identity()));

    private final boolean object;
    private final boolean provenance;

    TemplateForm(boolean object, boolean provenance) {
        this.object = object;
        this.provenance = provenance;
    }

    /** The form's key in a template: {@code "$"} and its lower-case name. */
    public String key() {
        return "$" + name().toLowerCase(java.util.Locale.ROOT);
    }

    /** {@code {"$form": arg}} rather than {@code "$form"}. */
    public boolean object() {
        return object;
    }

    /** Where the run happened and what ran, rather than what it measured: differs between runs of the same code. */
    public boolean provenance() {
        return provenance;
    }

    /** The form with this key in this shape, or null when there is none. */
    public static TemplateForm of(String key, boolean object) {
        TemplateForm f = BY_KEY.get(key);
        return f != null && f.object == object ? f : null;
    }
}
