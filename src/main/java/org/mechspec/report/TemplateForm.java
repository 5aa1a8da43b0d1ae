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
    SEEDS(false, false), SEED(false, false), FIRST_SEED(false, false), CHECKS(false, false), RUNTIME(false, false),
    NEGATIVE_RESULT(false, false), CLAIMS_IMPROVEMENT(false, false), GPU_VALIDATED(false, false),
    BACKEND(false, true), DEVICE(false, true), JVM(false, true), COMMIT(false, true), DATASET_FINGERPRINT(false, true),
    SOURCES(false, true), RECORDS_SHA256(false, true), ARTIFACT_PATH(false, true), CHECKPOINT(false, false),
    EACH_SEED(true, false), METRICS(true, false), METRIC(true, false), CHECK(true, false), AGGREGATE(true, false),
    STAT(true, false), MANIFEST(true, false);

    private static final Map<String, TemplateForm> BY_KEY =
            Arrays.stream(values()).collect(Collectors.toMap(TemplateForm::key, Function.identity()));

    private final boolean object;
    private final boolean provenance;

    TemplateForm(boolean object, boolean provenance) {
        this.object = object;
        this.provenance = provenance;
    }

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
